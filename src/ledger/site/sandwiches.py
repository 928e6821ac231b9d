"""Sandwiches: the arms, midpoint, delta, drift and verdict, newest first."""

from __future__ import annotations

from collections.abc import Iterator

from .context import Page, SiteData

PAGE = "sandwiches/index.md"


def render(data: SiteData, env) -> Iterator[Page]:
    rows = sorted(data.by_kind.get("sandwich", []), key=lambda s: (s.when, s.id), reverse=True)
    yield Page(PAGE, env.get_template("sandwiches.md.j2").render(data=data, page=PAGE, rows=rows))
