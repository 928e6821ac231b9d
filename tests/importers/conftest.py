"""The importer tests' ledger. Real result files name commits of the projects they measured
(django, tsfresh, pyperformance, ...), which no test clones and ledger.yaml does not declare:
at the default severity each import would stop at `sha-foreign`. These tests judge parsing,
so their `repo` lowers that rule to a warning, committed (a push is judged by the committed
config). `strict_repo` keeps every rule at its default: the foreign-commit tests in
test_real_files.py and the `sha-foreign` case of tests/checks/test_rules_push.py judge the
rule itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import copy_repo, git


@pytest.fixture
def strict_repo(tmp_path: Path, repo_template: Path) -> Path:
    return copy_repo(repo_template, tmp_path / "campaign")


@pytest.fixture
def repo(strict_repo: Path) -> Path:
    config = strict_repo / "ledger.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\nrules:\n" in text
    config.write_text(text.replace("\nrules:\n", "\nrules:\n  sha-foreign: {severity: warning}\n", 1), encoding="utf-8")
    git(strict_repo, "commit", "-q", "-am", "importer tests: undeclared foreign commits are warnings")
    return strict_repo
