"""The second campaign shape on the site: sweeps (a table and a chart over the swept
parameter), memory profiles (phases as a table and a chart, in readable units, sampled or
transcribed) and review findings. The arithmetic is ledger.analysis's (sweep, figures); this
module only lays it out. matplotlib is imported when a chart is drawn, never at import."""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from typing import Any

from ..analysis.figures import readable_bytes, readable_duration
from ..analysis.stopping_point import current_contract
from ..analysis.sweep import Sweep, sweep_rows, sweeps
from .charts import SVG_RC, _short, _slug
from .context import Page, SiteData

SWEEPS = "sweeps/index.md"
MEMORY = "memory/index.md"
FINDINGS = "findings/index.md"
GIB = 1024**3


def _svg(fig) -> bytes:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fig.tight_layout()
    out = io.BytesIO()
    fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def sweep_svg(sweep: Sweep) -> bytes:
    """Median with its min-max range, and speedup against the ideal, over the swept parameter."""
    import matplotlib
    from matplotlib.figure import Figure

    numeric = all(isinstance(p.value, int | float) for p in sweep.points)
    xs = [p.value if numeric else i for i, p in enumerate(sweep.points)]
    with matplotlib.rc_context(SVG_RC):
        fig = Figure(figsize=(8, 3.4), dpi=100)
        left: Any = fig.add_subplot(1, 2, 1)  # matplotlib's stubs refuse the None gaps it plots
        right: Any = fig.add_subplot(1, 2, 2)
        med = [p.median for p in sweep.points]
        left.errorbar(
            xs,
            med,
            yerr=[[p.median - p.low for p in sweep.points], [p.high - p.median for p in sweep.points]],
            marker="o",
            markersize=3,
            linewidth=1,
            capsize=3,
        )
        left.set_ylabel(_short(f"{sweep.metric} ({sweep.unit}), min-median-max", 50))
        speed = [sweep.speedup(p) for p in sweep.points]
        right.plot(xs, speed, marker="o", markersize=3, linewidth=1, label="measured")
        if sweep.parameter.ideal == "linear" and sweep.base is not None and numeric:
            base = float(sweep.base.value)
            right.plot(xs, [x / base for x in xs], linestyle="--", linewidth=1, label="ideal (linear)")
            right.legend(loc="best", fontsize=7)
        right.set_ylabel(f"speedup vs {sweep.parameter.name}={sweep.base.value if sweep.base else '?'}")
        for ax in (left, right):
            label = sweep.parameter.name + (f" ({sweep.parameter.unit})" if sweep.parameter.unit else "")
            ax.set_xlabel(_short(label, 40))
            if numeric and len(xs) > 2 and min(xs) > 0 and max(xs) / min(xs) >= 8:
                ax.set_xscale("log", base=2)
            ax.set_xticks(xs)
            ax.set_xticklabels([str(p.value) for p in sweep.points])
        fig.suptitle(_short(f"{sweep.contract.name}: sweep over {sweep.parameter.name}", 90), fontsize=9)
        return _svg(fig)


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


def phase_rows(profile) -> tuple[list[str], list[dict[str, Any]]]:
    """(column titles, rows) of a profile's phases: deltas in readable binary units, signed."""
    cols = _phase_columns(profile)
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
            row[title] = _signed(value)
        row["cores"] = f"{phase.cpu_cores_mean:g}" if phase.cpu_cores_mean is not None else "–"
        row["note"] = phase.note or ""
        rows.append(row)
    return [title for _, title in cols], rows


def _signed(value: int | None) -> str:
    if value is None:
        return "–"
    text = readable_bytes(abs(value))
    return ("+" if value > 0 else "−" if value < 0 else "") + text


def memory_svg(profile) -> bytes:
    """Each phase's deltas as grouped horizontal bars, in GiB."""
    import matplotlib
    from matplotlib.figure import Figure

    cols = _phase_columns(profile)
    phases = list(profile.phases)
    with matplotlib.rc_context(SVG_RC):
        fig = Figure(figsize=(8, 0.6 + 0.55 * max(len(phases), 1) * max(len(cols), 1) / 2), dpi=100)
        ax: Any = fig.add_subplot()
        height = 0.8 / max(len(cols), 1)
        for j, (key, title) in enumerate(cols):
            values = []
            for phase in phases:
                v = getattr(phase, key) if key == "mem_available_delta_bytes" else _proc_sum(phase, key)
                values.append((v or 0) / GIB)
            ax.barh([i + j * height for i in range(len(phases))], values, height=height, label=title)
        ax.set_yticks([i + height * (len(cols) - 1) / 2 for i in range(len(phases))])
        ax.set_yticklabels([_short(p.name, 40) for p in phases])
        ax.invert_yaxis()
        ax.axvline(0, color="black", linewidth=0.6)
        ax.set_xlabel("change over the phase (GiB; negative MemAvailable: memory taken)")
        ax.legend(loc="best", fontsize=7)
        what = "transcribed observations" if profile.transcribed else "sampled"
        ax.set_title(_short(f"{profile.summary()} ({what})", 90))
        return _svg(fig)


def render(data: SiteData, env, write_bytes) -> Iterator[Page]:
    template = env.get_template("investigation.md.j2")
    contract = current_contract(data.records, data.contract_name)
    found = []
    for sweep in sweeps(data.records, contract):
        slug = _slug(f"{sweep.contract.name}-{sweep.parameter.name}")
        if sweep.points:
            write_bytes(f"sweeps/{slug}.svg", sweep_svg(sweep))
        found.append({"sweep": sweep, "rows": sweep_rows(sweep), "stop": sweep.stopping_point(), "svg": f"{slug}.svg"})
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
        svg_name = f"{p.id.lower()}.svg"
        write_bytes(f"memory/{svg_name}", memory_svg(p))
        profiles.append({"profile": p, "titles": titles, "rows": rows, "svg": svg_name})
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
