"""Three `ledger site build --strict` at once into one output folder (issue 12, class 15): both
succeed, the folder is a whole site, and no half-built folder is left beside it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from conftest import GIT_ENV, LEDGER_BIN, run_ledger


@pytest.mark.slow
def test_two_builds_at_once_into_one_folder_both_succeed(repo: Path) -> None:
    lines = "\n".join(json.dumps({"body": f"note {n}", "title": f"note {n}"}) for n in range(60))
    result = run_ledger(repo, "add", "note", "-", input=lines)
    assert result.returncode == 0, result.stderr
    env = {**os.environ, **GIT_ENV}
    builds = [
        subprocess.Popen(
            [str(LEDGER_BIN), "site", "build", "--strict"],
            cwd=repo,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for build in builds:
        out, err = build.communicate(timeout=600)
        assert build.returncode == 0, err
    site = repo / "site"
    assert (site / "index.html").is_file()
    assert not [p.name for p in repo.iterdir() if p.name.startswith(".site.")]  # no staging folder left
    check = run_ledger(repo, "site", "build", "--strict")  # and the site still builds clean
    assert check.returncode == 0, check.stderr
