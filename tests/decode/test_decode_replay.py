"""Issue 23: the LTX-2.5 decode-speed investigation (tests/../shared/context/
ltx25-decode-speed-investigation.txt, PRs #1018/#1038/#1041/#1044) re-entered as that project
keeps it: public tables in docs/ (BENCHMARKS.md, FEATURES.md, USAGE.md) guarded from
ledger.yaml, a keyed issue index, measurements for the A/B sweep. Each push goes through the
real pre-push hook; each that the investigation's own checker refused is refused here, each
its review repaired passes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks.check_helpers import add, commit, push, set_rule
from conftest import cli

# The PR #1041 A/B table, as the investigation published it.
AB_TABLE = """\
| Threads | Runs | Min s | Median s | Max s | Spread | Speedup | Efficiency |
|---|---|---|---|---|---|---|---|
| 1 | 14 | 1.9859 | **2.0418** | 2.1172 | 6.4% | 1.00x | 100% |
| 2 | 14 | 1.0266 | **1.0552** | 1.0843 | 5.5% | **1.93x** | 96.7% |
| 4 | 14 | 0.5464 | **0.5555** | 0.5674 | 3.8% | **3.68x** | 91.9% |
| 8 | 14 | 0.2920 | **0.3013** | 0.3072 | 5.0% | **6.78x** | 84.7% |
| 16 | 14 | 0.2129 | **0.2232** | 0.2597 | 21.0% | **9.15x** | 57.2% |
| 20 | 14 | 0.2024 | **0.2234** | 0.2534 | 22.8% | **9.14x** | 45.7% |
"""

BENCHMARKS = """\
# Benchmarks

| Axis | Result |
|---|---|
| LTX-2.5 conv VAE decode | 2681 s at 448x256/25f on one of twenty cores |
"""

FEATURES = """\
# Features

