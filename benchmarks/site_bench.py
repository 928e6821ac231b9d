"""Benchmark: `ledger site build` for 1k and 10k records, cold (nothing remembered) and after
a push of 10 records, ledger's generation timed apart from MkDocs'. Each build runs in a fresh
interpreter with a cache folder of its own; `--baseline REF` builds that commit's code beside
this checkout's, run for run. Prints a table of medians and records the figures in this
repository's own ledger (`ledger add measurement` on the repository root, stamped with the
commit each side ran).

    .venv/bin/python benchmarks/site_bench.py                 # 1k x3, 10k x1, records them
    .venv/bin/python benchmarks/site_bench.py --sizes 1000 --repeat 1 --no-record
    .venv/bin/python benchmarks/site_bench.py --sizes 1000 10000 --baseline 524041e

The synthetic campaign is shaped like the users' records: one contract, environments, a
flop audit, measurements on four topologies, sandwiches, and decisions citing about one
measurement in ten (cited records get a page each; the rest go to grouped listings).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_ledger(root: Path, n: int, seed: int = 7):
    from ulid import ULID

    from ledger.schema.registry import KINDS
    from ledger.store import Ledger
    from ledger.store.add import seal_record
    from ledger.store.init import init

    init(root)
    ledger = Ledger.open(root)
    rng = random.Random(seed)
    t0 = datetime(2026, 5, 1, tzinfo=UTC)
    counter = 0
    batch = []

    def add(kind: str, body: dict) -> str:
        nonlocal counter
        counter += 1
        at = t0 + timedelta(minutes=7 * counter)
        rid = str(ULID.from_bytes(int(at.timestamp() * 1000).to_bytes(6, "big") + rng.randbytes(10)))
        topo = body.pop("_topo", "4x GB200")
        data = {
            "id": rid,
            "kind": kind,
            "created_at": at.isoformat(),
            "tool": {"name": "ledger", "version": "bench"},
            "sha256": "0" * 64,
            "source": {"sha": f"{rng.getrandbits(160):040x}"},
            "allocation": {"id": str(1_600_000 + counter // 50), "scheduler": "slurm", "topology": topo},
            **body,
        }
        batch.append(seal_record(KINDS[kind].model_validate(data)))
        return rid

    contract = add(
        "contract",
        {
            "name": "bench-contract",
            "model": "LTX-2",
            "param_precision": "fp32",
            "optimizer_state_precision": "fp32",
            "compute_precision": "bf16",
            "warmup_steps": 10,
            "measured_steps": 20,
        },
    )
    env = add("environment", {"hostname": "gb200-a", "health": {"verdict": "healthy"}})
    audit = add(
        "flop-audit",
        {
            "contract": contract,
            "flop_per_sample": 353880819892224,
            "derivation": "analytic",
            "peak": {"name": "house-2450", "tflops_per_gpu": 2450.0},
        },
    )
    measurements: list[str] = []
    topologies = ["1x GB200", "4x GB200", "8x GB200", "8x GB200 two-tray"]
    while counter < n:
        roll = rng.random()
        if roll < 0.86 or len(measurements) < 3:
            base = 0.7 + 0.1 * rng.random()
            samples = [round(base * (1 + rng.gauss(0, 0.002)), 6) for _ in range(20)]
            measurements.append(
                add(
                    "measurement",
                    {
                        "_topo": rng.choice(topologies),
                        "contract": contract,
                        "environment": env,
                        "flop_audit": audit,
                        "samples": samples,
                        "world_size": 4,
                        "local_batch": 2,
                        "global_batch": 8,
                        "health": "healthy",
                        "command": "torchrun run_current.sh",
                        "title": f"run {counter}",
                    },
                )
            )
        elif roll < 0.90:
            a, c, b = rng.sample(measurements[-50:], 3)
            add(
                "sandwich",
                {
                    "contract": contract,
                    "control_a": a,
                    "candidate": c,
                    "control_b": b,
                    "a_value": 0.7,
                    "candidate_value": 0.701,
                    "b_value": 0.7002,
                    "midpoint": 0.7001,
                    "delta": 0.0009,
                    "delta_percent": 0.128,
                    "drift_percent": 0.03,
                    "floor_percent": 0.5,
                    "verdict": "neutral",
                    "candidate_label": f"change {counter}",
                },
            )
        elif roll < 0.99:
            add(
                "decision",
                {
                    "family": f"family {counter % 40}",
                    "verdict": rng.choice(["accepted", "rejected", "timing-neutral", "research"]),
                    "mechanism": "measured",
                    "where_to_continue": "see evidence",
                    "evidence": rng.sample(measurements[-30:], 1),
                },
            )
        else:
            add("note", {"body": f"note {counter}"})
    ledger.write(batch, durable=False)
    return ledger


def push(ledger, count: int, seed: int = 11) -> None:
    """`count` more measurements under the ledger's contract, written as a push writes them."""
    from ulid import ULID

    from ledger.schema.registry import KINDS
    from ledger.store.add import seal_record

    rng = random.Random(seed)
    contract = next(iter(ledger.records("contract"))).id
    last = max(r.created_at for r in ledger.records("measurement"))
    batch = []
    for n in range(count):
        at = last + timedelta(minutes=7 * (n + 1))
        rid = str(ULID.from_bytes(int(at.timestamp() * 1000).to_bytes(6, "big") + rng.randbytes(10)))
        data = {
            "id": rid,
            "kind": "measurement",
            "created_at": at.isoformat(),
            "tool": {"name": "ledger", "version": "bench"},
            "sha256": "0" * 64,
            "source": {"sha": f"{rng.getrandbits(160):040x}"},
            "allocation": {"id": "1700000", "scheduler": "slurm", "topology": "4x GB200"},
            "contract": contract,
            "samples": [round(0.7 * (1 + rng.gauss(0, 0.002)), 6) for _ in range(20)],
            "global_batch": 8,
            "title": f"pushed run {n}",
        }
        batch.append(seal_record(KINDS["measurement"].model_validate(data)))
    ledger.write(batch, durable=False)


