"""The checker's page rules, run on what the site renders.

Cells and paragraphs are measured by `ledger.pages` (markdown-it-py), the same code the
checker runs on spec pages, so the site and `ledger check` agree on what a cell is and
how wide it renders. Limits come from the ledger's config (`rules:` in ledger.yaml).
"""

from __future__ import annotations

from ..errors import Problem
from .context import Page

#: Defaults, as in PRODUCT.md: a rendered table cell of at most 220 characters.
CELL_WIDTH = 220
CELL_RULE = "page-cell-width"
PROSE_RULE = "page-prose-budget"


def _setting(rules: dict, rule: str, key: str, default):
    entry = rules.get(rule) or {}
    if entry.get("severity") == "off":
        return None
    return entry.get(key, default)


def check(pages: list[Page], rules: dict | None = None, docs_prefix: str = "") -> list[Problem]:
    """Problems (file, line, rule) in the rendered pages. An empty list means they pass."""
    from .. import pages as md

    rules = rules or {}
    width = _setting(rules, CELL_RULE, "max", CELL_WIDTH)
    budget = _setting(rules, PROSE_RULE, "max_words", None)
    problems: list[Problem] = []
    for page in pages:
        name = docs_prefix + page.path
        if width is not None:
            for cell in md.tables(page.text):
                if cell.width > width:
                    problems.append(Problem(name, f"line {cell.line}, column {cell.header or cell.column}", f"[{CELL_RULE}] table cell renders {cell.width} characters wide, over {width}", "shorten the record's text; the full text belongs on the record page"))
        if budget:
            words = sum(len(p.text.split()) for p in md.prose_paragraphs(page.text))
            if words > budget:
                problems.append(Problem(name, "", f"[{PROSE_RULE}] {words} words of prose, over the budget of {budget}", "move detail to record pages"))
    return problems
