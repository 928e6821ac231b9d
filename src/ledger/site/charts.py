"""Charts that cannot mislead: each metric by commit, one per metric and contract (and one per
metric for the measurements of no contract, their points never joined), and a campaign's
sandwiches as sandwiches, as SVG.

- The x-axis is the measured source's order: one position per commit, labelled by short
  SHA and date, in the source checkout's topological order (`SiteData.commit_order`, read
  from git at build time). Where a commit is not in the checkout, commits are ordered by
  their first measurement and the axis says so. Write time is never an axis.
- Points of one commit are never a trend line. One series per topology: the stopping
  point's history (the measurements an accepted decision cites, one per commit, the one
  decided last) is the solid line; other runs are joined (dashed) only where no commit has
  two of them; a degraded or baseline-ineligible point is drawn hollow and never joined.
  Points of one commit share its x; only those whose markers would overlap sit side by side.
- A sandwich's arms are not points of a history: they are drawn on the contract's
  sandwiches chart (A, candidate, B side by side per change, in the order tried, with the
  verdict), and left off the by-commit charts (an accepted candidate stays: it is history).
- Every point with a spread carries a bar: the interquartile range of its samples, or the
  recorded min-max range. Every point carries its value, spread, commit and record as a
  hover text and links to its record (`chart_svg`).
- The y-axis starts at zero, with its unit; the x-axis names what it orders by. A metric
  recorded in several units of time (ms and s) is one chart, in the unit most of its
  points were recorded in, every point converted (never two charts with one title).
- Two drawings per chart: a wide one and one for a phone's width (fewer ticks, the legend
  below), inlined in the page (the page's colours, light or dark) and written beside it.
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
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from importlib import metadata
from typing import Any

from markupsafe import Markup
from pydantic import BaseModel

from ..analysis.figures import interquartile, quote_width, sandwich_figures
from ..analysis.metrics import recompute
from ..analysis.stopping_point import _gpus_of, cited_by
from ..schema.kinds import Decision, FlopAudit, Measurement, Sandwich
from ..units import convert, is_time
from . import chart_svg
from .build_cache import BuildCache, key
from .chart_svg import COLOURS, FG, SVG_RC
from .context import Page, SiteData, short_id

__all__ = ["SVG_RC", "Chart", "SandwichChart", "collect", "render", "sandwich_svg", "svg"]

INDEX = "charts/index.md"
#: Rows listed under a chart (the newest commits); the chart itself shows every point.
TABLE_ROWS = 200
#: Most commit labels on one axis (wide, narrow); beyond, every k-th commit is labelled.
MAX_TICKS = 16
MAX_TICKS_NARROW = 4
ORDER_GIT = "commit (short SHA, commit date) in the source checkout's order"
ORDER_FIRST_SEEN = "commit (short SHA, date first measured) in order of first measurement"
#: What a point is in its chart (`Point.role`).
HISTORY = "history"  # cited by an accepted decision: the stopping point's history
RUN = "run"  # any other measurement
ROLE_TEXT = {HISTORY: "the stopping point's history (an accepted decision cites it)", RUN: "a run"}
VERDICT_COLOURS = {"faster": "#009E73", "slower": "#D55E00", "neutral": FG}


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
    role: str = RUN
    #: On the line its series draws (set by `_join`).
    joined: bool = False
    #: The hover text: value, spread, commit, record (set by `collect`).
    title: str = ""
    #: (docs page, anchor) of the record the point links to; None when it is not on the site.
    page: tuple[str, str] | None = None
    #: On a sandwiches chart: "A", "candidate" or "B".
    arm: str = ""


class _ChartFiles:
    """A chart's page, its wide drawing and its narrow one, named from its slug."""

    slug: str

    @property
    def href(self) -> str:
        return f"{self.slug}.md"

    @property
    def svg(self) -> str:
        return f"{self.slug}.svg"

    @property
    def thumb(self) -> str:
        """The narrow drawing: its labels stay readable at a thumbnail's width."""
        return f"{self.slug}.narrow.svg"


