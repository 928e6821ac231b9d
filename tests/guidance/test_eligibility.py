"""Baseline eligibility from measured health, thresholds under `rules:`, and a decision scoped to
a class of allocation pending until a record on that class exists (15.3)."""

from __future__ import annotations

from conftest import cli
from guidance.edit_config import rules


def gpu(index: int, **reading) -> dict:
    return {
        "index": index,
        "name": "NVIDIA H200",
        "sm_clock_mhz": 1980,
        "sm_clock_max_mhz": 1980,
        "power_limit_w": 700,
        "power_default_limit_w": 700,
        "power_draw_w": 600,
        "temperature_c": 60,
        "utilization_percent": 100,
        **reading,
    }


def environment(campaign, allocation: str, topology: str, gpus: list[dict]) -> str:
    rid, _ = campaign.add(
        "environment", {"gpus": gpus, "under_load": True}, "--allocation", allocation, "--topology", topology
    )
    return rid


def rows(campaign) -> list[dict]:
    return campaign.status()["stopping_point"]["rows"]


def test_a_row_is_ineligible_by_the_reading_that_made_it_so_and_thresholds_are_configurable(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "dit", "model": "DiT"})
    # A slow clock (1,890 of 1,980 MHz: 95.5%) on an allocation whose measurement calls itself healthy.
    environment(campaign, "job-slow", "8x H200", [gpu(0), gpu(1, sm_clock_mhz=1890)])
    mid, stderr = campaign.add(
        "measurement",
        {"contract": cid, "samples": [1.0, 1.01], "health": "healthy"},
        "--allocation",
        "job-slow",
        "--topology",
        "8x H200",
    )
    assert "baseline-eligibility" in stderr and "GPU 1: SM clock 1890 MHz" in stderr  # warned at add
    [row] = rows(campaign)
    assert row["status"].startswith("baseline-ineligible")
    assert any("GPU 1: SM clock 1890 MHz under load" in r and "below 97%" in r for r in row["reasons"]), row
    code, violations = campaign.check()
    assert code == 0 and [v["rule"] for v in violations if v["rule"] == "baseline-eligibility"] == [
        "baseline-eligibility"
    ]
    # The record's own page says what the stopping point says, not the recorded "healthy".
    built = cli(campaign.ledger, "site", "build")
    assert built.returncode == 0, built.stderr
    page = next((campaign.ledger / "site").rglob(f"{mid}.html")).read_text(encoding="utf-8")
    assert "baseline-ineligible: degraded allocation" in page and "SM clock 1890 MHz" in page
    assert "healthy allocation" not in page

    # The threshold is the user's: at 95% this clock is healthy and the row becomes eligible.
    rules(campaign.ledger, "baseline-eligibility: {min_sm_clock_fraction: 0.95}")
    [row] = rows(campaign)
    assert row["status"] == "eligible, not yet accepted" and row["measurement"] == mid
    code, violations = campaign.check()
    assert not [v for v in violations if v["rule"] == "baseline-eligibility"]


def test_each_reading_is_named(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "dit", "model": "DiT"})
    environment(
        campaign,
        "job-bad",
        "4x H200",
        [
            gpu(0, power_limit_w=500),
            gpu(1, clock_event_reasons=["hw_thermal_slowdown"], temperature_c=93),
            gpu(2, ecc_errors_uncorrected=2),
        ],
    )
    campaign.add("measurement", {"contract": cid, "samples": [1.0]}, "--allocation", "job-bad", "--topology", "4x H200")
    [row] = rows(campaign)
    reasons = " | ".join(row["reasons"])
    assert "GPU 0: power limit 500 W, below the board default 700 W" in reasons
    assert "GPU 1: clocks held back by hw_thermal_slowdown" in reasons and "GPU 1: 93 C, above 90 C" in reasons
    assert "GPU 2: 2 uncorrected ECC errors" in reasons


def test_a_decision_scoped_to_a_healthy_8x_pair_is_pending_until_one_exists(campaign) -> None:
    family = "env-only stack"
    cid, _ = campaign.add("contract", {"name": "dit", "model": "DiT"})
    sandwich = {
        "contract": cid,
        "family": family,
        "a_value": 1.0,
        "candidate_value": 1.0002,
        "b_value": 1.0,
        "midpoint": 1.0,
        "delta": 0.0002,
        "delta_percent": 0.02,
        "drift_percent": 0.0,
        "floor_percent": 0.5,
        "verdict": "neutral",
    }
    four, _ = campaign.add("sandwich", sandwich, "--allocation", "job-4x", "--topology", "4x H200")
    decision, _ = campaign.add(
        "decision",
        {
            "family": family,
            "verdict": "accepted",
            "qualifier": "4x only until a healthy-class 8x pair re-gates it",
            "evidence": [four],
            "pending_on": {"topology": "8x H200", "health": "healthy"},
        },
    )
    [pending] = campaign.status()["pending"]["rows"]
    assert pending["id"] == decision and "healthy-class 8x H200" in pending["needs"]

    # A degraded-class 8x pair does not settle it, and the status says why.
    environment(campaign, "job-8x-slow", "8x H200", [gpu(0, sm_clock_mhz=1700), gpu(1)])
    campaign.add("sandwich", sandwich, "--allocation", "job-8x-slow", "--topology", "8x H200")
    [pending] = campaign.status()["pending"]["rows"]
    assert "SM clock 1700 MHz" in pending["why_not_yet"]
    # Nor does an 8x record whose health nobody measured.
    campaign.add("sandwich", sandwich, "--allocation", "job-8x-unknown", "--topology", "8x H200")
    assert "pending" in campaign.status()

    # A healthy-class 8x pair does: the pending status disappears.
    environment(campaign, "job-8x-ok", "8x H200", [gpu(0), gpu(1)])
    campaign.add("sandwich", sandwich, "--allocation", "job-8x-ok", "--topology", "8x H200")
    assert "pending" not in campaign.status()
