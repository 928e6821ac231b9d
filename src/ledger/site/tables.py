"""Tables that fit: a section of `ledger.analysis.status` (or any columns with an importance)
as a Markdown table wrapped in a `div` whose classes tell `ledger.css` which columns leave
first on narrow screens. Importance 1 and 2 always show; 3 leaves below 760 px (phones);
4 and more below 1100 px. Figures never wrap; text wraps; ids link to their record.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from markupsafe import Markup

from ..analysis.status import NO_WRAP_ROLES, verdict_rest
from .context import SiteData
from .escape import clip, md_inline, quotation

#: Verdicts and statuses drawn as good or bad (colour is never the only signal: the word is there).
GOOD = ("accepted", "final", "fastest accepted", "faster", "supported", "pass", "armed", "detected")
BAD = (
    "rejected",
    "re-gate owed",
    "slower",
    "refuted",
    "regression",
    "baseline-ineligible",
    "no valid step",
    "blocked",
    "fail",
    "not armed",
    "survived",
    "did not build",
)


def width_classes(columns: Sequence[Any]) -> str:
    classes = []
    for i, col in enumerate(columns, 1):
        if col.importance >= 4:
            classes.append(f"w{i}")
        if col.importance >= 3:
            classes.append(f"n{i}")
    return " ".join(classes)


def verdict(text: Any) -> Markup:
    """A verdict or status word, marked good or bad for the stylesheet."""
    if text is None or text == "":
        return Markup("–")
    word = str(text).lower()
    tone = "good" if word.startswith(GOOD) else "bad" if word.startswith(BAD) else ""
    cls = f"ledger-verdict ledger-{tone}" if tone else "ledger-verdict"
    return Markup(f'<span class="{cls}">') + md_inline(text) + Markup("</span>")


def verdict_cell(word: str, qualifier: str | None = None, limit: int = 90) -> Markup:
    """The verdict marked, its qualifier after it, said once (`rejected or timing-neutral`)."""

    rest = verdict_rest(word, qualifier)
    if not rest:
        return verdict(word)
    # The qualifier is the record's own words ("+0.22% per sample"): quoted, not claimed.
    text = quotation(md_inline(clip(rest.strip(), limit)))
    return verdict(word) + (text if rest.startswith(";") else Markup(" ") + text)


def cell(data: SiteData, page: str, role: str, value: Any) -> Markup:

    if value is None or value == "" or value == []:
        return Markup("–")
    if role == "id":
        return data.link(value, page)
    if role in NO_WRAP_ROLES:  # an id is a link, above
        return Markup('<span class="ledger-fig">') + md_inline(value) + Markup("</span>")
    if role == "verdict":
        return verdict(clip(value, 90))
    if isinstance(value, Markup):
        return value
    return md_inline(clip(value))


def table(
    data: SiteData,
    page: str,
    columns: Sequence[Any],
    rows: Sequence[dict[str, Any]],
    render: Callable[[Any, dict[str, Any]], Markup | None] | None = None,
) -> Markup:
    """Rows as a fitted Markdown table. `render(column, row)` may return a cell of its own."""
    head = "| " + " | ".join(str(md_inline(c.title)) for c in columns) + " |"
    rule = "|" + "|".join("---:" if c.role == "figure" else "---" for c in columns) + "|"
    lines = [head, rule]
    for row in rows:
        cells = []
        for col in columns:
            own = render(col, row) if render else None
            cells.append(str(own if own is not None else cell(data, page, col.role, row.get(col.key))))
        lines.append("| " + " | ".join(cells) + " |")
    body = "\n".join(lines)
    return Markup(f'<div class="ledger-table {width_classes(columns)}" markdown>\n\n{body}\n\n</div>')
