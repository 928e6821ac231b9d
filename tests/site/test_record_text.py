"""What a generated page shows of a record passes the rules a user's page must pass: a
decision's own words (its qualifier, mechanism, where to continue) are quoted, not claimed,
and twenty evidence ids are counted past the first six, not laid in one 258-character cell
(the H200 campaign's h30 decisions failed the project's own `site build --strict` so)."""

from __future__ import annotations

from pathlib import Path

from conftest import cli

from tests.site.conftest import Campaign


def test_a_decision_with_twenty_runs_and_figures_in_its_words_builds_strict(tmp_path: Path) -> None:
    c = Campaign(tmp_path / "campaign")
    runs = [c.add("measurement", i, {"samples": [0.1023 + i * 1e-4, 0.1031 + i * 1e-4, 0.1027]}) for i in range(20)]
    decision = c.add(
        "decision",
        30,
        {
            "family": "cross-attention kernel",
            "verdict": "rejected",
            "qualifier": "timing-neutral at batch 12 (+0.22% per sample)",
            "mechanism": "cuDNN's cross-attention forward is 917 us against flash-attn 4's 1,012 us",
            "where_to_continue": "keep flash-attn 4: attention is 19.5% of the step",
            "evidence": runs,
        },
    )
    built = cli(c.root, "site", "build", "--strict")
    assert built.returncode == 0, built.stderr
    docs = c.root / ".ledger-build" / "docs"
    index = (docs / "decisions" / "index.md").read_text(encoding="utf-8")
    assert f"[and 14 more](../records/decision/{decision}.md#related-records)" in index, index
    assert '<span class="ledger-quote">cuDNN' in index and "; timing-neutral at batch 12" in index
    page = (docs / "records" / "decision" / f"{decision}.md").read_text(encoding="utf-8")
    assert "[and 14 more](#related-records)" in page
    assert page.count("| evidence[") + page.count("| evidence\\[") == 20, page  # every one under Related records


def test_a_finding_quotes_its_figure_an_armed_check_is_green_and_closed_work_is_not_counted(tmp_path: Path) -> None:
    """The outsider's decode re-entry: F2's claim ("9.14x/9.67x bare, against a 21-23% spread")
    failed --strict on the Findings page and on the finding's own page; an armed check that
    failed as it must read red "fail" on the report; the Specs index counted owed items whose
    issues were closed."""
    c = Campaign(tmp_path / "campaign")
    claim = "FEATURES.md and USAGE.md carried 9.14x/9.67x bare, against a 21-23% spread"
    finding = c.add(
        "finding",
        1,
        {
            "finding": "F2",
            "review": "fresh review",
            "claim": claim,
            "verdict": "confirmed",
            "verified_how": "cell widths measured, the spread read from the sweep",
            "repair": "~9x at 16-20 workers",
        },
    )
    c.add("decision", 2, {"family": "F2 repair", "verdict": "accepted", "evidence": [finding]})  # its own page
    c.add(
        "gate",
        3,
        {
            "title": "check-doc-checkpoint b5618b305",
            "expect": "fail",
            "outcome": "fail",
            "exit_code": 1,
            "exit_code_only": False,
        },
    )
    c.add("issue", 4, {"number": 1008, "title": "decode accumulates in f64", "status": "closed", "closed_by": "#1036"})
    specs = c.root / "ledger" / "specs"
    specs.mkdir(parents=True, exist_ok=True)
    (specs / "decode.md").write_text(
        "# Decode\n\n## Owed\n\n- narrow the accumulators #1008\n- one wall on an idle host\n"
    )
    built = cli(c.root, "site", "build", "--strict")
    assert built.returncode == 0, built.stderr
    docs = c.root / ".ledger-build" / "docs"
    assert f"{claim}</span>" in (docs / "findings" / "index.md").read_text(encoding="utf-8")  # quoted
    report = "".join(p.read_text(encoding="utf-8") for p in (docs / "report").glob("2*.md"))
    assert '<span class="ledger-verdict ledger-good">armed: failed, as it must</span>' in report, report
    index = (docs / "specs" / "index.md").read_text(encoding="utf-8")
    assert "| 1 |" in index, index  # one item still owed: #1008 is closed
