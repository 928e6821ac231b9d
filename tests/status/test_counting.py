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


def test_a_mutation_nothing_detected_is_owed_until_an_issue_owns_or_closes_it(repo: Path) -> None:
    """Issue 23 item 11: W2/T1-T3 of the decode investigation built, passed the gate (exit 0)
    and were detected by nothing: an honest gap, owed work. Detected, unbuilt and superseded
    mutations are not; one tied to an issue takes its owner and leaves when it closes."""
    campaign(repo)
    gate = add(repo, "gate", {"title": "ctest -j4", "outcome": "pass", "exit_code": 0, "executed": 42, "passed": 42})
    survived = add(repo, "mutation", {"mutation": "W2, Linear3d widened", "gate": gate, "built": True, "exit_code": 0})
    add(
        repo,
        "mutation",
        {"mutation": "W1, conv widened", "gate": gate, "built": True, "exit_code": 1, "detected_by": "width case"},
    )
    add(repo, "mutation", {"mutation": "T1, first attempt", "built": False})
    wrong = add(repo, "mutation", {"mutation": "D9, typo", "built": True, "exit_code": 0})
    add(
        repo,
        "mutation",
        {"mutation": "D9, typo", "built": True, "exit_code": 1, "detected_by": "memcmp", "supersedes": [wrong]},
    )
    add(repo, "issue", {"number": 1061, "title": "T1 gap", "owner": "ben", "status": "owned"})
    add(
        repo, "mutation", {"mutation": "T1, output loop alone", "built": True, "exit_code": 0, "links": {"issue": 1061}}
    )
    # #1010 is open and the spec's owed item names it too: the mutation is still shown, with
    # the issue (a reader must not lose a survivor because an owed item names its issue).
    add(repo, "mutation", {"mutation": "P1, phase stamps off", "built": True, "exit_code": 0, "links": {"issue": 1010}})
    # #1044's live record is closed: a mutation tied to it is settled.
    add(repo, "mutation", {"mutation": "T2, gather alone", "built": True, "exit_code": 0, "links": {"issue": 1044}})

    result = cli(repo, "status", "--format", "json")
    assert result.returncode == 0, result.stderr
    rows = next(s for s in json.loads(result.stdout)["sections"] if s["key"] == "owed")["rows"]
    mutations = [(r["item"], r["owner"], r["issues"], r["where"]) for r in rows if r["item"].startswith("survived")]
    assert mutations == [
        (
            "survived mutation: W2, Linear3d widened (built, exit 0, detected by nothing)",
            "unowned",
            "",
            "gate ctest -j4",
        ),
        ("survived mutation: T1, output loop alone (built, exit 0, detected by nothing)", "ben", "#1061", ""),
        ("survived mutation: P1, phase stamps off (built, exit 0, detected by nothing)", "unowned", "#1010", ""),
    ], mutations
    assert [r["id"] for r in rows if r["item"].startswith("survived")][0] == survived

    ledger = Ledger.open(repo)
    from ledger.site.specs import read_specs

    data = SiteData.build("t", ledger.records(), read_specs(ledger.specs_dir, ledger.root))
    (page,) = list(render(data, environment()))
    assert "survived mutation: W2, Linear3d widened" in page.text and "survived mutation: T1, output" in page.text
    assert "D9, typo" not in page.text and "T2, gather" not in page.text and "P1, phase stamps off" in page.text
    assert "[mutation record](" in page.text


def test_ledger_list_live_shows_each_issue_once_with_its_state(repo: Path) -> None:
    campaign(repo)
    every = json.loads(cli(repo, "list", "--kind", "issue", "--format", "json").stdout)
    assert len(every) == 4 and sum(1 for r in every if r["superseded_by"]) == 2
    live = json.loads(cli(repo, "list", "--kind", "issue", "--live", "--format", "json").stdout)
    assert [(r["key"], r["value"]) for r in live] == [("#1044", "closed"), ("#1010", "open")], live
