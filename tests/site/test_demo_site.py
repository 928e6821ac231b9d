"""`ledger demo` builds the example campaign's site (strict: no MkDocs warning, no broken link)."""

from __future__ import annotations


def test_demo_builds_the_example_campaigns_site(demo_ltx2):
    root, summary, _ = demo_ltx2
    site = root / "site"
    assert summary["site"]["index"] == str(site / "index.html")
    home = (root / ".ledger-build/docs/index.md").read_text()
    assert "## Stopping point" in home and "fastest accepted" in home
    assert (site / "decisions/index.html").is_file() and any((site / "charts").glob("*.html"))


def test_a_spec_pages_own_headings_are_in_its_table_of_contents(demo_ltx2):
    root, _, _ = demo_ltx2
    (page,) = (p for p in (root / "site/specs").glob("*.html") if p.name != "index.html")
    html = page.read_text(encoding="utf-8")
    toc = html.split('class="md-nav md-nav--secondary"', 1)[1].split("</nav>", 1)[0]
    # The spec's own sections, not only the ones ledger adds from its front matter.
    assert 'href="#1-resume-here"' in toc and "1. Resume here" in toc
    assert 'href="#7-owed"' in toc and "7. Owed" in toc
    assert html.count('id="7-owed"') == 1


def test_spec_front_matter_reads_as_its_yaml_not_as_python(demo_decode):
    root, _, _ = demo_decode
    html = (root / "site/specs/ltx25-decode-speed.html").read_text(encoding="utf-8")
    # `keyed_tables: {key: Lever}` in the spec's front matter
    assert "key: Lever" in html
    assert "{&#39;" not in html and "{'" not in html and "[&#39;" not in html
