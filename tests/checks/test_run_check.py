"""The library entry `run_check` on real repositories: the API other commands call."""

from __future__ import annotations

import json
from pathlib import Path

from checks.check_helpers import add, commit, page
from conftest import git

from ledger.checks import run_check
from ledger.checks.keyindex import key_index
from ledger.git import Git
from ledger.store import Ledger


def test_clean_ledger_exits_0_and_counts(repo: Path):
    add(repo, "note", {"body": "hello"})
    result = run_check(Ledger.open(repo), mode="all")
    assert result.exit_code == 0 and result.records_checked == 1 and not result.violations
    assert "figures-spread" in result.rules


def test_figure_next_to_a_record_id_uses_the_records_spread(repo: Path):
    rid = add(repo, "measurement", {"samples": [0.20, 0.22, 0.25], "metric": "decode", "unit": "s"})
    page(repo, "r.md", f"The decode takes 0.2234 s ([{rid}](../records/{rid}.md)).\n\nIt takes ~0.2 s ({rid}).\n")
    result = run_check(Ledger.open(repo), mode="all")
    flagged = [v for v in result.violations if v.rule == "figures-spread"]
    assert len(flagged) == 1 and flagged[0].line == 1 and "0.2234 s" in flagged[0].message
    assert result.exit_code == 1


def test_owed_below_the_mark_asks_to_lower_it(repo: Path):
    config = repo / "ledger.yaml"
    config.write_text(
        config.read_text().replace("owed-high-water: {high_water: 0}", "owed-high-water: {high_water: 3}")
    )
    page(repo, "o.md", "## Owed\n\n| item | owner |\n|---|---|\n| a | — |\n| b | bob |\n")
    result = run_check(Ledger.open(repo), mode="all")
    [v] = [v for v in result.violations if v.rule == "owed-high-water"]
    assert "below" in v.message and "to 1" in v.fix


def test_key_index_is_cached_and_updated_incrementally(repo: Path):
    add(repo, "issue", {"number": 1, "title": "a"})
    commit(repo, "one")
    g = Git(repo)
    first = key_index(g, "HEAD", "ledger/records/issue", "issue", ("number",))
    assert list(first) == ["number=1"]
    cache = g.common_dir / "ledger" / "keys-issue.json"
    tree_before = json.loads(cache.read_text())["tree"]
    add(repo, "issue", {"number": 2, "title": "b"})
    commit(repo, "two")
    second = key_index(g, "HEAD", "ledger/records/issue", "issue", ("number",))
    assert sorted(second) == ["number=1", "number=2"]
    assert json.loads(cache.read_text())["tree"] != tree_before
    # deleting a record drops its key from the index
    path = next((repo / "ledger" / "records" / "issue").rglob("*.json"))
    number = json.loads(path.read_text())["number"]
    git(repo, "rm", "-q", str(path))
    commit(repo, "drop")
    third = key_index(g, "HEAD", "ledger/records/issue", "issue", ("number",))
    assert f"number={number}" not in third and len(third) == 1
