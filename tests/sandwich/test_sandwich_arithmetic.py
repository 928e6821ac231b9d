"""The sandwich arithmetic against the campaign's own figures (context/fastvideo-ltx2-mfu-campaign.txt)."""

from __future__ import annotations

import pytest

from ledger.analysis.sandwich import (
    DEFAULT_FLOOR_PERCENT,
    check_same_allocation_and_contract,
    compute,
    floor_from_config,
)
from ledger.errors import InputError


def regate_arms() -> tuple[float, float, float]:
    """A, X, B in seconds reproducing the re-gate: +1.326 ms / +0.184 % vs a 0.044 %-drift midpoint."""
    midpoint = 0.001326 / 0.00184  # 0.72065 s: the 4x/B2 step time
    half_gap = midpoint * 0.00044 / 2
    return midpoint - half_gap, midpoint + 0.001326, midpoint + half_gap


def test_regate_is_timing_neutral_under_the_default_floor() -> None:
    a, x, b = regate_arms()
    r = compute(a, x, b)
    assert r.delta == pytest.approx(0.001326, abs=1e-9)
    assert r.delta_percent == pytest.approx(0.184, abs=1e-6)
    assert r.drift_percent == pytest.approx(0.044, abs=1e-6)
    assert r.floor_percent == DEFAULT_FLOOR_PERCENT
    assert r.verdict == "neutral"
    assert "does not clear" in r.reason() and "(floor)" in r.reason()


def test_env_only_stack_is_faster_under_the_default_floor() -> None:
    mid = 0.7207
    x = mid * (1 - 0.01083)
    r = compute(mid, x, mid, extra_deltas={"mfu_points": 0.432})
    assert r.delta_percent == pytest.approx(-1.083, abs=1e-9)
    assert r.verdict == "faster"
    assert r.extra_deltas == {"mfu_points": 0.432}


def test_degraded_pair_plus_0016_percent_is_neutral() -> None:
    r = compute(1.0, 1.00016, 1.0)
    assert r.verdict == "neutral"


def test_drift_larger_than_the_floor_decides() -> None:
    # A 2 % drift between A and B swallows a 1.5 % delta that would clear the floor alone.
    r = compute(0.99, 0.985, 1.01)
    assert r.drift_percent == pytest.approx(2.0)
    assert r.delta_percent == pytest.approx(-1.5)
    assert r.verdict == "neutral"
    assert "(drift)" in r.reason()
    assert compute(0.99, 0.985, 0.99).verdict == "faster"


def test_slower_and_higher_is_better() -> None:
    assert compute(1.0, 1.02, 1.0).verdict == "slower"
    # throughput: a higher candidate is the faster one
    assert compute(100.0, 102.0, 100.0, lower_is_better=False).verdict == "faster"
    assert compute(100.0, 98.0, 100.0, lower_is_better=False).verdict == "slower"


def test_zero_floor_lets_drift_alone_decide() -> None:
    a, x, b = regate_arms()
    assert compute(a, x, b, floor_percent=0.0).verdict == "slower"


def test_bad_values_are_refused() -> None:
    with pytest.raises(InputError):
        compute(float("nan"), 1.0, 1.0)
    with pytest.raises(InputError):
        compute(0.0, 1.0, 0.0)
    with pytest.raises(InputError):
        compute(1.0, 1.0, 1.0, floor_percent=-1)


def test_floor_from_config() -> None:
    class Config:
        rules = {"sandwich-verdict": {"floor_percent": 0.1}}

    assert floor_from_config(Config()) == 0.1
    Config.rules = {}
    assert floor_from_config(Config()) == DEFAULT_FLOOR_PERCENT
    Config.rules = {"sandwich-verdict": {"floor_percent": "lots"}}
    with pytest.raises(InputError, match="bad sandwich floor"):
        floor_from_config(Config())


def test_cross_allocation_or_contract_arms_are_refused() -> None:
    same = {"id": "1627918"}
    check_same_allocation_and_contract(
        {"a": {"allocation": same, "contract": "C"}, "x": {"allocation": same, "contract": "C"}}
    )
    with pytest.raises(InputError) as err:
        check_same_allocation_and_contract({"a": {"allocation": same}, "x": {"allocation": {"id": "1629519"}}})
    assert "cross-allocation" in str(err.value.problems[0])
    with pytest.raises(InputError) as err:
        check_same_allocation_and_contract(
            {"a": {"allocation": same, "contract": "C1"}, "x": {"allocation": same, "contract": "C2"}}
        )
    assert "different contracts" in str(err.value.problems[0])


def test_without_b_it_is_a_pair_whose_drift_is_not_measured(repo) -> None:
    """No B: the midpoint is A, the drift None (never 0), the floor alone decides; `ledger
    add` takes such a record and refuses one that states a drift without B."""
    import json

    from conftest import cli

    r = compute(0.707866, 0.7002)
    assert r.b is None and r.drift_percent is None and r.midpoint == 0.707866
    assert r.verdict == "faster" and "B was not run" in r.reason()
    fields = {k: v for k, v in r.record_fields().items() if v is not None}
    added = cli(repo, "add", "sandwich", "-", input=json.dumps(fields))
    assert added.returncode == 0, added.stderr
    refused = cli(repo, "add", "sandwich", "-", input=json.dumps({**fields, "drift_percent": 0.0}))
    assert refused.returncode == 2 and "a record without B is a pair" in refused.stderr, refused.stderr
