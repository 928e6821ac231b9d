"""docs/campaign-h200.md, rendered from this repository's own ledger: every figure on the page is read from a record.

    python benchmarks/gpu/campaign_page.py            # rewrite docs/campaign-h200.md
    python benchmarks/gpu/campaign_page.py --check    # exit 1 when the committed page is stale

The page is the H200 campaign of issues #16 and #27 as the records hold it: the contract and its
exact FLOP audits, every sandwich under the contract in the order it ran (with the decision that
cites it), the configurations reached, the stopping point and its re-gate as ledger derives them,
attention kernels and profiles measured on the campaign's allocations, health, the decisions and
the notes on device calls. Prose that carries no figure stays here as text; a figure that is not
in a record does not appear. tests/test_own_ledger.py fails when the committed page differs from
what this renders from the committed ledger, so add records, then run this, then commit both.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "src"))

from ledger.analysis.stopping_point import FINAL, stopping_point  # noqa: E402
from ledger.schema.envelope import Envelope  # noqa: E402
from ledger.schema.kinds import (  # noqa: E402
    Ceiling,
    Contract,
    Decision,
    Environment,
    FlopAudit,
    Measurement,
    Note,
    Sandwich,
)
from ledger.store import Ledger  # noqa: E402

CONTRACT = "dit8-ltx2like-fp32master-bf16-1xh200-campaign"
PAGE = ROOT / "docs" / "campaign-h200.md"
GIB = 1024**3


def _pct(x: float | None, digits: int = 1) -> str:
    return "-" if x is None else f"{x:.{digits}f}%"


def _signed(x: float) -> str:
    return f"{x:+.2f}%"


def _ref(r: Envelope) -> str:
    """A record's id, whole: the records of one batch share all but its last characters."""
    return f"`{r.id}`"


def _label(m: Measurement) -> str:
    """The configuration a measurement ran, as its title names it."""
    title = m.title or ""
    for prefix in ("configuration reached: ",):
        if title.startswith(prefix):
            return re.sub(r" \(\d+ steps\)$", "", title[len(prefix) :])
    return title.split(": ", 1)[-1].split(" vs ")[0]


class Campaign:
    """The campaign's records, read once."""

    def __init__(self, records: Iterable[Envelope]) -> None:
        self.records = sorted(records, key=lambda r: r.id)
        self.by_id = {r.id: r for r in self.records}
        self.superseded = {ref for r in self.records for ref in r.supersedes}
        self.contracts = [r for r in self.records if isinstance(r, Contract) and r.name == CONTRACT]
        if not self.contracts:
            raise SystemExit(f"no contract named {CONTRACT} in the ledger")
        ids = {c.id for c in self.contracts}
        self.contract = next(c for c in reversed(self.contracts) if c.id not in self.superseded)
        self.measurements = [r for r in self.records if isinstance(r, Measurement) and r.contract in ids]
        self.sandwiches = [r for r in self.records if isinstance(r, Sandwich) and r.contract in ids]
        self.audits = [r for r in self.records if isinstance(r, FlopAudit) and r.contract in ids]
        envs = {m.environment for m in self.measurements if m.environment}
        self.environments = [r for r in self.records if isinstance(r, Environment) and r.id in envs]
        self.ceilings = [
            r for r in self.records if isinstance(r, Ceiling) and r.id in {m.ceiling for m in self.measurements}
        ]
        # Measurements on the campaign's allocations that are not step times of the contract.
        self.probes = [
            r
            for r in self.records
            if isinstance(r, Measurement) and r.contract is None and r.environment in envs | self._idle_twins(envs)
        ]
        cited = {s.id for s in self.sandwiches} | {m.id for m in self.measurements}
        self.decisions = [
            d
            for d in self.records
            if isinstance(d, Decision) and d.id not in self.superseded and cited & set(d.evidence)
        ]
        self.notes = [r for r in self.records if isinstance(r, Note) and "campaign" in (r.title or "").lower()]
        self.notes = [n for n in self.notes if "H200" in (n.title or "") or "#16" in (n.title or "")]

    def _idle_twins(self, envs: set[str]) -> set[str]:
        # Each call records its environment idle and under load in one batch: ids differ in the last place.
        return {r.id for r in self.records if isinstance(r, Environment) and any(r.id[:-1] == e[:-1] for e in envs)}

    def decision_of(self, record_id: str) -> Decision | None:
        for d in self.decisions:
            if record_id in d.evidence:
                return d
        return None

    def arm(self, ref: str | None) -> Measurement | None:
        m = self.by_id.get(ref or "")
        return m if isinstance(m, Measurement) else None

    def finals(self) -> list[Measurement]:
        return [m for m in self.measurements if (m.extra or {}).get("final") and m.outcome == "ok"]

    def did_not_run(self) -> list[Measurement]:
        return [m for m in self.measurements if m.outcome != "ok"]


