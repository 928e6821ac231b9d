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
