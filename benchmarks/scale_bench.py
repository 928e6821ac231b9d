"""Scale: a synthetic ledger of 100,000 records spread over kinds the way a campaign is, and
in one run on one machine, side by side with a 1,000-record ledger:

* `ledger add` cold single (median of runs) and bulk (10,000 records of JSON Lines);
* `ledger check --all`;
* `ledger check --pre-push` for a 10-record push (git's pre-push input on stdin);
* `ledger site build`, with ledger's generation time apart from MkDocs' time;
* peak memory (max RSS of each command and its children, from wait4's rusage).

Prints a table against the targets of issues 2 (core), 3 (checker) and 4 (site), and with
--record adds the figures as measurement records under the contract `bench-scale-100k` in
this repository's own ledger (commit the files it prints).

    .venv/bin/python benchmarks/scale_bench.py                 # 100k, print only
    .venv/bin/python benchmarks/scale_bench.py --record        # and record in ./ledger
    .venv/bin/python benchmarks/scale_bench.py --records 5000  # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
LEDGER = Path(sys.executable).with_name("ledger")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
ENV = {
    k: v
    for k, v in {**os.environ, **GIT_ENV}.items()
    if k not in ("SLURM_JOB_ID", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "LEDGER_DIR")
}

#: Share of each kind in a campaign like the LTX-2 one: mostly measurements (every run, A/B
#: arm and probe), then gates and environment captures, fewer decisions and hypotheses.
MIX = {
    "measurement": 0.70,
    "gate": 0.08,
    "environment": 0.06,
    "note": 0.05,
    "sandwich": 0.03,
    "hypothesis": 0.02,
    "decision": 0.02,
    "mutation": 0.015,
    "ceiling": 0.01,
    "memory-profile": 0.005,
    "issue": 0.003,
    "flop-audit": 0.001,
    "contract": 0.001,
}
#: Targets stated in the issues: (label, target text, test(value) -> bool | None)
TARGETS = {
    "add_single": ("<= 0.3 s (issue 2)", lambda v: v <= 0.3),
    "add_bulk": (">= 5,000 records/s (issue 2)", lambda v: v >= 5000),
    "check_all": ("<= 4 s on 2 cores (issue 3)", lambda v: v <= 4.0),
    "pre_push": ("<= 0.5 s, 100k within 1.2x of 1k (issue 3)", lambda v: v <= 0.5),
    "site_build": ("10k records <= 90 s end to end (issue 4); 100k: none stated", None),
    "site_generation_share": ("<= 20% of the build (issue 4)", lambda v: v <= 20.0),
    "peak_rss": ("none stated", None),
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, text=True, capture_output=True).stdout


TIME = Path("/usr/bin/time")


def measured(
    cmd: list[str], cwd: Path, input: str | None = None, ok: tuple[int, ...] = (0,)
) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in MiB of the command and its waited-for children, stdout).

    The peak comes from GNU time's %M (wait4's rusage of the command): a child forked from
    this benchmark directly would report this process's own RSS, carried across exec.
    """
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        full = [str(TIME), "-f", "%M", "-o", rss.name, *cmd] if TIME.exists() else cmd
        started = time.perf_counter()
        proc = subprocess.run(full, cwd=cwd, env=ENV, input=input, text=True, capture_output=True)
        wall = time.perf_counter() - started
        if proc.returncode not in ok:
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
        text = rss.read().strip().splitlines()
        peak = int(text[-1]) / 1024.0 if text and text[-1].isdigit() else float("nan")
    return wall, peak, proc.stdout


# -- the synthetic campaign ------------------------------------------------------------------


