"""Writes are atomic and coordination-free: concurrent writers lose nothing, a kill leaves nothing partial."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import resource
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import LEDGER_BIN, git, run_ledger, unmeasured
from reliability.helpers import kill_while_writing

from ledger.errors import WriteError
from ledger.schema import Source
from ledger.schema.envelope import Allocation
from ledger.store import Item, Ledger, Stamping, add, content_hash, seal

STAMP = Stamping(source=Source(sha="a" * 40), allocation=Allocation(id="job-1"))


def _api_writer(root: str, rank: int, count: int) -> None:
    book = Ledger.open(root)
    for i in range(count):
        add(book, "note", [Item({"body": f"rank {rank} record {i}"}, "<api>", None)], STAMP)


def all_records_intact(root: Path) -> list[dict]:
    book = Ledger.open(root)
    out = []
    for path in book.iter_paths():
        data = json.loads(path.read_bytes())
        assert data["sha256"] == content_hash(data), path
        book.load(path)
        out.append(data)
    return out


@pytest.mark.slow
def test_many_processes_adding_at_once_lose_nothing(repo: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, text=True, capture_output=True).stdout.strip()
    procs = [ctx.Process(target=_api_writer, args=(str(repo), rank, 25)) for rank in range(8)]
    cli = [
        subprocess.Popen(
            [str(LEDGER_BIN), "add", "note", "-", "--source-sha", head],
            cwd=repo,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for p in procs:
        p.start()
    for i, c in enumerate(cli):
        c.communicate("\n".join(json.dumps({"body": f"cli {i} line {j}"}) for j in range(25)) + "\n")
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert all(c.returncode == 0 for c in cli)
    records = all_records_intact(repo)
    bodies = {r["body"] for r in records}
    assert len(records) == 300 and len(bodies) == 300
    assert len({r["id"] for r in records}) == 300


@pytest.mark.slow
def test_a_killed_writer_leaves_no_partial_record(repo: Path) -> None:
    lines = "\n".join(json.dumps({"body": "x" * 2000 + str(i)}) for i in range(4000)) + "\n"
    (repo / "many.jsonl").write_text(lines)
    for _ in range(3):
        proc = subprocess.Popen(
            [str(LEDGER_BIN), "add", "note", "many.jsonl"],
            cwd=repo,
            env=unmeasured(dict(os.environ)),  # killed: coverage would keep nothing of it
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Killed once it is writing (its temporary files are there), not after a guessed delay.
        assert kill_while_writing(proc, repo / "ledger" / "records") == [True]
    records = all_records_intact(repo)  # every record the ledger reads parses and hashes
    assert len(records) < 12000  # each add was killed before it finished
    # Every other file in the records folder is a writer's temporary file, by its name: hidden,
    # `.tmp-ID.json.PID`, so neither the ledger (which reads *.json) nor git (.gitignore) takes it
    # for a record. A half-written file under a record's name would fail here or above.
    book = Ledger.open(repo)
    readable = {str(p) for p in book.iter_paths()}
    records_dir = repo / "ledger" / "records"
    others = [p for p in records_dir.rglob("*") if p.is_file() and str(p) not in readable]
    others.remove(records_dir / ".gitignore")  # `ledger init` wrote it: it ignores .tmp-*
    wrong = [p.name for p in others if not re.fullmatch(r"\.tmp-[0-9A-Z]{26}\.json\.[0-9]+", p.name)]
    assert wrong == []
    status = git(repo, "status", "--porcelain", "--untracked-files=all").stdout
    assert ".tmp-" not in status
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "what the killed writers left")
    checked = run_ledger(repo, "check", "--all")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_read_only_records_folder_gives_a_clear_error(repo: Path) -> None:
    records = repo / "ledger" / "records"
    if os.geteuid() == 0:
        # Root writes through permission bits, so make the folder a read-only bind mount.
        mounted = subprocess.run(["mount", "--bind", str(records), str(records)], capture_output=True)
        if mounted.returncode != 0:
            pytest.skip(f"cannot bind-mount here: {mounted.stderr!r}")
        undo = ["umount", str(records)]
        subprocess.run(["mount", "-o", "remount,bind,ro", str(records)], check=True)
    else:
        records.chmod(0o555)
        undo = ["chmod", "755", str(records)]
    try:
        result = run_ledger(repo, "add", "note", "-", input="body: x")
        assert result.returncode == 2, result.stderr
        assert "read-only" in result.stderr or "permission denied" in result.stderr
        assert "nothing was written" in result.stderr and "Traceback" not in result.stderr
    finally:
        subprocess.run(undo, check=True)
    assert list(records.rglob("*.json")) == []


def _limited_add(root: str, queue) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        add(Ledger.open(root), "note", [Item({"body": "y" * 5000}, "<api>", None) for _ in range(3)], STAMP)
        queue.put("written")
    except WriteError as exc:
        queue.put(str(exc))


def test_file_size_limit_gives_a_clear_error_and_leaves_nothing(repo: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_limited_add, args=(str(repo), queue))
    proc.start()
    proc.join(60)
    message = queue.get(timeout=5)
    assert "file size limit" in message and "nothing was written" in message
    assert list((repo / "ledger" / "records").rglob("*.json")) == []
    assert [p for p in (repo / "ledger" / "records").rglob(".tmp-*")] == []


def test_a_record_is_never_overwritten(repo: Path) -> None:
    book = Ledger.open(repo)
    (rec,) = add(book, "note", [Item({"body": "original"}, "<api>", None)], STAMP)
    path = book.path_for("note", rec.id)
    data = json.loads(path.read_text())
    with pytest.raises(WriteError):
        book.write([{**data, "body": "changed"}])
    assert json.loads(path.read_text())["body"] == "original"


def test_a_later_write_sweeps_what_a_killed_writer_left(repo: Path) -> None:
    book = Ledger.open(repo)
    (rec,) = add(book, "note", [Item({"body": "first"}, "<api>", None)], STAMP)
    folder = book.path_for("note", rec.id).parent
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = folder / f".tmp-{rec.id[:-1]}X.json.{dead.pid}"
    young = folder / f".tmp-{rec.id[:-1]}Y.json.{dead.pid + 1}"
    live = folder / f".tmp-{rec.id[:-1]}Z.json.{os.getppid()}"
    for path in (stale, young, live):
        path.write_text("{partial")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(live, (old, old))
    # A second record in the same shard: the write sweeps that folder.
    data = json.loads(book.path_for("note", rec.id).read_text())
    data["id"] = rec.id[:-3] + ("A" if rec.id[-3] != "A" else "B") + rec.id[-2:]
    book.write([seal(data)])
    assert not stale.exists()
    assert young.exists() and live.exists()
