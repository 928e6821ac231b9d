"""`ledger demo` builds the example campaign's site (strict: no MkDocs warning, no broken link)."""

from __future__ import annotations


def test_demo_builds_the_example_campaigns_site(demo_ltx2):
    root, summary, _ = demo_ltx2
    site = root / "site"
    assert summary["site"]["index"] == str(site / "index.html")
    home = (root / ".ledger-build/docs/index.md").read_text()
    assert "## Stopping point" in home and "fastest accepted" in home
    assert (site / "decisions/index.html").is_file() and any((site / "charts").glob("*.html"))
