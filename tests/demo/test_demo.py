"""`ledger demo`: the example campaign, its derived stopping point, and the document's digits."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import cli, git

# From ../shared/context/fastvideo-ltx2-mfu-campaign.txt, "Current stopping point".
DOCUMENT = {
    "4x GB200": ("2/8", 0.707865914, "11.301575", "40.810314"),
    "8x GB200": ("3/24", 0.993335918, "24.161011", "43.623053"),
}


@pytest.fixture(scope="module")
def demo(demo_ltx2) -> tuple[Path, dict]:
    """The run's one `ledger demo` (tests/conftest.py: demo_ltx2): it exited 0, so its own
    `check --all` found no error."""
    target, summary, _ = demo_ltx2
    assert summary["check"]["exit_code"] == 0 and summary["check"]["errors"] == 0, summary["check"]
    return target, summary


def test_demo_is_a_committed_git_repository(demo) -> None:
    target, summary = demo
    # The site was built into it, and the build rewrote no committed file.
    assert git(target, "status", "--porcelain").stdout == ""
    assert summary["site"]["index"] == str(target / "site" / "index.html")
    assert (target / "site" / "index.html").is_file()
    assert int(git(target, "rev-list", "--count", "HEAD").stdout) == 2
    assert summary["counts"]["decision"] == 14 and summary["counts"]["sandwich"] == 3
    assert summary["contract"] == "ltx2-t2v-fp32master-81x480x832"


def test_stopping_point_recomputes_the_documents_figures(demo) -> None:
    _, summary = demo
    rows = summary["stopping_point"]
    assert [(r["topology"], r["status"]) for r in rows] == [
        ("1x GB200", "no valid step: OOM"),
        ("4x GB200", "final"),
        ("8x GB200", "fastest accepted"),
        ("8x GB200", "baseline-ineligible: degraded allocation"),
    ]
    for row in rows[1:3]:
        batch, median, throughput, mfu = DOCUMENT[row["topology"]]
        assert row["batch"] == batch and row["median_s"] == median
        assert f"{row['throughput']:.6f}" == throughput
        assert f"{row['mfu_percent']:.6f}" == mfu
    assert f"{rows[3]['mfu_percent']:.6f}" == "30.478319"


def test_demo_sandwich_verdicts_match_the_document(demo) -> None:
    target, _ = demo
    sandwiches = json.loads(cli(target, "list", "--kind", "sandwich", "--format", "json").stdout)
    verdicts = {}
    for row in sandwiches:
        rec = json.loads(cli(target, "show", row["id"], "--format", "json").stdout)
        verdicts[rec["title"].split(" ")[0] + " " + rec["allocation"]["topology"]] = (
            rec["verdict"],
            round(rec["delta_percent"], 3),
            round(rec["drift_percent"], 3) if "drift_percent" in rec else None,
        )
    assert verdicts["Re-gate 4x GB200"] == ("neutral", 0.184, 0.044)
    # The env-only stacks were published without a second control run: pairs, no drift.
    assert verdicts["Env-only 4x GB200"] == ("faster", -1.083, None)
    assert verdicts["Env-only 8x GB200"] == ("neutral", 0.016, None)


def test_a_sandwich_without_b_is_a_pair_everywhere(demo) -> None:
    """A pair (no B run) shows its drift as not measured, never 0%: the sandwiches page, its
    record page and `ledger show`, which leads with the verdict and the delta."""
    target, _ = demo
    rows = json.loads(cli(target, "list", "--kind", "sandwich", "--format", "json").stdout)
    pairs = [
        r["id"] for r in rows if "b_value" not in json.loads(cli(target, "show", r["id"], "--format", "json").stdout)
    ]
    assert len(pairs) == 2, rows
    listing = (target / ".ledger-build" / "docs" / "sandwiches" / "index.md").read_text(encoding="utf-8")
    assert listing.count("not measured: a pair, no B") == 2 and "0% (floor" not in listing, listing
    for rid in pairs:
        page = (target / ".ledger-build" / "docs" / "records" / "sandwich" / f"{rid}.md").read_text(encoding="utf-8")
        lead = page.split("## Fields")[0]
        assert "a pair: B was not run, so the drift is not measured" in lead and "not run: a pair" in lead, lead
        assert "drift 0" not in lead, lead
        # Before the fields (which start at `file`): title, verdict and delta, what against, arms.
        head = cli(target, "show", rid, env={"COLUMNS": "80"}).stdout.split("\nfile ")[0].splitlines()
        assert re.fullmatch(r"(faster -1\.0830|neutral \+0\.01597)%", head[2]), head
        assert "drift is not measured" in " ".join(head[3:]) and "B not run (a pair)" in head[-1], head
    regate = next(r["id"] for r in rows if r["id"] not in pairs)
    head = cli(target, "show", regate, env={"COLUMNS": "200"}).stdout.split("\nfile ")[0].splitlines()
    # Neutral within the floor, and what it saw: slower than both controls.
    assert head[2] == "neutral +0.1839%, slower than both controls, within the floor", head
    assert "drift 0.044%" in head[3], head


def test_demo_refuses_a_non_empty_folder(demo, tmp_path) -> None:
    target, _ = demo
    again = cli(tmp_path, "demo", str(target), "--no-site")
    assert again.returncode == 2 and "not empty" in again.stderr, again.stderr
    assert git(target, "status", "--porcelain").stdout == ""


def test_demo_historical_bf16_runs_are_non_comparable(demo) -> None:
    target, _ = demo
    rows = json.loads(cli(target, "list", "--kind", "measurement", "--format", "json").stdout)
    bf16 = [r for r in rows if "BF16" in r["summary"]]
    assert bf16, rows
    rec = json.loads(cli(target, "show", bf16[0]["id"], "--format", "json").stdout)
    assert rec["comparable"] is False and "dit_precision=bf16" in rec["non_comparable_reason"]
    assert rec["links"]["tracker_runs"] == ["5h2cy7m9", "zj6wqtpg", "nzh2k20t", "gbjiw7og"]


def test_demo_sandwich_deltas_carry_only_their_recorded_digits(demo) -> None:
    """The env-only sandwiches were transcribed with one baseline (A = B, drift 0): the delta
    is no finer than the values' last recorded digit, -1.0830%, never -1.0829733%. (The demo
    builds its site strictly: no MkDocs warning, no broken link.)"""
    target, _ = demo
    page = (target / "site" / "sandwiches" / "index.html").read_text(encoding="utf-8")
    # The re-gate's arms (0.720811 / 0.721978 / 0.720494 s) have no spread: its delta is at the
    # place they were written to, +0.1839% (the campaign wrote +0.184%), not cut to the drift's +0.18%.
    assert "-1.0830%" in page and "+0.01597%" in page and "+0.1839%" in page, page
    assert "1.0829733" not in page and "0.015966317" not in page
    for sandwich in (target / "site" / "records" / "sandwich").glob("*.html"):
        lead = sandwich.read_text(encoding="utf-8").split('<h2 id="fields"')[0]  # the raw fields keep every digit
        assert "1.0829733" not in lead and "0.015966317" not in lead, sandwich.name
        assert "%" in lead


def test_demo_text_output_says_where_the_site_is(demo) -> None:
    """What `ledger demo` prints for people, rendered from the run's own summary."""
    import io

    from rich.console import Console

    from ledger.cli.demo import render
    from ledger.demo.summary import DemoSummary, StoppingRow

    target, data = demo
    summary = DemoSummary(**{**data, "stopping_point": [StoppingRow(**r) for r in data["stopping_point"]]})
    out = io.StringIO()
    render(summary, Console(file=out, width=200, soft_wrap=False, highlight=False))
    text = out.getvalue()
    assert f"Example campaign written to {target}" in text
    assert "ltx2-t2v-fp32master-81x480x832" in text and "fastest accepted" in text
    assert "ledger check --all: exit 0, 0 error(s)" in text
    assert f"site: open {target / 'site' / 'index.html'}" in text


