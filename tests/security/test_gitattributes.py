"""Issue 22, item 9: a pushed `.gitattributes` that changes the bytes git checks out for the
ledger's files (`eol=crlf` for the records) made every record fail in every fresh clone, and
the errors blamed the records. Such a push is refused (`attributes`), and when it lands
anyway a fresh clone's `check --all` names the .gitattributes line. Real pushes through the
hook, a fresh clone as CI."""

from __future__ import annotations

from pathlib import Path

import pytest
from checks.check_helpers import add, commit, push
from conftest import git, run_ledger


@pytest.fixture
def evidence(pushed: Path) -> Path:
    add(pushed, "note", {"body": "a measured result"})
    commit(pushed, "evidence")
    assert push(pushed).returncode == 0
    return pushed


@pytest.mark.parametrize(
    "line",
    ["*.json text eol=crlf", "ledger/records/** eol=crlf", "* filter=lfs", "[attr]evil eol=crlf", "*.md ident"],
)
def test_a_push_of_byte_changing_attributes_is_refused(evidence: Path, line: str) -> None:
    (evidence / ".gitattributes").write_text(f"# line endings\n{line}\n")
    commit(evidence, "line endings")
    before = git(evidence, "ls-remote", "origin").stdout
    result = push(evidence)
    assert result.returncode != 0 and "error[attributes]" in result.stderr, result.stderr
    assert ".gitattributes" in result.stderr and line in result.stderr
    assert git(evidence, "ls-remote", "origin").stdout == before


def test_landed_anyway_a_fresh_clone_names_the_gitattributes(evidence: Path, tmp_path: Path) -> None:
    (evidence / ".gitattributes").write_text("*.json text eol=crlf\n")
    commit(evidence, "line endings")
    assert push(evidence, "--no-verify", "HEAD:main").returncode == 0
    git(tmp_path, "clone", "-q", str(evidence.parent / "remote.git"), "ci")
    result = run_ledger(tmp_path / "ci", "check", "--all")
    assert result.returncode == 1
    assert "error[attributes]" in result.stdout and ".gitattributes" in result.stdout, result.stdout


def test_attributes_for_other_files_pass(evidence: Path) -> None:
    (evidence / ".gitattributes").write_text("*.png binary\n*.py text eol=lf\n*.json -text\n")
    commit(evidence, "attributes for code")
    result = push(evidence)
    assert result.returncode == 0, result.stderr