@dataclass
class Chart(_ChartFiles):
    metric: str
    contract: str
    contract_id: str
    unit: str
    slug: str
    points: list[Point] = field(default_factory=list)
    commits: list[tuple[str, str]] = field(default_factory=list)  # (label sha, label date) per x position
    x_label: str = ORDER_FIRST_SEEN
    #: Sandwich arms of this metric and contract left to the sandwiches chart (`sandwiches`).
    arms: int = 0
    sandwiches: SandwichChart | None = None

    @property
    def title(self) -> str:
        return f"{_metric_name(self.metric)} under {self.contract}" if self.contract else _metric_name(self.metric)

    @property
    def y_label(self) -> str:
        return f"{_metric_name(self.metric)} ({self.unit})" if self.unit else _metric_name(self.metric)

    def series(self) -> list[tuple[str, str, list[Point]]]:
        """(role, topology, points in x order) of every line the chart draws."""
        out = []
        for topology in self.topologies():
            for role in (HISTORY, RUN):
                line = sorted(
                    (p for p in self.points if p.joined and p.role == role and p.topology == topology),
                    key=lambda p: p.x,
                )
                if len(line) >= 2:
                    out.append((role, topology, line))
        return out

    def topologies(self) -> list[str]:
        return sorted({p.topology for p in self.points}, key=lambda t: (_gpus_of(t), t))


@dataclass
class SandwichChart(_ChartFiles):
    """A contract's sandwiches of one metric: per sandwich, in the order tried, A, the
    candidate and B side by side, the A-B midpoint as a dash, the candidate coloured by the
    verdict."""

    metric: str
    contract: str
    contract_id: str
    unit: str
    slug: str
    tried: list[Sandwich] = field(default_factory=list)  # in the order tried
    points: list[Point] = field(default_factory=list)
    accepted: set[str] = field(default_factory=set)  # sandwich ids an accepted decision cites

    @property
    def title(self) -> str:
        what = f"{_metric_name(self.metric)} sandwiches"
        return f"{what} under {self.contract}" if self.contract else what

    @property
    def y_label(self) -> str:
        return f"{_metric_name(self.metric)} ({self.unit})" if self.unit else _metric_name(self.metric)

    x_label = "sandwich, in the order tried (its verdict below)"


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
    # off, so only length matters here. Titles wrap (chart_svg.wrap); legend entries clip.
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


def _accepted(data: SiteData) -> set[str]:
    """The records accepted decisions cite (with each cited sandwich's candidate), as the
    stopping point counts them: the points of its history."""
    superseded = set(data.superseded_by)
    out: set[str] = set()
    for d in data.by_kind.get("decision", []):
        if isinstance(d, Decision) and d.id not in superseded and d.verdict == "accepted":
            out |= cited_by(d, data.by_id)
    return out


