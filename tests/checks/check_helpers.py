"""Helpers for checker tests: a campaign repository with a bare remote and the hook installed."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from conftest import cli, git

from ledger.store.canonical import canonical_bytes, seal
from ledger.store.ids import new_id
from ledger.version import __version__


def push(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """A real `git push` to the bare remote, through the installed pre-push hook."""
    return git(repo, "push", "origin", *(args or ("HEAD:main",)), check=False)


def commit(repo: Path, message: str = "change") -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


def add(repo: Path, kind: str, data: dict, *args: str) -> str:
    result = cli(repo, "add", kind, "-", *args, input=json.dumps(data))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[0]


def names_rule(stderr: str, rule: str) -> bool:
    """An error line names the rule: `RULE: message` (checker rules) or `(rule RULE)` (store limits)."""
    return f": {rule}: " in stderr or f"(rule {rule}" in stderr


def refused_then_by_hand(repo: Path, kind: str, data: dict, rule: str, *args: str) -> str:
    """`ledger add` refuses the record with `rule` and writes nothing; then write it by hand,
    as a hand edit, another tool or an older ledger would, for the checker to judge."""
    before = sorted((repo / "ledger" / "records").rglob("*.json"))
    result = cli(repo, "add", kind, "-", *args, input=json.dumps(data))
    assert result.returncode == 2 and names_rule(result.stderr, rule), result.stderr
    assert sorted((repo / "ledger" / "records").rglob("*.json")) == before
    return raw_record(repo, kind, data).stem


def raw_record(
    repo: Path, kind: str, body: dict, *, reseal: bool = True, record_id: str | None = None, path_id: str | None = None
) -> Path:
    """Write a record file by hand (what `ledger add` would refuse), sealed unless told not to."""
    sha = git(repo, "rev-parse", "HEAD").stdout.strip()
    at = datetime.now(UTC)
    rid = record_id or new_id(at)
    data = {
        "format_version": 1,
        "id": rid,
        "kind": kind,
        "created_at": at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "source": {"sha": sha},
        "allocation": {"id": "test-alloc", "scheduler": "local"},
        "tool": {"name": "ledger", "version": __version__},
        **body,
    }
    data = seal(data) if reseal else {**data, "sha256": "0" * 64}
    pid = path_id or rid
    path = repo / "ledger" / "records" / kind / pid[-2:].lower() / f"{pid}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(canonical_bytes(data))
    return path


def page(repo: Path, name: str, text: str) -> Path:
    path = repo / "ledger" / "specs" / name
    path.write_text(text, encoding="utf-8")
    return path


def set_rule(repo: Path, rule: str, **params) -> None:
    """Set a rule's line in ledger.yaml's `rules:` mapping (as a user edits it)."""
    import re

    config = repo / "ledger.yaml"
    text = config.read_text(encoding="utf-8")
    inline = ", ".join(f"{k}: {json.dumps(v)}" for k, v in params.items())
    line = f"  {rule}: {{{inline}}}"
    pattern = re.compile(rf"^  {re.escape(rule)}: .*$", re.M)
    text = pattern.sub(line, text) if pattern.search(text) else text.replace("\nrules:\n", f"\nrules:\n{line}\n", 1)
    config.write_text(text, encoding="utf-8")


def contract(repo: Path, name: str = "c1") -> str:
    return add(
        repo,
        "contract",
        {
            "name": name,
            "model": "m",
            "param_precision": "fp32",
            "optimizer_state_precision": "fp32",
            "compute_precision": "bf16",
            "warmup_steps": 1,
            "measured_steps": 3,
        },
    )
