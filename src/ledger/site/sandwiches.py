"""Sandwiches as a comparison view (Conbench's baseline against contender): each sandwich
one row, verdict and delta first, baseline (the midpoint of A and B) against candidate,
the drift that bounds what counts. Newest first; detail on each sandwich's own page."""

from __future__ import annotations

from collections.abc import Iterator

from markupsafe import Markup

from ..analysis.figures import sandwich_figures
from ..analysis.status import Column
from .context import Page, SiteData
from .escape import md_inline
from .tables import table, verdict

PAGE = "sandwiches/index.md"
COLUMNS = [
    Column("verdict", "Verdict", 1, "verdict"),
    Column("delta_percent", "Delta", 1, "figure"),
    Column("candidate_label", "Candidate", 1),
    Column("baseline", "Baseline (A, B midpoint; A in a pair)", 3, "figure"),
    Column("candidate", "Candidate value", 2, "figure"),
    Column("drift_percent", "Drift A↔B", 3, "figure"),
    Column("allocation", "Allocation", 4),
]


def rows(data: SiteData) -> list[dict]:
    out = []
    for s in sorted(data.by_kind.get("sandwich", []), key=lambda s: (s.when, s.id), reverse=True):
        f = sandwich_figures(s, data.spread_percent)
        superseded = bool(data.superseded_by.get(s.id))
        out.append(
            {
                "id": s.id,
                "record": s,
                "verdict": s.verdict + (" (superseded)" if superseded else ""),
                "delta_percent": f["delta_percent"],
                "candidate_label": s.candidate_label or s.id,
                "baseline": f["midpoint"],
                "candidate": f["candidate"],
                # A pair (no B run) has no drift: said, never shown as 0%.
                "drift_percent": f"not measured: a pair, no B (floor {f['floor_percent']})"
                if s.is_pair
                else f"{f['drift_percent']} (floor {f['floor_percent']})",
                "allocation": s.allocation.id if s.allocation else None,
                "figures": f,
            }
        )
    return out


def render(data: SiteData, env) -> Iterator[Page]:
    found = rows(data)

    def cell(col, row):
        if col.key == "candidate_label":
            return data.link(row["id"], PAGE, row["candidate_label"])
        if col.key == "verdict":
            s = row["record"]
            better = "lower" if s.lower_is_better else "higher"
            return verdict(row["verdict"]) + Markup(" ") + md_inline(f"({s.metric}, {better} is better)")
        return None

    body = table(data, PAGE, COLUMNS, found, cell) if found else None
    yield Page(
        PAGE, env.get_template("sandwiches.md.j2").render(data=data, page=PAGE, rows=found, table=body), empty=not found
    )
