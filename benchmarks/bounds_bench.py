"""Bounds of issue 22, item 8: three hostile inputs, each run by this checkout's code and by
an older commit's (`--before`, default the commit before the fixes), side by side in one run
so both see the same machine load.

* `import .json.gz`: `ledger import pyperf` of a gzip'd pyperf file of one run of N floats
  (`--bomb-values`, default 10 million: 40 MB inflated from 39 KB): wall time and peak memory
  (max RSS from wait4's rusage) until it is refused;
* `owed count`: `ledger.checks.pages.owed_count` on a spec page of N `## Owed` sections of one
  item each (`--owed-sections`, default 6,400: a 430 KB page), in-process in a child;
* `check --all`: `ledger check --all` on a ledger of N notes (`--chain`, default 1,200), each
  superseding the K before it (`--fanout`, default 8), committed to git. The old cycle check
  walked every record's whole graph back, so its cost grew with N times the edges.

Each case runs `--repeats` times (default 3) alternating before and after; the table shows
medians. The older commit is checked out with `git worktree add --detach` into a temporary
folder and run with this virtual environment's interpreter on its `src/`.

    .venv/bin/python benchmarks/bounds_bench.py
    .venv/bin/python benchmarks/bounds_bench.py --before 9cc047e --repeats 5
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
#: The commit before the fixes of issue 22's item 8 rest (main when this work began).
BEFORE = "9cc047e"


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, text=True, capture_output=True).stdout


def run(src: Path, args: list[str], cwd: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in MiB, exit code) of `python ARGS` with `src` first on the path."""
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, *args], cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss // 1024, proc.returncode


def gz_bomb(path: Path, values: int) -> None:
    body = b'{"version": "1.0", "benchmarks": [{"metadata": {"name": "x"}, "runs": [{"values": ['
    path.write_bytes(gzip.compress(body + b"1.5," * values + b"1.5]}]}]}", 9))


def owed_page(path: Path, sections: int) -> None:
    lines = ["# Spec", ""]
    for i in range(sections):
        lines += [f"## Owed {i}", "", f"- item {i}: the per-site dispatch test, owner: alice", ""]
    path.write_text("\n".join(lines) + "\n")


OWED = """
import sys, time
from ledger.checks.pages import owed_count
text = open(sys.argv[1]).read()
owed_count({"ledger/specs/x.md": "# x\\n"}, lambda n: None)  # imports and the parser made
start = time.perf_counter()
owed_count({"ledger/specs/big.md": text}, lambda n: None)
print(time.perf_counter() - start)
"""


