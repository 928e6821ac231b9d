"""The page reader on real Markdown, including the shapes the context documents record."""

from __future__ import annotations

import pytest

from ledger import pages

PAGE = """---
title: Decode speed  # a comment
prose_budget: 3
---
# Spec

Some prose with 9.14x at 16-20 workers, 21-23% spread, and `9.67x` in code. ~9x is fine.

| threads | median s | spread | speedup |
|---|---|---|---|
| 1 | **2.0418** | 6.4% | 1.0x |
| 20 | 0.2234 | 22.8% | [**9.14x**](https://example.invalid/a_very_long_url) |
| pipe | `a | b` | 1% | 2 |

## 7. Owed

| item | owner |
|---|---|
| per-site dispatch test #1044 | LTX25-DECODE-THREADS |
| W2 gap | — |

- positive control for utilization, owner: alice
- the speed number, unmeasured
  - nested detail, not an item

## Next

- not owed

> quoted prose counts
"""


def test_front_matter_keeps_comments_and_reports_body_line():
    fm = pages.front_matter(PAGE)
    assert fm.data["prose_budget"] == 3
    assert fm.body_line == 4
    assert "# a comment" in fm.yaml_text
    assert pages.front_matter("# no front matter\n").data == {}


def test_bad_front_matter_names_the_line():
    with pytest.raises(ValueError, match="line"):
        pages.front_matter("---\ntitle: [unclosed\n---\nbody\n")


def test_table_cells_are_rendered_text_with_lines():
    cells = pages.tables(PAGE)
    linked = [c for c in cells if c.text == "9.14x"]
    assert linked and linked[0].line == 12 and linked[0].width == 5  # link target not counted
    # a pipe inside a code span is escaped by GFM only with a backslash; here it splits cells,
    # exactly as MkDocs renders it
    assert [c.header for c in cells if c.line == 11] == ["threads", "median s", "spread", "speedup"]


def test_rendered_width_counts_wide_characters_twice():
    assert pages.rendered_width("abc") == 3
    assert pages.rendered_width("表") == 2
    assert pages.rendered_width("e\u0301") == 1


def test_prose_paragraphs_skip_lists_and_count_quotes():
    paras = pages.prose_paragraphs(PAGE)
    assert [p.line for p in paras] == [7, 30]
    assert "9.67x" in paras[0].text  # code spans are visible text in prose


def test_numbered_owed_heading_is_an_owed_section():
    sections = pages.owed_sections(PAGE)
    assert [(s.title, s.level) for s in sections] == [("7. Owed", 2)]
    assert pages.owed_sections("## Owed\n- x\n")[0].title == "Owed"
    assert pages.owed_sections("### §3 Owed items\n")[0].level == 3
    assert pages.owed_sections("## Knowed\n## Owed\n")[0].line == 2
    assert pages.owed_sections("## Borrowed\n") == []


def test_owed_items_and_owners():
    items = pages.owed_items(PAGE)
    assert [(i.line, i.owner, i.issues) for i in items] == [
        (19, "LTX25-DECODE-THREADS", (1044,)),
        (20, None, ()),
        (22, "alice", ()),
        (23, None, ()),
    ]
    assert all(i.section == "7. Owed" for i in items)


def test_owed_in_code_block_is_not_a_section():
    text = "```\n## Owed\n- x\n```\n"
    assert pages.owed_sections(text) == []
    assert pages.owed_items(text) == []


def test_quoted_figures_carry_their_block_spread():
    figures = pages.quoted_figures(PAGE)
    by_text = {(f.line, f.text): f for f in figures}
    assert by_text[(7, "9.14x")].spread_percent == 23.0
    assert by_text[(7, "9.14x")].digits == 3
    assert by_text[(7, "~9x")].approximate
    assert (7, "9.67x") not in by_text  # code span
    assert by_text[(12, "9.14x")].spread_percent == 22.8
    assert all(f.text != "22.8%" for f in figures)  # the spread itself is not a quoted figure


def test_significant_digits():
    from ledger.pages.markdown import significant_digits

    assert [significant_digits(s) for s in ("9.14", "0.05", "120", "1,024", "2.500")] == [3, 1, 2, 4, 4]
