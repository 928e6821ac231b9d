"""Issue 22, principle 2: every git command ledger runs is hardened against the repository it
reads, and a ledger below the repository's top is judged like one at the top.

The attack: a push sets `source: vendor` (or maps a `sources:` entry to it) and commits
`vendor/` as a git folder whose committed `config` sets `core.fsmonitor` (and an external
diff, a textconv driver, a pager). Git runs the fsmonitor command on ordinary reads such as
`git diff`, so before the fix every member's `ledger add` ran the attacker's command. Each
test clones the pushed repository afresh (what a member or CI has) and runs the real
commands; the command's marker file must never appear.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks.check_helpers import add, commit, push, raw_record
from conftest import cli, git, run_ledger


def plant_git_folder(repo: Path, name: str, marker: Path) -> None:
    """`repo/name`: a git folder (bare, with a work tree of itself) whose config runs
    `touch marker` through every hook git offers for it; committed as plain files."""
    folder = repo / name
    git(repo, "init", "-q", "--bare", name)
    (folder / "code.py").write_text("print(1)\n")
    (folder / ".gitattributes").write_text("* diff=evil\n")
    env = ["--git-dir", str(folder), "--work-tree", str(folder)]
    git(repo, *env, "add", "code.py", ".gitattributes")
    git(repo, *env, "commit", "-q", "-m", "vendored")
    run = f"touch {marker}; false"
    for key, value in (
        ("core.bare", "false"),
        ("core.worktree", "."),
        ("core.fsmonitor", run),
        ("core.pager", run),
        ("diff.external", run),
        ("diff.evil.textconv", run),
        ("core.hooksPath", "hooks"),
    ):
        git(folder, "config", key, value)
    (folder / "hooks").mkdir(exist_ok=True)
    for hook in ("post-index-change", "reference-transaction"):
        (folder / "hooks" / hook).write_text(f"#!/bin/sh\n{run}\n")
        (folder / "hooks" / hook).chmod(0o755)
    (folder / "code.py").write_text("print(2)\n")  # dirty, so a diff has something to run on


def set_config(repo: Path, line: str, key: str) -> None:
    path = repo / "ledger.yaml"
    lines = [x for x in path.read_text().splitlines() if not x.startswith(f"{key}:")]
    path.write_text("\n".join([*lines, line]) + "\n")


def fresh_clone(pushed: Path, tmp_path: Path, name: str = "member") -> Path:
    url = git(pushed, "remote", "get-url", "origin").stdout.strip()
    git(tmp_path, "clone", "-q", url, name)
    return tmp_path / name


def test_a_committed_git_folder_named_as_source_runs_nothing(pushed: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    plant_git_folder(pushed, "vendor", marker)
    set_config(pushed, "source: vendor", "source")
    commit(pushed, "vendor the model code")
    assert git(pushed, "push", "-q", "--no-verify", "origin", "HEAD:main", check=False).returncode == 0

    member = fresh_clone(pushed, tmp_path)
    (member / "vendor" / "code.py").write_text("print(3)\n")
    result = run_ledger(member, "add", "note", "-", input="body: measured\n")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "bare repository" in result.stderr and "source" in result.stderr
    for args in (("status",), ("check", "--all"), ("list",)):
        cli(member, *args)
    assert not marker.exists(), "git ran the repository's configured command"


def test_a_committed_git_folder_named_in_sources_runs_nothing_in_check(pushed: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    plant_git_folder(pushed, "third_party", marker)
    set_config(pushed, "sources: {'https://example.invalid/model.git': third_party}", "sources")
    sha = git(pushed, "--git-dir", str(pushed / "third_party"), "rev-parse", "HEAD").stdout.strip()
    raw_record(
        pushed, "note", {"body": "imported", "source": {"repo": "https://example.invalid/model.git", "sha": sha}}
    )
    commit(pushed, "an imported result")
    assert git(pushed, "push", "-q", "--no-verify", "origin", "HEAD:main", check=False).returncode == 0
    member = fresh_clone(pushed, tmp_path)
    result = run_ledger(member, "check", "--all")
    assert "third_party" in result.stdout + result.stderr  # its SHAs cannot be verified there
    cli(member, "check", "--base", "HEAD~1")
    cli(member, "status")
    assert not marker.exists(), "git ran the repository's configured command"


def test_every_git_command_line_is_hardened() -> None:
    from ledger.git import command

    line = command("diff", "HEAD")
    for option in (
        "core.fsmonitor=false",
        "core.hooksPath=/dev/null",
        "core.pager=cat",
        "diff.external=",
        "safe.bareRepository=explicit",
    ):
        assert option in line
    assert line[line.index("diff") + 1 : line.index("diff") + 3] == ["--no-ext-diff", "--no-textconv"]
    assert "core.hooksPath=/dev/null" not in command("push", hooks=True)
    assert "safe.bareRepository=explicit" in command("push", hooks=True)


@pytest.mark.slow  # several seconds: out of the quick subset
def test_a_ledger_below_the_top_refuses_a_duplicate_key_at_push_and_in_ci(tmp_path: Path) -> None:
    # A repository whose ledger lives in perf/: before the fix the range checks gave git
    # top-relative paths from perf/, saw no record, and the key index was empty.
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "perf").mkdir()
    ledger = repo / "perf"
    assert run_ledger(ledger, "init").returncode == 0
    commit(repo, "init")
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    assert run_ledger(ledger, "hook", "install").returncode == 0
    assert push(repo).returncode == 0
    add(ledger, "issue", {"number": 7, "title": "seven"}, "--source", str(repo))
    commit(repo, "issue 7")
    assert push(repo).returncode == 0

    # Issue 7 again, written by hand (ledger add refuses it), pushed through the real hook.
    first = next((ledger / "ledger" / "records" / "issue").rglob("*.json"))
    body = {k: v for k, v in json.loads(first.read_bytes()).items() if k in ("number", "title", "state")}
    raw_record(ledger, "issue", {**body, "title": "seven again"})
    commit(repo, "a second issue 7")
    refused = push(repo)
    assert refused.returncode != 0 and "unique-key" in refused.stderr, refused.stderr

    # Pushed anyway: a fresh clone (CI) refuses it on the range and on the whole history.
    assert git(repo, "push", "-q", "--no-verify", "origin", "HEAD:main", check=False).returncode == 0
    ci = fresh_clone(repo, tmp_path, "ci") / "perf"
    for args in (("check", "--base", "HEAD~1"), ("check", "--all")):
        result = run_ledger(ci, *args)
        assert result.returncode == 1 and "unique-key" in result.stdout + result.stderr, (args, result.stdout)
        # A folder's entries are not mistaken for the folder (git lists a's entries for "a" beside "a/b").
        assert "symlinks" not in result.stdout + result.stderr, result.stdout
