"""GB200 health (issue 28 item 12, the power-cap part): a healthy GB200 allocation runs at
1.4-1.8 GHz of its 2,062 MHz maximum at its 1,200 W cap with no throttle reasons; clocks set by
a power cap at full budget are healthy, as the H200 path already judged with sw_power_cap."""

from __future__ import annotations

from ledger.analysis.eligibility import DEFAULT_THRESHOLDS, gpu_readings
from ledger.schema.kinds import Environment

BASE = {"id": "01K00000000000000000000000", "created_at": "2026-07-22T00:00:00Z", "tool": {"version": "0"}}


def env(draw: float, limit: float = 1200) -> Environment:
    gpu = {
        "index": 0,
        "name": "NVIDIA GB200",
        "sm_clock_mhz": 1600,
        "sm_clock_max_mhz": 2062,
        "power_draw_w": draw,
        "power_limit_w": limit,
        "power_default_limit_w": 1200,
    }
    return Environment.model_validate({**BASE, "sha256": "0" * 64, "gpus": [gpu], "under_load": True})


def test_clocks_set_by_the_power_cap_at_full_budget_are_healthy() -> None:
    assert gpu_readings(env(1190), DEFAULT_THRESHOLDS) == []


def test_low_clocks_below_budget_or_under_a_lowered_cap_are_not() -> None:
    (reading,) = gpu_readings(env(900), DEFAULT_THRESHOLDS)
    assert "SM clock 1600 MHz under load" in reading
    capped = gpu_readings(env(990, limit=1000), DEFAULT_THRESHOLDS)
    assert any("power limit 1000 W, below the board default 1200 W" in r for r in capped)
