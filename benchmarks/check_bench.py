"""Benchmark `ledger check`: --all over 100,000 records against check-jsonschema on the
same files with the exported JSON Schemas, and --pre-push for a 10-record push on ledgers
of 1,000 and 100,000 records. Prints a table of medians and ratios measured side by side
in one run, and records the figures in this repository's own ledger.

    .venv/bin/python benchmarks/check_bench.py            # full run, records results
    .venv/bin/python benchmarks/check_bench.py --quick    # 10k records, nothing recorded
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import ledger as ledger_package

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).with_name("ledger")
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, input: str | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True, input=input
    ).stdout.strip()


def records(n: int, sha: str, seed: int, start: datetime, reuse: tuple[str, str] | None = None) -> list[dict]:
    """A realistic mix: one contract and FLOP audit, issues (1%), measurements with raw samples."""
    from ledger.store.canonical import seal
    from ledger.store.ids import new_id
    from ledger.version import __version__

    rng = random.Random(seed)
    tool = {"name": "ledger", "version": __version__}

    def env(kind: str, i: int) -> dict:
        at = start + timedelta(milliseconds=i)
        return {
            "format_version": 1,
            "id": new_id(at),
            "kind": kind,
            "created_at": at.isoformat().replace("+00:00", "Z"),
            "source": {"sha": sha, "repo": "bench"},
            "allocation": {
                "id": f"slurm-{i // 500}",
                "scheduler": "slurm",
                "topology": "4x GB200",
                "nodes": 1,
                "gpus_per_node": 4,
            },
            "tool": tool,
            "links": {},
            "supersedes": [],
            "tags": [],
            "attachments": {},
        }

    contract = {
        **env("contract", 0),
        "name": f"bench-contract-{seed}",
        "model": "ltx2",
        "param_precision": "fp32",
        "optimizer_state_precision": "fp32",
        "compute_precision": "bf16",
        "shape": {"frames": 81, "height": 480, "width": 832},
        "warmup_steps": 3,
        "measured_steps": 40,
        "statistic": "median",
        "rank_reduction": "slowest-rank",
        "extra": {},
    }
    audit = {
        **env("flop-audit", 1),
        "contract": contract["id"],
        "flop_per_sample": 123456789012,
        "derivation": "analytic",
        "itemised": {},
        "peak": {"name": "house-2450", "tflops_per_gpu": 2450.0},
        "peaks": [],
    }
    out = [seal(contract), seal(audit)]
    if reuse:  # a push that adds measurements under the ledger's existing contract and audit
        contract["id"], audit["id"] = reuse
        out = []
        n += 2
    for i in range(2, n):
        if i % 100 == 0:
            rec = {
                **env("issue", i),
                "number": seed * 10_000_000 + i,
                "title": f"issue {i}",
                "owner": "bench",
                "status": "open",
            }
        else:
            samples = [round(1.0 + rng.gauss(0, 0.01), 6) for _ in range(40)]
            ordered = sorted(samples)
            q = statistics.quantiles(ordered, n=4, method="inclusive")
            rec = {
                **env("measurement", i),
                "contract": contract["id"],
                "flop_audit": audit["id"],
                "metric": "step_time",
                "unit": "s",
                "lower_is_better": True,
                "samples": samples,
                "warmup_steps": 3,
                "statistic": "median",
                "n": 40,
                "min": ordered[0],
                "median": statistics.median(ordered),
                "max": ordered[-1],
                "iqr": q[2] - q[0],
                "world_size": 4,
                "mfu_percent": 41.5,
                "outcome": "ok",
                "health": "healthy",
                "health_reasons": [],
                "comparable": True,
                "command": "torchrun --nproc-per-node 4 train.py --steps 43",
                "extra": {},
                "throughput_unit": "samples/s",
            }
        out.append(seal(rec))
    return out


def write(ledger_root: Path, recs: list[dict]) -> None:
    from ledger.store.canonical import canonical_bytes
    from ledger.store.ledger import shard_of

    base = ledger_root / "ledger" / "records"
    for rec in recs:
        path = base / rec["kind"] / shard_of(rec["id"]) / f"{rec['id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(canonical_bytes(rec))


def make_ledger(where: Path, n: int, seed: int) -> tuple[Path, Path]:
    repo = where / f"ledger-{n}"
    remote = where / f"remote-{n}.git"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    subprocess.run([str(BIN), "init"], cwd=repo, env=ENV, check=True, capture_output=True)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    sha = git(repo, "rev-parse", "HEAD")
    write(repo, records(n, sha, seed, datetime(2026, 1, 1, tzinfo=UTC)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{n} records")
    git(where, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "--no-verify", "origin", "main")
    subprocess.run([str(BIN), "hook", "install"], cwd=repo, env=ENV, check=True, capture_output=True)
    return repo, remote


def timed(cmd: list[str], cwd: Path, input: str | None = None, ok=(0,), env: dict | None = None) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env or ENV, capture_output=True, text=True, input=input)
    elapsed = time.perf_counter() - t0
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return elapsed


def bench_all(repo: Path, repeats: int, against: Path | None = None) -> dict[str, list[float]]:
    """`check --all` cold (verification cache deleted first: every file parsed, cache written)
    and warm (every file answered from the cache), interleaved so both see the same load.
    With `against` (the `src` folder of another version's checkout), that version's cold and
    warm runs are interleaved with these, on the same files: a before/after measured side by side."""
    cache = repo / ".git" / "ledger" / "check-cache"
    times: dict[str, list[float]] = {"cold": [], "warm": [], "against cold": [], "against warm": []}
    for _ in range(repeats):
        cache.unlink(missing_ok=True)
        times["cold"].append(timed([str(BIN), "check", "--all"], repo))
        times["warm"].append(timed([str(BIN), "check", "--all"], repo))
        if against is not None:
            # The two versions' caches differ in fingerprint, so each cold run starts empty.
            old = [sys.executable, "-m", "ledger", "check", "--all"]
            cache.unlink(missing_ok=True)
            times["against cold"].append(timed(old, repo, env={**ENV, "PYTHONPATH": str(against)}))
            times["against warm"].append(timed(old, repo, env={**ENV, "PYTHONPATH": str(against)}))
    return times


def bench_jsonschema(repo: Path, work: Path) -> float:
    schemas = work / "schemas"
    subprocess.run([str(BIN), "schema", "export", str(schemas)], cwd=repo, env=ENV, check=True, capture_output=True)
    exe = Path(sys.executable).with_name("check-jsonschema")
    total = 0.0
    for kind_dir in sorted((repo / "ledger" / "records").iterdir()):
        if not kind_dir.is_dir():
            continue
        files = sorted(str(p) for p in kind_dir.rglob("*.json"))
        for i in range(0, len(files), 5000):  # stay under the argument-length limit
            total += timed(
                [str(exe), "--schemafile", str(schemas / f"{kind_dir.name}.schema.json"), *files[i : i + 5000]], repo
            )
    return total


def bench_push(repo: Path, repeats: int, seed: int) -> list[float]:
    """Time `ledger check --pre-push` for a 10-record push, as the hook runs it."""
    remote_sha = git(repo, "rev-parse", "origin/main")
    base = repo / "ledger" / "records"
    reuse = (next((base / "contract").rglob("*.json")).stem, next((base / "flop-audit").rglob("*.json")).stem)
    times = []
    for r in range(repeats):
        sha = git(repo, "rev-parse", "HEAD")
        write(
            repo,
            records(10, sha, seed * 100 + r, datetime(2026, 6, 1, tzinfo=UTC) + timedelta(hours=r), reuse),
        )
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"10 records ({r})")
        local = git(repo, "rev-parse", "HEAD")
        stdin = f"refs/heads/main {local} refs/heads/main {remote_sha}\n"
        times.append(timed([str(BIN), "check", "--pre-push", "--remote", "origin"], repo, input=stdin))
        git(repo, "push", "-q", "--no-verify", "origin", "main")
        remote_sha = local
    return times


def compile_bytecode(package: Path) -> None:
    """Write the package's bytecode, as `pip install` does: with PYTHONDONTWRITEBYTECODE set
    (as on our shared machines), an editable checkout would otherwise compile every module
    on every run, 0.07 s of each timed start-up that no installed copy pays."""
    compileall.compile_dir(str(package), quiet=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10,000 records instead of 100,000; nothing recorded")
    parser.add_argument("--records", type=int, default=None)
    parser.add_argument("--no-record", action="store_true", help="do not write results to the project's ledger")
    parser.add_argument(
        "--against",
        metavar="REV",
        help="also time `check --all` of this commit of ledger (a worktree of it), interleaved with this one",
    )
    args = parser.parse_args()
    big = args.records or (10_000 if args.quick else 100_000)
    small = 1_000
    cores = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="ledger-bench-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        big_repo, _ = make_ledger(work, big, 1)
        small_repo, _ = make_ledger(work, small, 2)
        print(f"built ledgers of {big:,} and {small:,} records in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        against = None
        if args.against:
            against = work / "against"
            git(ROOT, "worktree", "add", "-q", "--detach", str(against), args.against)
            compile_bytecode(against / "src" / "ledger")
        compile_bytecode(Path(ledger_package.__file__).parent)
        try:
            times = bench_all(big_repo, 5, against / "src" if against else None)
        finally:
            if against:
                git(ROOT, "worktree", "remove", "--force", str(against))
        all_times, warm_times = times["cold"], times["warm"]
        all_median, warm_median = statistics.median(all_times), statistics.median(warm_times)
        js = bench_jsonschema(big_repo, work)
        push_small = bench_push(small_repo, 7, 3)
        push_big = bench_push(big_repo, 7, 4)
    # The first push of each ledger builds the key-index cache; the rest update it incrementally.
    ps, pb = statistics.median(push_small[1:]), statistics.median(push_big[1:])
    rows = [
        (
            "check --all, cold cache",
            f"{big:,} records",
            all_median,
            f"{js / all_median:.1f}x faster than check-jsonschema",
        ),
        (
            "check --all, warm cache",
            f"{big:,} records",
            warm_median,
            f"{js / warm_median:.1f}x faster than check-jsonschema; {all_median / warm_median:.1f}x cold",
        ),
        ("check-jsonschema", f"{big:,} records", js, "1 run"),
        ("check --pre-push, 10 records", f"{small:,}-record ledger", ps, f"first push {push_small[0]:.3f} s"),
        (
            "check --pre-push, 10 records",
            f"{big:,}-record ledger",
            pb,
            f"{pb / ps:.2f}x the {small:,} time; first push {push_big[0]:.3f} s",
        ),
    ]
    if args.against:
        old_cold, old_warm = statistics.median(times["against cold"]), statistics.median(times["against warm"])
        rows += [
            (
                "check --all, cold, at " + args.against,
                f"{big:,} records",
                old_cold,
                f"this one {old_cold / all_median:.2f}x faster",
            ),
            (
                "check --all, warm, at " + args.against,
                f"{big:,} records",
                old_warm,
                f"this one {old_warm / warm_median:.2f}x faster",
            ),
        ]
    machine = f"{platform.processor() or platform.machine()}, {cores} cores, Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    print(f"ledger check benchmark on {machine}")
    print(f"{'what':32} {'over':24} {'median s':>9}  note")
    for what, over, sec, note in rows:
        print(f"{what:32} {over:24} {sec:9.3f}  {note}")
    if args.quick or args.no_record:
        return 0
    before = None
    if args.against:
        before = {
            "against_commit": git(ROOT, "rev-parse", f"{args.against}^{{commit}}"),
            "against_cold_samples": times["against cold"],
            "against_warm_samples": times["against warm"],
        }
    record_results(big, small, all_times, warm_times, js, push_small, push_big, cores, before)
    return 0


def record_results(big, small, all_times, warm_times, js, push_small, push_big, cores, before=None) -> None:
    """Measurements in this repository's own ledger, under a contract for each benchmark."""
    import socket

    def add(kind: str, data: dict) -> str:
        proc = subprocess.run(
            [str(BIN), "-C", str(ROOT), "add", kind, "-", "--format", "json"],
            cwd=ROOT,
            env=ENV,
            input=json.dumps(data),
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            proc = subprocess.run(
                [str(BIN), "-C", str(ROOT), "add", kind, "-"],
                cwd=ROOT,
                env=ENV,
                input=json.dumps(data),
                capture_output=True,
                text=True,
            )
        if proc.returncode != 0:
            raise SystemExit(f"ledger add {kind} failed: {proc.stderr}")
        out = proc.stdout.strip()
        try:
            parsed = json.loads(out)
            return parsed[0]["id"] if isinstance(parsed, list) else parsed["id"]
        except (ValueError, KeyError, TypeError):
            return out.split()[0]

    def contract(name: str, description: str, steps: int) -> str:
        found = subprocess.run(
            [str(BIN), "-C", str(ROOT), "list", "--kind", "contract", "--format", "json"],
            env=ENV,
            capture_output=True,
            text=True,
        )
        for row in json.loads(found.stdout or "[]"):
            if row["summary"] == name:
                return row["id"]
        return add(
            "contract",
            {
                "name": name,
                "model": "ledger check",
                "param_precision": "n/a",
                "optimizer_state_precision": "n/a",
                "compute_precision": "n/a",
                "warmup_steps": 0,
                "measured_steps": steps,
                "statistic": "median",
                "rank_reduction": "single",
                "description": description,
                "extra": {"cores": str(cores), "command": "python benchmarks/check_bench.py"},
            },
        )

    c_all = contract(
        "bench-check-all-100k",
        f"`ledger check --all` over {big:,} generated records (99% measurements of 40 samples), wall time of the CLI",
        5,
    )
    c_warm = contract(
        "bench-check-all-100k-warm",
        f"`ledger check --all` over {big:,} generated records, every file answered from the verification "
        "cache of the previous run (same blobs, same code, same rules), wall time of the CLI",
        5,
    )
    c_js = contract(
        "bench-check-jsonschema-100k",
        f"check-jsonschema with `ledger schema export` schemas over the same {big:,} files, one run",
        1,
    )
    c_push = contract(
        "bench-check-pre-push-10",
        "`ledger check --pre-push` for a 10-record push, CLI wall time, key-index cache warm (first push excluded)",
        6,
    )
    load = [round(x, 2) for x in os.getloadavg()]
    common = {
        "metric": "wall_time",
        "unit": "s",
        "command": "python benchmarks/check_bench.py",
        "notes": f"2-core shared box; load average at the end of the run {load} (other engineers' jobs ran beside it)",
    }
    add(
        "measurement",
        {
            **common,
            "contract": c_all,
            "samples": all_times,
            "title": f"ledger check --all, {big:,} records, cold verification cache, {cores} cores",
            "extra": {"records": big, "check_jsonschema_s": js, **(before or {})},
        },
    )
    add(
        "measurement",
        {
            **common,
            "contract": c_warm,
            "samples": warm_times,
            "title": f"ledger check --all, {big:,} records, warm verification cache, {cores} cores",
            "extra": {
                "records": big,
                "check_jsonschema_s": js,
                "cold_median_s": statistics.median(all_times),
                **(before or {}),
            },
        },
    )
    add("measurement", {**common, "contract": c_js, "samples": [js], "title": f"check-jsonschema, {big:,} records"})
    add(
        "measurement",
        {
            **common,
            "contract": c_push,
            "samples": push_small[1:],
            "title": f"ledger check --pre-push, 10 records, {small:,}-record ledger",
            "extra": {"ledger_records": small, "first_push_s": push_small[0]},
        },
    )
    add(
        "measurement",
        {
            **common,
            "contract": c_push,
            "samples": push_big[1:],
            "title": f"ledger check --pre-push, 10 records, {big:,}-record ledger",
            "extra": {"ledger_records": big, "first_push_s": push_big[0]},
        },
    )
    _ = socket


if __name__ == "__main__":
    raise SystemExit(main())
