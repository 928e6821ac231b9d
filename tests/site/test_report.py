"""The chronological report reads as a report: each month's decisions, sandwiches and where the
stopping point stood at the month's end, with every record one click away."""

from __future__ import annotations

from pathlib import Path

from tests.site.conftest import Campaign

DAY = 24 * 60


def three_months(root: Path) -> tuple[Campaign, dict[str, str]]:
    c = Campaign(root)
    ids: dict[str, str] = {}
    ids["contract"] = c.add("contract", 0, {"name": "dit-train", "model": "dit"})
    ids["m1"] = c.add(
        "measurement", 10, {"contract": ids["contract"], "samples": [1.0, 1.01, 0.99, 1.0, 1.0], "health": "healthy"}
    )
    ids["d1"] = c.add("decision", 20, {"family": "batch 4", "verdict": "accepted", "evidence": [ids["m1"]]})
    # August: a faster run, taken; a rejected family beside it.
    ids["m2"] = c.add(
        "measurement",
        20 * DAY,
        {"contract": ids["contract"], "samples": [0.9, 0.91, 0.89, 0.9, 0.9], "health": "healthy"},
    )
    ids["d2"] = c.add("decision", 20 * DAY + 5, {"family": "compile", "verdict": "accepted", "evidence": [ids["m2"]]})
    ids["d3"] = c.add("decision", 20 * DAY + 6, {"family": "foreach AdamW", "verdict": "rejected"})
    # September: a note only; the stopping point stays where August left it.
    ids["note"] = c.add("note", 50 * DAY, {"body": "profiling next"})
    return c, ids


def test_each_month_says_where_the_stopping_point_stood(tmp_path: Path) -> None:
    from ledger.analysis.chronicle import months

    c, ids = three_months(tmp_path / "campaign")
    records = list(c.ledger.records())
    contract = next(r for r in records if r.kind == "contract")
    got = {m.month: m for m in months(records, contract)}
    assert list(got) == ["2026-09", "2026-08", "2026-07"]
    (july,) = got["2026-07"].standing
    (august,) = got["2026-08"].standing
    (september,) = got["2026-09"].standing
    assert (july.measurement, july.change) == (ids["m1"], "new")
    assert (august.measurement, august.change) == (ids["m2"], "moved")
    assert (september.measurement, september.change) == (ids["m2"], "")
    assert [d.id for d in got["2026-08"].decisions] == [ids["d3"], ids["d2"]]
    assert dict(got["2026-08"].kinds) == {"measurement": 1, "decision": 2}


def test_report_index_links_every_month_and_what_moved(tmp_path: Path) -> None:
    from ledger.site import generate

    c, ids = three_months(tmp_path / "campaign")
    _, _, docs = generate(c.ledger)
    index = (docs / "report/index.md").read_text(encoding="utf-8")
    sections = {part.split("\n", 1)[0]: part for part in index.split("\n## ")[1:]}
    assert list(sections) == ["2026-09", "2026-08", "2026-07"]
    august = sections["2026-08"]
    assert "[2026-08](2026-08.md)" in august  # every record of the month, one click away
    assert f"{ids['m2']}.md" in august and "| moved |" in august
    assert "rejected" in august and "foreach AdamW" in august
    assert "| as before |" in sections["2026-09"]
    assert "1 note" in sections["2026-09"]


def test_counts_agree_with_their_nouns() -> None:
    from ledger.site.templating import plural

    assert [plural(w, n) for w, n in [("sandwich", 3), ("sandwich", 1), ("hypothesis", 2), ("flop-audit", 2)]] == [
        "3 sandwiches",
        "1 sandwich",
        "2 hypotheses",
        "2 flop audits",
    ]
    assert [plural(w, 2) for w in ("summary", "day", "decision")] == ["2 summaries", "2 days", "2 decisions"]
