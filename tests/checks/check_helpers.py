"""Helpers for checker tests: a campaign repository with a bare remote and the hook installed.

`push` is a real `git push` whose check runs in this process: the lines git hands the
pre-push hook, judged by `ledger check --pre-push` through the in-process cli, then, if it
passes, `git push --no-verify`. The hook runs exactly that command in a new process (0.5 s of
interpreter start a push); `hook_push` goes through the installed hook itself, for the
end-to-end tests of the hook (tests/checks/test_push_flows.py, and a few rules in
tests/checks/test_rules_push.py)."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from conftest import cli, git

from ledger.checks.hooks import CHAINED
from ledger.store.canonical import canonical_bytes, seal
from ledger.store.ids import new_id
from ledger.version import __version__

ZERO = "0" * 40


def hook_push(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """A real `git push` to the bare remote, through the installed pre-push hook."""
    return git(repo, "push", "origin", *(args or ("HEAD:main",)), check=False)


def hook_input(repo: Path, refspecs: list[str]) -> str:
    """The lines git writes to the pre-push hook's stdin for `git push origin REFSPEC...`:
    `<local ref> <local sha> <remote ref> <remote sha>`, the remote's sha as the remote has
    it (zeros for a new branch)."""
    remote = dict(
        reversed(line.split("\t")) for line in git(repo, "ls-remote", "origin").stdout.splitlines() if "\t" in line
    )
    lines = []
    for spec in refspecs:
        source, _, target = spec.lstrip("+").partition(":")
        remote_ref = target or source
        remote_ref = remote_ref if remote_ref.startswith("refs/") else f"refs/heads/{remote_ref}"
        if not source:  # `:main` deletes the remote branch
            local_ref, sha = "(delete)", ZERO
        else:
            local_ref = source if source == "HEAD" or source.startswith("refs/") else f"refs/heads/{source}"
            sha = git(repo, "rev-parse", f"{source}^{{commit}}").stdout.strip()
        lines.append(f"{local_ref} {sha} {remote_ref} {remote.get(remote_ref, ZERO)}\n")
    return "".join(lines)


def push(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """`git push origin ARGS` (default `HEAD:main`) judged as the installed hook judges it,
    in this process: `ledger check --pre-push --remote origin` on git's hook input, then, when
    it passes, the real `git push --no-verify`. Returns what `hook_push` returns: exit 1 and
    the check's report on stderr when refused (the remote does not move)."""
    flags = [a for a in args if a.startswith("-")]
    refspecs = [a for a in args if not a.startswith("-")] or ["HEAD:main"]
    hook = Path(repo, git(repo, "rev-parse", "--git-path", "hooks/pre-push").stdout.strip())
    installed = re.search(r" -C (\S+) check --pre-push", hook.read_text()) if hook.is_file() else None
    if "--no-verify" in flags or installed is None or (hook.parent / CHAINED).exists():
        # No ledger hook to stand in for, or a user's hook chained before it: the real push.
        return hook_push(repo, *args)
    top = Path(git(repo, "rev-parse", "--show-toplevel").stdout.strip())
    judged = cli(
        top, "-C", installed.group(1), "check", "--pre-push", "--remote", "origin", input=hook_input(repo, refspecs)
    )
    if judged.returncode != 0:
        stderr = judged.stderr + judged.stdout + "error: failed to push some refs (pre-push hook declined)\n"
        return subprocess.CompletedProcess(judged.args, 1, "", stderr)
    pushed = git(repo, "push", "--no-verify", "origin", *flags, *refspecs, check=False)
    return subprocess.CompletedProcess(pushed.args, pushed.returncode, pushed.stdout, judged.stderr + pushed.stderr)


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
