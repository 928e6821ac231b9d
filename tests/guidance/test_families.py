"""Rejected families: a new record in a family whose latest decision is rejected is flagged at
`ledger add` and by `ledger check` unless it names a mechanism the decision did not try (15.2)."""

from __future__ import annotations

import json

from conftest import cli
from guidance.edit_config import rules

FAMILY = "max-autotune, attention compile flag"


def family_warnings(campaign) -> list[dict]:
    code, violations = campaign.check()
    assert code == 0, violations
    return [v for v in violations if v["rule"] == "rejected-family"]


def test_a_repeat_of_a_rejected_family_is_flagged_until_a_decision_reopens_it(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "dit", "model": "DiT"})
    evidence, _ = campaign.add("measurement", {"contract": cid, "samples": [1.0], "family": FAMILY})
    decision, _ = campaign.add(
        "decision",
        {
            "family": FAMILY,
            "verdict": "rejected",
            "mechanism": "Inductor max-autotune GEMM templates",
            "evidence": [evidence],
        },
    )
    assert family_warnings(campaign) == []  # the evidence that led to the decision is no repeat

    # A repeat with no mechanism: written (a warning), flagged at add and by check.
    repeat, stderr = campaign.add("measurement", {"contract": cid, "samples": [1.0, 1.01], "family": FAMILY})
    assert "warning:" in stderr and "rejected-family" in stderr and decision in stderr
    # One whose mechanism is a part of the family name was tried too (case and spacing do not matter).
    same, stderr = campaign.add(
        "hypothesis", {"statement": "autotune helps at B3", "family": FAMILY, "mechanism": "Max-Autotune"}
    )
    assert "rejected-family" in stderr
    # A mechanism the decision did not try is welcome.
    new, stderr = campaign.add(
        "hypothesis",
        {
            "statement": "coordinate descent finds better tiles",
            "family": FAMILY,
            "mechanism": "coordinate-descent tuning",
        },
    )
    assert "rejected-family" not in stderr
    flagged = {w["file"].rsplit("/", 1)[-1].removesuffix(".json") for w in family_warnings(campaign)}
    assert flagged == {repeat, same}

    status = campaign.status()["rejected_families"]["rows"]
    [row] = [r for r in status if r["family"] == FAMILY]
    assert row["repeats"] == 2 and new[:10] in row["tried_since"]

    # A later decision that reopens the family (research) clears the flags.
    campaign.add(
        "decision", {"family": FAMILY.upper(), "verdict": "research", "mechanism": "coordinate-descent tuning"}
    )
    assert family_warnings(campaign) == []
    assert "rejected_families" not in campaign.status()  # no rejected family left


def test_a_push_of_a_repeat_warns_in_range_mode_through_the_decision_index(campaign) -> None:
    campaign.add("decision", {"family": "TunableOp", "verdict": "rejected", "tried": ["rocBLAS/hipBLASLt tuning"]})
    campaign.commit("decision")
    campaign.add(
        "sandwich",
        {
            "family": "tunableop",
            "mechanism": "rocBLAS/hipBLASLt tuning",
            "a_value": 1.0,
            "candidate_value": 1.0,
            "b_value": 1.0,
            "midpoint": 1.0,
            "delta": 0.0,
            "delta_percent": 0.0,
            "drift_percent": 0.0,
            "floor_percent": 0.5,
            "verdict": "neutral",
        },
    )
    campaign.commit("repeat")
    result = cli(campaign.ledger, "check", "--base", "HEAD~1", "--format", "json")
    assert result.returncode == 0, result.stdout
    rules = [v["rule"] for v in json.loads(result.stdout)["violations"]]
    assert rules.count("rejected-family") == 1


def test_rejected_family_can_be_made_an_error_and_then_add_refuses(campaign) -> None:
    rules(campaign.ledger, "rejected-family: {severity: error}")
    campaign.add("decision", {"family": "cuDNN attention", "verdict": "rejected"})
    refused = campaign.add("hypothesis", {"statement": "cuDNN again", "family": "cuDNN attention"}, ok=False)
    assert refused.returncode == 2 and ": rejected-family: " in refused.stderr
    assert "mechanism" in refused.stderr  # the fix says what would make it welcome
