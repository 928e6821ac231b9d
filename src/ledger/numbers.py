"""How a recorded number is written back: the one rule below the store and the analysis.

The store keeps the decimals a figure was given with when printing it would lose them
(ledger.store.inputs); the analysis and every page print figures with the same rule
(ledger.analysis.figures re-exports it).
"""

from __future__ import annotations

import math

#: A number typed by a person carries at most this many significant figures; more means it
#: was computed (float noise such as 0.0024999999999999467), quoted to COMPUTED_DIGITS.
TYPED_DIGITS = 10
COMPUTED_DIGITS = 8


def as_recorded(number: float, decimals: int | None = None) -> str:
    """A figure whose spread is unknown, to the last digit it was recorded with.

    Nothing supports trimming it, so it is not trimmed: 0.707865914 stays 0.707865914, and
    with `decimals` (how many the record was given with) 7.2590400 keeps its zeros. A
    computed value (17 significant figures of float noise) is quoted to 8.
    """
    number = float(number)
    if not math.isfinite(number):
        return str(number)
    if decimals is not None and 0 <= decimals <= 20:
        return f"{number:.{decimals}f}"
    if number.is_integer() and abs(number) < 1e18:
        return str(int(number))
    shortest = repr(number)
    mantissa = shortest.split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    if len(mantissa) <= TYPED_DIGITS and "e" not in shortest:
        return shortest
    return f"{number:.{COMPUTED_DIGITS}g}"
