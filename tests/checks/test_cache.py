"""The verification cache: a record file git reports unmodified is answered from what an
earlier check found for the same blob; anything else is parsed again (checks/cache.py)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import cli, git


def _check(repo: Path, *args: str) -> dict:
    result = cli(repo, "check", "--all", "--format", "json", *args)
    report = json.loads(result.stdout)
    assert report["exit_code"] == result.returncode
    return report


def _ledger_with_records(repo: Path, n: int = 5) -> list[Path]:
    for i in range(n):
        added = cli(repo, "add", "note", "-", input=f"title: note {i}\nbody: cached {i}")
        assert added.returncode == 0, added.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "notes")
    return sorted((repo / "ledger" / "records").rglob("*.json"))


def _cache_file(repo: Path) -> Path:
    return repo / ".git" / "ledger" / "check-cache"


def test_a_second_check_answers_unchanged_files_from_the_cache_with_the_same_verdict(repo: Path) -> None:
    files = _ledger_with_records(repo)
    cold = _check(repo)
    assert cold["records_from_cache"] == 0 and cold["records_checked"] == len(files)
    assert _cache_file(repo).is_file()
    warm = _check(repo)
    assert warm["records_from_cache"] == len(files)
    assert warm["violations"] == cold["violations"] and warm["exit_code"] == cold["exit_code"] == 0
    assert _check(repo, "--no-cache")["records_from_cache"] == 0


def test_an_edited_file_is_parsed_again_committed_or_not(repo: Path) -> None:
    files = _ledger_with_records(repo)
    assert _check(repo)["exit_code"] == 0  # every file now remembered as clean
    victim = files[0]
    victim.write_text(victim.read_text().replace("cached", "edited"))
    report = _check(repo)
    assert report["exit_code"] == 1
    assert report["records_from_cache"] == len(files) - 1
    assert any(v["rule"] == "content-hash" and victim.name in v["file"] for v in report["violations"])
    git(repo, "commit", "-qam", "edit a record in place")  # a new blob: never seen, so parsed
    report = _check(repo)
    assert report["exit_code"] == 1
    assert any(v["rule"] == "content-hash" for v in report["violations"])


def test_a_damaged_cache_is_ignored_and_a_config_change_empties_it(repo: Path) -> None:
    files = _ledger_with_records(repo)
    _check(repo)
    _cache_file(repo).write_bytes(b"\x00not marshal data")
    damaged = _check(repo)
    assert damaged["exit_code"] == 0 and damaged["records_from_cache"] == 0
    assert _check(repo)["records_from_cache"] == len(files)
    config = repo / "ledger.yaml"
    config.write_text(
        config.read_text().replace(
            "  # record-size: {severity: error, max_bytes: 262144}", "  record-size: {max_bytes: 100}"
        )
    )
    tightened = _check(repo)
    assert tightened["records_from_cache"] == 0  # other rules, other fingerprint
    assert {v["rule"] for v in tightened["violations"]} >= {"record-size"}


def test_an_untracked_record_is_never_answered_from_the_cache(repo: Path) -> None:
    files = _ledger_with_records(repo, 2)
    _check(repo)
    added = cli(repo, "add", "note", "-", input="body: not committed yet")
    assert added.returncode == 0
    report = _check(repo)
    assert report["records_checked"] == len(files) + 1
    assert report["records_from_cache"] == len(files)


def test_a_removed_record_leaves_the_cache_and_an_edit_replaces_its_entry(repo: Path) -> None:
    """The cache forgets files that left the ledger; an edited file's entry is keyed by its new
    blob and remembers its refusal, so a later check answered from the cache still refuses it."""
    import marshal

    files = _ledger_with_records(repo, 3)
    _check(repo)
    gone = files[0]
    git(repo, "rm", "-q", str(gone))
    git(repo, "commit", "-qm", "drop a record (append-only will say so)")
    _check(repo)
    _, _, entries = marshal.loads(_cache_file(repo).read_bytes())
    assert not any(gone.name in path for path in entries)
    assert len(entries) == len(files) - 1

    victim = files[1]
    rel = victim.relative_to(repo / "ledger" / "records").as_posix()
    old_blob = entries[rel][0]
    victim.write_text(victim.read_text().replace("cached", "tampered"))
    git(repo, "commit", "-qam", "edit a record in place")
    first = _check(repo)
    _, _, entries = marshal.loads(_cache_file(repo).read_bytes())
    new_blob = git(repo, "rev-parse", f"HEAD:ledger/records/{rel}").stdout.strip()
    assert entries[rel][0] == new_blob != old_blob
    assert any(v[3] == "content-hash" for v in entries[rel][1])
    again = _check(repo)
    assert again["records_from_cache"] == len(files) - 1  # the tampered file too, with its refusal
    assert again["violations"] == first["violations"]
    assert any(v["rule"] == "content-hash" and victim.name in v["file"] for v in again["violations"])


@pytest.mark.parametrize("hide", ["--assume-unchanged", "--skip-worktree"])
def test_an_edit_hidden_from_git_is_still_parsed(repo: Path, hide: str) -> None:
    """A file marked assume-unchanged or skip-worktree is one whose edits git stops looking
    at: it is never answered from the cache, so the tampered bytes are refused."""
    files = _ledger_with_records(repo, 2)
    _check(repo)
    victim = files[0]
    git(repo, "update-index", hide, str(victim.relative_to(repo)))
    victim.write_text(victim.read_text().replace("cached", "hidden"))
    report = _check(repo)
    assert any(v["rule"] == "content-hash" and victim.name in v["file"] for v in report["violations"])
    assert report["records_from_cache"] == len(files) - 1


def test_a_config_that_stops_trusting_ctime_does_not_hide_an_edit(repo: Path) -> None:
    """core.trustctime=false lets an edit that keeps the size and puts the mtime back read as
    unmodified to git; the cache's reads pin git's stat checks, so the edit is still parsed."""
    files = _ledger_with_records(repo, 2)
    victim = files[0]
    old = time.time() - 100
    os.utime(victim, (old, old))
    git(repo, "update-index", "--refresh")
    _check(repo)
    git(repo, "config", "core.trustctime", "false")
    time.sleep(1.1)  # git compares whole seconds of ctime: the edit lands in a later second
    text = victim.read_text()
    edited = text.replace("cached 0", "hidden 0") if "cached 0" in text else text.replace("cached 1", "hidden 1")
    assert len(edited) == len(text) and edited != text
    victim.write_text(edited)
    os.utime(victim, (old, old))
    # git itself, under the repository's config, now calls the file unmodified:
    assert git(repo, "diff-files", "--name-only").stdout.strip() == ""
    report = _check(repo)
    assert any(v["rule"] == "content-hash" and victim.name in v["file"] for v in report["violations"])