| Feature | Status |
|---|---|
| LTX-2.5 Conv VAE decode threading | shipped (#1009) |
"""

INDEX = """\
# Issue index

| Issue | Title | Owner |
|---|---|---|
| #1007 | LTX-2.5 decode has no device arm | LTX25-DECODE-SPEED |
| #1008 | decode accumulates in f64 | LTX25-DECODE-DTYPE |
| #1009 | decode runs on one core | LTX25-DECODE-THREADS |
"""


def write(repo: Path, path: str, text: str) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def append(repo: Path, path: str, text: str) -> None:
    target = repo / path
    target.write_text(target.read_text(encoding="utf-8") + text, encoding="utf-8")


def passes(repo: Path, message: str) -> None:
    commit(repo, message)
    ok = push(repo)
    assert ok.returncode == 0, ok.stderr
    everything = cli(repo, "check", "--all")  # CI's check of the same tree
    assert everything.returncode == 0, everything.stdout


def refused(repo: Path, message: str, rule: str, *, then_undo: bool = True) -> str:
    commit(repo, message)
    result = push(repo)
    assert result.returncode == 1 and f"error[{rule}]" in result.stderr, result.stderr
    everything = cli(repo, "check", "--all")
    assert everything.returncode == 1 and f"[{rule}]" in everything.stdout, everything.stdout
    if then_undo:
        from conftest import git

        git(repo, "reset", "-q", "--hard", "HEAD~1")
    return result.stderr


@pytest.fixture
def investigation(pushed: Path) -> Path:
    """Push 1: the public documents, guarded, and the keyed issue index."""
    config = pushed / "ledger.yaml"
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace("\nguard: []\n", "\nguard: [docs/BENCHMARKS.md, docs/FEATURES.md, docs/USAGE.md]\n"),
        encoding="utf-8",
    )
    set_rule(pushed, "keyed-rows", files=["docs/BENCHMARKS.md", "docs/FEATURES.md", ".agents/issue-index.md"])
    write(pushed, "docs/BENCHMARKS.md", BENCHMARKS)
    write(pushed, "docs/FEATURES.md", FEATURES)
    write(pushed, "docs/USAGE.md", "# Usage\n\nMost of a render is spent in the host VAE decode.\n")
    write(pushed, ".agents/issue-index.md", INDEX)
    passes(pushed, "LTX25-DECODE-SPEED: public tables and the issue index")
    return pushed


def test_f2_bare_figure_beside_its_spread_is_refused_in_a_keyed_table(investigation: Path):
    """Item 1: 9.14x beside a 21-23% spread went through the hook into FEATURES.md."""
    append(investigation, "docs/FEATURES.md", "| LTX-2.5 decode scaling | 9.14x at 20 workers, 21-23% spread |\n")
    stderr = refused(investigation, "decode scaling", "figures-spread")
    assert "9.14x carries 3 significant figures; a 23% spread supports 1" in stderr


def test_f2_repaired_cell_passes_and_the_spread_binds_to_its_figure(investigation: Path):
    """Item 5: the review's repaired cell; 21-23% qualifies ~9x, not the 2681 s beside it."""
    append(
        investigation,
        "docs/FEATURES.md",
        "| LTX-2.5 decode scaling | ~9x at 16-20 workers, on a contended 20-core box, 21-23% spread; "
        "one render's decode takes 2681 s (#1024) |\n",
    )
    commit(investigation, "F2: ~9x at 16-20 workers")
    ok = push(investigation)
    assert ok.returncode == 0, ok.stderr
    assert "[figures-spread]" not in ok.stderr


def test_a_221_character_cell_and_a_36th_paragraph_are_refused(investigation: Path):
    append(investigation, "docs/BENCHMARKS.md", "| LTX-2.5 axes | " + "decode " * 32 + "|\n")
    refused(investigation, "axes", "cell-width")
    append(investigation, "docs/BENCHMARKS.md", "".join(f"\nNote {i} on the decode.\n" for i in range(36)))
    refused(investigation, "notes", "prose-budget")


def test_a_second_1009_row_in_the_issue_index_is_refused(investigation: Path):
    """Item 4: the merge=union duplicate the investigation's index checker exists for."""
    append(investigation, ".agents/issue-index.md", "| #1009 | decode runs on one core | LTX25-DECODE-THREADS |\n")
    stderr = refused(investigation, "index #1009 again", "keyed-unique")
    assert "key '#1009'" in stderr
    append(investigation, ".agents/issue-index.md", "| #1044 | per-site dispatch test | LTX25-DECODE-THREADS |\n")
    passes(investigation, "index #1044")


def test_the_reviewed_ab_table_passes_with_its_declaration(investigation: Path):
    """Item 8: refused whole without a declaration; with `spread_column` the figures stand
    beside their spread, and the unit-less loophole is closed."""
    write(investigation, "docs/USAGE.md", "# Usage\n\n" + AB_TABLE)
    stderr = refused(investigation, "A/B table", "figures-spread")
    assert "9.14x carries 3" in stderr and "96.7% carries 3" in stderr
    unitless = (
        AB_TABLE.replace("| Speedup |", "| Speedup, x |").replace("**9.14x**", "9.14").replace("**9.15x**", "9.15")
    )
    write(investigation, "docs/USAGE.md", "# Usage\n\n" + unitless)
    stderr = refused(investigation, "A/B table, no units", "figures-spread")
    assert "9.14 carries 3" in stderr
    declared = "---\nfigures: {spread_column: Spread}\n---\n# Usage\n\n" + AB_TABLE
    write(investigation, "docs/USAGE.md", declared)
    passes(investigation, "A/B table, quoted with the spread in column Spread")


def test_a_declared_table_row_without_its_spread_is_judged(investigation: Path):
    text = "---\nfigures: {spread_column: Spread}\n---\n# Usage\n\n" + AB_TABLE + "| 32 | 14 | | | | | 9.146x | |\n"
    write(investigation, "docs/USAGE.md", text)
    commit(investigation, "a row with no spread")
    warned = push(investigation)
    assert warned.returncode == 0 and "warning[figures-evidence]" in warned.stderr and "9.146x" in warned.stderr


def test_a_page_names_the_evidence_of_its_figures(investigation: Path):
    one, twenty = sweep_pair(investigation)
    text = f"---\nevidence: [{one}, {twenty}]\n---\n# Usage\n\nThe second shape is 9.67x faster.\n"
    write(investigation, "docs/USAGE.md", text)
    stderr = refused(investigation, "9.67x, evidence named by the page", "figures-spread")
    assert "has n=3" in stderr


def sweep_pair(repo: Path) -> tuple[str, str]:
    """The second shape at base_channels 128: n=3 each, no min/median/max (PR #1041)."""
    one = add(repo, "measurement", {"metric": "decode_wall", "unit": "s", "median": 5.1015, "n": 3})
    twenty = add(repo, "measurement", {"metric": "decode_wall", "unit": "s", "median": 0.5276, "n": 3})
    return one, twenty


def test_967x_naming_two_n3_records_is_refused(investigation: Path):
    """Item 3: a figure tied to records with n < 5 and no spread supports two figures."""
    one, twenty = sweep_pair(investigation)
    append(investigation, "docs/BENCHMARKS.md", f"| LTX-2.5 at c=128 | 9.67x ({one} against {twenty}) |\n")
    stderr = refused(investigation, "9.67x at c=128", "figures-spread")
    assert "has n=3, which supports at most 2" in stderr
    one, twenty = sweep_pair(investigation)  # the reset dropped them with the refused commit
    append(investigation, "docs/BENCHMARKS.md", f"| LTX-2.5 at c=128 | ~9.7x ({one} against {twenty}) |\n")
    passes(investigation, "~9.7x at c=128")


def test_a_figure_with_no_evidence_is_reported(investigation: Path):
    append(investigation, "docs/BENCHMARKS.md", "| LTX-2.5 decode scaling | 9.14x at 20 workers |\n")
    commit(investigation, "bare F2")
    warned = push(investigation)
    assert warned.returncode == 0 and "warning[figures-evidence]" in warned.stderr, warned.stderr
    text = (investigation / "docs/BENCHMARKS.md").read_text(encoding="utf-8")
    write(investigation, "docs/BENCHMARKS.md", "---\nfigures: {evidence: required}\n---\n" + text)
    refused(investigation, "evidence required", "figures-evidence", then_undo=False)


#: PR #1041's CPU A/B: threads -> (min, median, max) of 14 runs.
SWEEP = {
    1: (1.9859, 2.0418, 2.1172),
    2: (1.0266, 1.0552, 1.0843),
    4: (0.5464, 0.5555, 0.5674),
    8: (0.2920, 0.3013, 0.3072),
    16: (0.2129, 0.2232, 0.2597),
    20: (0.2024, 0.2234, 0.2534),
}


def thread_sweep(repo: Path, points: dict[int, tuple[float, float, float]] = SWEEP) -> str:
    """The investigation's sweep as records: a contract that sweeps threads from 1, one
    measurement of 14 runs per count. Returns the contract's id."""
    contract = add(
        repo,
        "contract",
        {
            "name": "ltx25-decode-cpu",
            "model": "LTX-2.5 conv VAE decode, 448x256/25f",
            "sweep": [{"name": "threads", "base": 1, "ideal": "linear"}],
        },
    )
    for threads, point in points.items():
        point_of(repo, contract, threads, point)
    return contract


def point_of(repo: Path, contract: str, threads: int, point: tuple[float, float, float]) -> str:
    low, median, high = point
    body = {"contract": contract, "metric": "decode_wall", "unit": "s", "n": 14, "min": low, "median": median}
    # "14 runs per count across an ascending and a descending sweep"
    order = {"sweep_order": ["ascending", "descending"]}
    return add(repo, "measurement", {**body, "max": high, "parameters": {"threads": threads}, **order})


def test_a_figure_of_the_sweep_a_page_names_is_judged_against_its_points(investigation: Path):
    """Item 3, the rest: F2's bare "9.14x at 20 workers" names no record, but the page names
    the sweep it quotes; the figure is the ratio of the 20- and 1-thread points, so it carries
    both spreads (22.8% + 6.4%), which support one figure. Its repair, "~9x at 16-20 workers",
    passes; so does a table of the sweep quoted at the digits its rows support."""
    thread_sweep(investigation)
    passes(investigation, "the thread sweep, 14 runs a count")
    text = (investigation / "docs/FEATURES.md").read_text(encoding="utf-8")
    front = "---\nfigures: {sweep: ltx25-decode-cpu, sweep_column: workers}\n---\n"
    write(investigation, "docs/FEATURES.md", front + text + "| LTX-2.5 decode scaling | 9.14x at 20 workers |\n")
    stderr = refused(investigation, "F2 as first written", "figures-spread")
    assert "9.14x carries 3 significant figures; a 29.3% spread of the records it names supports 1" in stderr, stderr
    write(investigation, "docs/FEATURES.md", front + text + "| LTX-2.5 decode scaling | ~9x at 16-20 workers |\n")
    passes(investigation, "F2 repaired")
    table = "| Threads | Speedup |\n|---|---|\n| 1 | 1.00x |\n| 2 | 1.93x |\n| 4 | ~4x |\n"
    page = "---\nfigures: {sweep: ltx25-decode-cpu}\n---\n# Usage\n\n"
    write(investigation, "docs/USAGE.md", page + table)
    stderr = refused(investigation, "a sweep table, digits too many", "figures-spread")
    # The 2-thread row: its 5.5% and the base's 6.4% spread support one figure.
    assert "1.93x carries 3 significant figures; a 11.9% spread of the records it names supports 1" in stderr, stderr
    assert "~4x" not in stderr
    write(investigation, "docs/USAGE.md", page + table.replace("1.93x", "~2x"))
    passes(investigation, "a sweep table at its digits")


def test_a_page_naming_no_sweep_is_refused_by_name(investigation: Path):
    write(
        investigation,
        "docs/USAGE.md",
        "---\nfigures: {sweep: ltx25-decode-gpu}\n---\n# Usage\n\n9.14x at 20 threads.\n",
    )
    stderr = refused(investigation, "a sweep that is not there", "figures-evidence")
    assert "figures.sweep names 'ltx25-decode-gpu', which is no contract that sweeps a parameter" in stderr, stderr


def test_a_new_measurement_of_the_sweep_rejudges_the_page_at_push(investigation: Path):
    """The hook agrees with CI's `--all`: a push that adds only a measurement, widening the
    8-thread point's spread from none to 5%, re-judges the unchanged page quoting the point."""
    contract = thread_sweep(investigation, {8: (0.3013, 0.3013, 0.3013)})
    write(
        investigation,
        "docs/USAGE.md",
        "---\nfigures: {sweep: ltx25-decode-cpu}\n---\n# Usage\n\n0.30 s at 8 threads.\n",
    )
    passes(investigation, "the sweep and a page quoting it")
    point_of(investigation, contract, 8, SWEEP[8])
    stderr = refused(investigation, "a second 8-thread run", "figures-spread")
    assert "docs/USAGE.md" in stderr and "0.30 s carries 2 significant figures; a 5" in stderr, stderr


def test_the_sweep_derives_the_investigations_figures(investigation: Path):
    """The replay's derived figures: from the 14-run sweep ledger derives PR #1041's speedups,
    efficiencies and spreads to the digits the table printed, quotes each at the digits its
    spread supports, and finds the 16-20 plateau."""
    thread_sweep(investigation)
    passes(investigation, "the thread sweep, 14 runs a count")
    result = cli(investigation, "status", "--format", "json", "--contract", "ltx25-decode-cpu")
    assert result.returncode == 0, result.stderr
    (section,) = [s for s in json.loads(result.stdout)["sections"] if s["key"].startswith("sweep")]
    rows = {r["value"]: r for r in section["rows"]}
    published = {
        2: (1.93, 96.7, "5.5%"),
        4: (3.68, 91.9, "3.8%"),
        8: (6.78, 84.7, "5.0%"),
        16: (9.15, 57.2, "21.0%"),
        20: (9.14, 45.7, "22.8%"),
    }
    for threads, (speedup, efficiency, spread) in published.items():
        row = rows[threads]
        assert round(row["speedup_value"], 2) == speedup and round(row["efficiency_value"], 1) == efficiency, row
        assert row["spread"] == spread, row
    assert rows[1]["speedup"] == "1x (base)" and rows[1]["spread"] == "6.4%"
    # Quoted at the digits the two spreads support: 9.14x against 22.8% + 6.4% is ~9x.
    # Quoted at the digits the two spreads support (9.14x against 22.8% + 6.4% is 9x), the
    # efficiencies never rounded up to 100%, each median inside its own min and max.
    assert [rows[t]["speedup"] for t in (2, 4, 8, 16, 20)] == ["2x", "4x", "7x", "9x", "9x"], rows
    assert [rows[t]["efficiency"] for t in (2, 4, 8, 16, 20)] == ["97%", "90%", "80%", "60%", "50%"], rows
    assert [rows[t]["median"] for t in (1, 2, 20)] == ["2.0 s", "1.06 s", "0.22 s"], rows
    assert "Runs taken in ascending and descending order of threads." in section["notes"], section["notes"]
    stop = section["extra"]["stopping_point"]
    assert stop["plateau"] == [16, 20] and stop["value"] == 16 and not stop["distinguishable"], stop


def test_a_push_that_tightens_a_page_rule_judges_the_documents_it_leaves(investigation: Path):
    """The outsider's re-entry: the bare "9.14x at 20 workers" went in while figures-evidence
    was a warning; a later push made it an error in ledger.yaml and touched no document. The
    hook judged only changed documents and passed it; CI's --all of the same tree refused."""
    append(investigation, "docs/FEATURES.md", "| LTX-2.5 decode scaling | 9.14x at 20 workers |\n")
    commit(investigation, "bare F2, a warning here")
    assert push(investigation).returncode == 0
    config = investigation / "ledger.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace("\nrules:", "\nrules:\n  figures-evidence: {severity: error}", 1),
        encoding="utf-8",
    )
    stderr = refused(investigation, "figures-evidence is an error here", "figures-evidence")
    assert "docs/FEATURES.md" in stderr and "(first: 9.14x)" in stderr, stderr