def make_ledger(root: Path, n: int, seed: int) -> str:
    """A git repository with `n` records in the campaign's mix, committed. Returns HEAD."""
    from ledger.schema.registry import KINDS
    from ledger.store import Ledger
    from ledger.store.add import seal_record
    from ledger.store.ids import new_id

    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    subprocess.run([str(LEDGER), "init"], cwd=root, env=ENV, check=True, capture_output=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    sha = git(root, "rev-parse", "HEAD").strip()
    book = Ledger.open(root)
    rng = random.Random(seed)
    counts = {k: max(1, round(share * n)) for k, share in MIX.items()}
    counts["measurement"] += n - sum(counts.values())
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    ids: dict[str, list[str]] = {k: [] for k in MIX}
    order = [
        "contract",
        "flop-audit",
        "environment",
        "ceiling",
        "measurement",
        "gate",
        "mutation",
        "sandwich",
        "hypothesis",
        "decision",
        "issue",
        "note",
        "memory-profile",
    ]
    made = 0
    for kind in order:
        batch = []
        for i in range(counts[kind]):
            at = t0 + timedelta(seconds=30 * (made + i))
            body = _body(kind, i, rng, ids)
            allocation = {
                "id": f"slurm-{1627000 + (i // 400)}",
                "scheduler": "slurm",
                "topology": ("4x GB200", "8x GB200")[(i // 400) % 2],
                "nodes": 1,
                "gpus_per_node": 4,
            }
            data = {
                "id": new_id(at),
                "kind": kind,
                "created_at": at.isoformat().replace("+00:00", "Z"),
                "tool": {"name": "ledger", "version": "0.1.0"},
                "sha256": "0" * 64,
                "source": {"sha": sha, "repo": "https://example.invalid/campaign.git", "branch": "main"},
                "allocation": allocation,
                **body,
            }
            record = KINDS[kind].model_validate(data)
            batch.append(seal_record(record))
            ids[kind].append(record.id)
            if len(batch) == 5000:
                book.write(batch, durable=False)
                batch = []
        if batch:
            book.write(batch, durable=False)
        made += counts[kind]
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"{n} records")
    return git(root, "rev-parse", "HEAD").strip()


def _body(kind: str, i: int, rng: random.Random, ids: dict[str, list[str]]) -> dict:
    pick = lambda k: rng.choice(ids[k])  # noqa: E731
    if kind == "contract":
        return {
            "name": f"contract-{i}",
            "model": "LTX-2 T2V",
            "param_precision": "fp32",
            "optimizer_state_precision": "fp32",
            "compute_precision": "bf16",
            "shape": {"frames": 81, "height": 480, "width": 832},
            "warmup_steps": 10,
            "measured_steps": 20,
        }
    if kind == "flop-audit":
        return {
            "contract": pick("contract"),
            "flop_per_sample": 353880819892224,
            "derivation": "strict no-recompute blocks-only",
            "peak": {"name": "house-2450", "tflops_per_gpu": 2450.0},
        }
    if kind == "environment":
        return {
            "hostname": f"gb200-{i % 64}",
            "driver": "580.65",
            "cuda": "13.0",
            "torch": "2.13.0",
            "gpus": [
                {"index": g, "name": "NVIDIA GB200", "sm_clock_mhz": 1965.0 + g, "power_limit_w": 1200.0}
                for g in range(4)
            ],
            "env_flags": {"NCCL_DEBUG": "WARN"},
            "health": {"verdict": "healthy"},
        }
    if kind == "ceiling":
        return {"device": "NVIDIA GB200", "environment": pick("environment")}
    if kind == "measurement":
        base = rng.uniform(0.6, 1.5)
        # One allocation holds 400 runs, all under one contract (as sandwich arms must be).
        contract = ids["contract"][(i // 400) % len(ids["contract"])]
        return {
            "contract": contract,
            "environment": pick("environment"),
            "metric": "step_time",
            "unit": "s",
            "samples": [round(base * rng.uniform(0.995, 1.005), 6) for _ in range(20)],
            "world_size": 4,
            "local_batch": 2,
            "global_batch": 8,
            "title": f"run {i}",
            "command": "torchrun --nproc-per-node 4 run_current.sh",
        }
    if kind == "gate":
        n = rng.randint(1, 400)
        return {
            "command": "pytest tests/gates -q",
            "exit_code": 0,
            "executed": n,
            "passed": n,
            "outcome": "pass",
            "load_avg": [0.5, 0.6, 0.7],
        }
    if kind == "mutation":
        return {
            "mutation": f"drop fence {i}",
            "gate": pick("gate"),
            "built": True,
            "exit_code": 1,
            "detected_by": "test_fence",
        }
    if kind == "sandwich":
        # Three consecutive runs of one allocation and contract: A, candidate, B.
        m = ids["measurement"]
        first = rng.randrange(len(m) // 400) * 400 if len(m) >= 400 else 0
        contract = ids["contract"][(first // 400) % len(ids["contract"])]
        return {
            "contract": contract,
            "control_a": m[first],
            "candidate": m[first + 1],
            "control_b": m[first + 2],
            "a_value": 1.0,
            "candidate_value": 1.001,
            "b_value": 1.0,
            "midpoint": 1.0,
            "delta": 0.001,
            "delta_percent": 0.1,
            "drift_percent": 0.0,
            "floor_percent": 0.5,
            "verdict": "neutral",
        }
    if kind == "hypothesis":
        return {
            "statement": f"hypothesis {i}: the fall is a device-class allocation",
            "status": rng.choice(["open", "supported", "refuted"]),
            "evidence": [pick("measurement")],
        }
    if kind == "decision":
        return {
            "family": f"family {i % 40}",
            "verdict": rng.choice(["accepted", "rejected", "timing-neutral", "research"]),
            "evidence": [pick("measurement"), pick("sandwich")],
            "where_to_continue": "run_current.sh",
        }
    if kind == "issue":
        return {"number": 1000 + i, "title": f"issue {i}", "owner": "ana"}
    if kind == "note":
        return {"body": f"note {i}: " + "observed on the degraded pair; " * 4}
    if kind == "memory-profile":
        return {"interval_s": 0.5, "duration_s": 600.0, "samples": 1200}
    raise ValueError(kind)


# -- the measurements ------------------------------------------------------------------------


def bench_add_bulk(repo: Path, n: int) -> tuple[float, float]:
    lines = "".join(
        json.dumps({"samples": [0.70, 0.71, 0.72], "title": f"bulk {i}", "metric": "step_time", "unit": "s"}) + "\n"
        for i in range(n)
    )
    path = repo.parent / "bulk.jsonl"
    path.write_text(lines)
    wall, peak, _ = measured([str(LEDGER), "add", "measurement", str(path)], repo)
    path.unlink()
    return n / wall, peak


def setup_push(repo: Path, tmp: Path) -> str:
    """A bare remote holding the ledger; then 10 new records committed locally. Returns the pre-push line."""
    remote = tmp / f"{repo.name}-remote.git"
    git(tmp, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    base = git(repo, "rev-parse", "HEAD").strip()
    rows = "".join(json.dumps({"samples": [0.70, 0.71], "title": f"pushed {i}"}) + "\n" for i in range(10))
    subprocess.run(
        [str(LEDGER), "add", "measurement", "-"],
        cwd=repo,
        env=ENV,
        input=rows,
        text=True,
        check=True,
        capture_output=True,
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "10 records")
    head = git(repo, "rev-parse", "HEAD").strip()
    return f"refs/heads/main {head} refs/heads/main {base}\n"


def bench_site(repo: Path, out: Path) -> tuple[float, float, dict]:
    wall, peak, stdout = measured([str(LEDGER), "site", "build", "--out", str(out), "--format", "json"], repo)
    try:
        info = json.loads(stdout)
    except ValueError:
        info = {}
    return wall, peak, info


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000, help="the side-by-side small ledger")
    parser.add_argument("--bulk", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-site", action="store_true", help="skip the site build (minutes at 100k)")
    parser.add_argument("--record", action="store_true", help="add the figures to this repository's ledger")
    parser.add_argument("--keep", action="store_true", help="keep the temporary ledgers")
    parser.add_argument("--save", type=Path, default=None, help="write the raw results as JSON here")
    parser.add_argument(
        "--load", type=Path, default=None, help="print (and --record) results saved by --save, measuring nothing"
    )
    parser.add_argument("--chart", type=Path, default=None, help="write an SVG chart of each figure against its target")
    args = parser.parse_args()
    if args.load:
        saved = json.loads(args.load.read_text())
        for key in ("records", "small", "bulk"):
            setattr(args, key, saved["args"][key])
        rows = table(saved["results"], args)
        if args.chart:
            chart(rows, args)
        if args.record:
            record(rows, args)
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="ledger-scale-"))
    results: dict[str, dict] = {}
    try:
        ledgers = {}
        for size in (args.small, args.records):
            t = time.perf_counter()
            make_ledger(tmp / f"ledger-{size}", size, seed=size)
            ledgers[size] = tmp / f"ledger-{size}"
            print(f"made a {size:,}-record ledger in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        # Side by side: each repeat runs the small ledger, then the large one, so both see the
        # same machine load. Checks and the site read exactly `size` records; adds come last.
        res: dict[int, dict] = {size: {"records": size} for size in ledgers}

        def each(key: str, repeats: int, fn) -> None:
            for _ in range(repeats):
                for size, repo in ledgers.items():
                    value, peak = fn(size, repo)
                    res[size].setdefault(key, []).append(value)
                    res[size][key + "_rss"] = max(res[size].get(key + "_rss", 0.0), peak)

        each("check_all", args.repeats, lambda size, repo: measured([str(LEDGER), "check", "--all"], repo)[:2])
        if not args.no_site:
            for size, repo in ledgers.items():
                wall, peak, info = bench_site(repo, tmp / f"site-{size}")
                res[size].update(site_wall=wall, site_rss=peak, site_info=info)
                shutil.rmtree(tmp / f"site-{size}", ignore_errors=True)
                print(f"built the {size:,}-record site in {wall:.0f} s", file=sys.stderr)
        lines = {size: setup_push(repo, tmp) for size, repo in ledgers.items()}
        each(
            "pre_push",
            args.repeats,
            lambda size, repo: measured(
                [str(LEDGER), "check", "--pre-push", "--remote", "origin"], repo, input=lines[size]
            )[:2],
        )
        each(
            "add_single",
            args.repeats,
            lambda size, repo: measured([str(LEDGER), "add", "note", "-"], repo, input="body: cold add\n")[:2],
        )
        each("add_bulk", 2, lambda size, repo: bench_add_bulk(repo, args.bulk))
        results = {str(size): r for size, r in res.items()}
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.save:
        args.save.write_text(
            json.dumps(
                {
                    "args": {"records": args.records, "small": args.small, "bulk": args.bulk},
                    "machine": {"node": platform.node(), "cores": os.cpu_count(), "load_avg": os.getloadavg()},
                    "results": results,
                },
                indent=2,
            )
        )
    rows = table(results, args)
    if args.chart:
        chart(rows, args)
    if args.record:
        record(rows, args)
    return 0


#: Figures with a numeric target: key -> (target value, label on the chart)
CHART_TARGETS = {
    "add_single": (0.3, "add, one record (target 0.3 s)"),
    "add_bulk": (5000.0, "add, bulk (target 5,000 rec/s)"),
    "check_all": (4.0, "check --all (target 4 s)"),
    "pre_push": (0.5, "check --pre-push (target 0.5 s)"),
    "site_generation_share": (20.0, "site generation share (target 20%)"),
}


def chart(rows: list[dict], args) -> None:
    """Each figure as a fraction of its target (1.0 = on target; left of it = better), both ledgers."""
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    # Deterministic bytes: a fixed hash salt and no date in the metadata.
    plt.rcParams["svg.hashsalt"] = "ledger-scale-bench"
    shown = [r for r in rows if r["key"] in CHART_TARGETS]
    labels = [CHART_TARGETS[r["key"]][1] for r in shown]

    def cost(r: dict, value: float) -> float:
        target = CHART_TARGETS[r["key"]][0]
        return target / value if not r["lower_is_better"] else value / target

    fig, ax = plt.subplots(figsize=(7.5, 0.55 * len(shown) + 1.2))
    ys = range(len(shown))
    ax.barh(
        [y + 0.2 for y in ys],
        [cost(r, r["big"]) for r in shown],
        height=0.38,
        label=f"{args.records:,} records",
        color="#3f51b5",
    )
    ax.barh(
        [y - 0.2 for y in ys],
        [cost(r, r["small"]) for r in shown],
        height=0.38,
        label=f"{args.small:,} records",
        color="#9fa8da",
    )
    ax.axvline(1.0, color="#c62828", linewidth=1)
    ax.set_yticks(list(ys), labels)
    ax.invert_yaxis()
    ax.set_xlabel("cost against the target (1 = on target; below 1 meets it)")
    ax.legend(loc="lower right", frameon=False)
    fig.tight_layout()
    args.chart.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.chart, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    print(f"chart: {args.chart}")


def _median(v):
    return statistics.median(v) if isinstance(v, list) else v


def table(results: dict[str, dict], args) -> list[dict]:
    big, small = results[str(args.records)], results[str(args.small)]
    cores = os.cpu_count()
    load = os.getloadavg()
    print(
        f"\nmachine: {platform.node()}, {cores} cores, {platform.processor() or platform.machine()}, "
        f"load {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}, python {platform.python_version()}"
    )
    rows: list[dict] = []

    def row(
        key: str, what: str, unit: str, value_big, value_small, target_key: str | None, lower_is_better: bool = True
    ):
        target_text, test = TARGETS[target_key] if target_key else ("", None)
        vb, vs = _median(value_big), _median(value_small)
        ratio = vb / vs if vs else None
        verdict = "" if test is None or vb is None else ("meets" if test(vb) else "MISSES")
        rows.append(
            {
                "key": key,
                "what": what,
                "unit": unit,
                "big": vb,
                "small": vs,
                "ratio": ratio,
                "target": target_text,
                "verdict": verdict,
                "samples": value_big if isinstance(value_big, list) else [value_big],
                "lower_is_better": lower_is_better,
            }
        )

    row(
        "add_single", "ledger add, one record, cold (median)", "s", big["add_single"], small["add_single"], "add_single"
    )
    row(
        "add_bulk",
        f"ledger add, {args.bulk:,} records (JSON Lines)",
        "records/s",
        big["add_bulk"],
        small["add_bulk"],
        "add_bulk",
        False,
    )
    row("check_all", "ledger check --all (median)", "s", big["check_all"], small["check_all"], "check_all")
    row(
        "pre_push",
        "ledger check --pre-push, 10-record push (median)",
        "s",
        big["pre_push"],
        small["pre_push"],
        "pre_push",
    )
    if "site_wall" in big:
        row("site_build", "ledger site build, end to end", "s", big["site_wall"], small["site_wall"], "site_build")
        gb, gs = big["site_info"].get("generation_s"), small["site_info"].get("generation_s")
        if gb is not None and gs is not None:
            row("site_generation", "  of which ledger's generation", "s", gb, gs, None)
            row(
                "site_generation_share",
                "  generation share of the build",
                "%",
                100 * gb / big["site_wall"],
                100 * gs / small["site_wall"],
                "site_generation_share",
            )
        mb, ms = big["site_info"].get("mkdocs_s"), small["site_info"].get("mkdocs_s")
        if mb is not None and ms is not None:
            row("site_mkdocs", "  of which MkDocs", "s", mb, ms, None)
    for key, what in (
        ("check_all_rss", "peak memory, check --all"),
        ("site_rss", "peak memory, site build"),
        ("pre_push_rss", "peak memory, check --pre-push"),
        ("add_single_rss", "peak memory, add one"),
        ("add_bulk_rss", "peak memory, add bulk"),
    ):
        if key in big:
            row(key, what, "MiB", big[key], small[key], "peak_rss")

    head = f"{'':<48} {args.records:>12,} {args.small:>10,} {'ratio':>7}  target"
    print(head)
    print("-" * len(head))
    for r in rows:
        fmt = (lambda v: f"{v:,.0f}") if r["unit"] in ("records/s", "MiB") else (lambda v: f"{v:.3g}")
        ratio = f"x{r['ratio']:.2f}" if r["ratio"] else ""
        print(
            f"{r['what'] + ' (' + r['unit'] + ')':<48} {fmt(r['big']):>12} {fmt(r['small']):>10} {ratio:>7}  {r['target']} {r['verdict']}"
        )
    pp = next(r for r in rows if r["key"] == "pre_push")
    print(f"\npre-push at {args.records:,} vs {args.small:,}: x{pp['ratio']:.2f} (target <= 1.2x)")
    return rows


def record(rows: list[dict], args) -> None:
    from ledger.store import Ledger

    book = Ledger.open(REPO)
    contract = next((c for c in book.records("contract") if c.name == "bench-scale-100k"), None)
    if contract is None:
        out = subprocess.run(
            [str(LEDGER), "-C", str(REPO), "add", "contract", "-"],
            input=json.dumps(
                {
                    "name": "bench-scale-100k",
                    "model": "the ledger CLI on a synthetic campaign ledger (benchmarks/scale_bench.py)",
                    "shape": {
                        "records": args.records,
                        "small_records": args.small,
                        "bulk_records": args.bulk,
                        "push_records": 10,
                    },
                    "statistic": "median",
                    "rank_reduction": "single",
                    "description": "Wall time and peak RSS of ledger add (cold single, bulk), check --all, check --pre-push and site build "
                    "on a 100k-record ledger in the campaign's kind mix, side by side with a 1k-record ledger, in one run.",
                }
            ),
            text=True,
            capture_output=True,
            check=True,
        )
        contract_id = out.stdout.strip()
    else:
        contract_id = contract.id
    lines = []
    for r in rows:
        samples = [float(s) for s in r["samples"] if s is not None]
        if not samples:
            continue
        lines.append(
            json.dumps(
                {
                    "contract": contract_id,
                    "metric": f"scale_{r['key']}",
                    "unit": r["unit"],
                    "samples": samples,
                    "title": f"{r['what'].strip()} at {args.records:,} records",
                    "lower_is_better": r["lower_is_better"],
                    "command": f"python benchmarks/scale_bench.py --records {args.records} --record",
                    "extra": {
                        "records": args.records,
                        "small_records": args.small,
                        "value_at_small": r["small"],
                        "ratio_to_small": r["ratio"],
                        "target": r["target"],
                        "verdict": r["verdict"],
                        "cores": os.cpu_count(),
                        "load_avg": list(os.getloadavg()),
                    },
                }
            )
        )
    out = subprocess.run(
        [str(LEDGER), "-C", str(REPO), "add", "measurement", "-"],
        input="\n".join(lines) + "\n",
        text=True,
        capture_output=True,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    print("recorded:", " ".join(out.stdout.split()))


if __name__ == "__main__":
    raise SystemExit(main())
