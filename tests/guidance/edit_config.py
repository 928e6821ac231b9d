"""Editing ledger.yaml as a user does."""

from __future__ import annotations

from pathlib import Path


def rules(repo: Path, line: str) -> None:
    """Add a line under `rules:` in ledger.yaml, as a user edits it."""
    config = repo / "ledger.yaml"
    text = config.read_text(encoding="utf-8")
    assert "\nrules:" in text
    config.write_text(text.replace("\nrules:", f"\nrules:\n  {line}", 1), encoding="utf-8")
