"""Issue 17: keyed records (issue numbers, contract names) can be corrected by a record that
supersedes them and repeats the key; a repeat that corrects nothing, or a second correction of
the same record, is refused with a fix in the kind's own words; `ledger list` shows the keys."""

from __future__ import annotations

import json
from pathlib import Path

from checks.check_helpers import add, commit, push, refused_then_by_hand
from conftest import cli

CONTRACT = {"name": "ltx25-decode-448x256x25f", "model": "LTX-2.5 conv video VAE decode"}


def test_an_issue_is_owned_then_closed_by_corrections(pushed: Path):
    first = add(pushed, "issue", {"number": 1044, "title": "per-site dispatch test"})
    commit(pushed, "file #1044")
    assert push(pushed).returncode == 0
    owned = add(
        pushed,
        "issue",
        {
            "number": 1044,
            "title": "per-site dispatch test",
            "owner": "threads-row",
            "status": "owned",
            "supersedes": [first],
        },
    )
    commit(pushed, "own #1044")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
    add(
        pushed,
        "issue",
        {
            "number": 1044,
            "title": "per-site dispatch test",
            "owner": "threads-row",
            "status": "closed",
            "closed_by": "PR #1050",
            "supersedes": [owned],
        },
    )
    commit(pushed, "close #1044")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
    assert cli(pushed, "check", "--all").returncode == 0
    rows = json.loads(cli(pushed, "list", "--kind", "issue", "--format", "json").stdout)
    assert [r["key"] for r in rows] == ["#1044"] * 3
    assert [r["superseded_by"] is None for r in rows] == [False, False, True]
    text = cli(pushed, "list", "--kind", "issue").stdout
    assert "#1044" in text and "superseded by" in text


def test_an_owned_issue_needs_an_owner(repo: Path):
    result = cli(repo, "add", "issue", "-", input=json.dumps({"number": 1, "title": "t", "status": "owned"}))
    assert result.returncode == 2
    assert "status owned needs an owner" in result.stderr


def test_a_repeated_issue_number_that_corrects_nothing_is_refused(pushed: Path):
    add(pushed, "issue", {"number": 1009, "title": "threads"})
    commit(pushed, "file #1009")
    assert push(pushed).returncode == 0
    # `ledger add` refuses it (issue 15); a file written by hand reaches the push.
    refused_then_by_hand(pushed, "issue", {"number": 1009, "title": "a second row for the same number"}, "unique-key")
    commit(pushed, "duplicate")
    refused = push(pushed)
    assert refused.returncode == 1
    assert "issue number 1009 is already used by" in refused.stderr
    assert "to correct issue #1009" in refused.stderr and "free number" in refused.stderr


def test_a_contract_is_corrected_and_its_fix_speaks_of_names(pushed: Path):
    first = add(pushed, "contract", CONTRACT)
    commit(pushed, "contract")
    assert push(pushed).returncode == 0
    refused_then_by_hand(
        pushed, "contract", {**CONTRACT, "name": CONTRACT["name"], "compute_precision": "f32"}, "unique-key"
    )
    commit(pushed, "repeat without supersedes")
    refused = push(pushed)
    assert refused.returncode == 1
    assert "contract name" in refused.stderr and "to correct contract ltx25-decode-448x256x25f" in refused.stderr
    assert "Renumber" not in refused.stderr and "free number" not in refused.stderr
    from conftest import git

    git(pushed, "reset", "-q", "--hard", "origin/main")
    add(pushed, "contract", {**CONTRACT, "compute_precision": "f32", "supersedes": [first]})
    commit(pushed, "corrected contract")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
    rows = json.loads(cli(pushed, "list", "--kind", "contract", "--format", "json").stdout)
    assert [r["key"] for r in rows] == [CONTRACT["name"]] * 2


def test_two_corrections_of_one_record_fork_the_key(pushed: Path):
    first = add(pushed, "issue", {"number": 7, "title": "t"})
    commit(pushed, "file #7")
    assert push(pushed).returncode == 0
    add(pushed, "issue", {"number": 7, "title": "t", "owner": "a", "supersedes": [first]})
    commit(pushed, "own")
    assert push(pushed).returncode == 0
    refused_then_by_hand(
        pushed, "issue", {"number": 7, "title": "t", "status": "closed", "supersedes": [first]}, "unique-key"
    )
    commit(pushed, "a second branch closed the original")
    refused = push(pushed)
    assert refused.returncode == 1
    assert "forks the key" in refused.stderr
    all_check = cli(pushed, "check", "--all")
    assert all_check.returncode == 1 and "forks the key" in all_check.stdout + all_check.stderr
