"""64 processes each add 50 records at once, through the API and through the real CLI:
3,200 records each way, none lost, none corrupt, and `ledger check --all` clean.

The writers are the ranks of one job: they share one ledger, start together behind a
barrier, and coordinate nothing. Records are a mix of kinds that reference a contract
written beforehand, so the reference check runs under contention too.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
from pathlib import Path

import pytest
from conftest import GIT_ENV, LEDGER_BIN, git, run_ledger, stop_measuring, unmeasured
from reliability.helpers import check_all_clean, files_under, intact_records

PROCESSES = 64
PER_PROCESS = 50
#: Each CLI writer adds its 50 records in one invocation (even ranks: a batch over the
#: bulk threshold, made durable by one sync()) or two (odd ranks: fsync per file).
CLI_INVOCATIONS = {0: 1, 1: 2}


def _contract(repo: Path) -> str:
    result = run_ledger(
        repo,
        "add",
        "contract",
        "-",
        input=json.dumps(
            {
                "name": "rank-writers",
                "model": "m",
                "param_precision": "fp32",
                "optimizer_state_precision": "fp32",
                "compute_precision": "bf16",
                "warmup_steps": 1,
                "measured_steps": 3,
            }
        ),
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[0]


def _body(rank: int, i: int, contract: str) -> tuple[str, dict]:
    """A record of rank `rank`, number `i`, spread over kinds like a campaign's."""
    tag = f"rank {rank} record {i}"
    if i % 5 == 0:
        return "note", {"body": tag}
    if i % 5 == 1:
        return "gate", {
            "command": f"pytest -k {rank}",
            "exit_code": 0,
            "executed": 3,
            "passed": 3,
            "outcome": "pass",
            "title": tag,
        }
    return "measurement", {"contract": contract, "samples": [1.0 + rank / 1000, 1.01, 0.99 + i / 10000], "title": tag}


def _api_rank(root: str, rank: int, contract: str, barrier) -> None:
    from ledger.store import Item, Ledger, Stamping, add
    from ledger.store.stamps import detect_allocation, source_stamp

    stop_measuring()  # a forked child: coverage keeps nothing it runs
    book = Ledger.open(root)
    # A harness stamps once per process, then adds each result as it comes.
    stamping = Stamping(source=source_stamp(Path(root)), allocation=detect_allocation())
    barrier.wait()
    for i in range(PER_PROCESS):
        kind, body = _body(rank, i, contract)
        add(book, kind, [Item(body, "<api>", None)], stamping)


def _titles(records: list[dict]) -> list[str]:
    return [r.get("title") or r.get("body") for r in records if r["kind"] != "contract"]


def _expect_all(repo: Path, records: list[dict]) -> None:
    titles = _titles(records)
    expected = {f"rank {r} record {i}" for r in range(PROCESSES) for i in range(PER_PROCESS)}
    assert len(titles) == PROCESSES * PER_PROCESS == 3200
    assert set(titles) == expected  # none lost, none doubled
    assert len({r["id"] for r in records}) == len(records)
    assert not [f for f in files_under(repo / "ledger" / "records") if "/.tmp-" in f or f.startswith(".tmp-")]


@pytest.mark.slow
def test_64_api_processes_add_3200_records_at_once(repo: Path) -> None:
    contract = _contract(repo)
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(PROCESSES)
    procs = [ctx.Process(target=_api_rank, args=(str(repo), rank, contract, barrier)) for rank in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(300)
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    records = intact_records(repo)
    _expect_all(repo, records)
    check_all_clean(repo)


_CLI_RANK = r"""
set -e
# Every rank waits for the start file, then adds its records in a few invocations.
while [ ! -e "$START" ]; do sleep 0.01; done
for part in $PARTS; do "$LEDGER" add "$KIND" "$part" --format json > "$part.out"; done
"""


@pytest.mark.slow
def test_64_cli_processes_add_3200_records_at_once(repo: Path, tmp_path: Path) -> None:
    contract = _contract(repo)
    start = tmp_path / "start"
    procs = []
    for rank in range(PROCESSES):
        parts = []
        # One kind per invocation (the command adds one kind); measurements make up most.
        invocations = CLI_INVOCATIONS[rank % 2]
        for n in range(invocations):
            lines = []
            for i in range(n, PER_PROCESS, invocations):
                _, body = _body(rank, i, contract)
                body = {"contract": contract, "samples": [1.0, 1.01, 0.99], "title": body.get("title") or body["body"]}
                lines.append(json.dumps(body))
            part = tmp_path / f"rank{rank}-{n}.jsonl"
            part.write_text("\n".join(lines) + "\n")
            parts.append(str(part))
        env = {
            **os.environ,
            **GIT_ENV,
            "START": str(start),
            "LEDGER": str(LEDGER_BIN),
            "KIND": "measurement",
            "PARTS": " ".join(parts),
        }
        for name in ("SLURM_JOB_ID", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "LEDGER_DIR"):
            env.pop(name, None)
        if rank > 1:
            # Coverage measures ranks 0 and 1, one of each way to add; the other 62 run the
            # same lines (measuring all 64 cost a third of this test's CPU).
            env = unmeasured(env)
        procs.append(subprocess.Popen(["sh", "-c", _CLI_RANK], cwd=repo, env=env, stderr=subprocess.PIPE, text=True))
    start.touch()
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * PROCESSES, [e for e in errors if e][:3]
    printed = [r["id"] for part in tmp_path.glob("rank*.jsonl.out") for r in json.loads(part.read_text())]
    assert len(printed) == len(set(printed)) == 3200
    records = intact_records(repo)
    _expect_all(repo, records)
    assert set(printed) <= {r["id"] for r in records}
    check_all_clean(repo)
    # The whole lot commits as one change: nothing git would refuse or skip.
    git(repo, "add", "-A")
    status = git(repo, "status", "--porcelain").stdout.splitlines()
    assert len(status) == 3201 and all(line.startswith("A ") for line in status)
