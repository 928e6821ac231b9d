"""Issue 17: every form of the Owed heading counts, the high-water mark only goes down
against the base, site and check agree on owners, and the figures rule cannot be stepped
around with `~`, `-fold`, ranges or slash lists (the base of a ratio is exempt)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks.check_helpers import add, commit, page, push, set_rule
from conftest import cli

HEADINGS = ["## Owed", "## 7. Owed", "## 7: Owed", "## 7 — Owed", "## 7 - Owed", "## 7) Owed", "### 7.2 Owed items"]


@pytest.mark.parametrize("heading", HEADINGS)
def test_every_owed_heading_form_counts(pushed: Path, heading: str):
    page(pushed, "o.md", f"# Spec\n\n{heading}\n\n- the per-site dispatch test\n")
    commit(pushed, "unowned item")
    refused = push(pushed)
    assert refused.returncode == 1, refused.stderr
    assert "error[owed-high-water]" in refused.stderr
    assert "1 unowned owed items, above the high-water mark of 0" in refused.stderr


def test_raising_the_high_water_mark_is_refused_against_the_base(pushed: Path):
    set_rule(pushed, "owed-high-water", high_water=1)
    page(pushed, "o.md", "# Spec\n\n## 7: Owed\n\n- one unowned item\n")
    commit(pushed, "first owed item, mark 1")
    # the base has no mark (default 0): 0 -> 1 is a raise
    refused = push(pushed)
    assert refused.returncode == 1
    assert "raised from 0 to 1; the mark only goes down" in refused.stderr


def test_lowering_is_accepted_and_raising_again_refused(pushed: Path):
    set_rule(pushed, "owed-high-water", high_water=2)
    page(pushed, "o.md", "# Spec\n\n## 7 — Owed\n\n- one\n- two\n")
    commit(pushed, "two unowned")
    # The first config of the mark is pushed with --no-verify-free path: check --base shows the raise
    result = cli(pushed, "check", "--base", "origin/main")
    assert result.returncode == 1 and "raised from 0 to 2" in result.stdout + result.stderr
    push(pushed, "--no-verify", "HEAD:main")
    page(pushed, "o.md", "# Spec\n\n## 7 — Owed\n\n- one\n- two, owner: alice\n")
    set_rule(pushed, "owed-high-water", high_water=1)
    commit(pushed, "one owned, mark lowered")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
    set_rule(pushed, "owed-high-water", high_water=3)
    commit(pushed, "raise")
    refused = push(pushed)
    assert refused.returncode == 1
    assert "raised from 1 to 3" in refused.stderr


def test_site_status_and_check_agree_on_an_owner_through_the_issue(pushed: Path):
    first = add(pushed, "issue", {"number": 44, "title": "per-site test"})
    page(pushed, "o.md", "# Spec\n\n## 7: Owed\n\n- per-site dispatch test #44\n")
    set_rule(pushed, "owed-high-water", high_water=1)
    commit(pushed, "owed item with an unowned issue")
    assert push(pushed, "--no-verify", "HEAD:main").returncode == 0
    status = json.loads(cli(pushed, "status", "--format", "json").stdout)
    owed = next(s for s in status["sections"] if s["key"] == "owed")
    assert owed["rows"][0]["owner"] == "unowned"
    # the issue is corrected: given an owner by a record that supersedes it, repeating #44
    add(pushed, "issue", {"number": 44, "title": "per-site test", "owner": "threads-row", "supersedes": [first]})
    set_rule(pushed, "owed-high-water", high_water=0)
    commit(pushed, "issue owned")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
    status = json.loads(cli(pushed, "status", "--format", "json").stdout)
    owed = next(s for s in status["sections"] if s["key"] == "owed")
    assert owed["rows"][0]["owner"] == "threads-row"
    assert cli(pushed, "check", "--all").returncode == 0


FIGURES_REFUSED = [
    "The decode is ~9.14x faster at 16-20 workers, 21-23% spread.",
    "The decode is 9.14-fold faster, 21-23% spread.",
    "The decode is 9.14 fold faster, 21-23% spread.",
    "The decode is 9.14-9.67x faster, 21-23% spread.",
    "The decode is 9.14x/9.67x faster, 21-23% spread.",
    "The decode took 0.2232-0.2234 s, 21-23% spread.",
    # The ends of an observed range may carry digits down to the range's width, not below.
    "| threads | Median | Spread | Min | Max |\n|---|---|---|---|---|\n| 16 | 0.2 s | 21.0% | 0.2134 s | 0.2612 s |",
    # A Min column without its Max is no range: held to the row's spread.
    "| threads | Median | Spread | Min |\n|---|---|---|---|\n| 16 | 0.2 s | 21.0% | 0.21 s |",
]
FIGURES_PASSED = [
    "The decode is ~9x faster at 16-20 workers, 21-23% spread.",
    "One thread is the base, 1.00x and 100% efficiency, 6.4% spread.",
    "| threads | spread | speedup |\n|---|---|---|\n| 1 | 6.4% | 1.00x |\n| 20 | 22.8% | ~9x |",
    "Between ~9x/~10x, 21-23% spread, load 4.70 to 15.88.",
    # The sweep table's ends: observations at the width of their range (0.21 and 0.26 s apart).
    "| threads | Median | Spread | Min | Max |\n|---|---|---|---|---|\n| 16 | 0.2 s | 21.0% | 0.21 s | 0.26 s |",
]


@pytest.mark.parametrize("text", FIGURES_REFUSED)
def test_figures_cannot_be_stepped_around(pushed: Path, text: str):
    page(pushed, "f.md", text + "\n")
    commit(pushed, "figure")
    refused = push(pushed)
    assert refused.returncode == 1, refused.stderr
    assert "error[figures-spread]" in refused.stderr


@pytest.mark.parametrize("text", FIGURES_PASSED)
def test_supported_and_definitional_figures_pass(pushed: Path, text: str):
    page(pushed, "f.md", text + "\n")
    commit(pushed, "figure")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
