"""The light core (issue 11): what `pip install ledger` costs, and how fast the pre-push check
starts on it, before and after the split into a core and the `site` extra.

Three fresh virtual environments, each made with `python -m venv` and one `pip install`:

* before: the tree at --before REV (default: the commit before the split), `pip install .`,
  which then brought the whole site stack;
* core: this tree, `pip install .`;
* core + site: this tree, `pip install '.[site]'`.

For each: the size of its site-packages (pip and setuptools, which every venv has, left
out), the number of distributions, and the wall time of `ledger check --pre-push` for a
10-record push on a small ledger (git's pre-push input on stdin; --repeats cold process
starts per install, in interleaved rounds; wall time and CPU time with git's children). Prints a table; with --record adds the figures as measurement records
under the contract `bench-core-install` in this repository's own ledger (commit the files
it prints).

    .venv/bin/python benchmarks/core_bench.py                  # print only
    .venv/bin/python benchmarks/core_bench.py --record         # and record in ./ledger
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LEDGER = Path(sys.executable).with_name("ledger")
#: The last commit of main before the split into a core and extras.
BEFORE = "a79be2b"
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
    if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SLURM_JOB_ID", "WORLD_SIZE", "LEDGER_DIR")
}
#: Every fresh venv has these; they are not ledger's cost.
BASELINE = ("pip", "setuptools", "_distutils_hack", "distutils-precedence.pth", "pkg_resources")


def run(cmd: list[str], cwd: Path | None = None, input: str | None = None) -> str:
    return subprocess.run(cmd, cwd=cwd, input=input, env=ENV, capture_output=True, text=True, check=True).stdout


def make_venv(folder: Path, source: Path, spec: str) -> Path:
    run([sys.executable, "-m", "venv", str(folder)])
    run([str(folder / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", f"{source}{spec}"])
    return folder


def site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def size_mb(venv: Path) -> tuple[float, int]:
    """MB on disk of what the install added to site-packages, and its number of distributions."""
    total = 0
    dists = 0
    for entry in site_packages(venv).iterdir():
        if entry.name.startswith(BASELINE):
            continue
        if entry.name.endswith(".dist-info"):
            dists += 1
        paths = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file() and not p.is_symlink()]
        total += sum(p.stat().st_blocks * 512 for p in paths)
    return total / 1e6, dists


def small_ledger(folder: Path, ledger: Path) -> tuple[Path, str]:
    """A ledger pushed to a bare remote, then 10 records committed locally; git's pre-push input for that push.
    Written by the oldest of the versions measured, so that every one of them reads its config."""
    repo = folder / "campaign"
    repo.mkdir()
    run(["git", "init", "-q", "--bare", "-b", "main", str(folder / "remote.git")])
    run(["git", "init", "-q", "-b", "main"], cwd=repo)
    run([str(ledger), "init"], cwd=repo)
    run(["git", "add", "-A"], cwd=repo)
    run(["git", "commit", "-q", "-m", "start"], cwd=repo)
    run(["git", "remote", "add", "origin", str(folder / "remote.git")], cwd=repo)
    run(["git", "push", "-q", "--no-verify", "origin", "main"], cwd=repo)
    base = run(["git", "rev-parse", "HEAD"], cwd=repo).strip()
    notes = "".join(json.dumps({"body": f"note {i} of the push"}) + "\n" for i in range(10))
    run([str(ledger), "add", "note", "-"], cwd=repo, input=notes)
    run(["git", "add", "-A"], cwd=repo)
    run(["git", "commit", "-q", "-m", "ten notes"], cwd=repo)
    head = run(["git", "rev-parse", "HEAD"], cwd=repo).strip()
    return repo, f"refs/heads/main {head} refs/heads/main {base}\n"


def pre_push_once(venv: Path, repo: Path, stdin: str) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system, with git's children) of one cold
    `ledger check --pre-push` for the 10-record push."""
    exe = venv / "bin" / "ledger"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(exe), "check", "--pre-push", "--remote", "origin"],
        cwd=repo,
        input=stdin.encode(),
        env=ENV,
        capture_output=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{exe} check --pre-push failed: {proc.stderr.decode()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pre_push_rounds(rows: list[dict], repo: Path, stdin: str, repeats: int) -> None:
    """Interleaved rounds (before, core, site, before, ...), so load that comes and goes on a
    shared machine falls on every install alike; the first round warms the page cache."""
    for row in rows:
        row["pre_push"], row["pre_push_cpu"] = [], []
    for round_no in range(repeats + 1):
        for row in rows:
            wall, cpu = pre_push_once(row["venv"], repo, stdin)
            if round_no:
                row["pre_push"].append(wall)
                row["pre_push_cpu"].append(cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="the commit before the split")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--record", action="store_true", help="add the figures to this repository's ledger")
    parser.add_argument("--keep", action="store_true", help="keep the venvs")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="ledger-core-bench-"))
    try:
        old_tree = work / "before-tree"
        run(["git", "worktree", "add", "--detach", str(old_tree), args.before], cwd=REPO)
        variants = [
            ("before", f"pip install . at {args.before}", old_tree, ""),
            ("core", "pip install .", REPO, ""),
            ("site", "pip install '.[site]'", REPO, "[site]"),
        ]
        rows = []
        for key, how, tree, spec in variants:
            t0 = time.perf_counter()
            venv = make_venv(work / f"venv-{key}", tree, spec)
            install_s = time.perf_counter() - t0
            mb, dists = size_mb(venv)
            rows.append({"key": key, "how": how, "mb": mb, "dists": dists, "install_s": install_s, "venv": venv})
        repo, stdin = small_ledger(work, rows[0]["venv"] / "bin" / "ledger")
        pre_push_rounds(rows, repo, stdin, args.repeats)
        table(rows, args.repeats)
        if args.record:
            record(rows, args)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(work / "before-tree")], cwd=REPO, env=ENV)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


