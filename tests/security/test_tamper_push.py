"""The tamper matrix: each way of corrupting the evidence is refused at a real `git push`
to a bare remote, through the hook `ledger hook install` wrote, with its rule id; the
remote does not move.

Edited (even re-sealed so its hash is right), deleted and renamed records; a force-push
that drops records; a duplicate issue number arriving through a clean merge; a
content-hash mismatch; merge-conflict markers in a record; an evidence SHA no clone can
resolve; an attachment that is a symlink or a `../` path out of the ledger.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from checks.check_helpers import add, commit, push, raw_record, refused_then_by_hand
from conftest import git, with_remote

from ledger.store.canonical import canonical_bytes, seal

pytestmark = pytest.mark.slow


@pytest.fixture
def pushed(repo: Path, tmp_path: Path) -> Path:
    """The campaign with a bare remote, the hook installed, and one record already pushed."""
    with_remote(repo, tmp_path)
    add(repo, "note", {"body": "a refuted hypothesis, kept so the next reader does not reach it again"})
    add(repo, "issue", {"number": 7, "title": "re-gate the 8x pair", "owner": "ana"})
    commit(repo, "evidence")
    ok = push(repo)
    assert ok.returncode == 0, ok.stderr  # the clean push passes through the same hook
    return repo


def _pushed_note(repo: Path) -> Path:
    return next(p for p in (repo / "ledger" / "records" / "note").rglob("*.json"))


def _refused(repo: Path, rule: str, *push_args: str) -> str:
    remote_before = git(repo, "ls-remote", "origin", "refs/heads/main").stdout
    result = push(repo, *push_args)
    assert result.returncode != 0, result.stderr
    assert f"error[{rule}]" in result.stderr, result.stderr
    assert git(repo, "ls-remote", "origin", "refs/heads/main").stdout == remote_before
    return result.stderr


def test_an_edited_record_even_resealed_is_refused(pushed: Path) -> None:
    path = _pushed_note(pushed)
    data = json.loads(path.read_text())
    data["body"] = "the hypothesis was supported after all"
    path.write_bytes(canonical_bytes(seal({k: v for k, v in data.items() if k != "sha256"})))
    commit(pushed, "quietly edit")
    _refused(pushed, "append-only")


def test_a_deleted_record_is_refused(pushed: Path) -> None:
    git(pushed, "rm", "-q", str(_pushed_note(pushed)))
    commit(pushed, "drop the refuted one")
    stderr = _refused(pushed, "append-only")
    # The deletion is committed already: the fix says to revert it, and after that it pushes.
    assert "`git revert` that commit" in stderr, stderr
    git(pushed, "revert", "--no-edit", "HEAD")
    assert push(pushed).returncode == 0


def test_a_renamed_record_is_refused(pushed: Path) -> None:
    path = _pushed_note(pushed)
    target = path.parent.parent.parent / "decision" / path.parent.name / path.name
    target.parent.mkdir(parents=True)
    git(pushed, "mv", str(path), str(target))
    commit(pushed, "move it")
    _refused(pushed, "append-only")


def test_a_force_push_that_drops_records_is_refused(pushed: Path) -> None:
    git(pushed, "reset", "-q", "--hard", "HEAD~1")
    add(pushed, "note", {"body": "a fresh start"})
    commit(pushed, "rewrite history")
    stderr = _refused(pushed, "append-only", "--force", "HEAD:main")
    assert "deleted" in stderr


def test_a_duplicate_issue_number_through_a_clean_merge_is_refused(pushed: Path) -> None:
    git(pushed, "checkout", "-q", "-b", "other")
    add(pushed, "issue", {"number": 8, "title": "from branch other", "owner": "ben"})
    commit(pushed, "issue 8 on other")
    git(pushed, "checkout", "-q", "main")
    add(pushed, "issue", {"number": 8, "title": "from main", "owner": "ana"})
    commit(pushed, "issue 8 on main")
    merged = git(pushed, "merge", "-q", "--no-edit", "other", check=False)
    assert merged.returncode == 0, merged.stderr  # one file per record: git sees no conflict
    _refused(pushed, "unique-key")


def test_a_content_hash_mismatch_is_refused(pushed: Path) -> None:
    raw_record(pushed, "note", {"body": "sealed, then changed"}, reseal=False)
    commit(pushed, "unsealed")
    _refused(pushed, "content-hash")


def test_conflict_markers_in_a_record_are_refused(pushed: Path) -> None:
    path = raw_record(pushed, "note", {"body": "ours"})
    ours = path.read_text()
    theirs = ours.replace('"ours"', '"theirs"')
    path.write_text(f"<<<<<<< HEAD\n{ours}=======\n{theirs}>>>>>>> other\n")
    commit(pushed, "resolved badly")
    _refused(pushed, "conflict-markers")


def test_an_evidence_sha_no_clone_can_resolve_is_refused(pushed: Path) -> None:
    refused_then_by_hand(
        pushed,
        "measurement",
        {"samples": [0.7079, 0.7081], "title": "from a local-only commit", "source": {"sha": "c0ffee" + "0" * 34}},
        "sha-resolves",
    )
    commit(pushed, "unresolvable source")
    _refused(pushed, "sha-resolves")


def _attachment(repo: Path, rel: str, content: bytes) -> None:
    raw_record(repo, "note", {"body": "with its log", "attachments": {rel: hashlib.sha256(content).hexdigest()}})


def test_a_symlinked_attachment_is_refused(pushed: Path) -> None:
    outside = pushed.parent / "outside.log"
    outside.write_bytes(b"step 1 0.70 s\n")
    folder = pushed / "ledger" / "records" / "attachments"
    folder.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, folder / "run.log")
    _attachment(pushed, "attachments/run.log", outside.read_bytes())
    commit(pushed, "symlink")
    _refused(pushed, "attachments")


def test_an_attachment_escaping_the_ledger_is_refused(pushed: Path) -> None:
    content = b"not part of the ledger\n"
    (pushed / "notes.txt").write_bytes(content)
    _attachment(pushed, "../../notes.txt", content)
    commit(pushed, "escape")
    stderr = _refused(pushed, "attachments")
    assert "outside the records folder" in stderr


def test_a_replace_ref_cannot_make_a_tampered_record_read_as_the_sealed_one(pushed: Path) -> None:
    """`git replace BAD GOOD` makes git show GOOD wherever BAD is named; the checker reads with
    replace objects off, so the blob the push really carries is the one checked."""
    rid = add(pushed, "note", {"body": "as measured"})
    path = next((pushed / "ledger" / "records" / "note").rglob(f"{rid}.json"))
    good = git(pushed, "hash-object", "-w", str(path)).stdout.strip()
    path.write_text(path.read_text().replace("as measured", "as we wished"))
    commit(pushed, "a tampered record")
    bad = git(pushed, "rev-parse", f"HEAD:{path.relative_to(pushed).as_posix()}").stdout.strip()
    git(pushed, "replace", "-f", bad, good)
    assert git(pushed, "cat-file", "-p", bad).stdout == git(pushed, "cat-file", "-p", good).stdout
    _refused(pushed, "content-hash")
