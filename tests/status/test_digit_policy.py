"""The one digit policy (`ledger.analysis.figures`), as properties over many values:
a median is never printed outside its own printed min-max; a percentage never reads 100%
unless it is 100; a figure computed from runs with no spread never prints its float tail."""

from __future__ import annotations

import json
import re

from conftest import cli
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.analysis.figures import (
    derived_digits,
    quote,
    quote_at,
    quote_field,
    quote_of,
    quote_rough,
    quote_spread,
    significant_figures,
)
from ledger.schema.kinds import Measurement

BASE = {
    "id": "01K00000000000000000000000",
    "created_at": "2026-01-01T00:00:00Z",
    "tool": {"version": "0"},
    "sha256": "0" * 64,
}


def measurement(**fields) -> Measurement:
    return Measurement.model_validate({**BASE, "metric": "decode_wall", "unit": "s", **fields})


def number(text: str) -> float:
    return float(re.match(r"[+-]?[\d.]+", text).group(0))  # type: ignore[union-attr]


positive = st.floats(min_value=1e-4, max_value=1e5, allow_nan=False, allow_infinity=False)


@settings(max_examples=400, deadline=None)
@given(low=positive, width=st.floats(min_value=0.0, max_value=2.0), at=st.floats(min_value=0.0, max_value=1.0))
def test_a_median_is_never_printed_outside_its_printed_min_and_max(low: float, width: float, at: float) -> None:
    high = low * (1 + width)
    median = low + (high - low) * at
    m = measurement(min=low, max=high, median=median, n=14)
    shown = {f: number(quote_field(m, f, getattr(m, f), "s")) for f in ("min", "median", "max")}
    assert shown["min"] <= shown["median"] <= shown["max"], shown


def test_the_reported_medians_sit_inside_their_ranges() -> None:
    """The issue's two cases: `Median 1 s` beside `Min 1.03 s`, and `0.2 s` beside `0.21 s`."""
    wide = measurement(min=1.03, max=1.2, median=1.04, n=14)
    assert [quote_field(wide, f, getattr(wide, f), "s") for f in ("min", "median", "max")] == [
        "1.0 s",
        "1.0 s",
        "1.2 s",
    ]
    sweep = measurement(min=0.2129, max=0.2597, median=0.2232, n=14)
    assert [quote_field(sweep, f, getattr(sweep, f), "s") for f in ("min", "median", "max")] == [
        "0.21 s",
        "0.22 s",
        "0.26 s",
    ]


percent = st.floats(min_value=0.01, max_value=200.0, allow_nan=False).filter(lambda v: v != 100.0)
spread = st.one_of(st.none(), st.floats(min_value=0.001, max_value=60.0))


@settings(max_examples=400, deadline=None)
@given(value=percent, uncertainty=spread)
def test_a_percentage_never_reads_100_unless_it_is_100(value: float, uncertainty: float | None) -> None:
    shown = [
        quote(value, uncertainty, "%"),
        quote(value, None, "%", digits=1),
        quote_spread(value, value * (uncertainty or 1) / 100, "%"),
        quote_rough(value, "%"),
        quote_at(value, 10.0, "%"),
    ]
    for text in shown:
        assert number(text) != 100.0, (value, uncertainty, text)
    assert quote(100.0, 22.0, "%") == "100%"


def test_the_reviewed_efficiency_reads_97_not_100() -> None:
    # 9.67x at 10 workers against linear: 96.7% with a 21-23% spread supports one figure.
    assert quote(96.7, 22.0, "%") == "97%"


@settings(max_examples=300, deadline=None)
@given(a=positive, b=positive, n=st.integers(min_value=1, max_value=30))
def test_a_ratio_of_runs_without_spread_never_prints_its_float_tail(a: float, b: float, n: int) -> None:
    base, point = measurement(median=round(a, 4), n=n), measurement(median=round(b, 4), n=n)
    digits = derived_digits(base, point)
    text = quote(base.median / point.median, None, "x", digits=digits)
    assert significant_figures(text.rstrip("x")) <= max(digits, 4)
    if n < 5:
        assert significant_figures(text.rstrip("x")) <= 2 or "." not in text


def test_the_two_run_pair_reads_two_figures() -> None:
    one, twenty = measurement(median=5.1015, n=3), measurement(median=0.5276, n=3)
    assert quote(one.median / twenty.median, None, "x", digits=derived_digits(one, twenty)) == "9.7x"
    # A recorded figure is never trimmed: it is the observation; a rate computed from it is.
    assert quote_of(one, 5.1015, "s") == "5.1015 s" and quote_of(one, 5.1015 / 0.52761, "x") == "9.7x"


def test_the_decode_demo_sweep_reads_within_its_ranges(demo_decode) -> None:
    """`ledger demo --campaign decode` (the run's one, through the real command:
    tests/conftest.py) prints each sweep row's median inside its own min and max, and no
    efficiency below 100% as "100%"."""
    target, _, _ = demo_decode
    status = cli(target, "status", "--format", "json")
    data = json.loads(status.stdout)
    rows = [r for s in data["sections"] if s["key"].startswith("sweep") for r in s["rows"]]
    assert rows, [s["key"] for s in data["sections"]]
    for row in rows:
        if row.get("min") not in (None, "–") and row.get("max") not in (None, "–"):
            assert number(row["min"]) <= number(row["median"]) <= number(row["max"]), row
        if row.get("efficiency_value") not in (None, 100.0) and row["efficiency"] not in ("–",):
            assert number(row["efficiency"]) != 100.0, row
