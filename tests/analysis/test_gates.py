"""Positive controls, armed checks and golden margins (issue 23, "no place for it yet"): the
decode investigation's greps were "positive-controlled against a synthetic line", its doc
checker "armed (b5618b305 exits 1)", and its goldens read "56% of tolerance"."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

from ledger.schema.kinds import Gate
from ledger.site.lead import gate as gate_lead
from ledger.store.ledger import Ledger

GOLDENS = [
    {"name": "Conv video decoder", "value": 1.72853e-06, "tolerance": 5e-06},
    {"name": "tiled decode, untiled control B", "value": 2.80142e-06, "tolerance": 5e-06},
]


def add(repo: Path, body: dict) -> tuple[int, str]:
    result = cli(repo, "add", "gate", "-", input=json.dumps(body))
    return result.returncode, (result.stdout + result.stderr).strip()


def test_an_armed_check_is_green_when_it_fails_and_owed_when_it_passes(repo: Path) -> None:
    code, armed = add(
        repo,
        {
            "title": "check-doc-checkpoint on b5618b305",
            "expect": "fail",
            "outcome": "fail",
            "exit_code": 1,
            "exit_code_only": False,
        },
    )
    assert code == 0, armed
    code, unarmed = add(
        repo,
        {
            "title": "grep 'No space left' on a synthetic line",
            "expect": "fail",
            "outcome": "pass",
            "exit_code": 0,
            "exit_code_only": True,
        },
    )
    assert code == 0, unarmed
    shown = cli(repo, "show", armed)
    assert shown.returncode == 0 and "armed: failed, as it must" in shown.stdout, shown.stdout
    assert "not armed: pass where it must fail" in cli(repo, "show", unarmed).stdout
    status = cli(repo, "status", "--format", "json")
    rows = next(s for s in json.loads(status.stdout)["sections"] if s["key"] == "owed")["rows"]
    owed = [(r["item"], r["id"]) for r in rows if r["item"].startswith("not armed")]
    assert owed == [("not armed: grep 'No space left' on a synthetic line (pass where it must fail)", unarmed)], rows


def test_margins_are_shown_against_their_tolerance_and_a_pass_over_one_is_refused(repo: Path) -> None:
    body = {"title": "test_ltx2_vae", "outcome": "pass", "executed": 42, "passed": 42, "margins": GOLDENS}
    body |= {"load_avg": [82, 94], "cpu_count": 20}
    code, rid = add(repo, body)
    assert code == 0, rid
    shown = cli(repo, "show", rid).stdout
    assert "load 82-94 on 20 cores" in shown, shown
    # The closest to failing first, as a share of what the case allows.
    assert shown.index("tiled decode, untiled control B: 2.80142e-06 against 5e-06, 56% of tolerance") < shown.index(
        "Conv video decoder: 1.72853e-06 against 5e-06, 35% of tolerance"
    ), shown
    record = Ledger.open(repo).get(rid)
    assert isinstance(record, Gate)
    page = str(gate_lead(record))
    assert "ledger-good" in page and "42 of 42 passed" in page and "- tiled decode, untiled control B" in page, page

    over = {**body, "margins": [{"name": "tiled decode, untiled control A", "value": 5.00679e-06, "tolerance": 5e-06}]}
    code, said = add(repo, over)
    assert code == 2, said
    assert "<stdin>" in said and "margins over their tolerance (tiled decode, untiled control A)" in said, said
    code, said = add(repo, {**body, "margins": [{"name": "x", "value": 1e-06, "tolerance": 0}]})
    assert code == 2 and "tolerance" in said, said