def headline(c: Campaign) -> list[str]:
    _, rows = stopping_point(c.records, contract=c.contract)
    final = next((r for r in rows if r.status == FINAL), None)
    first = c.arm(c.sandwiches[0].control_a) if c.sandwiches else None
    if final is None or final.measurement is None or first is None:
        return ["No accepted measurement under the contract yet."]
    m = final.measurement
    taken = [d.family for d in c.decisions if d.verdict == "accepted"]
    out = [
        f"**Headline.** On one H200, the reference DiT workload went from **{_pct(first.mfu_percent)}** MFU against "
        f"989 TFLOP/s ({first.median:.4f} s per step of {first.global_batch} samples: {_label(first)}) to "
        f"**{_pct(final.mfu)}** ({m.median:.4f} s per step of {m.global_batch} samples, "
        f"{final.throughput:.2f} samples/s: {_label(m)}), **{_pct(m.mfu_vs_ceiling_percent)} of the "
        f"{m.extra.get('ceiling_tflops', 0):.0f} TFLOP/s bf16 matmul ceiling** measured on the same allocation "
        f"(stopping point {_ref(m)}, derived by `ledger status`).",
        "",
        "Accepted, in the order decided: " + "; ".join(taken) + ".",
    ]
    newest = max(c.finals(), key=lambda x: x.id)
    if newest.id != m.id:
        sha = newest.source.sha[:9] if newest.source and newest.source.sha else "?"
        out += [
            "",
            f"The newest run of the configuration reached ({_ref(newest)}, at commit `{sha}`, "
            f"{len(newest.samples)} steps; no sandwich's arm, so it re-gates the row rather than replacing it): "
            f"{newest.median:.4f} s per step, {_pct(newest.mfu_percent, 2)} MFU, "
            f"{_pct(newest.mfu_vs_ceiling_percent, 2)} of that allocation's ceiling. Whether the row still holds at "
            "the head is `ledger status`'s Re-gates table (it depends on the commits since, not on records).",
        ]
    return out


def contract_section(c: Campaign) -> list[str]:
    k = c.contract
    shape = ", ".join(f"{key} {val:,}" if isinstance(val, int) else f"{key} {val}" for key, val in k.shape.items())
    out = [
        "## The contract",
        "",
        f"`{k.name}` ({_ref(k)}): {k.model}.",
        "",
        f"- Fixed: {k.extra.get('fixed', '-')}; parameters {k.param_precision}, optimizer state "
        f"{k.optimizer_state_precision}, compute {k.compute_precision}, checkpointing {k.checkpointing}.",
        f"- Shapes: {shape}.",
        f"- Knobs: {k.extra.get('knobs', '-')}.",
        "- Recipe paths (a change to one owes a re-gate): " + ", ".join(f"`{p}`" for p in k.recipe_paths) + ".",
        "",
        "FLOP audits under the contract (`FlopCounterMode` over one training step against the analytic count):",
        "",
        "| Audit | FLOP per sample | Counted | Exact | Record |",
        "|---|---:|---:|---|---|",
    ]
    for a in c.audits:
        exact = "yes" if a.counted_flop_per_sample == a.flop_per_sample else "no"
        counted = f"{a.counted_flop_per_sample:,}" if a.counted_flop_per_sample is not None else "-"
        title = (a.title or "").removeprefix("reference DiT stack, ").removesuffix(": exact FLOP audit")
        out.append(f"| {title} | {a.flop_per_sample:,} | {counted} | {exact} | {_ref(a)} |")
    return out


