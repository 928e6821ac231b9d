"""`ledger add` of a second live correction: the fix it gives names only records that exist,
and following it leaves one line of corrections that `check --all` accepts."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli


def add(repo: Path, body: dict) -> tuple[int, str, str]:
    result = cli(repo, "add", "measurement", "-", input=json.dumps(body))
    return result.returncode, result.stdout.strip(), result.stderr


def test_the_fix_for_a_second_correction_names_the_live_one(repo: Path) -> None:
    base = {"metric": "step_time", "unit": "s"}
    code, original, err = add(repo, {**base, "samples": [1.0]})
    assert code == 0, err
    code, first, err = add(repo, {**base, "samples": [1.1], "supersedes": [original]})
    assert code == 0, err
    code, out, err = add(repo, {**base, "samples": [1.2], "supersedes": [original]})
    assert code == 2 and "correction-fork" in err and out == "", err
    # The fix names the live correction, never the id of the record it refused to write.
    assert f'"supersedes": ["{first}"]' in err and "was not written" in err
    code, second, err = add(repo, {**base, "samples": [1.2], "supersedes": [first]})
    assert code == 0, err
    check = cli(repo, "check", "--all")
    assert check.returncode == 0, check.stdout + check.stderr
