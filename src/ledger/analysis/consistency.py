"""Whether a figure a record states agrees with what its inputs give, at the rounding both
were written at: no I/O (the checker's `derived-figures` rule reads the records).

A stated 40.810314% MFU beside a median of 0.7078659144 s agrees with the 40.81031437...%
those give: it differs by less than half its own last digit (0.0000005) plus what half the
last digit of each input moves the result. A stated 45.0% does not.

    disagreement(stated, f, inputs) -> None, or (expected, tolerance)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .figures import recorded_resolution

#: Relative slack for float arithmetic itself (a value computed in binary and written back).
FLOAT_SLACK = 1e-9


def half_step(value: float | None) -> float:
    """Half the last decimal place `value` was written with (0.0000005 for 40.810314)."""
    if value is None:
        return 0.0
    resolution = recorded_resolution(value)
    return resolution / 2 if resolution else 0.0


def disagreement(
    stated: float,
    f: Callable[..., float],
    inputs: Sequence[float],
    *,
    exact: Sequence[bool] = (),
) -> tuple[float, float] | None:
    """(expected, tolerance) when `stated` differs from `f(*inputs)` by more than the rounding
    of `stated` and of the inputs (each moved by half its last written digit, the moves added);
    None when they agree. Inputs marked `exact` (integers such as a batch) are not moved."""
    expected = f(*inputs)
    if not math.isfinite(expected):
        return None
    moved = 0.0
    for i, x in enumerate(inputs):
        if i < len(exact) and exact[i]:
            continue
        h = half_step(x)
        if not h:
            continue
        shifted = list(inputs)
        shifted[i] = x + h
        try:
            up = f(*shifted)
            shifted[i] = x - h
            down = f(*shifted)
        except (ZeroDivisionError, ValueError):
            continue
        moved += max(abs(up - expected), abs(down - expected))
    tolerance = half_step(stated) + moved + FLOAT_SLACK * max(abs(expected), abs(stated), 1e-300)
    if abs(stated - expected) <= tolerance:
        return None
    return expected, tolerance


def midpoint(a: float, b: float) -> float:
    return (a + b) / 2


def delta(a: float, c: float, b: float) -> float:
    return c - (a + b) / 2


def delta_percent(a: float, c: float, b: float) -> float:
    mid = (a + b) / 2
    return 100.0 * (c - mid) / mid


def drift_percent(a: float, b: float) -> float:
    return 100.0 * abs(a - b) / ((a + b) / 2)


def drift_vs_a_percent(a: float, b: float) -> float:
    return 100.0 * abs(a - b) / a


def sandwich_problems(s) -> list[tuple[str, str]]:
    """(field, message) for each figure of sandwich record `s` that its own arms' values
    (a_value, candidate_value, b_value) contradict: midpoint, delta, delta_percent, drift_percent."""
    a, c, b = s.a_value, s.candidate_value, s.b_value
    if b is None:
        # A pair: its midpoint is A, and there is no drift to check.
        b = a
    if (a + b) == 0:
        return []
    checks: list[tuple[str, float, Callable[..., float], tuple[float, ...], str]] = [
        (
            "midpoint",
            s.midpoint,
            midpoint,
            (a, b),
            f"(A + B) / 2 = ({a:g} + {b:g}) / 2" if s.b_value is not None else "A (a pair: no B)",
        ),
        ("delta", s.delta, delta, (a, c, b), "candidate - midpoint"),
        ("delta_percent", s.delta_percent, delta_percent, (a, c, b), "100 x (candidate - midpoint) / midpoint"),
    ]
    if s.drift_percent is not None:
        checks.append(("drift_percent", s.drift_percent, drift_percent, (a, b), "100 x |A - B| / midpoint"))
    if getattr(s, "drift_vs_a_percent", None) is not None and a:
        checks.append(("drift_vs_a_percent", s.drift_vs_a_percent, drift_vs_a_percent, (a, b), "100 x |A - B| / A"))
    out = []
    for name, stated, f, inputs, how in checks:
        found = disagreement(stated, f, inputs)
        if found:
            expected, _ = found
            unit = "%" if name.endswith("percent") else f" {s.unit}"
            out.append(
                (
                    name,
                    f"{name} = {stated:g}{unit} but {how} gives {expected:.9g}{unit} from the record's own arms "
                    "(beyond the rounding either was written at)",
                )
            )
    return out
