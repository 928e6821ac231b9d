"""Sandwich digits: the shown arms carry enough digits that a reader recomputes the shown
delta from them; a delta never rounds to zero or flips sign; a figure with no spread is
printed as recorded (docs/guide promises it).

From the LTX-2 campaign re-entered: the CUTLASS singleton-swizzle gate read A 400 ms,
candidate 400 ms, B 400 ms, delta +31 ms (+8%) where the report has 393.934851 /
422.406662 / 389.372927 ms, +7.852028%; +0.034664% read 0%; the project's own H200
sandwiches page read 0.11 against 0.106 s/sample labelled -2.2% (the shown numbers give -3.6%)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from ledger.analysis.figures import sandwich_figures
from ledger.analysis.sandwich import compute


def shown(a, c, b, *, spread=None, typed=None, unit="ms"):
    fields = compute(a, c, b).record_fields()
    fields.update(typed or {})
    ids = ("A", "X", "B") if spread else (None, None, None)
    s = SimpleNamespace(**fields, unit=unit, control_a=ids[0], candidate=ids[1], control_b=ids[2])
    return sandwich_figures(s, (lambda rid: spread) if spread else None)


def number(text: str) -> float:
    return float(re.match(r"[+-]?[0-9.]+", text).group(0))


def test_transcribed_arms_are_printed_as_recorded() -> None:
    f = shown(393.934851, 422.406662, 389.372927)
    assert (f["a"], f["candidate"], f["b"]) == ("393.934851 ms", "422.406662 ms", "389.372927 ms")
    assert f["midpoint"] == "391.653889 ms" and f["delta"] == "+30.752773 ms"
    typed = shown(393.934851, 422.406662, 389.372927, typed={"delta_percent": 7.852028})
    assert typed["delta_percent"] == "+7.852028%"


@pytest.mark.parametrize(
    ("a", "c", "b", "spread"),
    [
        (0.11085414505004883, 0.10658, 0.11076506042480469, 0.05),  # the H200 page's case
        (0.7200, 0.7214, 0.7203, 0.01),
        (0.4284051351, 0.4148231971, 0.4264598510, 0.3),
        (547.683096, 546.032818, 549.1, 0.2),
    ],
)
def test_the_shown_delta_is_recomputable_from_the_shown_arms(a, c, b, spread) -> None:
    f = shown(a, c, b, spread=spread, unit="s")
    arms = [number(f[k]) for k in ("a", "candidate", "b")]
    recomputed = arms[1] - (arms[0] + arms[2]) / 2
    delta = number(f["delta"])
    last = 10.0 ** -(len(f["delta"].split(" ")[0].split(".")[1]) if "." in f["delta"] else 0)
    assert abs(recomputed - delta) <= 1.5 * last, f
    pct = number(f["delta_percent"])
    recomputed_pct = 100 * recomputed / ((arms[0] + arms[2]) / 2)
    assert abs(recomputed_pct - pct) <= 0.1 * max(abs(pct), 0.01) + 0.05, f


@pytest.mark.parametrize(("c", "want"), [(100.635, "+0.03%"), (100.59, "-0.01%")])
def test_a_delta_never_rounds_to_zero_or_flips_sign(c: float, want: str) -> None:
    """+0.034664% and -0.0099% beside a 1.2% drift: the drift's place would read 0%; the
    first nonzero digit is kept, with its sign."""
    f = shown(100.0, c, 101.2, spread=1.0)
    assert f["delta_percent"] == want, f


def test_a_small_delta_keeps_its_digits_beside_a_drift_of_a_percent_and_a_half() -> None:
    """-0.73% beside a 1.5% drift reads -0.7% (the drift's own two figures), not -1%."""
    a, b = 100.0, 101.5
    c = (a + b) / 2 * (1 - 0.0073)
    f = shown(a, c, b, spread=0.5)
    assert f["delta_percent"] == "-0.7%" and f["drift_percent"] == "1.5%"