def collect(data: SiteData) -> list[Chart | SandwichChart]:
    contracts = {c.id: c.name for c in data.by_kind.get("contract", [])}
    audits = {a.contract: a for a in data.by_kind.get("flop-audit", []) if isinstance(a, FlopAudit) and a.contract}
    groups: dict[tuple[str, str, str], list[Point]] = defaultdict(list)
    #: Points recorded in a unit of time are grouped as "time" and converted when charted.
    units_of: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    # A contract's sweep is charted over its parameter on the Sweeps page, not by commit
    # (where every point of a sweep lands on one commit). Superseded records are
    # corrections' past, not points.
    swept = {c.id: {p.name for p in c.sweep} for c in data.by_kind.get("contract", []) if getattr(c, "sweep", None)}
    superseded = set(data.superseded_by)
    accepted = _accepted(data)
    sandwiches = [s for s in data.by_kind.get("sandwich", []) if isinstance(s, Sandwich) and s.id not in superseded]
    arms = {a for s in sandwiches for a in (s.control_a, s.candidate, s.control_b) if a}
    left: dict[tuple[str, str], int] = defaultdict(int)  # (contract, metric) -> arms left off
    for m in data.by_kind.get("measurement", []):
        if not isinstance(m, Measurement) or m.outcome != "ok" or m.median is None:
            continue
        if m.id in superseded or (m.contract in swept and swept[m.contract] & set(m.parameters)):
            continue
        cid = m.contract or ""
        if m.id in arms and m.id not in accepted:
            left[(cid, m.metric)] += 1
            continue
        topology = (m.allocation.topology if m.allocation else None) or "unknown topology"
        alloc = m.allocation.id if m.allocation else ""
        commit = m.source.sha if m.source else ""
        # Judged as the stopping point judges it: a run recorded healthy whose allocation's
        # readings say degraded is not joined as a healthy point.
        health, _ = data.health(m)
        eligible = m.baseline_eligible and health != "degraded"
        low, high, kind = _spread(m)
        base: dict[str, Any] = dict(
            id=m.id,
            when=m.when,
            topology=topology,
            allocation=alloc,
            commit=commit,
            eligible=eligible,
            role=HISTORY if m.id in accepted else RUN,
            page=data.record_path(m.id),
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
    used: set[str] = set()

    def slug_of(text: str) -> str:
        slug = _slug(text)
        while slug in used:
            slug += "-x"
        used.add(slug)
        return slug

    by_sandwich = _sandwich_charts(data, sandwiches, contracts, accepted, slug_of)
    charts: list[Chart | SandwichChart] = list(
        _by_commit(data, groups, units_of, contracts, by_sandwich, left, slug_of)
    )
    charts.extend(c for _, c in sorted(by_sandwich.items()))
    return charts


def _by_commit(data: SiteData, groups, units_of, contracts, by_sandwich, left, slug_of) -> Iterator[Chart]:
    """The by-commit chart of each (metric, contract, unit) group of points."""
    for (metric, cid, unit), points in sorted(groups.items()):
        if unit == TIME:
            unit = _convert_points(points, units_of[(metric, cid, unit)])
        contract = contracts.get(cid, "")
        chart = Chart(metric, contract, cid, unit, slug_of(f"{metric}-{contract}" if contract else metric), points)
        _place(chart, data.commit_order)
        _join(chart)
        chart.sandwiches = by_sandwich.get((cid, metric)) or next(
            (c for (k, _), c in sorted(by_sandwich.items()) if k == cid and cid), None
        )
        # The arms left off are counted on the chart of the sandwiches' own metric and on
        # the charts derived from it (MFU, throughput of a step time).
        chart.arms = left.get((cid, metric), 0) or (
            sum(n for (k, _), n in left.items() if k == cid) if metric in ("MFU", "throughput") else 0
        )
        for p in points:
            p.title = _title(data, p, chart.unit, _metric_name(metric))
        yield chart


def _sandwich_charts(data: SiteData, sandwiches: list[Sandwich], contracts, accepted, slug_of):
    """(contract id, metric) -> the sandwiches chart of that contract and metric."""
    groups: dict[tuple[str, str, str], list[Sandwich]] = defaultdict(list)
    for s in sandwiches:
        groups[(s.contract or "", s.metric, s.unit)].append(s)
    out: dict[tuple[str, str], SandwichChart] = {}
    for (cid, metric, unit), group in sorted(groups.items()):
        if (cid, metric) in out:
            continue  # one chart per contract and metric: the first unit (sorted) is charted
        group.sort(key=lambda s: (s.when, s.id))
        contract = contracts.get(cid, "")
        chart = SandwichChart(
            metric,
            contract,
            cid,
            unit,
            slug_of(f"sandwiches-{metric}-{contract}" if contract else f"sandwiches-{metric}"),
            group,
            accepted={s.id for s in group if s.id in accepted or s.candidate in accepted},
        )
        name = _metric_name(metric)
        for i, s in enumerate(group):
            shown = sandwich_figures(s, data.spread_percent)
            label = s.candidate_label or short_id(s.id)
            verdict = f"{s.verdict} {shown['delta_percent']}" + (", accepted" if s.id in chart.accepted else "")
            drift = shown["drift_percent"]
            arms: list[tuple[str, str | None, float, float]] = [
                ("A", s.control_a, s.a_value, -0.25),
                ("candidate", s.candidate, s.candidate_value, 0.0),
            ]
            if s.b_value is not None:
                arms.append(("B", s.control_b, s.b_value, 0.25))
            for arm, rid, value, dx in arms:
                m = data.by_id.get(rid) if rid else None
                low, high, kind = _spread(m) if isinstance(m, Measurement) and m.unit == unit else (None, None, "")
                commit = m.source.sha if isinstance(m, Measurement) and m.source else ""
                shown_value = shown["a" if arm == "A" else "b" if arm == "B" else "candidate"]
                spread = f" · {kind} {_at(low, shown_value)}–{_at(high, shown_value)}" if kind else ""
                record = rid if rid and m is not None else s.id
                title = (
                    f"#{i + 1} {label}: {arm} {shown_value}{spread}\n"
                    f"{name}; verdict {verdict}; drift A↔B {drift}\n"
                    f"commit {commit[:9] or 'not recorded'}\n"
                    f"record {record} (sandwich {s.id})"
                )
                chart.points.append(
                    Point(
                        id=record,
                        when=s.when,
                        value=float(value),
                        topology=(s.allocation.topology if s.allocation else None) or "",
                        allocation=s.allocation.id if s.allocation else "",
                        commit=commit,
                        eligible=True,
                        low=low,
                        high=high,
                        spread=kind,
                        x=i + dx,
                        arm=arm,
                        title=title,
                        page=data.record_path(record),
                        status=s.verdict,
                    )
                )
        out[(cid, metric)] = chart
    return out


def _at(value: float | None, shown: str) -> str:
    """`value` with the decimals of the figure `shown` beside it ("0.8445 s" -> 4)."""
    if value is None:
        return "–"
    number = re.search(r"[-+]?\d+(?:\.(\d+))?", shown)
    places = len(number.group(1) or "") if number else 3
    return f"{value:.{places}f}"


def _title(data: SiteData, p: Point, unit: str, name: str) -> str:
    """A point's hover text: value (to the digits its spread supports), spread, commit,
    topology, what the point is and its status, and the record."""
    value = data.quote(p.id, p.value, unit)
    lines = [f"{name} {value}"]
    if p.low is not None and p.high is not None:
        lines[0] += f" · {p.spread} {data.quote(p.id, p.low, unit)} – {data.quote(p.id, p.high, unit)}"
    lines.append(f"commit {p.commit[:9] if p.commit else 'not recorded'} · {p.topology}")
    lines.append(f"{ROLE_TEXT[p.role]} · {p.status}" + ("" if p.eligible else ", not joined"))
    lines.append(f"record {p.id}")
    return "\n".join(lines)


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


def _key(p: Point) -> str:
    return p.commit or f"run:{p.id}"


def _join(chart: Chart) -> None:
    """Which points the lines go through: never two points of one commit.

    Per topology, the stopping point's history (one point per commit: the one recorded
    last) is one line; the other eligible runs are another, drawn only when no commit has
    two of them (which of two runs of one commit would a line go through?). Points under no
    contract share no measurement contract: never joined."""
    if not chart.contract_id:
        return
    for topology in chart.topologies():
        mine = [p for p in chart.points if p.topology == topology and p.eligible]
        history: dict[str, Point] = {}
        for p in sorted((p for p in mine if p.role == HISTORY), key=lambda p: (p.when, p.id)):
            history[_key(p)] = p
        if len(history) >= 2:
            for p in history.values():
                p.joined = True
        runs = [p for p in mine if p.role == RUN]
        if len(runs) >= 2 and len({_key(p) for p in runs}) == len(runs):
            for p in runs:
                p.joined = True


#: Values of one commit closer than this share of the chart's largest value would draw their
#: markers over each other: only those sit side by side.
OVERLAP = 0.03


def _place(chart: Chart, order: dict[str, tuple[int, str]]) -> None:
    """x positions: one per commit in source order; points of one commit side by side."""
    first: dict[str, tuple[datetime, str]] = {}
    for p in chart.points:
        key = _key(p)
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
    # Points of one commit sit on the commit's x. Only points whose values would overlap are
    # moved apart, side by side in topology then record order: spread left to right in that
    # order, 0.71 s (4x), 0.99 s (8x) and 1.42 s (8x, degraded) of one commit read as a climb
    # between commits that never happened.
    by_commit: dict[int, list[Point]] = defaultdict(list)
    for p in chart.points:
        by_commit[position[_key(p)]].append(p)
    near = OVERLAP * max((abs(p.value) for p in chart.points), default=1.0)
    for x, group in by_commit.items():
        clusters: list[list[Point]] = []
        for p in sorted(group, key=lambda p: (p.value, p.id)):
            if clusters and p.value - clusters[-1][-1].value <= near:
                clusters[-1].append(p)
            else:
                clusters.append([p])
        for cluster in clusters:
            cluster.sort(key=lambda p: (_gpus_of(p.topology), p.topology, not p.eligible, p.when, p.id))
            width = min(0.6, 0.15 * (len(cluster) - 1))
            for i, p in enumerate(cluster):
                p.x = x + (width * (i / (len(cluster) - 1) - 0.5) if len(cluster) > 1 else 0.0)
    chart.points.sort(key=lambda p: (p.x, p.id))


@dataclass
class _Layout:
    """A drawing's size and margins, in inches: wide or narrow (a phone's width)."""

    narrow: bool
    width: float
    axes_height: float
    left: float
    title_size: float
    tick_size: float
    label_size: float
    legend_size: float
    legend_columns: int

    @classmethod
    def of(cls, narrow: bool) -> _Layout:
        if narrow:
            return cls(True, chart_svg.NARROW_WIDTH_IN, 2.3, 0.62, 9.5, 8, 8, 8, 1)
        return cls(False, 8.0, 2.7, 0.75, 10, 7, 8, 7, 3)


def _frame(fig, ax, lay: _Layout, title: str, x_label: str, y_label: str, handles, tick_lines: int):
    """Title, axis labels and legend laid out in inches, wrapped (never clipped); sets the
    figure's height to what they take."""
    plot_width = lay.width - lay.left - 0.15
    t_lines = chart_svg.wrap(title, lay.width - 0.2, lay.title_size)
    x_lines = chart_svg.wrap(x_label, plot_width, lay.label_size)
    y_lines = chart_svg.wrap(y_label, lay.axes_height, lay.label_size)[:2]
    top = 0.12 + chart_svg.lines_height_in(len(t_lines), lay.title_size)
    rows = math.ceil(len(handles) / lay.legend_columns) if handles else 0
    legend = chart_svg.lines_height_in(rows, lay.legend_size) * 1.25 + (0.12 if rows else 0)
    bottom = (
        0.08
        + chart_svg.lines_height_in(tick_lines, lay.tick_size)
        + chart_svg.lines_height_in(len(x_lines), lay.label_size)
        + legend
        + 0.1
    )
    left = lay.left + (chart_svg.lines_height_in(1, lay.label_size) if len(y_lines) > 1 else 0)
    height = top + lay.axes_height + bottom
    fig.set_size_inches(lay.width, height)
    fig.subplots_adjust(left=left / lay.width, right=1 - 0.15 / lay.width, top=1 - top / height, bottom=bottom / height)
    fig.suptitle("\n".join(t_lines), fontsize=lay.title_size, y=1 - 0.06 / height, va="top")
    ax.set_xlabel("\n".join(x_lines), fontsize=lay.label_size)
    ax.set_ylabel("\n".join(y_lines), fontsize=lay.label_size)
    ax.tick_params(axis="y", labelsize=lay.tick_size)
    if handles:
        fig.legend(
            handles=handles,
            loc="lower left",
            bbox_to_anchor=(left / lay.width, 0.06 / height),
            ncol=lay.legend_columns,
            fontsize=lay.legend_size,
            frameon=False,
        )


def _marks(ax, points: list[Point], marks: list[tuple[str, str]], href, **style) -> None:
    """`points` as one scatter whose every marker links to its record with its hover text."""
    if not points:
        return
    urls = []
    for p in points:
        urls.append(f"ledger:{len(marks)}")
        marks.append((href(p), p.title))
    scatter = ax.scatter([p.x for p in points], [p.value for p in points], zorder=3, **style)
    scatter.set_urls(urls)


def _hrefs(directory_urls: bool):
    def href(p: Point) -> str:
        # From the SVG file's folder (charts/); an inlined copy is re-based by chart_svg.inline.
        return chart_svg.html_href("charts", *p.page, directory_urls=directory_urls) if p.page else "#"

    return href


def svg(chart: Chart, *, narrow: bool = False, directory_urls: bool = False) -> bytes:
    """The chart as SVG bytes; the same points always give the same bytes."""
    import matplotlib
    from matplotlib.figure import Figure  # no pyplot: no global figure state, no GUI backend
    from matplotlib.lines import Line2D

    lay = _Layout.of(narrow)
    href = _hrefs(directory_urls)
    marks: list[tuple[str, str]] = []
    with matplotlib.rc_context(SVG_RC):
        fig = Figure(dpi=100)
        ax: Any = fig.add_subplot()  # matplotlib's stubs refuse the datetimes and None gaps it plots
        handles: list[Any] = []
        for n, topology in enumerate(chart.topologies()):
            colour = COLOURS[n % len(COLOURS)]
            series = [p for p in chart.points if p.topology == topology]
            bars = [p for p in series if p.low is not None and p.high is not None]
            for hollow in (False, True):
                group = [p for p in bars if p.eligible != hollow]
                if group:
                    ax.vlines(
                        [p.x for p in group],
                        [p.low for p in group],
                        [p.high for p in group],
                        colors=colour,
                        linewidth=1.2,
                        alpha=0.45 if hollow else 0.8,
                    )
            for role, top, line in chart.series():
                if top == topology:
                    ax.plot(
                        [p.x for p in line],
                        [p.value for p in line],
                        color=colour,
                        linewidth=1.6 if role == HISTORY else 1.0,
                        linestyle="-" if role == HISTORY else "--",
                        gid=f"line-{role}-{n}",
                    )
            history = [p for p in series if p.eligible and p.role == HISTORY]
            runs = [p for p in series if p.eligible and p.role == RUN]
            bad = [p for p in series if not p.eligible]
            for gid, group, style in (
                (f"marks-history-{n}", history, dict(s=34, c=colour, edgecolors=FG, linewidths=0.6)),
                (f"marks-run-{n}", runs, dict(s=16, c=colour)),
                (f"marks-unjoined-{n}", bad, dict(s=30, facecolors="none", edgecolors=colour, linewidths=1.4)),
            ):
                _marks(ax, group, marks, href, gid=gid, **style)
            handles.append(
                Line2D([], [], color=colour, marker="o", markersize=4, linestyle="none", label=_short(topology, 28))
            )
        roles = {(p.role, p.joined) for p in chart.points if p.eligible}
        if any(role == HISTORY for role, _ in roles):
            # The line only where one is drawn: history on one commit is points, side by side.
            drawn = (HISTORY, True) in roles
            handles.append(
                Line2D(
                    [],
                    [],
                    color=FG,
                    linewidth=1.6 if drawn else 0,
                    marker="o",
                    markersize=5,
                    markeredgecolor=FG,
                    label="stopping point's history (accepted)"
                    if drawn
                    else "accepted (history; one commit: not joined)",
                )
            )
        if (RUN, True) in roles:
            handles.append(Line2D([], [], color=FG, linewidth=1.0, linestyle="--", label="other runs"))
        if (RUN, False) in roles:
            text = "not comparable, not joined" if not chart.contract_id else "several at one commit: not joined"
            handles.append(Line2D([], [], linestyle="none", marker="o", markersize=3, color=FG, label=f"runs: {text}"))
        if any(not p.eligible for p in chart.points):
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker="o",
                    markersize=6,
                    markerfacecolor="none",
                    markeredgecolor=FG,
                    label="degraded or ineligible (not joined)",
                )
            )
        kinds = sorted({p.spread for p in chart.points if p.spread})
        if kinds:
            text = " / ".join({"IQR": "interquartile range", "range": "min-max range"}[k] for k in kinds)
            handles.append(Line2D([], [], color=FG, linewidth=1.2, label=f"bar: {text}"))
        n = len(chart.commits)
        step = max(1, math.ceil(n / (MAX_TICKS_NARROW if narrow else MAX_TICKS)))
        ticks = list(range(0, n, step))
        ax.set_xticks(
            ticks, labels=[f"{chart.commits[i][0]}\n{chart.commits[i][1]}" for i in ticks], fontsize=lay.tick_size
        )
        ax.set_xlim(-0.6, max(n - 1, 0) + 0.6)
        _zero_based(ax, chart.points)
        x_label = chart.x_label + (f"; every {step}th labelled" if step > 1 else "")
        _frame(fig, ax, lay, chart.title, x_label, chart.y_label, handles, 2)
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    return chart_svg.finish(out.getvalue(), marks)


