"""The second campaign shape on the site: sweeps (a table and a chart over the swept
parameter), memory profiles (phases as a table and a chart, in readable units, sampled or
transcribed) and review findings. The arithmetic is ledger.analysis's (sweep, figures); this
module only lays it out. matplotlib is imported when a chart is drawn, never at import."""

from __future__ import annotations

import io
import textwrap
import warnings
from collections.abc import Iterator
from typing import Any

from ..analysis.figures import readable_bytes, readable_duration, transcribed_bytes
from ..analysis.stopping_point import current_contract
from ..analysis.sweep import Sweep, sweep_rows, sweeps
from . import chart_svg
from .chart_svg import FG, SVG_RC
from .charts import _slug
from .context import Page, SiteData

SWEEPS = "sweeps/index.md"
MEMORY = "memory/index.md"
FINDINGS = "findings/index.md"
GIB = 1024**3


def _svg(fig, marks) -> bytes:
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig.savefig(out, format="svg", metadata={"Date": None})
    return chart_svg.finish(out.getvalue(), marks)


def _title(fig, text: str, width: float, size: float = 9.5) -> None:
    """A title over as many lines as it takes: wrapped, never clipped."""
    fig.suptitle("\n".join(chart_svg.wrap(text, width - 0.2, size)), fontsize=size)


def _link(data: SiteData | None, record_id: str, folder: str, directory_urls: bool = False) -> str:
    where = data.record_path(record_id) if data is not None else None
    return chart_svg.html_href(folder, *where, directory_urls=directory_urls) if where else "#"


def sweep_svg(
    sweep: Sweep, data: SiteData | None = None, *, narrow: bool = False, directory_urls: bool = False
) -> bytes:
    """Median with its min-max range, and speedup against the ideal, over the swept
    parameter; both axes from zero. Each point's hover text names its value, range, n and
    record, and the point links to the record. Side by side, or stacked on a phone."""
    import matplotlib
    from matplotlib.figure import Figure

    numeric = all(isinstance(p.value, int | float) for p in sweep.points)
    xs = [p.value if numeric else i for i, p in enumerate(sweep.points)]
    width = chart_svg.NARROW_WIDTH_IN if narrow else 8.0
    marks: list[tuple[str, str]] = []
    with matplotlib.rc_context(SVG_RC):
        fig = Figure(figsize=(width, 6.4 if narrow else 3.6), dpi=100, layout="constrained")
        left: Any = fig.add_subplot(2, 1, 1) if narrow else fig.add_subplot(1, 2, 1)
        right: Any = fig.add_subplot(2, 1, 2) if narrow else fig.add_subplot(1, 2, 2)
        med = [p.median for p in sweep.points]
        left.errorbar(
            xs,
            med,
            yerr=[[p.median - p.low for p in sweep.points], [p.high - p.median for p in sweep.points]],
            marker="none",
            linewidth=1,
            capsize=3,
        )
        name = sweep.parameter.name
        urls = []
        for p in sweep.points:
            urls.append(f"ledger:{len(marks)}")
            speedup = sweep.speedup(p)
            m = p.measurement
            quoted = data.quote if data is not None else (lambda _id, v, u: f"{v:g} {u}")
            commit = m.source.sha[:9] if m.source and m.source.sha else "not recorded"
            marks.append(
                (
                    _link(data, m.id, "sweeps", directory_urls),
                    f"{name}={p.value}: median {quoted(m.id, p.median, sweep.unit)}, "
                    f"min-max {quoted(m.id, p.low, sweep.unit)} – {quoted(m.id, p.high, sweep.unit)}"
                    + (f"\nspeedup {speedup:.3g}x against {name}={sweep.base.value}" if speedup and sweep.base else "")
                    + f"\ncommit {commit} · {p.runs} run(s) at this value, the newest shown\nrecord {m.id}",
                )
            )
        left.scatter(xs, med, s=14, zorder=3).set_urls(urls)
        left.set_ylabel("\n".join(chart_svg.wrap(f"{sweep.metric} ({sweep.unit}), min-median-max", 2.4, 9)))
        speed = [sweep.speedup(p) for p in sweep.points]
        right.plot(xs, speed, marker="o", markersize=3, linewidth=1, label="measured")
        if sweep.parameter.ideal == "linear" and sweep.base is not None and numeric:
            base = float(sweep.base.value)
            right.plot(xs, [x / base for x in xs], linestyle="--", linewidth=1, label="ideal (linear)")
            right.legend(loc="best", fontsize=7, frameon=False)
        right.set_ylabel(f"speedup vs {name}={sweep.base.value if sweep.base else '?'}")
        for ax in (left, right):
            label = name + (f" ({sweep.parameter.unit})" if sweep.parameter.unit else "")
            ax.set_xlabel("\n".join(chart_svg.wrap(label, width / (1 if narrow else 2), 9)))
            # The medians' panel spreads a wide sweep (1..20 workers) on a log axis; the speedup
            # panel stays linear in both axes, so the ideal is the straight diagonal a reader
            # expects and the measured curve's bend away from it is the sweep's own.
            if ax is left and numeric and len(xs) > 2 and min(xs) > 0 and max(xs) / min(xs) >= 8:
                ax.set_xscale("log", base=2)
            ax.set_xticks(xs)
            ax.set_xticklabels([str(p.value) for p in sweep.points], fontsize=8)
            # From zero: a sweep's range of medians never reads as a tenfold change by its axis.
            ax.set_ylim(bottom=0)
        _title(fig, f"{sweep.contract.name}: sweep over {name}", width)
        return _svg(fig, marks)