# The demo fixtures are asked for by name (tests/conftest.py marks what asks for them directly).
@pytest.mark.slow
@pytest.mark.parametrize("campaign", ["demo_ltx2", "demo_decode"])
def test_each_demo_checks_clean(campaign, request) -> None:
    """A newcomer's first command warns about nothing in its own data: the one rule the
    transcribed SHAs would trip is off in the demo's ledger.yaml, with the reason above it."""
    target, summary, _ = request.getfixturevalue(campaign)
    assert summary["check"]["warnings"] == 0 and summary["check"]["messages"] == [], summary["check"]
    config = (target / "ledger.yaml").read_text(encoding="utf-8")
    assert "does not clone" in config.split("sha-abbreviated:", 1)[0].rsplit("owed-high-water", 1)[1]


def test_demo_home_leads_with_what_the_reader_needs(demo) -> None:
    """Home: the stopping point (its peak named with its rate), what is owed, what is pending
    and the newest decisions, then the detail; the topologies' identical re-gate rows are one
    row."""

    target, _ = demo
    home = (target / ".ledger-build" / "docs" / "index.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", home, flags=re.M)
    assert headings[:5] == ["Stopping point", "Owed", "Pending decisions", "Newest decisions", "Re-gates"], headings
    assert "house-2450, 2,450 TFLOP/s per GPU" in home
    regates = home.split("## Re-gates", 1)[1].split("\n## ", 1)[0]
    # The 4x re-gate of 52f1114dd covers the 4x row only (issue 28 item 3): the 1x and 8x rows
    # hold where they were measured, one merged row.
    assert regates.count("| unknown |") == 2 and "| 1x GB200, 8x GB200 | unknown |" in regates, regates
    assert "so whether it moved since is unknown" in regates
    stopping = home.split("## Stopping point", 1)[1].split("\n## ", 1)[0]
    assert stopping.count("re-gated at 52f1114dd") == 1, stopping
    owed = home.split("## Owed", 1)[1].split("\n## ", 1)[0]
    assert "(owner:" not in owed and "fastvideo-perf" in owed


def test_the_spec_page_has_only_the_specs_own_headings(demo) -> None:
    """No invented "Other front matter" or "Page" headings; the front matter's `contract:`
    links to that contract's stopping point."""
    target, _ = demo
    spec = (target / ".ledger-build" / "docs" / "specs" / "ltx2-mfu.md").read_text(encoding="utf-8")
    assert not re.findall(r"^## (Other front matter|Page)$", spec, flags=re.M), spec[:800]
    assert re.search(r"\*\*contract:\*\* \[ltx2-t2v-fp32master-81x480x832\]\(\.\./contracts/\w+\.md\)", spec), spec[
        :800
    ]
    # The spec's own heading, lifted out as Markdown with its id (8fd6ca8: MkDocs' table of
    # contents lists it, and links to page#1-resume-here keep working).
    assert "## 1\\. Resume here {#1-resume-here}" in spec, spec[:800]