def _zero_based(ax, points: list[Point]) -> None:
    top = max([p.high if p.high is not None else p.value for p in points] or [1.0])
    ax.set_ylim(0, top * 1.12 if top > 0 else 1.0)


def sandwich_svg(chart: SandwichChart, *, narrow: bool = False, directory_urls: bool = False) -> bytes:
    """The sandwiches chart: A (circle), candidate (diamond, coloured by the verdict) and B
    (square) side by side per sandwich, the A-B midpoint as a short dash; nothing joins
    one sandwich to the next."""
    import matplotlib
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    lay = _Layout.of(narrow)
    href = _hrefs(directory_urls)
    marks: list[tuple[str, str]] = []
    with matplotlib.rc_context(SVG_RC):
        fig = Figure(dpi=100)
        ax: Any = fig.add_subplot()
        bars = [p for p in chart.points if p.low is not None and p.high is not None]
        if bars:
            ax.vlines(
                [p.x for p in bars], [p.low for p in bars], [p.high for p in bars], colors=FG, linewidth=1.0, alpha=0.6
            )
        for i, s in enumerate(chart.tried):
            ax.hlines([s.midpoint], [i - 0.34], [i + 0.34], colors=FG, linewidth=1.0, alpha=0.5, gid=f"midpoint-{i}")
        for arm, marker in (("A", "o"), ("B", "s")):
            _marks(
                ax,
                [p for p in chart.points if p.arm == arm],
                marks,
                href,
                gid=f"marks-{arm}",
                s=22,
                marker=marker,
                facecolors="none",
                edgecolors=FG,
                linewidths=1.1,
            )
        for verdict, colour in VERDICT_COLOURS.items():
            group = [p for p in chart.points if p.arm == "candidate" and p.status == verdict]
            _marks(
                ax,
                group,
                marks,
                href,
                gid=f"marks-candidate-{verdict}",
                s=40,
                marker="D",
                c=colour,
                edgecolors=FG,
                linewidths=0.5,
            )
        handles: list[Any] = [
            Line2D([], [], linestyle="none", marker="o", markerfacecolor="none", markeredgecolor=FG, label="A")
        ]
        verdicts = {s.verdict for s in chart.tried}
        handles += [
            Line2D([], [], linestyle="none", marker="D", color=colour, label=f"candidate: {verdict}")
            for verdict, colour in VERDICT_COLOURS.items()
            if verdict in verdicts
        ]
        if any(s.b_value is not None for s in chart.tried):
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker="s",
                    markerfacecolor="none",
                    markeredgecolor=FG,
                    label="B (A again)",
                )
            )
        handles.append(Line2D([], [], color=FG, alpha=0.5, label="A-B midpoint (A in a pair)"))
        if bars:
            handles.append(Line2D([], [], color=FG, linewidth=1.0, label="bar: IQR or min-max range"))
        n = len(chart.tried)
        step = max(1, math.ceil(n / ((MAX_TICKS_NARROW + 2) if narrow else MAX_TICKS)))
        ticks = list(range(0, n, step))
        labels = [
            f"#{i + 1}\n{chart.tried[i].verdict}{' ✓' if chart.tried[i].id in chart.accepted else ''}" for i in ticks
        ]
        ax.set_xticks(ticks, labels=labels, fontsize=lay.tick_size)
        ax.set_xlim(-0.6, max(n - 1, 0) + 0.6)
        _zero_based(ax, chart.points)
        x_label = chart.x_label + ("; ✓ accepted by a decision" if chart.accepted else "")
        x_label += f"; every {step}th labelled" if step > 1 else ""
        _frame(fig, ax, lay, chart.title, x_label, chart.y_label, handles, 2)
        out = io.BytesIO()
        fig.savefig(out, format="svg", metadata={"Date": None})
    return chart_svg.finish(out.getvalue(), marks)