def chain_ledger(root: Path, src: Path, notes: int, fanout: int = 1) -> None:
    """A git repository with a ledger of `notes` notes, each superseding the `fanout` before it,
    made by `ledger init` of the code at `src` (an older ledger refuses a newer one's config)."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    env = {**os.environ, **GIT_ENV, "PYTHONPATH": str(src)}
    subprocess.run([sys.executable, "-m", "ledger", "init"], cwd=root, env=env, check=True, capture_output=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    sha = git(root, "rev-parse", "HEAD").strip()
    sys.path.insert(0, str(REPO / "src"))
    from ledger.store.canonical import canonical_bytes, seal
    from ledger.store.ids import new_id
    from ledger.version import __version__

    at = datetime.now(UTC) - timedelta(hours=1)
    ids: list[str] = []
    for n in range(notes):
        at += timedelta(milliseconds=5)
        rid = new_id(at)
        data = {
            "format_version": 1,
            "id": rid,
            "kind": "note",
            "created_at": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "source": {"sha": sha},
            "allocation": {"id": "bench", "scheduler": "local"},
            "tool": {"name": "ledger", "version": __version__},
            "body": f"correction {n}",
            **({"supersedes": ids[-fanout:][::-1]} if ids else {}),
        }
        path = root / "ledger" / "records" / "note" / rid[-2:].lower() / f"{rid}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(canonical_bytes(seal(data)))
        ids.append(rid)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"{notes} notes, each superseding the {fanout} before it")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default=BEFORE, help="the older commit to compare with")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bomb-values", type=int, default=10_000_000)
    parser.add_argument("--owed-sections", type=int, default=6_400)
    parser.add_argument("--chain", type=int, default=1_200)
    parser.add_argument("--fanout", type=int, default=8, help="how many earlier notes each note supersedes")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bounds-bench-") as tmp:
        work = Path(tmp)
        old = work / "before"
        git(REPO, "worktree", "add", "-q", "--detach", str(old), args.before)
        try:
            sides = {"before": old / "src", "after": REPO / "src"}
            bomb = work / "bench.json.gz"
            gz_bomb(bomb, args.bomb_values)
            page = work / "big.md"
            owed_page(page, args.owed_sections)
            script = work / "owed.py"
            script.write_text(OWED)
            ledgers = {}
            for side, src in sides.items():
                ledgers[side] = work / f"chain-{side}"
                chain_ledger(ledgers[side], src, args.chain, args.fanout)
            runs: dict[tuple[str, str], list[tuple[float, int]]] = {}
            for _ in range(args.repeats):
                for side, src in sides.items():
                    imp = work / f"import-{side}"
                    if not imp.exists():
                        imp.mkdir()
                        git(imp, "init", "-q", "-b", "main")
                        subprocess.run(
                            [sys.executable, "-m", "ledger", "init"],
                            cwd=imp,
                            env={**os.environ, "PYTHONPATH": str(src)},
                            check=True,
                            capture_output=True,
                        )
                    wall, rss, code = run(src, ["-m", "ledger", "import", "pyperf", str(bomb)], imp)
                    assert code == 2, f"{side}: the import of the bomb exited {code}, not refused"
                    runs.setdefault(("import .json.gz", side), []).append((wall, rss))
                    out = subprocess.run(
                        [sys.executable, str(script), str(page)],
                        env={**os.environ, "PYTHONPATH": str(src)},
                        capture_output=True,
                        text=True,
                        check=True,
                    )
                    runs.setdefault(("owed count", side), []).append((float(out.stdout), 0))
                    wall, rss, code = run(src, ["-m", "ledger", "check", "--all"], ledgers[side])
                    assert code == 0, f"{side}: check --all exited {code}"
                    runs.setdefault(("check --all", side), []).append((wall, rss))
        finally:
            git(REPO, "worktree", "remove", "--force", str(old))

    sizes = {
        "import .json.gz": f"{bomb_size(args.bomb_values)}",
        "owed count": f"{page_size(args.owed_sections)}",
        "check --all": f"{args.chain:,} notes, each superseding the {args.fanout} before",
    }
    print(
        f"before: {args.before}, after: {git(REPO, 'rev-parse', '--short', 'HEAD').strip()}; medians of {args.repeats}"
    )
    print("| case | input | before s | after s | ratio | before MiB | after MiB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    table = []
    for case in ("import .json.gz", "owed count", "check --all"):
        b, a = runs[(case, "before")], runs[(case, "after")]
        bw, aw = statistics.median(w for w, _ in b), statistics.median(w for w, _ in a)
        bm, am = max(m for _, m in b), max(m for _, m in a)
        mem = (f"{bm:,}", f"{am:,}") if bm else ("–", "–")
        print(f"| {case} | {sizes[case]} | {bw:.2f} | {aw:.2f} | x{bw / aw:.1f} | {mem[0]} | {mem[1]} |")
        table.append(
            {
                "case": case,
                "before_s": [w for w, _ in b],
                "after_s": [w for w, _ in a],
                "before_mib": bm,
                "after_mib": am,
            }
        )
    print(json.dumps(table))


def bomb_size(values: int) -> str:
    return f"{(4 * values) / 1e6:.0f} MB inflated"


def page_size(sections: int) -> str:
    per = len(f"## Owed {sections // 2}\n\n- item {sections // 2}: the per-site dispatch test, owner: alice\n\n")
    return f"{sections:,} Owed sections, {per * sections / 1e3:.0f} KB"


if __name__ == "__main__":
    main()
