"""Charts: each metric over time, one per metric and contract, as SVG made with matplotlib.

The SVG bytes are deterministic: a fixed `svg.hashsalt` (ids of clip paths and markers),
no date in the metadata, text kept as text (no font files), and no JavaScript. matplotlib
is imported here only, so `ledger add` and `ledger check` never load it.
"""

from __future__ import annotations

import hashlib
import io
import re
import warnings
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .context import Page, SiteData

INDEX = "charts/index.md"
#: Rows listed under a chart (the newest); the chart itself shows every point.
TABLE_ROWS = 200
SVG_RC = {
    "svg.hashsalt": "ledger",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
}


@dataclass
class Point:
    id: str
    when: datetime
    value: float
    topology: str
    allocation: str
    commit: str


@dataclass
class Chart:
    metric: str
    contract: str
    unit: str
    slug: str
    points: list[Point] = field(default_factory=list)

    @property
    def href(self) -> str:
        return f"{self.slug}.md"

    @property
    def svg(self) -> str:
        return f"{self.slug}.svg"


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "metric"
    if len(slug) > 80:
        # Metric and contract names are user text of any length; a file name has a 255-byte cap.

        slug = slug[:64].rstrip("-") + "-" + hashlib.sha256(slug.encode()).hexdigest()[:10]
    return slug


def _short(text: str, limit: int) -> str:
    # Text in an SVG is text, not markup: matplotlib escapes it, so only length matters here.
    return text if len(text) <= limit else text[: limit - 1] + "…"


def collect(data: SiteData) -> list[Chart]:
    contract_names = {c.id: c.name for c in data.by_kind.get("contract", [])}
    groups: dict[tuple[str, str, str], list[Point]] = defaultdict(list)
    for m in data.by_kind.get("measurement", []):
        if m.outcome != "ok" or m.median is None:
            continue
        contract = contract_names.get(m.contract or "", "")
        topology = (m.allocation.topology if m.allocation else None) or "unknown topology"
        alloc = m.allocation.id if m.allocation else ""
        commit = m.source.sha[:12] if m.source else ""
        groups[(m.metric, contract, m.unit)].append(Point(m.id, m.when, m.median, topology, alloc, commit))
        if m.mfu_percent is not None:
            groups[("MFU", contract, "%")].append(Point(m.id, m.when, m.mfu_percent, topology, alloc, commit))
    charts = []
    used: set[str] = set()
    for (metric, contract, unit), points in sorted(groups.items()):
        slug = _slug(f"{metric}-{contract}" if contract else metric)
        while slug in used:
            slug += "-x"
        used.add(slug)
        points.sort(key=lambda p: (p.when, p.id))
        charts.append(Chart(metric, contract, unit, slug, points))
    return charts


def svg(chart: Chart) -> bytes:
    """The chart as SVG bytes; the same points always give the same bytes."""
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: no global figure state, no GUI backend

    with matplotlib.rc_context(SVG_RC):
        fig = Figure(figsize=(8, 3.6), dpi=100)
        ax: Any = fig.add_subplot()  # matplotlib's stubs refuse the datetimes its date converter plots
        by_topology: dict[str, list[Point]] = defaultdict(list)
        for p in chart.points:
            by_topology[p.topology].append(p)
        for topology, points in sorted(by_topology.items()):
            ax.plot(
                [p.when for p in points],
                [p.value for p in points],
                marker="o",
                markersize=3,
                linewidth=1,
                label=_short(topology, 30),
            )
        # Commits are labelled where few enough points leave room to read them.
        if len(chart.points) <= 20:
            for p in chart.points:
                if p.commit:
                    ax.annotate(p.commit[:7], (p.when, p.value), fontsize=6, xytext=(2, 4), textcoords="offset points")
        ax.set_ylabel(_short(f"{chart.metric} ({chart.unit})", 40))
        ax.set_title(_short(f"{chart.metric}" + (f" under {chart.contract}" if chart.contract else ""), 90))
        if by_topology:
            ax.legend(loc="best", fontsize=7)
        fig.autofmt_xdate()
        with warnings.catch_warnings():
            # A label too long for the margins only costs layout; the library never warns.
            warnings.simplefilter("ignore")
            fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def render(data: SiteData, env, write_bytes) -> Iterator[Page]:
    """Chart pages; `write_bytes(path, bytes)` writes each SVG beside its page."""
    charts = collect(data)
    template = env.get_template("chart.md.j2")
    for chart in charts:
        page = f"charts/{chart.slug}.md"
        write_bytes(f"charts/{chart.svg}", svg(chart))
        shown = Chart(chart.metric, chart.contract, chart.unit, chart.slug, list(reversed(chart.points))[:TABLE_ROWS])
        yield Page(page, template.render(data=data, page=page, chart=shown, total=len(chart.points)))
    yield Page(INDEX, env.get_template("charts_index.md.j2").render(data=data, page=INDEX, charts=charts))