def figure(slug: str, wide: bytes, narrow: bytes, label: str, directory_urls: bool) -> Markup:
    """A chart as its page (`charts/<slug>.md`) shows it: the wide drawing, or the narrow one
    on a phone, inlined (hover texts and record links work, colours follow the page's
    scheme), and a link to the full-size SVG file beside the page."""
    up = "../" if directory_urls else ""  # charts/<slug>/index.html sits one folder deeper
    return chart_svg.figure_html(slug, wide, narrow, label, f"{up}{slug}.svg", up)


def _inputs(value: Any) -> Any:
    """Everything a drawing reads of a chart, as plain data whose repr is stable between
    processes (sets sorted, records by their JSON); TypeError for what it cannot spell out,
    so an input it does not know is never keyed by a repr that could hide a difference."""
    if value is None or value.__class__ in (str, int, float, bool):
        return value
    if value.__class__ is Point:
        # The bulk of a chart; its fields are strings, numbers, a datetime, a tuple or None,
        # whose repr (the dataclass's own, generated) is stable: 20 times fewer calls.
        return repr(value)
    if isinstance(value, datetime):
        return ("datetime", value.isoformat())
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__, tuple((f.name, _inputs(getattr(value, f.name))) for f in fields(value)))
    if isinstance(value, BaseModel):
        return (type(value).__name__, value.model_dump_json())
    if isinstance(value, (list, tuple)):
        return tuple(_inputs(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return ("set", tuple(sorted(repr(_inputs(v)) for v in value)))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(_inputs(k)), _inputs(v)) for k, v in value.items())))
    raise TypeError(f"no stable key for {type(value).__name__}")


