"""What a reader is counted: a superseded hypothesis is not open work, a corrected issue is
one issue (not one row per correction), an owed item tied only to closed issues is owed no
more, on the Hypotheses page and in `ledger status` alike."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli, run_ledger

from ledger.analysis.keyed import issue_closed, live_records, settled
from ledger.site.context import SiteData
from ledger.site.hypotheses import owed, render
from ledger.site.templating import environment
from ledger.store.ledger import Ledger

SPEC = """# Decode

## Owed

- Per-site dispatch test #1044
- Name the phases of the render #1010
- A fixed-size wall on an idle host
"""


def add(repo: Path, kind: str, body: dict) -> str:
    result = cli(repo, "add", kind, "-", input=json.dumps(body))
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def campaign(repo: Path) -> dict[str, str]:
    ids = {"h1": add(repo, "hypothesis", {"statement": "the f64 accumulators are the cost"})}
    ids["h2"] = add(
        repo,
        "hypothesis",
        {"statement": "the scalar FMA chain is the cost", "status": "open", "supersedes": [ids["h1"]]},
    )
    ids["h3"] = add(
        repo,
        "hypothesis",
        {"statement": "the scalar FMA chain is the cost", "status": "supported", "supersedes": [ids["h2"]]},
    )
    ids["open"] = add(repo, "hypothesis", {"statement": "PixelNorm is the serial fraction"})
    ids["i1"] = add(repo, "issue", {"number": 1044, "title": "per-site dispatch test"})
    ids["i2"] = add(
        repo,
        "issue",
        {
            "number": 1044,
            "title": "per-site dispatch test",
            "owner": "ana",
            "status": "owned",
            "supersedes": [ids["i1"]],
        },
    )
    ids["i3"] = add(
        repo,
        "issue",
        {
            "number": 1044,
            "title": "per-site dispatch test",
            "status": "closed",
            "closed_by": "#1050",
            "supersedes": [ids["i2"]],
        },
    )
    ids["i4"] = add(repo, "issue", {"number": 1010, "title": "name the phases"})
    specs = repo / "ledger" / "specs"
    specs.mkdir(parents=True, exist_ok=True)
    (specs / "decode.md").write_text(SPEC, encoding="utf-8")
    return ids


def test_status_counts_only_live_open_work(repo: Path) -> None:
    ids = campaign(repo)
    result = run_ledger(repo, "status", "--format", "json")
    assert result.returncode == 0, result.stderr
    owed_rows = next(s for s in json.loads(result.stdout)["sections"] if s["key"] == "owed")["rows"]
    hypotheses = [r["id"] for r in owed_rows if r["item"].startswith("open hypothesis")]
    assert hypotheses == [ids["open"]], owed_rows
    items = [r["item"] for r in owed_rows if not r["item"].startswith("open hypothesis")]
    # #1044's live record is closed: its item is settled; #1010 is open; the untied item stays.
    assert items == ["Name the phases of the render #1010", "A fixed-size wall on an idle host"], items


def test_the_hypotheses_page_lists_each_issue_once_and_no_superseded_hypothesis(repo: Path) -> None:
    ids = campaign(repo)
    ledger = Ledger.open(repo)
    records = ledger.records()
    assert sorted(i.number for i in live_records(records, "issue")) == [1010, 1044]
    assert {h.id for h in live_records(records, "hypothesis")} == {ids["h3"], ids["open"]}
    closed = issue_closed(records)
    assert settled([1044], closed) and not settled([1010, 1044], closed) and not settled([], closed)

    from ledger.site.specs import read_specs

    data = SiteData.build("t", records, read_specs(ledger.specs_dir, ledger.root))
    (page,) = list(render(data, environment()))
    assert page.text.count("per-site dispatch test") == 1, page.text
    assert "the f64 accumulators are the cost" not in page.text
    assert page.text.count("the scalar FMA chain is the cost") == 1
    assert [o["issues"] for o in owed(data)] == ["#1010", ""]


def test_check_counts_no_unowned_item_tied_only_to_closed_issues(repo: Path) -> None:
    """`ledger check --all` agrees with status: the #1044 item is settled, two stay unowned."""
    campaign(repo)
    config = repo / "ledger.yaml"
    text = config.read_text(encoding="utf-8")
    assert "owed-high-water: {high_water: 0}" in text
    config.write_text(text.replace("owed-high-water: {high_water: 0}", "owed-high-water: {high_water: 2}"))
    result = cli(repo, "check", "--all", "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    assert not [v for v in json.loads(result.stdout)["violations"] if v["rule"] == "owed-high-water"]
    config.write_text(text.replace("owed-high-water: {high_water: 0}", "owed-high-water: {high_water: 1}"))
    result = cli(repo, "check", "--all", "--format", "json")
    found = [v for v in json.loads(result.stdout)["violations"] if v["rule"] == "owed-high-water"]
    assert result.returncode == 1 and found and "2 unowned" in found[0]["message"], found