def test_the_hook_finds_the_evidence_a_page_lists_in_its_front_matter(investigation: Path):
    """The front matter's `evidence:` judged a figure in --all, and not at push: the hook read
    only the ids in the body, so a repaired row was refused for "no evidence"."""
    render = add(investigation, "measurement", {"metric": "render_decode", "unit": "s", "samples": [2681.0], "n": 1})
    passes(investigation, "the render decode, timed once")
    text = (investigation / "docs/USAGE.md").read_text(encoding="utf-8")
    front = f"---\nevidence: [{render}]\nfigures: {{why: one timed render, quoted as timed}}\n---\n"
    write(
        investigation, "docs/USAGE.md", front + text + "\n| Probe | Result |\n|---|---|\n| --render-probe | 2681 s |\n"
    )
    commit(investigation, "a table row whose evidence the page names")
    ok = push(investigation)
    assert ok.returncode == 0 and "figures-evidence" not in ok.stderr, ok.stderr
    everything = cli(investigation, "check", "--all").stdout
    assert "docs/USAGE.md" not in everything, everything


def test_a_declared_spread_cell_cannot_understate_its_rows_range(investigation: Path):
    """The outsider: under `spread_column: Spread` any value let the row's figures stand, so
    a 20-thread row reading 0.1% beside 0.2024 .. 0.2534 (22.8%) kept its 9.14x."""
    tampered = AB_TABLE.replace("| 0.2534 | 22.8% |", "| 0.2534 | 0.1% |")
    write(investigation, "docs/USAGE.md", "---\nfigures: {spread_column: Spread}\n---\n# Usage\n\n" + tampered)
    stderr = refused(investigation, "a spread cell that understates its row", "figures-spread")
    assert "9.14x carries 3 significant figures; a 22.8" in stderr, stderr
    assert "9.15x" not in stderr  # the 16-thread row's own 21.0% is as its range says