def _drawing(cache: BuildCache | None, chart, narrow: bool, directory_urls: bool) -> bytes:
    """A chart's SVG; one drawn before from the same inputs (the chart's points, titles and
    settings, ledger's code, matplotlib's version) is taken from `cache`. Drawing a chart of
    many thousand points is most of what generating a site costs, and a push changes only
    the charts of the metrics and contracts it measured."""
    draw = sandwich_svg if isinstance(chart, SandwichChart) else svg
    if cache is None:
        return draw(chart, narrow=narrow, directory_urls=directory_urls)
    try:
        digest = key("chart", repr((_inputs(chart), narrow, directory_urls)))
    except (TypeError, RecursionError):
        return draw(chart, narrow=narrow, directory_urls=directory_urls)
    entry = cache.get(digest)
    if entry is not None and len(entry) == 1 and isinstance(entry[0], bytes):
        return entry[0]
    drawn = draw(chart, narrow=narrow, directory_urls=directory_urls)
    cache.put(digest, (drawn,))
    return drawn


def drawing_settings() -> str:
    """What every drawing depends on beyond its chart and ledger's code."""
    return f"matplotlib {metadata.version('matplotlib')}"


def render(
    data: SiteData,
    env,
    write_bytes,
    charts: list | None = None,
    directory_urls: bool = False,
    cache: BuildCache | None = None,
) -> Iterator[Page]:
    """Chart pages; `write_bytes(path, bytes)` writes each SVG beside its page; drawings are
    remembered in `cache` (a `BuildCache` opened with `drawing_settings`) when given."""
    charts = collect(data) if charts is None else charts
    template = env.get_template("chart.md.j2")
    for chart in charts:
        page = f"charts/{chart.slug}.md"
        wide = _drawing(cache, chart, False, directory_urls)
        narrow = _drawing(cache, chart, True, directory_urls)
        write_bytes(f"charts/{chart.svg}", wide)
        write_bytes(f"charts/{chart.thumb}", narrow)
        shown = figure(chart.slug, wide, narrow, f"{chart.title}: {chart.y_label} by {chart.x_label}", directory_urls)
        if isinstance(chart, SandwichChart):
            tried = [
                {"n": i + 1, "s": s, "f": sandwich_figures(s, data.spread_percent), "accepted": s.id in chart.accepted}
                for i, s in enumerate(chart.tried)
            ]
            yield Page(page, template.render(data=data, page=page, chart=chart, figure=shown, sandwich_rows=tried))
            continue
        rows = sorted(chart.points, key=lambda p: (-p.x, p.id))[:TABLE_ROWS]
        for p in rows:
            if p.low is not None and p.high is not None:
                # The width, to the digits the measurement's spread supports (the page rules check
                # every figure of a row against the record it links).
                width = quote_width(p.high - p.low, data.spread_percent(p.id), chart.unit)
                p.spread_text = f"{p.spread} {width}"
        yield Page(
            page,
            template.render(data=data, page=page, chart=chart, figure=shown, rows=rows, total=len(chart.points)),
        )
    yield Page(INDEX, env.get_template("charts_index.md.j2").render(data=data, page=INDEX, charts=charts))
