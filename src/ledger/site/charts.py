"""Charts that cannot mislead: each metric by commit, one per metric and contract (and one per
metric for the measurements of no contract, their points never joined), as SVG.

- The x-axis is the measured source's order: one position per commit, labelled by short
  SHA and date, in the source checkout's topological order (`SiteData.commit_order`, read
  from git at build time). Where a commit is not in the checkout, commits are ordered by
  their first measurement and the axis says so. Write time is never an axis.
- One series per topology (the chart is per contract). A degraded or baseline-ineligible
  point is drawn hollow and never joined to the healthy line.
- Every point with a spread carries a bar: the interquartile range of its samples, or the
  recorded min-max range.
- The y-axis starts at zero, with its unit; the x-axis names what it orders by. A metric
  recorded in several units of time (ms and s) is one chart, in the unit most of its
  points were recorded in, every point converted (never two charts with one title).
- Deterministic SVG: a fixed `svg.hashsalt`, no date, text as text, no JavaScript.
  matplotlib is imported inside the drawing function (as in site.investigation), never at
  import, so `ledger add` and `ledger check` never load it.
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..analysis.figures import interquartile, quote_width
from ..analysis.metrics import recompute
from ..analysis.stopping_point import _gpus_of
from ..schema.kinds import FlopAudit, Measurement
from ..units import convert, is_time
from .context import Page, SiteData

INDEX = "charts/index.md"
#: Rows listed under a chart (the newest commits); the chart itself shows every point.
TABLE_ROWS = 200
#: Most commit labels on one axis; beyond, every k-th commit is labelled.
MAX_TICKS = 16
SVG_RC = {
    "svg.hashsalt": "ledger",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.alpha": 0.3,
    # User text (metric, contract, topology names) is drawn literally: `$...$` is not
    # mathtext (a bad expression raised and stopped the whole site build) and no TeX runs.
    "text.parse_math": False,
    "text.usetex": False,
}
#: Colour-blind-safe series colours (Okabe-Ito), in topology order.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
ORDER_GIT = "commit (short SHA, commit date) in the source checkout's order"
ORDER_FIRST_SEEN = "commit (short SHA, date first measured) in order of first measurement"


@dataclass
class Point:
    id: str
    when: datetime
    value: float
    topology: str
    allocation: str
    commit: str  # full (or recorded abbreviated) SHA, "" when the record has no source stamp
    eligible: bool
    low: float | None = None
    high: float | None = None
    spread: str = ""  # "IQR" or "range"
    status: str = "healthy"
    x: float = 0.0
    spread_text: str = "–"


@dataclass
class Chart:
    metric: str
    contract: str
    contract_id: str
    unit: str
    slug: str
    points: list[Point] = field(default_factory=list)
    commits: list[tuple[str, str]] = field(default_factory=list)  # (label sha, label date) per x position
    x_label: str = ORDER_FIRST_SEEN

    @property
    def href(self) -> str:
        return f"{self.slug}.md"

    @property
    def svg(self) -> str:
        return f"{self.slug}.svg"

    @property
    def thumb(self) -> str:
        return self.svg

    @property
    def title(self) -> str:
        return f"{_metric_name(self.metric)} under {self.contract}" if self.contract else _metric_name(self.metric)

    @property
    def y_label(self) -> str:
        return f"{_metric_name(self.metric)} ({self.unit})" if self.unit else _metric_name(self.metric)


def _metric_name(metric: str) -> str:
    return {"step_time": "median step time", "MFU": "MFU", "throughput": "throughput"}.get(
        metric, metric.replace("_", " ")
    )


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "metric"
    if len(slug) > 80:
        # Metric and contract names are user text of any length; a file name has a 255-byte cap.

        slug = slug[:64].rstrip("-") + "-" + hashlib.sha256(slug.encode()).hexdigest()[:10]
    return slug


def _short(text: str, limit: int) -> str:
    # Text in an SVG is text, not markup: matplotlib escapes it, and SVG_RC turns mathtext
    # off, so only length matters here.
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _spread(m: Measurement) -> tuple[float | None, float | None, str]:
    """(low, high, kind) of a measurement's median: IQR of its samples, else its recorded range."""
    if len(m.samples) >= 2:
        q1, q3 = interquartile(m.samples)
        return q1, q3, "IQR"
    if m.min is not None and m.max is not None and m.max >= m.min:
        return m.min, m.max, "range"
    return None, None, ""


