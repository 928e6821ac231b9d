"""A site build remembers the page rules' verdict on pages it verified (`site.build_cache`):
a second build of an unchanged ledger parses no page again and reports exactly the same
problems; a changed rule, or a page whose text changed, is verified again. Real builds with
MkDocs, the cache in the lock's folder, nothing replaced."""

from __future__ import annotations

import pytest

from ledger.site.builder import build_site
from ledger.store.ledger import Ledger


def _rules(root, max_chars: int) -> None:
    config = root / "ledger.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\nrules:\n" in text
    config.write_text(text.replace("\nrules:\n", f"\nrules:\n  cell-width: {{max_chars: {max_chars}}}\n"), "utf-8")


@pytest.mark.slow
def test_a_second_build_keeps_the_verdicts_and_a_changed_rule_forgets_them(campaign, tmp_path) -> None:
    # A narrow cell limit, so the verdicts remembered are problems, not only "nothing wrong".
    _rules(campaign.root, 30)
    first = build_site(Ledger.open(campaign.root), out=tmp_path / "site", strict=False)
    assert first.rules_cached == 0
    assert any("[cell-width]" in p.message for p in first.warnings)

    second = build_site(Ledger.open(campaign.root), out=tmp_path / "site", strict=False)
    assert second.rules_cached == second.pages == first.pages
    assert [p.as_dict() for p in second.warnings] == [p.as_dict() for p in first.warnings]

    # A new record changes the pages that list it: those, and only those, are parsed again.
    campaign.add("note", 9000, {"body": "a later note", "title": "later"})
    third = build_site(Ledger.open(campaign.root), out=tmp_path / "site", strict=False)
    assert 0 < third.pages - third.rules_cached < third.pages

    # Another limit is another verdict: nothing is answered from the cache.
    config = campaign.root / "ledger.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("max_chars: 30", "max_chars: 400"), "utf-8")
    fourth = build_site(Ledger.open(campaign.root), out=tmp_path / "site", strict=False)
    assert fourth.rules_cached == 0
    assert not any("[cell-width]" in p.message for p in fourth.warnings)


def test_a_damaged_cache_file_is_ignored(tmp_path) -> None:
    from ledger.site.build_cache import BuildCache, key

    file = tmp_path / "site.rules-cache"
    cache = BuildCache.open(file, "settings")
    cache.put(key("page.md", "text"), (("page.md", "line 1", "[cell-width] wide", "fix"),))
    cache.save()
    assert BuildCache.open(file, "settings").get(key("page.md", "text")) == (
        ("page.md", "line 1", "[cell-width] wide", "fix"),
    )
    assert BuildCache.open(file, "other settings").get(key("page.md", "text")) is None
    file.write_bytes(b"\x00not marshal")
    assert BuildCache.open(file, "settings").get(key("page.md", "text")) is None
    assert key("ab", "c") != key("a", "bc")


def test_the_cache_keeps_what_a_saved_build_used_and_nothing_unsaved(tmp_path) -> None:
    from ledger.site.build_cache import BuildCache, key

    file = tmp_path / "site.mkdocs-cache"
    first = BuildCache.open(file, "settings")
    first.put(key("a.md"), ("<p>a</p>",))
    first.put(key("b.md"), ("<p>b</p>",))
    first.save()
    # A build that used only a.md and made c.md: b.md is dropped, c.md kept.
    second = BuildCache.open(file, "settings")
    assert second.get(key("a.md")) == ("<p>a</p>",)
    second.put(key("c.md"), ("<p>c</p>",))
    second.save()
    third = BuildCache.open(file, "settings")
    assert third.get(key("b.md")) is None
    assert third.get(key("c.md")) == ("<p>c</p>",)
    # An interrupted build (never saved) leaves the cache as the last saved build left it.
    third.put(key("d.md"), ("<p>d</p>",))
    third.close()
    fourth = BuildCache.open(file, "settings")
    assert fourth.get(key("d.md")) is None
    assert fourth.get(key("a.md")) == ("<p>a</p>",)
    assert (fourth.hits, fourth.misses) == (1, 1)
    fourth.close()
    # A symlink in the cache's place is never followed: nothing is read or written through it.
    target = tmp_path / "elsewhere"
    target.write_bytes(b"")
    link = tmp_path / "linked.mkdocs-cache"
    link.symlink_to(target)
    linked = BuildCache.open(link, "settings")
    linked.put(key("a.md"), ("<p>a</p>",))
    linked.save()
    assert target.read_bytes() == b"" and BuildCache.open(link, "settings").get(key("a.md")) is None
