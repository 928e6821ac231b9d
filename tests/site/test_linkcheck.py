"""The built site's own link check (`site.linkcheck`) on a folder written by hand: a link to a
page that exists, to an anchor that exists (as `id=` or `name=`, any case), and the three ways
a link breaks, each reported by page and value."""

from __future__ import annotations

from ledger.site import linkcheck


def test_links_and_anchors_resolve_or_are_named(tmp_path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "index.html").write_text('<h2 ID="deep">x</h2>', encoding="utf-8")
    (tmp_path / "b.html").write_text(
        '<h2 id="there">x</h2><a name=\'named\'></a><div data-grid="nope" grid="nope2"></div>', encoding="utf-8"
    )
    (tmp_path / "a.html").write_text(
        '<a href="b.html#there">ok</a><a href="b.html#named">ok</a><a href="sub/#deep">ok</a>'
        '<a href="b.html">ok</a><a href="b.html#there">again</a>'
        '<a href="b.html#missing">no anchor</a><a href="b.html#nope2">grid= is no id</a>'
        '<a href="c.html">no page</a><img src="https://cdn.invalid/x.png">',
        encoding="utf-8",
    )
    found = [(p.file, p.message) for p in linkcheck.check(tmp_path)]
    assert found == [
        ("a.html", "links to 'b.html#missing', but that page has no anchor 'missing'"),
        ("a.html", "links to 'b.html#nope2', but that page has no anchor 'nope2'"),
        ("a.html", "links to 'c.html', which is not in the built site"),
        ("a.html", "loads 'https://cdn.invalid/x.png' from another host"),
    ]