def changes_section(c: Campaign) -> list[str]:
    out = [
        "## The changes, in the order they ran",
        "",
        "Each row is one sandwich on one allocation: the current configuration (A), the change (candidate), A "
        "again (B), rounds interleaved, every arm-round timed by `StepTimer` after its warmup. Values are "
        "seconds per sample; a change is taken when its delta clears max(A/B drift, the 0.5% floor).",
        "",
        "| # | Change | Candidate | Delta per sample | Drift | Verdict | MFU A / candidate / B | Decision |",
        "|---:|---|---|---:|---:|---|---|---|",
    ]
    items: list[Envelope] = sorted([*c.sandwiches, *c.did_not_run()], key=lambda r: r.id)
    for n, r in enumerate(items, 1):
        d = c.decision_of(r.id)
        decided = f"{d.verdict} {_ref(d)}" if d else "-"
        if isinstance(r, Sandwich):
            arms = [c.arm(x) for x in (r.control_a, r.candidate, r.control_b)]
            mfu = " / ".join(_pct(a.mfu_percent) if a else "-" for a in arms)
            change = (r.title or "").removeprefix("sandwich ").split(":", 1)[0]
            out.append(
                f"| {n} | {change} | {r.candidate_label} | {_signed(r.delta_percent)} | {r.drift_percent:.2f}% | "
                f"{r.verdict} | {mfu} | {decided} |"
            )
        else:
            assert isinstance(r, Measurement)
            change = (r.extra or {}).get("change", "")
            why = (r.notes or "").split(";")[0][:160]
            out.append(f"| {n} | {change} | {_label(r)} | - | - | did not run ({r.outcome}: {why}) | - | {decided} |")
    out += [
        "",
        "Configurations reached, each timed again after its phase's sandwiches:",
        "",
        "| Record | Configuration | Steps | Median step | MFU | Of the ceiling | Peak allocated |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for m in c.finals():
        peak = f"{m.peak_allocated_bytes / GIB:.1f} GiB" if m.peak_allocated_bytes else "-"
        out.append(
            f"| {_ref(m)} | {_label(m)} | {len(m.samples)} | {m.median:.4f} s | {_pct(m.mfu_percent, 2)} | "
            f"{_pct(m.mfu_vs_ceiling_percent, 2)} | {peak} |"
        )
    return out


def _attention_key(m: Measurement) -> tuple[str, str, str] | None:
    found = re.match(r"(.+?) attention (fwd|bwd) B\d+ S(\d+x\d+)", m.title or "")
    return (found.group(1), found.group(3), found.group(2)) if found else None


def kernels_section(c: Campaign) -> list[str]:
    out = [
        "## Attention kernels at the workload's shapes",
        "",
        "`ledger collect attention` on a campaign allocation (32 heads of 128, bf16, non-causal; TFLOP/s by "
        "flash-attn's convention, median), each run's value in the order the runs were recorded:",
        "",
        "| Implementation | Sq x Sk | Forward TFLOP/s | Backward TFLOP/s |",
        "|---|---|---|---|",
    ]
    table: dict[tuple[str, str], dict[str, list[str]]] = {}
    for m in c.probes:
        key = _attention_key(m)
        if key is None or m.median is None or "queued" in (m.title or ""):
            continue
        table.setdefault((key[0], key[1]), {"fwd": [], "bwd": []})[key[2]].append(f"{m.median:.0f}")
    for (impl, s), v in sorted(table.items(), key=lambda kv: (kv[0][1] != "4290x4290", kv[0][1], kv[0][0])):
        out.append(f"| {impl} | {s} | {' / '.join(v['fwd'])} | {' / '.join(v['bwd'])} |")
    queued = [m for m in c.probes if "queued behind a GPU spin" in (m.title or "") and m.metric != "gemm_tflops"]
    gemms = [m for m in c.probes if m.metric == "gemm_tflops" and m.median is not None]
    if queued:
        out += [
            "",
            "Timed alone, each call queued behind a GPU spin (device time only), with the host's time per call and "
            "the back-to-back reading beside it:",
            "",
            "| Kernel | Device TFLOP/s | Kernel time | Host time per call | Back to back TFLOP/s | Record |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for m in queued:
            e = m.extra or {}
            name = (m.title or "").split(": device time")[0]
            out.append(
                f"| {name} | {m.median:.0f} | {e.get('kernel_us_median', 0):,.0f} us | "
                f"{e.get('host_us_per_call', 0):,.0f} us | {e.get('back_to_back_tflops_median', 0):.0f} | {_ref(m)} |"
            )
    if gemms:
        out += [
            "",
            "The FFN's GEMMs at batch 12, cuBLAS against quack, each call queued behind a GPU spin (device time "
            "only; 2*M*K*N per GEMM, the epilogue's GELU not counted):",
            "",
            "| GEMM | Implementation | TFLOP/s | Kernel time | Record |",
            "|---|---|---:|---:|---|",
        ]
        for m in gemms:
            e = m.extra or {}
            out.append(
                f"| {e.get('gemm')} {e.get('m')}x{e.get('k')}x{e.get('n')} | {e.get('implementation')} | "
                f"{m.median:.0f} | {e.get('kernel_us_median', 0):,.0f} us | {_ref(m)} |"
            )
    profiles = [m for m in c.probes if m.metric == "optimizer_step_time"]
    if profiles:
        out += ["", "Where a step goes (one profiled step, kernel time by family; the optimizer step timed alone):", ""]
        for m in profiles:
            e = m.extra or {}
            shares = ", ".join(f"{k} {v:.1f}%" for k, v in e.get("kernel_share_of_step_percent", {}).items())
            idle = ""
            if "idle_s" in e:
                fa4 = e.get("flash_attn_4_seconds", {})
                idle = (
                    f" Device busy {e['device_busy_s']:.4f} s (union of kernel spans), idle {e['idle_s'] * 1000:.1f} ms "
                    f"({e['idle_share_of_step_percent']:.2f}% of the step)"
                    + ("; flash-attn 4 " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in fa4.items()) if fa4 else "")
                    + "."
                )
            out.append(
                f"- {_label(m)} ({e.get('when', '')}, {_ref(m)}): step {e.get('profiled_step_wall_s', 0):.4f} s; "
                f"optimizer alone {m.median * 1000:.1f} ms ({e.get('optimizer_share_of_step_percent', 0):.2f}%); {shares}."
                + idle
            )
    autotune = [m for m in c.did_not_run() if (m.extra or {}).get("autotune")]
    for m in autotune:
        rows = m.extra["autotune"]
        speeds = [r["triton_speed_vs_winner_percent"] for r in rows if r.get("triton_speed_vs_winner_percent")]
        winners = sorted({r["winner"] for r in rows})
        out += [
            "",
            f"Inductor's max-autotune choices ({_ref(m)}): {len(rows)} GEMMs timed, won by "
            f"{', '.join(winners)} (cuBLAS) every time; the best Triton template ran at {min(speeds):.0f}-"
            f"{max(speeds):.0f}% of the winner's speed.",
        ]
    return out


def health_section(c: Campaign) -> list[str]:
    loaded = [e for e in c.environments if e.under_load]
    verdicts = sorted({e.health.verdict for e in loaded})
    reasons = sorted({re.sub(r"\(.*?\)", "(...)", r) for e in loaded for r in e.health.reasons})
    tf = [x.matmul_tflops for x in c.ceilings if x.matmul_tflops]
    copy = [x.copy_tbps for x in c.ceilings if x.copy_tbps]
    drivers = sorted({e.driver for e in c.environments if e.driver})
    torches = sorted({e.torch for e in c.environments if e.torch})
    allocs = sorted({m.allocation.id for m in c.measurements if m.allocation and m.allocation.id})
    return [
        "## Health and allocation",
        "",
        f"{len(allocs)} allocations, {len(loaded)} environments recorded under load: "
        f"{', '.join(verdicts)} ({'; '.join(reasons) or 'no reading outside the thresholds'}). Driver "
        f"{', '.join(drivers)}, torch {', '.join(torches)}. Measured ceilings beside the runs: "
        f"{min(tf):.0f} to {max(tf):.0f} TFLOP/s bf16 matmul (8192^3, median; "
        f"{statistics.median(tf):.0f} the median of {len(tf)}), {min(copy):.2f} to {max(copy):.2f} TB/s copy.",
        *series_lines(loaded),
    ]


def series_lines(loaded: list[Environment]) -> list[str]:
    """Environments judged from a series of readings through the timed steps (from phase h30 on)."""
    rows = [(e, g) for e in loaded if e.load_series for g in e.load_series.gpus]
    if not rows:
        return []
    out = [
        "",
        "Judged from NVML readings taken through the timed steps (per GPU, the median of its busy readings):",
        "",
        "| Environment | Verdict | Readings | SM clock median (range) | Power median (range) | Degraded on their own |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for e, g in rows:
        out.append(
            f"| {_ref(e)} | {e.health.verdict} | {g.busy_samples} of {g.samples} busy | "
            f"{g.sm_clock_median_mhz or 0:,.0f} MHz ({g.sm_clock_min_mhz or 0:,.0f}-{g.sm_clock_max_mhz or 0:,.0f}) | "
            f"{g.power_median_w or 0:.0f} W ({g.power_min_w or 0:.0f}-{g.power_max_w or 0:.0f}) | {g.degraded_samples} |"
        )
    return out


def decisions_section(c: Campaign) -> list[str]:
    out = ["## Decisions", "", "One per family of changes, newest last (superseded ones left out):", ""]
    for d in c.decisions:
        out.append(f"- **{d.family}**: {d.verdict}; {d.qualifier or ''} ({_ref(d)}). {d.where_to_continue or ''}")
    return out


def calls_section(c: Campaign) -> list[str]:
    out = ["## Device calls", "", "As each round's note records them:", ""]
    for n in c.notes:
        out.append(f"- {_ref(n)} ({n.title}): {' '.join(n.body.split())}")
    topologies = sorted({m.allocation.topology for m in c.measurements if m.allocation and m.allocation.topology})
    multi = [t for t in topologies if not t.startswith("1x")]
    out += [
        "",
        "## Not done",
        "",
        (
            f"Topologies measured under the contract: {', '.join(topologies)}. No measurement on more than one "
            "GPU: the two-GPU FSDP2 row waits for a two-GPU machine."
            if not multi
            else f"Topologies measured under the contract: {', '.join(topologies)}."
        ),
    ]
    return out


RERUN = """## Rerun it

Wheels are fetched where PyPI answers and carried to the GPU machine, which reaches nothing:

```bash
bash benchmarks/gpu/fetch_wheels.sh .whl     # .whl/call-1 (the cutlass-dsl cu13 wheel's first part),
                                             # .whl/call-2 (ledger's dependencies, flash-attn 4, the rest)
```

One device call carries at most 64 MiB with the repository's tree, so flash-attn 4 needs two calls on one
warm machine: carry `.whl/call-1` and run `WHEELS=.whl/call-1 bash benchmarks/gpu/run_campaign.sh stash`,
then at once carry `.whl/call-2` and run the phase, e.g.
`WHEELS=.whl/call-2 bash benchmarks/gpu/run_campaign.sh h29 --deadline-s 500`. The phases (`base`, `fa4`,
`h27`, `h28`, `h29`, `h30`, `h31`) are listed in `benchmarks/gpu/run_campaign.sh`; each writes `campaign-PHASE.json` and
its stdout under `$OUT`. Then, here:

```bash
python benchmarks/gpu/add_campaign.py FOLDER --files campaign-h29.json --source-sha SHA   # records
python benchmarks/gpu/campaign_page.py                                                  # this page
```

`python benchmarks/gpu/campaign.py --phase base --small --out /tmp/x` runs the driver's path on CPU.
"""


README = ROOT / "README.md"
START, END = "<!-- campaign-h200 headline: rendered by benchmarks/gpu/campaign_page.py -->", "<!-- /campaign-h200 -->"


def readme_headline(records: Iterable[Envelope]) -> str:
    """The README's sentence on the campaign, between its markers, from the same records as the page."""
    c = Campaign(records)
    _, rows = stopping_point(c.records, contract=c.contract)
    final = next((r for r in rows if r.status == FINAL), None)
    first = c.arm(c.sandwiches[0].control_a) if c.sandwiches else None
    if final is None or final.measurement is None or first is None:
        return "Our own campaign on one H200 is [its own page](docs/campaign-h200.md)."
    m = final.measurement
    return (
        "Our own campaign, run with ledger on one H200 and published under Evidence on the docs site: "
        f"[the reference DiT training step from {_pct(first.mfu_percent)} to {_pct(final.mfu)} MFU against "
        f"989 TFLOP/s ({_pct(m.mfu_vs_ceiling_percent)} of the measured matmul ceiling)](docs/campaign-h200.md), "
        f"now at {_label(m)}, every change a sandwich on one allocation with its decision."
    )


def with_readme(text: str, headline: str) -> str:
    if START not in text or END not in text:
        raise SystemExit(f"README.md lacks the markers {START} ... {END}")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{headline}\n{END}{tail}"


def render(records: Iterable[Envelope]) -> str:
    c = Campaign(records)
    _, rows = stopping_point(c.records, contract=c.contract)
    final = next((r for r in rows if r.status == FINAL), None)
    first = c.arm(c.sandwiches[0].control_a) if c.sandwiches else None
    title = "# The H200 campaign"
    if final is not None and first is not None:
        title += f": the reference DiT from {_pct(first.mfu_percent)} to {_pct(final.mfu)} MFU"
    parts = [
        title,
        "",
        "*Rendered by `benchmarks/gpu/campaign_page.py` from this repository's ledger (`ledger/records/`): every "
        "figure below is read from a record, named by its id (`ledger show ID` prints it; the "
        "[Evidence](evidence/index.md) pages are built from the same records). Do not edit this page by hand.*",
        "",
        "This project's own campaign, run with ledger as our users run theirs (issues 16 and 27): a contract, an "
        "exact FLOP audit, one sandwich on one allocation for every change, a decision for each, health records, "
        "and the stopping point derived from the records.",
        "",
        *headline(c),
        "",
        *contract_section(c),
        "",
        *changes_section(c),
        "",
        *kernels_section(c),
        "",
        *health_section(c),
        "",
        *decisions_section(c),
        "",
        *calls_section(c),
        "",
        RERUN,
    ]
    return "\n".join(parts).rstrip("\n") + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ledger", default=str(ROOT), help="the repository whose ledger to read (default: this one)")
    ap.add_argument("--out", type=Path, default=PAGE)
    ap.add_argument("--check", action="store_true", help="exit 1 when --out differs from what would be rendered")
    args = ap.parse_args()
    records = Ledger.open(args.ledger).records()
    page = render(records)
    readme_now = README.read_text(encoding="utf-8")
    readme = with_readme(readme_now, readme_headline(records))
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        stale = [str(p) for p, old, new in ((args.out, current, page), (README, readme_now, readme)) if old != new]
        if stale:
            print(f"{', '.join(stale)} stale: run python benchmarks/gpu/campaign_page.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(page, encoding="utf-8")
    README.write_text(readme, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
