"""Benchmark: `ledger site build` for 1k and 10k records, ledger's generation timed apart
from MkDocs'. Prints a table of medians and records the figures in this repository's own
ledger (`ledger add measurement` on the repository root).

    .venv/bin/python benchmarks/site_bench.py                 # 1k x3, 10k x1, records them
    .venv/bin/python benchmarks/site_bench.py --sizes 1000 --repeat 1 --no-record

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


def build_once(n: int, tmp: Path) -> dict:
    from ledger.site import build_site

    root = tmp / f"ledger-{n}"
    shutil.rmtree(root, ignore_errors=True)
    ledger = make_ledger(root, n)
    result = build_site(ledger, strict=False)
    return {
        "records": result.records,
        "pages": result.pages,
        "generation_s": result.generation_s,
        "mkdocs_s": result.mkdocs_s,
        "linkcheck_s": result.linkcheck_s,
        "rules_s": result.rules_s,
        "rules_wait_s": result.rules_wait_s,
        "total_s": result.total_s,
        "warnings": len(result.warnings),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument(
        "--repeat", type=int, nargs="+", default=None, help="runs per size (default 3 for <=1k, 1 above)"
    )
    parser.add_argument("--no-record", action="store_true", help="do not add the figures to the repository's ledger")
    args = parser.parse_args()
    repeats = args.repeat or [3 if s <= 1000 else 1 for s in args.sizes]
    if len(repeats) == 1:
        repeats = repeats * len(args.sizes)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ledger-site-bench-") as tmp:
        for size, rep in zip(args.sizes, repeats):
            runs = [build_once(size, Path(tmp)) for _ in range(rep)]
            rows.append((size, runs))
    cores = os.cpu_count()
    print(f"site build, {cores} cores, MkDocs-Material (search plugin as configured by `ledger init`)")
    print(
        "ledger s: reading records + rendering pages + charts; rules s: page rules (a worker beside MkDocs above 300 pages);"
    )
    print("wait s: time the build waited for the rules after MkDocs; total s: wall time, start to finish")
    print(
        f"{'records':>8} {'pages':>6} {'runs':>4} {'ledger s':>9} {'mkdocs s':>9} {'rules s':>8} {'wait s':>7} {'links s':>8} {'total s':>8} {'ledger %':>9}"
    )
    for size, runs in rows:
        med = {
            k: statistics.median(r[k] for r in runs)
            for k in ("generation_s", "mkdocs_s", "linkcheck_s", "total_s", "rules_s", "rules_wait_s")
        }
        share = 100 * med["generation_s"] / med["total_s"]
        print(
            f"{size:>8} {runs[0]['pages']:>6} {len(runs):>4} {med['generation_s']:>9.2f} {med['mkdocs_s']:>9.2f} {med['rules_s']:>8.2f} {med['rules_wait_s']:>7.2f} {med['linkcheck_s']:>8.2f} {med['total_s']:>8.2f} {share:>8.1f}%"
        )
        if not args.no_record:
            record = {
                "metric": f"site_build_{size}_records",
                "unit": "s",
                "samples": [round(r["total_s"], 3) for r in runs],
                "title": f"ledger site build, {size} records, {runs[0]['pages']} pages: total (generation {med['generation_s']:.1f} s, MkDocs {med['mkdocs_s']:.1f} s)",
                "command": "python benchmarks/site_bench.py",
                "tags": ["benchmark", "site"],
                "extra": {
                    "generation_s": [round(r["generation_s"], 3) for r in runs],
                    "mkdocs_s": [round(r["mkdocs_s"], 3) for r in runs],
                    "linkcheck_s": [round(r["linkcheck_s"], 3) for r in runs],
                    "rules_s": [round(r["rules_s"], 3) for r in runs],
                    "warnings": runs[0]["warnings"],
                    "pages": runs[0]["pages"],
                    "cpu_count": cores,
                },
            }
            ledger_bin = Path(sys.executable).with_name("ledger")
            out = subprocess.run(
                [str(ledger_bin), "-C", str(ROOT), "add", "measurement", "-"],
                input=json.dumps(record),
                text=True,
                capture_output=True,
            )
            print(
                ("recorded " + out.stdout.strip()) if out.returncode == 0 else ("not recorded: " + out.stderr.strip())
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