def _phase_columns(profile) -> list[tuple[str, str]]:
    cols = [("mem_available_delta_bytes", "MemAvailable")]
    keys = set()
    for phase in profile.phases:
        for proc in phase.processes:
            keys |= {
                k for k in ("anon_delta_bytes", "file_delta_bytes", "gpu_delta_bytes") if getattr(proc, k) is not None
            }
    names = {"anon_delta_bytes": "anonymous", "file_delta_bytes": "file-backed", "gpu_delta_bytes": "GPU"}
    return cols + [(k, names[k]) for k in ("anon_delta_bytes", "file_delta_bytes", "gpu_delta_bytes") if k in keys]


def _proc_sum(phase, key: str) -> int | None:
    values = [getattr(p, key) for p in phase.processes if getattr(p, key) is not None]
    return sum(values) if values else None


def _exact(profile, phase) -> bool:
    """Whether a phase's figures are a transcription (kept to the digits transcribed)."""
    return bool(profile.transcribed or phase.source == "transcribed")


def _gpu(phase) -> str:
    value = phase.gpu_utilization_max_percent
    return "–" if value is None else f"{value:g}%"


def phase_rows(profile) -> tuple[list[str], list[dict[str, Any]]]:
    """(column titles, rows) of a profile's phases: deltas in binary units, signed; a
    transcribed figure as transcribed (0.01 GiB stays 0.01 GiB); the GPU utilisation
    recorded per phase, when any phase has it."""
    cols = _phase_columns(profile)
    gpu = any(phase.gpu_utilization_max_percent is not None for phase in profile.phases)
    rows = []
    for phase in profile.phases:
        row: dict[str, Any] = {"phase": phase.name}
        if phase.start_s is not None and phase.end_s is not None:
            row["when"] = f"{readable_duration(phase.start_s)} – {readable_duration(phase.end_s)}"
        elif phase.duration_s is not None:
            row["when"] = f"~{readable_duration(phase.duration_s)}"
        else:
            row["when"] = "untimed"
        for key, title in cols:
            value = getattr(phase, key) if key == "mem_available_delta_bytes" else _proc_sum(phase, key)
            row[title] = _signed(value, _exact(profile, phase))
        if gpu:
            row[GPU_UTIL] = _gpu(phase)
        row["cores"] = f"{phase.cpu_cores_mean:g}" if phase.cpu_cores_mean is not None else "–"
        row["note"] = phase.note or ""
        rows.append(row)
    return [title for _, title in cols] + ([GPU_UTIL] if gpu else []), rows


#: The column of the GPU utilisation recorded per phase (its maximum over the phase).
GPU_UTIL = "GPU utilisation (max)"


def _signed(value: int | None, exact: bool = False) -> str:
    if value is None:
        return "–"
    text = transcribed_bytes(abs(value)) if exact else readable_bytes(abs(value))
    return ("+" if value > 0 else "−" if value < 0 else "") + text