def build_once(n: int, tmp: Path, incremental: int = 0) -> dict:
    """One cold build of a fresh `n`-record ledger (nothing remembered: a fresh cache folder),
    then, with `incremental`, a push of that many records and the build that follows it."""
    import resource

    from ledger.site import build_site
    from ledger.store import Ledger

    root = tmp / f"ledger-{n}"
    shutil.rmtree(root, ignore_errors=True)
    ledger = make_ledger(root, n)
    cpu = time.process_time()
    result = build_site(ledger, strict=False)
    out = {
        "records": result.records,
        "pages": result.pages,
        "generation_s": result.generation_s,
        "mkdocs_s": result.mkdocs_s,
        "linkcheck_s": result.linkcheck_s,
        "rules_s": result.rules_s,
        "rules_wait_s": result.rules_wait_s,
        "total_s": result.total_s,
        "cpu_s": time.process_time() - cpu,
        "warnings": len(result.warnings),
        "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "workers_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }
    if incremental:
        push(Ledger.open(root), incremental)
        again = build_site(Ledger.open(root), strict=False)
        out["incremental_s"] = again.total_s
        out["incremental_mkdocs_s"] = again.mkdocs_s
        out["incremental_rules_cached"] = getattr(again, "rules_cached", 0)
    return out


def _child(code: Path, n: int, tmp: Path, incremental: int) -> dict:
    """build_once in a fresh interpreter that imports ledger from `code` (a source folder):
    the baseline and this checkout side by side in one run, each with a cache folder of its own."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=tmp))
    env = {**os.environ, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(cache)}
    args = [sys.executable, __file__, "--child", str(n), "--tmp", str(tmp), "--incremental", str(incremental)]
    done = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"build of {n} records from {code} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _baseline_source(ref: str, tmp: Path) -> Path:
    """The `src` folder of commit `ref`, exported into `tmp` (git archive: no worktree)."""
    folder = tmp / f"baseline-{ref}"
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    return folder / "src"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument(
        "--repeat", type=int, nargs="+", default=None, help="runs per size (default 3 for <=1k, 1 above)"
    )
    parser.add_argument("--no-record", action="store_true", help="do not add the figures to the repository's ledger")
    parser.add_argument("--baseline", help="a commit to build beside this checkout, run for run (e.g. 524041e)")
    parser.add_argument(
        "--current", help="build this commit's code (exported) instead of the working tree's, e.g. main's HEAD"
    )
    parser.add_argument("--incremental", type=int, default=10, help="records pushed before the incremental build")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tmp", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(build_once(args.child, Path(args.tmp), args.incremental)))
        return 0
    repeats = args.repeat or [3 if s <= 1000 else 1 for s in args.sizes]
    if len(repeats) == 1:
        repeats = repeats * len(args.sizes)
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    sides = [("this checkout " + head.stdout.strip(), ROOT / "src")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ledger-site-bench-") as tmp:
        if args.current:
            sides = [(f"this {args.current}", _baseline_source(args.current, Path(tmp)))]
        if args.baseline:
            sides.insert(0, (f"baseline {args.baseline}", _baseline_source(args.baseline, Path(tmp))))
        for size, rep in zip(args.sizes, repeats):
            runs: dict[str, list[dict]] = {name: [] for name, _ in sides}
            for _ in range(rep):  # interleaved, so both sides see the same load
                for name, code in sides:
                    runs[name].append(_child(code, size, Path(tmp), args.incremental))
            rows.append((size, runs))
    cores = os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"site build, {cores} cores, load average {load:.1f} at the end, MkDocs-Material (search as `ledger init` sets it)"
    )
    print("ledger s: records + pages + charts; rules s: CPU of the page rules (workers beside MkDocs above 300 pages);")
    print("total s: wall time of a cold build (nothing remembered); cpu s: its CPU in the main process;")
    print(f"incr s: wall time of the build after a push of {args.incremental} records; rss: peak MiB (main / a worker)")
    print(
        f"{'side':<26} {'records':>8} {'pages':>6} {'runs':>4} {'ledger s':>9} {'mkdocs s':>9} {'rules s':>8} {'links s':>8} {'total s':>8} {'cpu s':>7} {'incr s':>7} {'rss MiB':>12}"
    )
    keys = ("generation_s", "mkdocs_s", "linkcheck_s", "total_s", "rules_s", "cpu_s", "rss_mib", "workers_rss_mib")
    for size, runs in rows:
        medians = {}
        for name, side in runs.items():
            med = {k: statistics.median(r[k] for r in side) for k in keys}
            incr = [r["incremental_s"] for r in side if "incremental_s" in r]
            med["incremental_s"] = statistics.median(incr) if incr else float("nan")
            medians[name] = med
            print(
                f"{name:<26} {size:>8} {side[0]['pages']:>6} {len(side):>4} {med['generation_s']:>9.2f} {med['mkdocs_s']:>9.2f} {med['rules_s']:>8.2f} {med['linkcheck_s']:>8.2f} {med['total_s']:>8.2f} {med['cpu_s']:>7.1f} {med['incremental_s']:>7.2f} {med['rss_mib']:>6.0f}/{med['workers_rss_mib']:<5.0f}"
            )
        if len(medians) == 2:
            (base_name, base), (cur_name, cur) = medians.items()
            print(
                f"{'ratio (this / baseline)':<26} {size:>8} cold {cur['total_s'] / base['total_s']:.2f}x, after a push {cur['incremental_s'] / base['incremental_s']:.2f}x"
            )
        if not args.no_record:
            for name, side in runs.items():
                _record(name, size, side, medians[name], cores, load, args.incremental)
    return 0


def _record(name: str, size: int, runs: list[dict], med: dict, cores, load: float, pushed: int) -> None:
    sha = name.rsplit(" ", 1)[-1]
    extra = {k: [round(r[k], 3) for r in runs] for k in ("generation_s", "mkdocs_s", "linkcheck_s", "rules_s", "cpu_s")}
    for metric, key, label in (
        (f"site_build_{size}_records", "total_s", "cold build"),
        (f"site_incremental_{size}_records", "incremental_s", f"build after a push of {pushed} records"),
    ):
        samples = [round(r[key], 3) for r in runs if key in r]
        if not samples:
            continue
        record = {
            "metric": metric,
            "unit": "s",
            "samples": samples,
            "title": f"ledger site build at {sha}, {size} records, {runs[0]['pages']} pages: {label} (load average {load:.0f}, {cores} cores)",
            "command": f"python benchmarks/site_bench.py --sizes {size}",
            "tags": ["benchmark", "site"],
            "extra": {
                **extra,
                "side": name,
                "peak_rss_mib": round(med["rss_mib"]),
                "warnings": runs[0]["warnings"],
                "pages": runs[0]["pages"],
                "cpu_count": cores,
                "load_average": round(load, 1),
            },
        }
        ledger_bin = Path(sys.executable).with_name("ledger")
        args = [str(ledger_bin), "-C", str(ROOT), "add", "measurement", "-"]
        full = subprocess.run(["git", "-C", str(ROOT), "rev-parse", sha], capture_output=True, text=True)
        if full.returncode == 0:
            # Stamped with the commit that was measured, not whatever the checkout holds now.
            args[4:4] = ["--source-sha", full.stdout.strip()]
        out = subprocess.run(args, input=json.dumps(record), text=True, capture_output=True)
        print(("recorded " + out.stdout.strip()) if out.returncode == 0 else ("not recorded: " + out.stderr.strip()))


if __name__ == "__main__":
    sys.exit(main())
