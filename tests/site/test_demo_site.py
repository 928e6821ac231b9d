"""`ledger demo` builds the example campaign's site (strict: no MkDocs warning, no broken link)."""

from __future__ import annotations

import pytest

from tests.conftest import run_ledger


@pytest.mark.slow
def test_demo_builds_the_example_campaigns_site(tmp_path):
    result = run_ledger(tmp_path, "demo", str(tmp_path / "demo"))
    assert result.returncode == 0, result.stdout + result.stderr
    site = tmp_path / "demo" / "site"
    assert f"site: open {site / 'index.html'}" in result.stdout
    home = (tmp_path / "demo" / ".ledger-build/docs/index.md").read_text()
    assert "## Stopping point" in home and "fastest accepted" in home
    assert (site / "decisions/index.html").is_file() and any((site / "charts").glob("*.html"))