def table(rows: list[dict], repeats: int) -> None:
    print(
        f"machine: {platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, Python {platform.python_version()}"
    )
    print(
        f"{'install':<34} {'site-packages':>14} {'dists':>6} {'pre-push wall median':>21} {'min':>7} {'max':>7} "
        f"{'CPU median':>11}"
    )
    for r in rows:
        t = r["pre_push"]
        print(
            f"{r['how']:<34} {r['mb']:>11.1f} MB {r['dists']:>6} {statistics.median(t):>19.3f} s "
            f"{min(t):>6.3f} {max(t):>6.3f} {statistics.median(r['pre_push_cpu']):>9.3f} s"
        )
    before, core = rows[0], rows[1]
    print(
        f"core is {core['mb']:.1f} MB against {before['mb']:.1f} MB before ({core['mb'] / before['mb']:.0%}); "
        f"pre-push start-up median {statistics.median(core['pre_push']):.3f} s against "
        f"{statistics.median(before['pre_push']):.3f} s; CPU {statistics.median(core['pre_push_cpu']):.3f} s against "
        f"{statistics.median(before['pre_push_cpu']):.3f} s ({repeats} interleaved cold starts each)"
    )


def record(rows: list[dict], args) -> None:
    sys.path.insert(0, str(REPO / "src"))
    from ledger.store import Ledger

    book = Ledger.open(REPO)
    contract = next((c for c in book.records("contract") if c.name == "bench-core-install"), None)
    if contract is None:
        contract_id = run(
            [str(LEDGER), "-C", str(REPO), "add", "contract", "-"],
            input=json.dumps(
                {
                    "name": "bench-core-install",
                    "model": "pip install of ledger into a fresh venv (benchmarks/core_bench.py)",
                    "shape": {"push_records": 10, "ledger_records": 10},
                    "statistic": "median",
                    "rank_reduction": "single",
                    "description": "Size of site-packages after one `pip install` into a fresh venv (pip and "
                    "setuptools left out), and wall and CPU time of `ledger check --pre-push` for a 10-record "
                    "push, cold process starts in interleaved rounds: before the split into a core and extras, "
                    "the core, and core + site.",
                }
            ),
        ).strip()
    else:
        contract_id = contract.id
    common = {"cores": os.cpu_count(), "load_avg": list(os.getloadavg()), "before_commit": args.before}
    lines = []
    for r in rows:
        extra = {**common, "install": r["how"], "distributions": r["dists"], "install_s": round(r["install_s"], 1)}
        lines.append(
            {
                "contract": contract_id,
                "metric": f"install_size_{r['key']}",
                "unit": "MB",
                "samples": [round(r["mb"], 2)],
                "title": f"site-packages after {r['how']} ({r['key']})",
                "lower_is_better": True,
                "command": "python benchmarks/core_bench.py --record",
                "extra": extra,
            }
        )
        lines.append(
            {
                "contract": contract_id,
                "metric": f"pre_push_cpu_{r['key']}",
                "unit": "s",
                "samples": [round(t, 4) for t in r["pre_push_cpu"]],
                "title": f"ledger check --pre-push CPU time (user + system, with git), after {r['how']} ({r['key']})",
                "lower_is_better": True,
                "command": "python benchmarks/core_bench.py --record",
                "extra": extra,
            }
        )
        lines.append(
            {
                "contract": contract_id,
                "metric": f"pre_push_startup_{r['key']}",
                "unit": "s",
                "samples": [round(t, 4) for t in r["pre_push"]],
                "title": f"ledger check --pre-push, 10-record push, after {r['how']} ({r['key']})",
                "lower_is_better": True,
                "command": "python benchmarks/core_bench.py --record",
                "extra": extra,
            }
        )
    out = run(
        [str(LEDGER), "-C", str(REPO), "add", "measurement", "-"],
        input="".join(json.dumps(line) + "\n" for line in lines),
    )
    print("recorded:", " ".join(out.split()))


if __name__ == "__main__":
    raise SystemExit(main())
