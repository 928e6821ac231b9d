"""Issue 22, item 12 (principle 16 of the threat model): a commit is verified or refused, never
trusted for its label. A made-up SHA labelled as another repository's (`source.repo`) was a
`sha-foreign` warning, so the hook and CI passed it. Through the real commands: the installed
hook refuses it; pushed with `--no-verify`, a fresh clone's `check --all` and `--base` (CI)
refuse it; declared in `sources:` with its clone absent it is only `sha-unverified`, and with
the clone present it is looked up there (`sha-resolves`)."""

from __future__ import annotations

import json
from pathlib import Path

from checks.check_helpers import commit, hook_push, raw_record
from conftest import cli, git, run_ledger

ELSEWHERE = "https://example.invalid/elsewhere.git"
MADE_UP = "e" * 40


def test_a_made_up_foreign_sha_is_refused_by_the_hook_and_a_fresh_clone(pushed: Path, tmp_path: Path) -> None:
    path = raw_record(pushed, "note", {"body": "from elsewhere", "source": {"sha": MADE_UP, "repo": ELSEWHERE}})
    rel = path.relative_to(pushed).as_posix()
    commit(pushed, "a made-up foreign commit")
    refused = hook_push(pushed)
    assert refused.returncode != 0 and "error[sha-foreign]" in refused.stderr and rel in refused.stderr
    assert f"sources: {{{ELSEWHERE!r}: PATH-OF-A-CLONE}}" in refused.stderr
    assert git(pushed, "push", "-q", "--no-verify", "origin", "HEAD:main", check=False).returncode == 0
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), "ci")
    ci = tmp_path / "ci"
    for args in (("check", "--all"), ("check", "--base", "HEAD~1")):
        report = json.loads(cli(ci, *args, "--format", "json").stdout)
        found = [v for v in report["violations"] if v["rule"] == "sha-foreign"]
        assert found and found[0]["severity"] == "error" and found[0]["file"] == rel, (args, report)
    # Declared at a path where no clone is: unverifiable, so an error too (hostile round: a
    # `sources:` path that does not exist made the made-up SHA a passing warning); present:
    # looked up there.
    config = ci / "ledger.yaml"
    config.write_text(config.read_text().replace("sources: {}", f"sources:\n  {ELSEWHERE}: ../elsewhere"))
    absent = run_ledger(ci, "check", "--all")
    assert absent.returncode == 1 and "error[sha-unverified]" in absent.stdout + absent.stderr
    other = tmp_path / "elsewhere"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    git(other, "commit", "-q", "--allow-empty", "-m", "the other project")
    present = cli(ci, "check", "--all")
    assert present.returncode == 1 and "error[sha-resolves]" in present.stdout + present.stderr
    assert f"{MADE_UP} does not resolve in the source checkout of {ELSEWHERE}" in present.stdout + present.stderr


def test_a_declared_clone_that_is_not_there_verifies_nothing_at_push(pushed: Path) -> None:
    """Hostile round: a push declared `sources:` at a path where no clone is (with its note), and
    the next push's made-up SHA of that repository passed the hook as a warning."""
    config = pushed / "ledger.yaml"
    config.write_text(config.read_text().replace("sources: {}", f"sources:\n  {ELSEWHERE}: ../nowhere"))
    body = f"sources {ELSEWHERE}: ../nowhere, the other project's checkout"
    assert cli(pushed, "add", "note", "-", input=json.dumps({"body": body, "tags": ["ledger-config"]})).returncode == 0
    commit(pushed, "declare a clone")
    assert hook_push(pushed).returncode == 0
    path = raw_record(pushed, "note", {"body": "made up", "source": {"sha": MADE_UP, "repo": ELSEWHERE}})
    commit(pushed, "a made-up commit of the declared repository")
    refused = hook_push(pushed)
    assert refused.returncode != 0 and "error[sha-unverified]" in refused.stderr, refused.stderr
    assert path.relative_to(pushed).as_posix() in refused.stderr
