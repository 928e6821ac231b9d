"""Log tests: the BF16 harness logs name the training repository's commit, which the test's
own source checkout does not hold."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def repo(repo: Path) -> Path:
    """The shared repository, with `sha-resolves` a warning: `ledger add` refuses what
    `ledger check` would refuse, and the logs' commits cannot resolve here."""
    config = repo / "ledger.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\nrules:" in text
    config.write_text(text.replace("\nrules:", "\nrules:\n  sha-resolves: {severity: warning}", 1), encoding="utf-8")
    return repo
