"""Issue 22, item 12 (second half): a gitlink (submodule entry) committed in the records
folder with `git push --no-verify` is refused by the hook, but `check --all` on a fresh
clone never reported it (it checks out as an empty folder). Now it does, by the same rule."""

from __future__ import annotations

from pathlib import Path

from checks.check_helpers import push
from conftest import git, run_ledger


def test_a_gitlink_in_the_records_folder_is_reported_by_check_all(pushed: Path, tmp_path: Path) -> None:
    head = git(pushed, "rev-parse", "HEAD").stdout.strip()
    git(pushed, "update-index", "--add", "--cacheinfo", f"160000,{head},ledger/records/note/ab/vendor")
    git(pushed, "commit", "-q", "-m", "a submodule among the records")
    refused = push(pushed)
    assert refused.returncode != 0 and "symlinks" in refused.stderr, refused.stderr
    assert push(pushed, "--no-verify", "HEAD:main").returncode == 0
    git(tmp_path, "clone", "-q", str(pushed.parent / "remote.git"), "ci")
    result = run_ledger(tmp_path / "ci", "check", "--all")
    assert result.returncode == 1, result.stdout
    assert "error[symlinks]" in result.stdout and "ledger/records/note/ab/vendor" in result.stdout
