"""Shared checks for the reliability tests: every visible record is whole, nothing stray is left."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_ledger

from ledger.store import Ledger, content_hash


def intact_records(root: Path) -> list[dict]:
    """Every record file of the ledger, each parsed, hash-checked and schema-validated."""
    book = Ledger.open(root)
    out = []
    for path in book.iter_paths():
        raw = path.read_bytes()
        assert raw.endswith(b"\n"), f"{path} is cut short"
        data = json.loads(raw)
        assert data["sha256"] == content_hash(data), f"{path} does not hash to its sha256"
        record = book.load(path)
        assert path.name == f"{record.id}.json" and path.parent.parent.name == record.kind
        out.append(data)
    return out


def files_under(folder: Path) -> set[str]:
    """Every file (records, attachments, temporaries) under a folder, relative."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


def check_all_clean(root: Path) -> None:
    result = run_ledger(root, "check", "--all", "--format", "json")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    report = json.loads(result.stdout)
    errors = [v for v in report.get("violations", []) if v.get("severity") == "error"]
    assert errors == [], errors[:5]


def kill_while_writing(procs, records: Path, timeout: float = 120.0) -> list[bool]:
    """SIGKILL each of `procs` (`ledger add` processes, one `subprocess.Popen` or a list) as
    soon as it has a temporary record file in `records` (`.tmp-ID.json.PID`: it is writing),
    rather than after a guessed delay that a busy or a fast machine turns into a kill before
    it starts or after it ends. For each: True when the kill landed while it was writing,
    False when it ended without being seen writing."""
    import signal
    import time

    procs = list(procs) if isinstance(procs, list | tuple) else [procs]
    landed = {p.pid: False for p in procs}
    deadline = time.monotonic() + timeout
    alive = {p.pid: p for p in procs}
    while alive and time.monotonic() < deadline:
        writing = {int(f.name.rsplit(".", 1)[1]) for f in records.glob("*/*/.tmp-*")} & alive.keys()
        for pid in writing:
            proc = alive.pop(pid)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            landed[pid] = proc.returncode == -signal.SIGKILL
        for pid in [pid for pid, proc in alive.items() if proc.poll() is not None]:
            del alive[pid]  # ended before it was seen writing
        time.sleep(0.002)
    for proc in alive.values():
        proc.kill()
        proc.wait()
    return [landed[p.pid] for p in procs]
