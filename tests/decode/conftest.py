from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git, run_ledger


@pytest.fixture
def pushed(repo: Path, tmp_path: Path) -> Path:
    """The campaign repository with a bare remote `origin`, the hook installed, main pushed."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    result = run_ledger(repo, "hook", "install")
    assert result.returncode == 0, result.stderr
    git(repo, "push", "-q", "origin", "main")
    git(repo, "fetch", "-q", "origin")
    return repo
