"""A campaign ledger in its own git repository, and a real measured source repository whose
commits move: `source:` in ledger.yaml points at it, so records are stamped with its commits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, git


class Campaign:
    def __init__(self, ledger: Path, source: Path):
        self.ledger = ledger
        self.source = source

    def head(self) -> str:
        return git(self.source, "rev-parse", "HEAD").stdout.strip()

    def change(self, path: str, text: str) -> str:
        """Commit a change of the measured source; returns the new head."""
        target = self.source / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        git(self.source, "add", "-A")
        git(self.source, "commit", "-q", "-m", f"change {path}")
        return self.head()

    def add(self, kind: str, data: dict, *args: str, ok: bool = True):
        result = cli(self.ledger, "add", kind, "-", *args, input=json.dumps(data))
        if ok:
            assert result.returncode == 0, result.stderr
            return result.stdout.split()[0], result.stderr
        return result

    def status(self) -> dict:
        result = cli(self.ledger, "status", "--format", "json")
        assert result.returncode == 0, result.stderr
        data = json.loads(result.stdout)
        return {s["key"]: s for s in data["sections"]}

    def check(self) -> tuple[int, list[dict]]:
        result = cli(self.ledger, "check", "--all", "--format", "json")
        data = json.loads(result.stdout)
        return result.returncode, data["violations"]

    def commit(self, message: str = "records") -> None:
        git(self.ledger, "add", "-A")
        git(self.ledger, "commit", "-q", "-m", message)


@pytest.fixture
def campaign(repo: Path, tmp_path: Path) -> Campaign:
    source = tmp_path / "model-code"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "model").mkdir()
    (source / "model" / "block.py").write_text("def block(x):\n    return x\n")
    (source / "README.md").write_text("model code\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "model")
    config = repo / "ledger.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("\nsource: .", f"\nsource: {source}", 1))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "measure ../model-code")
    return Campaign(repo, source)
