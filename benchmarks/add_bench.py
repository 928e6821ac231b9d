"""Benchmark `ledger add`: cold single add and bulk add, on ledgers of 1k and 100k records.

Targets (issue #2): one add at most 0.3 s cold; bulk at least 5,000 records/s; neither
grows with the ledger's size. Both ledger sizes are measured side by side in one run,
so their ratio is fair on a noisy machine.

    .venv/bin/python benchmarks/add_bench.py            # measure and print the table
    .venv/bin/python benchmarks/add_bench.py --record   # also add the figures to this repo's ledger
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LEDGER = Path(sys.executable).with_name("ledger")
sys.path.insert(0, str(REPO / "src"))

from ledger.schema import Source  # noqa: E402
from ledger.schema.envelope import Allocation  # noqa: E402
from ledger.store import Item, Ledger, Stamping, add  # noqa: E402
from ledger.store.init import init  # noqa: E402

STAMP = Stamping(source=Source(sha="0" * 40), allocation=Allocation(id="bench"))


def make_ledger(root: Path, existing: int) -> Ledger:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    init(root)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "init"], check=True
    )
    book = Ledger.open(root)
    batch = 5000
    for start in range(0, existing, batch):
        n = min(batch, existing - start)
        items = [
            Item({"samples": [0.5 + (i % 7) / 100, 0.51, 0.52], "title": f"existing {start + i}"}, "<bench>", None)
            for i in range(n)
        ]
        add(book, "measurement", items, STAMP, durable=False)
    return book


def cold_add(root: Path, runs: int) -> list[float]:
    walls = []
    for i in range(runs):
        t0 = time.perf_counter()
        subprocess.run(
            [str(LEDGER), "add", "note", "-"],
            cwd=root,
            input=f"body: cold add {i}\n",
            text=True,
            check=True,
            capture_output=True,
        )
        walls.append(time.perf_counter() - t0)
    return walls


def bulk_add(root: Path, records: int, runs: int) -> list[float]:
    rates = []
    lines = "\n".join(json.dumps({"samples": [0.7, 0.71, 0.72], "title": f"bulk {i}"}) for i in range(records)) + "\n"
    path = root / "bulk.jsonl"
    path.write_text(lines)
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([str(LEDGER), "add", "measurement", str(path)], cwd=root, check=True, capture_output=True)
        rates.append(records / (time.perf_counter() - t0))
    return rates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,100000", help="existing ledger sizes")
    parser.add_argument("--cold-runs", type=int, default=15)
    parser.add_argument("--bulk-records", type=int, default=10000)
    parser.add_argument("--bulk-runs", type=int, default=3)
    parser.add_argument("--record", action="store_true", help="add the results to this repository's own ledger")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[int, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="ledger-add-bench-") as tmp:
        roots = {}
        for size in sizes:
            t0 = time.perf_counter()
            roots[size] = Path(tmp) / f"ledger-{size}"
            make_ledger(roots[size], size)
            print(f"built a ledger of {size:,} records in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        # Interleave the sizes so drift of the machine hits both alike.
        for size in sizes:
            results[size] = {"cold": [], "bulk": []}
        for _round in range(args.bulk_runs):
            for size in sizes:
                results[size]["cold"] += cold_add(roots[size], max(1, args.cold_runs // args.bulk_runs))
                results[size]["bulk"] += bulk_add(roots[size], args.bulk_records, 1)

    print(
        f"\n{'existing records':>17} | {'cold add median (s)':>19} | {'min':>6} | {'max':>6} | {'bulk records/s median':>21} | {'n':>3}"
    )
    print("-" * 88)
    for size in sizes:
        cold, bulk = results[size]["cold"], results[size]["bulk"]
        print(
            f"{size:>17,} | {statistics.median(cold):>19.3f} | {min(cold):>6.3f} | {max(cold):>6.3f} | {statistics.median(bulk):>21,.0f} | {len(bulk):>3}"
        )
    small, large = sizes[0], sizes[-1]
    cold_ratio = statistics.median(results[large]["cold"]) / statistics.median(results[small]["cold"])
    bulk_ratio = statistics.median(results[large]["bulk"]) / statistics.median(results[small]["bulk"])
    print(f"\n{large:,} vs {small:,}: cold add x{cold_ratio:.2f}, bulk rate x{bulk_ratio:.2f}")
    print("targets: cold <= 0.3 s, bulk >= 5,000 records/s, flat in ledger size")
    if args.record:
        record(results, args)
    return 0


def record(results: dict[int, dict[str, list[float]]], args: argparse.Namespace) -> None:
    env = {**os.environ}
    book = Ledger.open(REPO)
    contract = next((c for c in book.records("contract") if c.name == "bench-ledger-add"), None)
    if contract is None:
        out = subprocess.run(
            [str(LEDGER), "-C", str(REPO), "add", "contract", "-"],
            input=json.dumps(
                {
                    "name": "bench-ledger-add",
                    "model": "ledger add through the installed CLI (subprocess wall time)",
                    "shape": {"bulk_records": args.bulk_records},
                    "statistic": "median",
                    "rank_reduction": "single",
                    "description": "benchmarks/add_bench.py: cold single add and bulk JSON Lines add on ledgers of 1k and 100k records",
                }
            ),
            text=True,
            capture_output=True,
            env=env,
            check=True,
        )
        contract_id = out.stdout.strip()
    else:
        contract_id = contract.id
    rows = []
    for size, res in results.items():
        rows.append(
            {
                "contract": contract_id,
                "title": f"cold ledger add on {size:,} existing records",
                "metric": "cold_add_wall",
                "unit": "s",
                "samples": res["cold"],
                "command": "ledger add note -",
                "extra": {"existing_records": size},
            }
        )
        rows.append(
            {
                "contract": contract_id,
                "title": f"bulk ledger add of {args.bulk_records:,} on {size:,} existing records",
                "metric": "bulk_add_rate",
                "unit": "records/s",
                "lower_is_better": False,
                "samples": res["bulk"],
                "command": "ledger add measurement bulk.jsonl",
                "extra": {"existing_records": size},
            }
        )
    out = subprocess.run(
        [str(LEDGER), "-C", str(REPO), "add", "measurement", "-"],
        input="\n".join(json.dumps(r) for r in rows) + "\n",
        text=True,
        capture_output=True,
        env=env,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    print("recorded:", " ".join(out.stdout.split()))


if __name__ == "__main__":
    raise SystemExit(main())
