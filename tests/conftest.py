"""Shared fixtures: real git repositories in temporary folders and the real `ledger` CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEDGER_BIN = Path(sys.executable).with_name("ledger")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=check, text=True, capture_output=True, input=input)


def run_ledger(
    cwd: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the installed `ledger` command as a user would."""
    full_env = {**os.environ, **GIT_ENV, **(env or {})}
    # Scheduler variables of the machine running the tests must not leak into stamps.
    # So must the terminal size: pytest-xdist workers export COLUMNS=80 and LINES=24, which
    # would fold piped output that a user's pipe never folds (tests that want a width say so).
    for name in (
        "SLURM_JOB_ID",
        "WORLD_SIZE",
        "LOCAL_WORLD_SIZE",
        "GITHUB_ACTIONS",
        "GITLAB_CI",
        "LEDGER_DIR",
        "COLUMNS",
        "LINES",
    ):
        if env is None or name not in env:
            full_env.pop(name, None)
    return subprocess.run([str(LEDGER_BIN), *args], cwd=cwd, env=full_env, text=True, capture_output=True, input=input)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit and an initialised ledger."""
    root = tmp_path / "campaign"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    result = run_ledger(root, "init")
    assert result.returncode == 0, result.stderr
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init ledger")
    return root


def with_remote(repo: Path, tmp_path: Path) -> Path:
    """Give `repo` a bare remote `origin` and install ledger's pre-push hook, so a `git push`
    goes through the real hook. Returns the remote's path."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    result = run_ledger(repo, "hook", "install")
    assert result.returncode == 0, result.stderr
    return remote


@pytest.fixture
def pushed(repo: Path, tmp_path: Path) -> Path:
    """The campaign repository with a bare remote `origin`, the hook installed, main pushed."""
    with_remote(repo, tmp_path)
    git(repo, "push", "-q", "origin", "main")
    git(repo, "fetch", "-q", "origin")
    return repo


@pytest.fixture
def book(repo: Path):
    from ledger.store import Ledger

    return Ledger.open(repo)
