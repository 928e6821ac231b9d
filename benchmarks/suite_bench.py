"""Time the test suite as the README runs it (`scripts/test.sh`: pytest on two workers, with
its coverage floor), and its quick subset (`-m "not slow and not browser"`), in one run:
wall time, and the CPU time (user + sys) of pytest and everything it started, which a
machine shared with other jobs inflates less than the wall. Prints a table; with --record,
adds each as a measurement of this repository's own ledger (contracts `bench-test-suite`
and `bench-test-suite-quick`), stamped with the checkout's commit: run it on a commit that
is already on main.

    .venv/bin/python benchmarks/suite_bench.py                # both, nothing recorded
    .venv/bin/python benchmarks/suite_bench.py --quick-only   # the quick subset only
    .venv/bin/python benchmarks/suite_bench.py --whole-only   # the whole suite only
    .venv/bin/python benchmarks/suite_bench.py --record       # both, recorded
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).with_name("ledger")
QUICK = "not slow and not browser"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def timed(args: list[str], base: Path) -> dict:
    """One pytest run: wall, the CPU of its whole process tree, and its closing line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-q", f"--basetemp={base}", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.strip().splitlines()
    tail = lines[-1] if lines else proc.stderr[-300:]
    passed = re.search(r"(\d+) passed", tail)
    total = next((line.split()[-1] for line in lines if line.startswith("TOTAL ")), None)
    return {
        "wall": wall,
        "cpu": cpu,
        "exit": proc.returncode,
        "line": tail,
        "passed": int(passed.group(1)) if passed else 0,
        # The short summary (-ra): which tests failed or errored, so a failure under the
        # bench is named, not only counted.
        "failed": [line for line in lines if line.startswith(("FAILED ", "ERROR "))],
        "coverage": total,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--quick-only", action="store_true", help="time the quick subset only")
    only.add_argument("--whole-only", action="store_true", help="time the whole suite only")
    parser.add_argument("--record", action="store_true", help="add the figures to this repository's ledger")
    args = parser.parse_args()
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="ledger-suite-") as tmp:
        if not args.whole_only:
            runs["quick"] = timed(["-m", QUICK], Path(tmp) / "quick")
        if not args.quick_only:
            # As scripts/test.sh runs it: coverage of [tool.coverage.run] source, its floor.
            runs["whole"] = timed(["--cov", "--cov-report=term"], Path(tmp) / "whole")
    cores = len(os.sched_getaffinity(0))
    load = [round(x, 2) for x in os.getloadavg()]
    print(f"test suite on {cores} cores, load average at the end {load}")
    print(f"{'run':8} {'wall s':>8} {'cpu s':>8} {'exit':>5}  closing line")
    for name, r in runs.items():
        print(f"{name:8} {r['wall']:8.1f} {r['cpu']:8.1f} {r['exit']:5d}  {r['line']}")
        if r["coverage"]:
            print(f"{'':8} coverage of src/ledger {r['coverage']}")
        for line in r["failed"]:
            print(f"{'':8} {line}")
    if args.record:
        if any(r["exit"] != 0 for r in runs.values()):
            raise SystemExit("a run failed: nothing recorded")
        record(runs, cores, load)
    return 0


def record(runs: dict[str, dict], cores: int, load: list[float]) -> None:
    def ledger(*cli: str, input: str | None = None) -> str:
        proc = subprocess.run([str(BIN), "-C", str(ROOT), *cli], env=ENV, input=input, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"ledger {' '.join(cli)} failed: {proc.stderr}")
        return proc.stdout

    def contract(name: str, description: str) -> str:
        for row in json.loads(ledger("list", "--kind", "contract", "--format", "json") or "[]"):
            if row["summary"] == name:
                return row["id"]
        data = {
            "name": name,
            "model": "ledger test suite",
            "param_precision": "n/a",
            "optimizer_state_precision": "n/a",
            "compute_precision": "n/a",
            "warmup_steps": 0,
            "measured_steps": 1,
            "statistic": "median",
            "rank_reduction": "single",
            "description": description,
            "extra": {"cores": str(cores), "command": "python benchmarks/suite_bench.py --record"},
        }
        return ledger("add", "contract", "-", input=json.dumps(data)).split()[0]

    names = {
        "whole": ("bench-test-suite", "the README's test command: pytest -n 2 over tests/ with coverage, wall time"),
        "quick": ("bench-test-suite-quick", f'the quick subset: pytest -n 2 -m "{QUICK}", wall time'),
    }
    for key, r in runs.items():
        name, description = names[key]
        data = {
            "contract": contract(name, description),
            "metric": "wall_time",
            "unit": "s",
            "samples": [round(r["wall"], 2)],
            "title": f"{name}: {r['passed']} tests, {cores} cores",
            "command": "python benchmarks/suite_bench.py --record",
            "notes": f"one run; load average at the end {load}; CPU (user+sys) {r['cpu']:.1f} s; {r['line']}",
            "extra": {
                "cpu_s": round(r["cpu"], 2),
                "passed": r["passed"],
                "load": load,
                **({"coverage": r["coverage"]} if r["coverage"] else {}),
            },
        }
        print(ledger("add", "measurement", "-", input=json.dumps(data)).strip())


if __name__ == "__main__":
    raise SystemExit(main())
