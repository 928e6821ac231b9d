"""`ledger gate run`: a real pytest run recorded as a gate, with its exit code and load."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import cli


def gate(repo: Path, *cmd: str, report: str = "r.xml") -> tuple[int, dict]:
    result = cli(repo, "gate", "run", "--junit", report, "--interval", "0.2", "--format", "json", "--", *cmd)
    assert result.returncode in (0, 1), result.stderr
    summary = json.loads(result.stdout)
    record = json.loads(cli(repo, "show", summary["id"], "--format", "json").stdout)
    return result.returncode, record


@pytest.mark.slow
def test_passing_failing_and_empty_runs(repo: Path) -> None:
    tests = repo / "suite"
    tests.mkdir()
    (tests / "test_ok.py").write_text("def test_a():\n    assert 1\n\ndef test_b():\n    assert 2\n")
    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", "r.xml"]
    code, rec = gate(repo, *pytest_cmd, "suite")
    assert code == 0 and rec["outcome"] == "pass" and rec["executed"] == 2 and rec["exit_code"] == 0
    assert len(rec["load_avg"]) == 3 and "pytest" in rec["command"]

    (tests / "test_bad.py").write_text(
        "import pytest\n\ndef test_c():\n    assert 0\n\n@pytest.mark.skip(reason='later')\ndef test_d():\n    pass\n"
    )
    code, rec = gate(repo, *pytest_cmd, "suite")
    assert (
        code == 1 and rec["outcome"] == "fail" and rec["failed"] == 1 and rec["skipped"] == 1 and rec["exit_code"] == 1
    )

    empty = repo / "empty"
    empty.mkdir()
    code, rec = gate(repo, *pytest_cmd, "empty")
    assert code == 1 and rec["outcome"] == "no-tests" and rec["executed"] == 0 and rec["exit_code"] == 5


def test_a_command_that_writes_no_report_is_no_tests(repo: Path) -> None:
    code, rec = gate(repo, sys.executable, "-c", "print('hello')", report="never.xml")
    assert code == 1 and rec["outcome"] == "no-tests" and rec["extra"]["missing_report"] == "never.xml"


def test_usage_errors_exit_2(repo: Path) -> None:
    assert cli(repo, "gate", "run", "--", "true").returncode == 2
    missing = cli(repo, "gate", "run", "--junit", "r.xml", "--", "definitely-not-a-command-xyz")
    assert missing.returncode == 2 and "definitely-not-a-command-xyz" in missing.stderr
