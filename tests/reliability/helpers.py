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