def _status(m: Measurement, health: str) -> str:
    """A point's status: its health as the stopping point judges it (`SiteData.health`)."""
    if health == "degraded":
        return "degraded"
    if not m.comparable:
        return "not comparable"
    return "healthy" if health == "healthy" else "health unknown"


def collect(data: SiteData) -> list[Chart]:
    contracts = {c.id: c.name for c in data.by_kind.get("contract", [])}
    audits = {a.contract: a for a in data.by_kind.get("flop-audit", []) if isinstance(a, FlopAudit) and a.contract}
    groups: dict[tuple[str, str, str], list[Point]] = defaultdict(list)
    #: Points recorded in a unit of time are grouped as "time" and converted when charted.
    units_of: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    # The current contract's sweep is charted over its parameter on the Sweeps page, not by
    # commit (where every point of a sweep lands on one commit); another contract's sweep has no
    # Sweeps page, so it stays here. Superseded records are corrections' past, not points.
    current = data.current_contract()
    names = {p.name for p in getattr(current, "sweep", None) or []}
    swept = {current.id: names} if current is not None and names else {}
    superseded = set(data.superseded_by)
    for m in data.by_kind.get("measurement", []):
        if not isinstance(m, Measurement) or m.outcome != "ok" or m.median is None:
            continue
        if m.id in superseded or (m.contract in swept and swept[m.contract] & set(m.parameters)):
            continue
        cid = m.contract or ""
        topology = (m.allocation.topology if m.allocation else None) or "unknown topology"
        alloc = m.allocation.id if m.allocation else ""
        commit = m.source.sha if m.source else ""
        # Judged as the stopping point judges it: a run recorded healthy whose allocation's
        # readings say degraded is not joined as a healthy point.
        health, _ = data.health(m)
        eligible = m.baseline_eligible and health != "degraded"
        low, high, kind = _spread(m)
        base: dict[str, Any] = dict(
            id=m.id, when=m.when, topology=topology, allocation=alloc, commit=commit, eligible=eligible
        )
        key = (m.metric, cid, TIME if is_time(m.unit) else m.unit)
        groups[key].append(Point(value=m.median, low=low, high=high, spread=kind, status=_status(m, health), **base))
        units_of[key].append(m.unit)
        audit = data.by_id.get(m.flop_audit) if m.flop_audit else audits.get(cid)
        derived = recompute(m, audit) if isinstance(audit, FlopAudit) else None
        mfu = derived["mfu_percent"] if derived else m.mfu_percent
        tput = derived["throughput"] if derived else m.throughput
        # MFU and throughput are inversely proportional to the step time: the same relative spread.
        for metric, unit, value in (("MFU", "%", mfu), ("throughput", m.throughput_unit or "samples/s", tput)):
            if value is None:
                continue
            lo = value * m.median / high if high and m.metric == "step_time" else None
            hi = value * m.median / low if low and m.metric == "step_time" else None
            groups[(metric, cid, unit)].append(
                Point(value=value, low=lo, high=hi, spread=kind if lo else "", status=_status(m, health), **base)
            )
    charts = []
    used: set[str] = set()
    for (metric, cid, unit), points in sorted(groups.items()):
        if unit == TIME:
            unit = _convert_points(points, units_of[(metric, cid, unit)])
        contract = contracts.get(cid, "")
        slug = _slug(f"{metric}-{contract}" if contract else metric)
        while slug in used:
            slug += "-x"
        used.add(slug)
        chart = Chart(metric, contract, cid, unit, slug, points)
        _place(chart, data.commit_order)
        charts.append(chart)
    return charts


