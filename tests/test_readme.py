"""The README's quickstart, run as written by a new user, in a fresh folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import GIT_ENV, ROOT


def quickstart_block() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1]
    return re.search(r"```bash\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_readme_quickstart_runs(tmp_path: Path) -> None:
    script = quickstart_block()
    assert "source .venv/bin/activate" in script
    # The venv the README activates is the one the tests run in.
    script = script.replace("source .venv/bin/activate", f"export PATH={Path(sys.executable).parent}:$PATH")
    script = script.replace("ledger show <ID>", "ledger show $CONTRACT")
    env = {**os.environ, **GIT_ENV}
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    campaign = tmp_path / "my-campaign"
    records = list((campaign / "ledger" / "records").rglob("*.json"))
    assert {p.parts[-3] for p in records} == {"contract", "measurement"}
    assert "dit-bf16-4x" in result.stdout and "4x H200" in result.stdout
    status = subprocess.run(
        ["git", "status", "--porcelain", "ledger"], cwd=campaign, capture_output=True, text=True
    ).stdout
    assert status == ""
    check = subprocess.run(
        [str(Path(sys.executable).with_name("ledger")), "check", "--all"], cwd=campaign, capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_readme_first_two_commands_are_the_scripts_ci_runs() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", text, re.S).group(1).splitlines()
    assert first[0].startswith("bash scripts/demo.sh") and first[1].startswith("bash scripts/test.sh")
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