def memory_svg(profile, data: SiteData | None = None, *, narrow: bool = False, directory_urls: bool = False) -> bytes:
    """Each phase's deltas as grouped horizontal bars, in GiB; a phase's label carries the
    GPU utilisation recorded for it; each bar's hover text gives its figure as recorded
    (a transcription's digits) and links to the profile's record."""
    import matplotlib
    from matplotlib.figure import Figure

    cols = _phase_columns(profile)
    phases = list(profile.phases)
    width = chart_svg.NARROW_WIDTH_IN if narrow else 8.0
    label_chars = 18 if narrow else 34
    labels = []
    for phase in phases:
        text = "\n".join(textwrap.wrap(phase.name, label_chars) or [""])
        if phase.gpu_utilization_max_percent is not None:
            text += f"\nGPU util. max {_gpu(phase)}"
        labels.append(text)
    lines = sum(label.count("\n") + 1 for label in labels)
    href = _link(data, profile.id, "memory", directory_urls)
    marks: list[tuple[str, str]] = []
    with matplotlib.rc_context(SVG_RC):
        height = 1.6 + max(0.55 * max(len(phases), 1) * max(len(cols), 1) / 2, 0.17 * lines)
        fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
        ax: Any = fig.add_subplot()
        bar_height = 0.8 / max(len(cols), 1)
        for j, (key, title) in enumerate(cols):
            values = []
            for phase in phases:
                v = getattr(phase, key) if key == "mem_available_delta_bytes" else _proc_sum(phase, key)
                values.append((v or 0) / GIB)
                marks.append(
                    (
                        href,
                        f"{phase.name}: {title} {_signed(v, _exact(profile, phase))}"
                        + (
                            f"\nGPU utilisation max {_gpu(phase)}"
                            if phase.gpu_utilization_max_percent is not None
                            else ""
                        )
                        + f"\nrecord {profile.id}",
                    )
                )
            bars = ax.barh([i + j * bar_height for i in range(len(phases))], values, height=bar_height, label=title)
            for k, patch in enumerate(bars.patches):
                patch.set_url(f"ledger:{len(marks) - len(phases) + k}")
        ax.set_yticks([i + bar_height * (len(cols) - 1) / 2 for i in range(len(phases))])
        ax.set_yticklabels(labels, fontsize=8)
        ax.invert_yaxis()
        ax.axvline(0, color=FG, linewidth=0.6)
        ax.set_xlabel(
            "\n".join(
                chart_svg.wrap("change over the phase (GiB; negative MemAvailable: memory taken)", width - 1.5, 9)
            )
        )
        ax.legend(loc="best", fontsize=7, frameon=False)
        what = "transcribed observations" if profile.transcribed else "sampled"
        _title(fig, f"{profile.summary()} ({what})", width)
        return _svg(fig, marks)


def render(data: SiteData, env, write_bytes, directory_urls: bool = False) -> Iterator[Page]:
    template = env.get_template("investigation.md.j2")
    contract = current_contract(data.records, data.contract_name)
    # Every contract that declares a sweep, the current one first: its swept measurements
    # are charted here, over the parameter, never by commit.
    others = sorted(
        (
            c
            for c in data.by_kind.get("contract", [])
            if getattr(c, "sweep", None) and c.id != getattr(contract, "id", None) and c.id not in data.superseded_by
        ),
        key=lambda c: (c.name, c.id),
    )
    found = []
    used: set[str] = set()
    for each in ([contract] if contract is not None else []) + others:
        for sweep in sweeps(data.records, each):
            if each is not contract and not sweep.points:
                continue
            slug = _slug(f"{sweep.contract.name}-{sweep.parameter.name}")
            while slug in used:
                slug += "-x"
            used.add(slug)
            figure = None
            if sweep.points:
                wide = sweep_svg(sweep, data, directory_urls=directory_urls)
                narrow = sweep_svg(sweep, data, narrow=True, directory_urls=directory_urls)
                write_bytes(f"sweeps/{slug}.svg", wide)
                write_bytes(f"sweeps/{slug}.narrow.svg", narrow)
                label = f"{sweep.contract.name}: {sweep.parameter.name} sweep"
                figure = chart_svg.figure_html(slug, wide, narrow, label, f"{slug}.svg")
            found.append(
                {
                    "sweep": sweep,
                    "rows": sweep_rows(sweep),
                    "stop": sweep.stopping_point(),
                    "svg": f"{slug}.svg",
                    "figure": figure,
                    "current": each is contract,
                }
            )
    yield Page(
        SWEEPS,
        template.render(data=data, page=SWEEPS, section="sweeps", sweeps=found, contract=contract),
        empty=not found,
    )

    superseded = {s for r in data.records for s in r.supersedes}
    profiles = []
    for p in sorted(data.by_kind.get("memory-profile", []), key=lambda r: (r.when, r.id)):
        if p.id in superseded or not p.phases:
            continue
        titles, rows = phase_rows(p)
        slug = p.id.lower()
        wide = memory_svg(p, data, directory_urls=directory_urls)
        narrow = memory_svg(p, data, narrow=True, directory_urls=directory_urls)
        write_bytes(f"memory/{slug}.svg", wide)
        write_bytes(f"memory/{slug}.narrow.svg", narrow)
        label = f"memory phases of {p.summary()}"
        figure = chart_svg.figure_html(slug, wide, narrow, label, f"{slug}.svg", hover=chart_svg.HOVER_BARS)
        profiles.append({"profile": p, "titles": titles, "rows": rows, "svg": f"{slug}.svg", "figure": figure})
    yield Page(MEMORY, template.render(data=data, page=MEMORY, section="memory", profiles=profiles), empty=not profiles)

    findings = sorted(
        (f for f in data.by_kind.get("finding", []) if f.id not in superseded),
        key=lambda f: (f.review, f.finding),
    )
    yield Page(
        FINDINGS,
        template.render(data=data, page=FINDINGS, section="findings", findings=findings),
        empty=not findings,
    )