#: The group key of the points recorded in a unit of time (converted to one unit per chart).
TIME = "\0time"


def _convert_points(points: list[Point], units: list[str]) -> str:
    """Every point in the unit most of them were recorded in (ties: the longer unit, so
    figures stay small); `units[i]` is the unit point i was recorded in."""
    counts: dict[str, int] = defaultdict(int)
    for u in units:
        counts[u] += 1
    target = max(counts, key=lambda u: (counts[u], convert(1.0, u, "s"), u))
    for p, u in zip(points, units, strict=True):
        if u == target:
            continue
        p.value = convert(p.value, u, target)
        p.low = None if p.low is None else convert(p.low, u, target)
        p.high = None if p.high is None else convert(p.high, u, target)
    return target


def _place(chart: Chart, order: dict[str, tuple[int, str]]) -> None:
    """x positions: one per commit in source order; points of one commit side by side."""
    first: dict[str, tuple[datetime, str]] = {}
    for p in chart.points:
        key = p.commit or f"run:{p.id}"
        seen = (p.when, p.id)
        first[key] = min(first.get(key, seen), seen)
    known = all(k in order for k in first if not k.startswith("run:")) and any(k in order for k in first)
    if known:
        keys = sorted(first, key=lambda k: (order[k][0], "") if k in order else (math.inf, first[k][1]))
        chart.x_label = ORDER_GIT
    else:
        keys = sorted(first, key=lambda k: first[k])
        chart.x_label = ORDER_FIRST_SEEN
    position = {k: i for i, k in enumerate(keys)}
    chart.commits = []
    for k in keys:
        if k.startswith("run:"):
            chart.commits.append(("no commit", first[k][0].strftime("%Y-%m-%d")))
        else:
            date = order[k][1] if known and k in order else first[k][0].strftime("%Y-%m-%d")
            chart.commits.append((k[:7], date))
    # Several points on one commit sit side by side, in topology then record order.
    by_commit: dict[int, list[Point]] = defaultdict(list)
    for p in chart.points:
        by_commit[position[p.commit or f"run:{p.id}"]].append(p)
    for x, group in by_commit.items():
        group.sort(key=lambda p: (_gpus_of(p.topology), p.topology, not p.eligible, p.when, p.id))
        width = min(0.6, 0.15 * (len(group) - 1))
        for i, p in enumerate(group):
            p.x = x + (width * (i / (len(group) - 1) - 0.5) if len(group) > 1 else 0.0)
    chart.points.sort(key=lambda p: (p.x, p.id))


