"""Issue 22, principle 5: every record file that exists in any commit reachable from HEAD
exists at HEAD with the bytes it was added with, whatever path through the graph the
history took.

The attack: a merge whose first parent lacks the records (`git checkout -b side OLD; git
merge -s ours main`), pushed as a fast-forward with `--no-verify`, drops the records (or
brings them re-sealed); one honest push goes through the hook on top. Before the fix the
history walk diffed merges against their first parent only, so `check --all` and `--base`
on a fresh clone were clean. Real pushes to a bare remote, a fresh clone as CI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks.check_helpers import add, commit, push
from conftest import git, run_ledger, with_remote

from ledger.store.canonical import canonical_bytes, seal


@pytest.fixture
def pushed(repo: Path, tmp_path: Path) -> Path:
    """The campaign with a bare remote and the hook; two records pushed on top of `init`."""
    with_remote(repo, tmp_path)
    assert push(repo).returncode == 0
    git(repo, "tag", "before-records")
    add(repo, "note", {"body": "a refuted hypothesis, kept so the next reader does not reach it again"})
    add(repo, "issue", {"number": 7, "title": "re-gate the 8x pair", "owner": "ana"})
    commit(repo, "evidence")
    assert push(repo).returncode == 0
    return repo


def _note(repo: Path) -> Path:
    return next((repo / "ledger" / "records" / "note").rglob("*.json"))


def _ci(repo: Path, tmp_path: Path) -> Path:
    target = tmp_path / "ci"
    git(tmp_path, "clone", "-q", str(repo.parent / "remote.git"), str(target))
    return target


@pytest.mark.parametrize("how", ["drop", "reseal"])
def test_a_buried_evil_merge_is_refused_by_ci_on_a_fresh_clone(pushed: Path, tmp_path: Path, how: str) -> None:
    note = _note(pushed)
    rel = note.relative_to(pushed).as_posix()
    forged = None
    if how == "reseal":
        data = json.loads(note.read_bytes())
        data["body"] = "the hypothesis was supported after all"
        forged = canonical_bytes(seal({k: v for k, v in data.items() if k != "sha256"}))
    git(pushed, "checkout", "-q", "-b", "side", "before-records")
    if forged is not None:
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_bytes(forged)
        commit(pushed, "the note, as it should have been")
    git(pushed, "merge", "-q", "-s", "ours", "main", "-m", "Merge main")
    assert push(pushed, "--no-verify", "side:main").returncode == 0  # a fast-forward
    add(pushed, "note", {"body": "an honest record on top"})
    commit(pushed, "bury it")
    assert push(pushed, "side:main").returncode == 0  # judged against the remote: it has the merge

    ci = _ci(pushed, tmp_path)
    for args in (("check", "--all"), ("check", "--base", "origin/main")):
        result = run_ledger(ci, *args)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert "error[append-only]" in result.stdout and rel in result.stdout, (args, result.stdout)


def test_honest_merges_either_way_pass(pushed: Path, tmp_path: Path) -> None:
    git(pushed, "checkout", "-q", "-b", "side", "before-records")
    add(pushed, "note", {"body": "measured on the side branch"})
    commit(pushed, "side evidence")
    git(pushed, "merge", "-q", "--no-edit", "main")  # first parent lacks main's records; the merge keeps them
    assert push(pushed, "side:main").returncode == 0
    git(pushed, "checkout", "-q", "main")
    git(pushed, "pull", "-q", "--ff-only", "origin", "main")
    git(pushed, "checkout", "-q", "-b", "other", "before-records")
    add(pushed, "note", {"body": "another branch"})
    commit(pushed, "other evidence")
    git(pushed, "checkout", "-q", "main")
    git(pushed, "merge", "-q", "--no-edit", "other")
    assert push(pushed).returncode == 0
    ci = _ci(pushed, tmp_path)
    for args in (("check", "--all"), ("check", "--base", "origin/main")):
        result = run_ledger(ci, *args)
        assert result.returncode == 0, (args, result.stdout, result.stderr)
