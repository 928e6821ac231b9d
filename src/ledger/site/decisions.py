"""Decision index: family, verdict, mechanism, where to continue, and the evidence."""

from __future__ import annotations

from collections.abc import Iterator

from markupsafe import Markup

from ..pages.markdown import tables
from .context import Page, SiteData
from .escape import clip, md_inline

PAGE = "decisions/index.md"
#: The order verdicts are shown in: what was accepted first, what was blocked last.
ORDER = ("accepted", "timing-neutral", "rejected", "research", "planned", "blocked")


def _rendered_width(text: str) -> int:
    """How wide a cell of inline Markdown renders, as the cell-width rule measures it."""
    cells = list(tables(f"| x |\n|---|\n| {text} |\n", html=True))
    return max((c.width for c in cells if c.row), default=len(text))


def tried_since_cell(data: SiteData, page: str, tried: list) -> Markup:
    """The "Tried since" cell of a rejected family: its records, each with its new mechanism
    or "repeat", as many as fit the page rules' cell width (`cell-width`), then "and N more"
    (each record names its family on its own page)."""
    if not tried:
        return Markup("nothing yet")
    budget = data.cell_limit - 12  # room for ", and NN more"
    parts: list[Markup] = []
    for n, (record, new) in enumerate(tried):
        what = f"new mechanism: {clip(record.mechanism, 60)}" if new else "repeat"
        part = data.link(record.id, page) + Markup(" (") + md_inline(what) + Markup(")")
        candidate = Markup(", ").join([*parts, part])
        if parts and _rendered_width(str(candidate)) > budget:
            return Markup(", ").join(parts) + Markup(f", and {len(tried) - n} more")
        if not parts and _rendered_width(str(candidate)) > budget:
            short = data.link(record.id, page) + Markup(" (new mechanism)" if new else " (repeat)")
            parts.append(short)
            continue
        parts.append(part)
    return Markup(", ").join(parts)


def render(data: SiteData, env) -> Iterator[Page]:
    decisions = data.by_kind.get("decision", [])
    groups = []
    for verdict in ORDER:
        group = sorted((d for d in decisions if d.verdict == verdict), key=lambda d: (d.family.lower(), d.when, d.id))
        if group:
            groups.append((verdict, group))
    guidance = data.guidance
    pending = {p.decision.id: p for p in guidance.pending} if guidance is not None else {}
    rejected = guidance.rejected if guidance is not None else []
    yield Page(
        PAGE,
        env.get_template("decisions.md.j2").render(
            data=data,
            page=PAGE,
            decisions=decisions,
            groups=groups,
            pending=pending,
            rejected=rejected,
            tried_since=lambda fam: tried_since_cell(data, PAGE, list(fam.tried_since)),
        ),
    )
