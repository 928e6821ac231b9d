"""Branches, merges, force-pushes and the hook itself, through real pushes and the installed
hook (the end-to-end tests of `ledger hook`; the other checker tests judge a push in process)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from checks.check_helpers import add, commit, hook_push, refused_then_by_hand, set_rule
from conftest import cli, git, run_ledger


def test_two_branches_adding_records_merge_cleanly_and_push(pushed: Path):
    git(pushed, "checkout", "-q", "-b", "a")
    add(pushed, "issue", {"number": 10, "title": "from a"})
    add(pushed, "note", {"body": "a"})
    commit(pushed, "a")
    git(pushed, "checkout", "-q", "main")
    git(pushed, "checkout", "-q", "-b", "b")
    add(pushed, "issue", {"number": 11, "title": "from b"})
    commit(pushed, "b")
    git(pushed, "checkout", "-q", "main")
    git(pushed, "merge", "-q", "--no-edit", "a")
    merged = git(pushed, "merge", "-q", "--no-edit", "b", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr  # one file per record: no conflict
    result = hook_push(pushed)
    assert result.returncode == 0, result.stderr


def test_same_issue_number_on_two_branches_is_refused_after_the_merge(pushed: Path):
    git(pushed, "checkout", "-q", "-b", "a")
    add(pushed, "issue", {"number": 1008, "title": "dtype"})
    commit(pushed, "a")
    git(pushed, "checkout", "-q", "main")
    git(pushed, "checkout", "-q", "-b", "b")
    add(pushed, "issue", {"number": 1008, "title": "dtype, appended again"})
    commit(pushed, "b")
    # Branch a lands first, on the remote.
    assert hook_push(pushed, "a:main").returncode == 0
    git(pushed, "fetch", "-q", "origin")
    git(pushed, "merge", "-q", "--no-edit", "origin/main")
    assert git(pushed, "status", "--porcelain").stdout == ""  # git merged it cleanly
    refused = hook_push(pushed, "HEAD:main")
    assert refused.returncode == 1
    assert "error[unique-key]" in refused.stderr and "number 1008" in refused.stderr


def test_force_push_that_drops_records_is_refused(pushed: Path):
    add(pushed, "hypothesis", {"statement": "the decode is on the host", "status": "refuted"})
    commit(pushed, "refuted")
    assert hook_push(pushed).returncode == 0
    git(pushed, "reset", "-q", "--hard", "HEAD~1")
    add(pushed, "note", {"body": "rewritten history"})
    commit(pushed, "rewrite")
    refused = hook_push(pushed, "--force", "HEAD:main")
    assert refused.returncode == 1
    assert "error[append-only]" in refused.stderr and "deleted" in refused.stderr


def test_new_branch_is_checked_against_what_the_remote_has(pushed: Path):
    git(pushed, "checkout", "-q", "-b", "feature")
    add(pushed, "issue", {"number": 3, "title": "ok"})
    commit(pushed)
    result = hook_push(pushed, "feature")
    assert result.returncode == 0, result.stderr
    assert "1 record(s)" in result.stderr  # only what the branch adds, not the whole ledger


def test_hook_refuses_a_foreign_hook_then_chains_to_it(pushed: Path):
    hook = pushed / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\necho foreign-hook-ran >&2\nexit 0\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    refused = run_ledger(pushed, "hook", "install")
    assert refused.returncode == 2 and "--chain" in refused.stderr
    assert "foreign-hook-ran" in hook.read_text()
    chained = run_ledger(pushed, "hook", "install", "--chain")
    assert chained.returncode == 0, chained.stderr
    add(pushed, "note", {"body": "x"})
    commit(pushed)
    result = hook_push(pushed)
    assert result.returncode == 0
    assert "foreign-hook-ran" in result.stderr and "ledger check (pre-push)" in result.stderr
    assert run_ledger(pushed, "hook", "uninstall").returncode == 0
    assert "foreign-hook-ran" in hook.read_text()


def test_hook_respects_core_hooks_path(pushed: Path):
    git(pushed, "config", "core.hooksPath", ".githooks")
    result = run_ledger(pushed, "hook", "install")
    assert result.returncode == 0, result.stderr
    assert (pushed / ".githooks" / "pre-push").is_file()
    refused_then_by_hand(pushed, "note", {"body": "oops WANDB_API_KEY=" + "ab" * 20}, "secrets")
    commit(pushed)
    refused = hook_push(pushed)
    assert refused.returncode == 1 and "error[secrets]" in refused.stderr


def test_check_all_base_and_formats(pushed: Path):
    add(pushed, "note", {"body": "fine"})
    commit(pushed)
    clean = cli(pushed, "check", "--all")
    assert clean.returncode == 0, clean.stdout
    refused_then_by_hand(pushed, "note", {"body": "hf_" + "a" * 34}, "secrets")
    commit(pushed)
    text = cli(pushed, "check")
    assert text.returncode == 1 and "error[secrets]" in text.stdout and "fix:" in text.stdout
    data = json.loads(cli(pushed, "check", "--format", "json").stdout)
    assert data["exit_code"] == 1 and data["violations"][0]["rule"] == "secrets"
    gh = cli(pushed, "check", "--base", "origin/main", "--format", "github")
    assert gh.returncode == 1
    assert gh.stdout.startswith("::error file=ledger/records/note/") and "title=secrets" in gh.stdout
    assert data["records_checked"] == 2
    base = json.loads(cli(pushed, "check", "--base", "HEAD~1", "--format", "json").stdout)
    assert base["records_checked"] == 1


def test_bad_usage_and_bad_config_exit_2(pushed: Path):
    assert cli(pushed, "check", "--base", "no-such-ref").returncode == 2
    bad = cli(pushed, "check", "--pre-push", input="not four fields\n")
    assert bad.returncode == 2 and "line 1" in bad.stderr
    set_rule(pushed, "cell-widht", max_chars=100)
    typo = cli(pushed, "check")
    assert typo.returncode == 2 and "cell-widht" in typo.stderr


def test_rules_lists_ids_docs_and_configured_params(pushed: Path):
    set_rule(pushed, "cell-width", max_chars=200, severity="warning")
    rows = {r["id"]: r for r in json.loads(cli(pushed, "rules", "--format", "json").stdout)}
    assert rows["cell-width"]["params"] == {"max_chars": 200} and rows["cell-width"]["severity"] == "warning"
    assert rows["owed-high-water"]["doc"] and rows["owed-high-water"]["fix"]
    text = cli(pushed, "rules")
    assert text.returncode == 0 and "figures-spread" in text.stdout
