"""Issue 17, the smaller items: text YAML reads as a comment is warned about; unknown provenance
and approximate dates are documented fields; `--allocation` never records this machine's host;
a sandwich needs three distinct arms; `compare` judges summary-only records by their recorded range."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli


def add(repo: Path, kind: str, data, *args: str) -> str:
    result = cli(repo, "add", kind, "-", *args, input=json.dumps(data))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[0]


def show(repo: Path, rid: str) -> dict:
    data = json.loads(cli(repo, "show", rid, "--format", "json").stdout)
    return data.get("record", data)


def test_yaml_that_reads_text_as_a_comment_is_warned_about(repo: Path):
    (repo / "n.yaml").write_text(
        "title: the dtype row, fixes #1008\nbody: >-\n  a folded #1008 is text\ntags: [dtype]  # a real comment\n",
        encoding="utf-8",
    )
    result = cli(repo, "add", "note", "n.yaml")
    assert result.returncode == 0, result.stderr
    assert "YAML reads '#1008' as a comment, so the value is 'the dtype row, fixes'" in result.stderr
    assert result.stderr.count("warning:") == 1
    quoted = repo / "q.yaml"
    quoted.write_text('title: "the dtype row, fixes #1008"\nbody: kept\n', encoding="utf-8")
    result = cli(repo, "add", "note", "q.yaml")
    assert result.returncode == 0 and "warning" not in result.stderr
    assert show(repo, result.stdout.split()[0])["title"] == "the dtype row, fixes #1008"


def test_unknown_provenance_and_approximate_dates_are_documented(repo: Path):
    rid = add(
        repo,
        "note",
        {
            "body": "decode wall 2681 s at 448x256/25f, from the PR body",
            "source_unknown": "re-entered from PR 1018's body, which names no commit for this run",
            "observed_at": "2026-08-01T00:00:00Z",
            "observed_at_precision": "month",
        },
    )
    record = show(repo, rid)
    assert "source" not in record and record["observed_at_precision"] == "month"
    assert cli(repo, "check", "--all").returncode == 0
    both = cli(
        repo, "add", "note", "-", input=json.dumps({"body": "x", "source_unknown": "y", "source": {"sha": "a" * 40}})
    )
    assert both.returncode == 2 and "keep one of them" in both.stderr
    alone = cli(repo, "add", "note", "-", input=json.dumps({"body": "x", "observed_at_precision": "day"}))
    assert alone.returncode == 2 and "observed_at_precision qualifies observed_at" in alone.stderr
    schema = cli(repo, "schema", "show", "note")
    assert "source_unknown" in schema.stdout


def test_a_named_allocation_records_no_host_of_this_machine(repo: Path):
    rid = add(repo, "note", {"body": "measured on dgx.casa"}, "--allocation", "dgx-casa-rung1")
    alloc = show(repo, rid)["allocation"]
    assert alloc["id"] == "dgx-casa-rung1" and not alloc.get("hosts")
    local = show(repo, add(repo, "note", {"body": "measured here"}))["allocation"]
    assert local.get("hosts")


def test_a_sandwich_needs_three_distinct_arms(repo: Path):
    a = add(repo, "measurement", {"samples": [1.0, 1.01, 0.99]})
    x = add(repo, "measurement", {"samples": [0.9, 0.91, 0.89]})
    result = cli(repo, "sandwich", "--records", a, x, a)
    assert result.returncode == 2
    assert "three distinct arms" in result.stderr and "0 by construction" in result.stderr
    assert not list((repo / "ledger" / "records").glob("sandwich/*/*.json"))


def test_compare_judges_summary_records_by_their_recorded_range(repo: Path):
    a = add(repo, "measurement", {"n": 14, "min": 0.2129, "median": 0.2232, "max": 0.2597}, "--allocation", "box")
    b = add(repo, "measurement", {"n": 14, "min": 0.2024, "median": 0.2234, "max": 0.2534}, "--allocation", "box")
    result = cli(repo, "compare", a, b, "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["a"]["spread"].startswith("recorded range 0.2129 to 0.2597")
    assert data["verdict"] == "no significant difference"
    assert data["cliffs_magnitude"] is None
    assert not any("spread unknown" in w or "no spread" in w for w in data["warnings"])
    text = cli(repo, "compare", a, b).stdout
    assert "large" not in text and "spread unknown" not in text
    c = add(repo, "measurement", {"n": 14, "min": 0.5464, "median": 0.5555, "max": 0.5674}, "--allocation", "box")
    assert json.loads(cli(repo, "compare", c, a, "--format", "json").stdout)["verdict"] == "B better"
