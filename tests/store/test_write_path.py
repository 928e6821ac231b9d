"""The write path encodes each record once, and `ledger add` finds unique keys through the
key index (checks/keyindex.py) brought to the work tree, agreeing with reading every keyed
record from disk in every state a work tree can be in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT, git

from ledger.checks.admission import admit
from ledger.checks.trees import DiskTree
from ledger.errors import InputError
from ledger.schema.registry import KINDS
from ledger.store.add import Stamping, add_one
from ledger.store.canonical import canonical_bytes, with_hash
from ledger.store.ledger import Ledger

NO_SOURCE = Stamping(no_source=True)


def test_the_file_bytes_come_from_the_hashed_bytes_without_encoding_again() -> None:
    """On every record of the project's own ledger: the sealed file from the unsealed bytes."""
    files = sorted((ROOT / "ledger" / "records").rglob("*.json"))
    assert len(files) > 100
    for path in files:
        raw = path.read_bytes()
        data = json.loads(raw)
        bare = {k: v for k, v in data.items() if k != "sha256"}
        assert with_hash(bare, canonical_bytes(bare), data["sha256"]) == raw, path


def _agree(ledger: Ledger) -> dict[str, list[str]]:
    tree = DiskTree(ledger)
    fields = KINDS["issue"].UNIQUE_KEYS
    indexed = tree.keys("issue", fields)
    scanned = tree._scanned("issue", fields)
    assert {k: sorted(v) for k, v in indexed.items()} == {k: sorted(v) for k, v in scanned.items()}
    return indexed


def _refused(ledger: Ledger, number: int) -> str:
    with pytest.raises(InputError) as refused:
        add_one(ledger, "issue", {"number": number, "title": f"again {number}"}, NO_SOURCE)
    text = str(refused.value) + " ".join(p.message for p in refused.value.problems)
    assert "unique-key" in text, text
    return text


def test_unique_keys_at_add_follow_the_work_tree_not_only_head(repo: Path) -> None:
    ledger = Ledger.open(repo)
    admit(ledger)
    one = add_one(ledger, "issue", {"number": 1, "title": "one"}, NO_SOURCE)
    two = add_one(ledger, "issue", {"number": 2, "title": "two"}, NO_SOURCE)
    edited = add_one(ledger, "issue", {"number": 4, "title": "four"}, NO_SOURCE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "issues")
    assert set(_agree(ledger)) == {"number=1", "number=2", "number=4"}

    add_one(ledger, "issue", {"number": 3, "title": "three, not committed"}, NO_SOURCE)
    ledger.path_for("issue", two.id).unlink()  # deleted in the work tree: its number is free again
    # A file git is told not to look at, edited: read from disk, not from the index.
    path = ledger.path_for("issue", edited.id)
    git(repo, "update-index", "--assume-unchanged", str(path))
    data = json.loads(path.read_bytes())
    path.write_bytes(canonical_bytes({**data, "number": 5}))
    assert set(_agree(ledger)) == {"number=1", "number=3", "number=5"}

    assert one.id in _refused(ledger, 1)  # committed
    _refused(ledger, 3)  # untracked
    _refused(ledger, 5)  # as the edited file on disk says
    add_one(ledger, "issue", {"number": 2, "title": "two, anew"}, NO_SOURCE)
    add_one(ledger, "issue", {"number": 4, "title": "four, anew"}, NO_SOURCE)
    assert set(_agree(ledger)) == {f"number={n}" for n in (1, 2, 3, 4, 5)}


def test_unique_keys_outside_git_are_read_from_every_record(tmp_path: Path) -> None:
    (tmp_path / "ledger.yaml").write_text("version: 1\n", encoding="utf-8")
    ledger = Ledger.open(tmp_path)
    admit(ledger)
    add_one(ledger, "issue", {"number": 1, "title": "one"}, NO_SOURCE)
    assert set(_agree(ledger)) == {"number=1"}
    _refused(ledger, 1)


def test_unique_keys_at_add_in_a_ledger_below_the_repository_top(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "perf").mkdir()
    (tmp_path / "perf" / "ledger.yaml").write_text("version: 1\n", encoding="utf-8")
    ledger = Ledger.open(tmp_path / "perf")
    admit(ledger)
    add_one(ledger, "issue", {"number": 1, "title": "one"}, NO_SOURCE)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "an issue")
    assert set(_agree(ledger)) == {"number=1"}
    _refused(ledger, 1)