def svg(chart: Chart, *, width: float = 8.0, height: float = 3.8) -> bytes:
    """The chart as SVG bytes; the same points always give the same bytes."""
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: no global figure state, no GUI backend
    from matplotlib.lines import Line2D

    with matplotlib.rc_context(SVG_RC):
        fig = Figure(figsize=(width, height), dpi=100)
        ax: Any = fig.add_subplot()  # matplotlib's stubs refuse the datetimes and None gaps it plots
        topologies = sorted({p.topology for p in chart.points}, key=lambda t: (_gpus_of(t), t))
        handles = []
        for n, topology in enumerate(topologies):
            colour = COLOURS[n % len(COLOURS)]
            series = [p for p in chart.points if p.topology == topology]
            good = [p for p in series if p.eligible]
            bad = [p for p in series if not p.eligible]
            for group, hollow in ((good, False), (bad, True)):
                bars = [p for p in group if p.low is not None and p.high is not None]
                if bars:
                    ax.vlines(
                        [p.x for p in bars],
                        [p.low for p in bars],
                        [p.high for p in bars],
                        colors=colour,
                        linewidth=1.2,
                        alpha=0.45 if hollow else 0.8,
                    )
            if good:
                # Only healthy, eligible points are joined: a degraded run is not a regression.
                # Points under no contract share no measurement contract (other kernels, other
                # shapes): a line between them would draw a trend the data does not hold.
                ax.plot(
                    [p.x for p in good],
                    [p.value for p in good],
                    color=colour,
                    linewidth=1.2,
                    linestyle="-" if chart.contract_id else "none",
                    marker="o",
                    markersize=4,
                    markerfacecolor=colour,
                    markeredgecolor=colour,
                    gid=f"joined-{n}",
                )
            if bad:
                ax.plot(
                    [p.x for p in bad],
                    [p.value for p in bad],
                    linestyle="none",
                    marker="o",
                    markersize=6,
                    markerfacecolor="white",
                    markeredgecolor=colour,
                    markeredgewidth=1.4,
                    gid=f"unjoined-{n}",
                )
            handles.append(Line2D([], [], color=colour, marker="o", markersize=4, label=_short(topology, 28)))
        if not chart.contract_id:
            handles.append(
                Line2D([], [], linestyle="none", marker="", label="no contract: points not comparable, not joined")
            )
        if any(not p.eligible for p in chart.points):
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker="o",
                    markersize=6,
                    markerfacecolor="white",
                    markeredgecolor="#555555",
                    label="degraded or ineligible (not joined)",
                )
            )
        kinds = sorted({p.spread for p in chart.points if p.spread})
        if kinds:
            text = " / ".join({"IQR": "interquartile range", "range": "min-max range"}[k] for k in kinds)
            handles.append(Line2D([], [], color="#555555", linewidth=1.2, label=f"bar: {text}"))
        n = len(chart.commits)
        step = max(1, math.ceil(n / MAX_TICKS))
        ticks = list(range(0, n, step))
        ax.set_xticks(ticks, labels=[f"{chart.commits[i][0]}\n{chart.commits[i][1]}" for i in ticks], fontsize=7)
        ax.set_xlim(-0.6, max(n - 1, 0) + 0.6)
        top = max([p.high if p.high is not None else p.value for p in chart.points] or [1.0])
        ax.set_ylim(0, top * 1.12 if top > 0 else 1.0)
        ax.set_ylabel(_short(chart.y_label, 48))
        ax.set_xlabel(_short(chart.x_label + (f"; every {step}th labelled" if step > 1 else ""), 100), fontsize=8)
        ax.set_title(_short(chart.title, 90), fontsize=10)
        if handles:
            ax.legend(handles=handles, loc="lower left", fontsize=7, framealpha=0.9)
        # Fixed margins rather than tight_layout: measuring every label's extent doubled the
        # cost of a chart, and the labels here have bounded lengths (clipped above).
        fig.subplots_adjust(left=0.085, right=0.985, top=0.92, bottom=0.2)
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def render(data: SiteData, env, write_bytes, charts: list[Chart] | None = None) -> Iterator[Page]:
    """Chart pages; `write_bytes(path, bytes)` writes each SVG beside its page."""
    charts = collect(data) if charts is None else charts
    template = env.get_template("chart.md.j2")
    for chart in charts:
        page = f"charts/{chart.slug}.md"
        write_bytes(f"charts/{chart.svg}", svg(chart))
        rows = sorted(chart.points, key=lambda p: (-p.x, p.id))[:TABLE_ROWS]
        for p in rows:
            if p.low is not None and p.high is not None:
                # The width, to the digits the measurement's spread supports (the page rules check
                # every figure of a row against the record it links).
                width = quote_width(p.high - p.low, data.spread_percent(p.id), chart.unit)
                p.spread_text = f"{p.spread} {width}"
        yield Page(page, template.render(data=data, page=page, chart=chart, rows=rows, total=len(chart.points)))
    yield Page(INDEX, env.get_template("charts_index.md.j2").render(data=data, page=INDEX, charts=charts))
