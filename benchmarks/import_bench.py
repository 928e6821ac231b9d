"""Benchmark `ledger import`: 10,000 pyperf runs, and a 1,000-file asv results tree.

The inputs are built from real files under tests/importers/data: the pyperf suite repeats
the runs of pyperf's own telco.json (500 benchmarks of 20 runs), the asv tree is
django-asv's format 2 results file (with samples, quartiles and intervals) under 1,000
commit hashes in one results/MACHINE folder, with machine.json and benchmarks.json beside
it, imported with the glob a user types. Each import runs through the installed CLI into
a fresh ledger, `--repeat` times, and again with --dry-run (parse and validate, write
nothing), so what the importers cost is told apart from what writing the records costs;
the table gives the median wall time, records/s and input units/s (pyperf runs, asv files).

    .venv/bin/python benchmarks/import_bench.py            # measure and print the table
    .venv/bin/python benchmarks/import_bench.py --record   # also add the figures to this repo's ledger
    .venv/bin/python benchmarks/import_bench.py --against ../base   # and a checkout of another commit,
                                                  # interleaved import by import, with the ratio

`--against DIR` runs the same imports with DIR/src first on PYTHONPATH (a `git worktree` of the
commit to compare with), alternating the two import by import so that the machine's load falls
on both alike; the table gives both medians and this tree's wall over the other's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LEDGER = Path(sys.executable).with_name("ledger")
DATA = REPO / "tests/importers/data"
DJANGO = DATA / "asv/django-asv/results"


def pyperf_suite(out: Path, benchmarks: int, runs: int) -> Path:
    """A pyperf suite of `benchmarks` x `runs` runs, each a real run of telco.json."""
    telco = json.loads((DATA / "pyperf/telco.json").read_text())
    real = [r for r in telco["benchmarks"][0]["runs"] if r.get("values")]
    suite = {"version": "1.0", "metadata": telco["metadata"], "benchmarks": []}
    for b in range(benchmarks):
        suite["benchmarks"].append(
            {"metadata": {"name": f"telco_{b}"}, "runs": [real[(b + r) % len(real)] for r in range(runs)]}
        )
    path = out / "suite.json"
    path.write_text(json.dumps(suite))
    return path


def asv_tree(out: Path, files: int) -> Path:
    """results/ubuntu-22.04/ with `files` results files (one per commit), machine.json and benchmarks.json."""
    template = json.loads((DJANGO / "ubuntu-22.04/897f38fa-conda-py3.10.json").read_text())
    machine = out / "results" / "ubuntu-22.04"
    machine.mkdir(parents=True)
    shutil.copy(DJANGO / "ubuntu-22.04/machine.json", machine / "machine.json")
    shutil.copy(DJANGO / "benchmarks.json", out / "results" / "benchmarks.json")
    for i in range(files):
        commit = f"{i:08x}" + template["commit_hash"][8:]
        doc = {**template, "commit_hash": commit, "date": template["date"] + i * 60_000}
        (machine / f"{commit[:8]}-conda-py3.10.json").write_text(json.dumps(doc))
    return machine


def fresh_ledger(root: Path) -> None:
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([str(LEDGER), "init"], cwd=root, check=True, capture_output=True)


def timed_import(root: Path, fmt: str, args: list[str], env: dict[str, str] | None = None) -> tuple[float, int]:
    t0 = time.perf_counter()
    out = subprocess.run(
        [str(LEDGER), "import", fmt, *args, "--format", "json"], cwd=root, capture_output=True, text=True, env=env
    )
    wall = time.perf_counter() - t0
    if out.returncode:
        raise SystemExit(out.stderr)
    return wall, len(json.loads(out.stdout)["records"])


def tree_env(src: Path | None) -> dict[str, str] | None:
    """The environment that makes the installed `ledger` import the package of checkout `src`."""
    if src is None:
        return None
    return {**os.environ, "PYTHONPATH": str(src.resolve() / "src")}


def measure(repeat: int, benchmarks: int, runs: int, files: int, against: Path | None = None) -> dict[str, dict]:
    results: dict[str, dict] = {}
    trees = {"": None} if against is None else {"": None, "against": tree_env(against)}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        suite = pyperf_suite(tmp_path, benchmarks, runs)
        tree = asv_tree(tmp_path, files)
        globbed = sorted(str(p) for p in tree.glob("*.json")) + [str(tree.parent / "benchmarks.json")]
        cases = {
            "pyperf": ("pyperf", [str(suite)], benchmarks * runs, "runs"),
            "pyperf --dry-run": ("pyperf", [str(suite), "--dry-run"], benchmarks * runs, "runs"),
            "asv": ("asv", globbed, files, "files"),
            "asv --dry-run": ("asv", [*globbed, "--dry-run"], files, "files"),
        }
        for name, (fmt, args, units, unit_name) in cases.items():
            walls: dict[str, list[float]] = {label: [] for label in trees}
            records = 0
            for i in range(repeat):
                for label, env in trees.items():  # alternated, so load falls on both alike
                    root = tmp_path / f"{name}-{i}{label}"
                    fresh_ledger(root)
                    wall, records = timed_import(root, fmt, args, env)
                    walls[label].append(wall)
                    shutil.rmtree(root)
            results[name] = {
                "walls": walls[""],
                "records": records,
                "units": units,
                "unit_name": unit_name,
                "records_per_s": [records / w for w in walls[""]],
            }
            if against is not None:
                results[name]["against_walls"] = walls["against"]
    return results


def table(results: dict[str, dict]) -> None:
    against = any("against_walls" in r for r in results.values())
    extra = f" {'against wall':>13} {'ratio':>6}" if against else ""
    print(f"{'import':<17} {'input':>16} {'records':>8} {'median wall':>12} {'records/s':>10} {'input/s':>10}{extra}")
    for name, r in results.items():
        wall = statistics.median(r["walls"])
        line = (
            f"{name:<17} {r['units']:>10,} {r['unit_name']:<5} {r['records']:>8,} {wall:>10.2f} s "
            f"{r['records'] / wall:>10,.0f} {r['units'] / wall:>10,.0f}"
        )
        if "against_walls" in r:
            other = statistics.median(r["against_walls"])
            line += f" {other:>11.2f} s {wall / other:>6.3f}"
        print(line)
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")


def git_head(tree: Path) -> str:
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip()


def record(results: dict[str, dict], args: argparse.Namespace) -> None:
    rows = []
    against = {"source": git_head(args.against)} if args.against else {}
    for name, r in results.items():
        rows.append(
            {
                "title": f"ledger import {name}: {r['units']:,} {r['unit_name']} into {r['records']:,} records",
                "metric": f"import_{name.split()[0]}_rate" + ("_dry_run" if "dry" in name else ""),
                "unit": "records/s",
                "lower_is_better": False,
                "samples": r["records_per_s"],
                "command": f"ledger import {name} (benchmarks/import_bench.py)",
                "extra": {
                    "input": f"{r['units']} {r['unit_name']}",
                    "records": r["records"],
                    "walls_s": r["walls"],
                    "machine": f"{platform.node()}, {os.cpu_count()} CPUs",
                    **(
                        {
                            "against": {
                                **against,
                                "walls_s": r["against_walls"],
                                "records_per_s": [r["records"] / w for w in r["against_walls"]],
                                "wall_ratio": statistics.median(r["walls"]) / statistics.median(r["against_walls"]),
                            }
                        }
                        if "against_walls" in r
                        else {}
                    ),
                },
            }
        )
    out = subprocess.run(
        [str(LEDGER), "-C", str(REPO), "add", "measurement", "-"],
        input="\n".join(json.dumps(r) for r in rows) + "\n",
        text=True,
        capture_output=True,
    )
    if out.returncode:
        raise SystemExit(out.stderr)
    print("recorded:", " ".join(out.stdout.split()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--benchmarks", type=int, default=500, help="pyperf benchmarks (x --runs = pyperf runs)")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--files", type=int, default=1000, help="asv results files")
    parser.add_argument("--record", action="store_true", help="add the figures to this repository's ledger")
    parser.add_argument(
        "--against", type=Path, default=None, help="a checkout of another commit to measure alongside (its src/)"
    )
    args = parser.parse_args()
    results = measure(args.repeat, args.benchmarks, args.runs, args.files, args.against)
    table(results)
    if args.record:
        record(results, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
