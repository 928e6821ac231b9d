"""Decision index: family, verdict, mechanism, where to continue, and the evidence."""

from __future__ import annotations

from collections.abc import Iterator

from .context import Page, SiteData

PAGE = "decisions/index.md"
#: The order verdicts are shown in: what was accepted first, what was blocked last.
ORDER = ("accepted", "timing-neutral", "rejected", "research", "planned", "blocked")


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
            data=data, page=PAGE, decisions=decisions, groups=groups, pending=pending, rejected=rejected
        ),
    )
