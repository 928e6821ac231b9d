"""GPU readings that are a value or a range of values, as reports state them.

A collector samples one SM clock; a report re-entered by hand says "about 1.4-1.8 GHz SM,
0.91-1.17 kW against the 1.2 kW cap". An environment record's varying readings (SM and
memory clock, power draw, temperature, utilization) take either form, in the field's own
unit or with a unit written beside it, and are stored in the field's unit:

    1600               -> 1600.0
    [1400, 1800]       -> (1400.0, 1800.0)
    "1400-1800"        -> (1400.0, 1800.0)
    "1.4-1.8 GHz"      -> (1400.0, 1800.0)   (in an `_mhz` field)
    "0.91-1.17 kW"     -> (910.0, 1170.0)    (in a `_w` field)

Units are converted in decimal, so 1.1 GHz is 1100 MHz exactly and not 1100.0000000000002.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

_NUMBER = r"[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_TEXT = re.compile(rf"^\s*(?P<low>{_NUMBER})\s*(?:(?:-|–|to)\s*(?P<high>{_NUMBER}))?\s*(?P<unit>[^\s0-9.]\S*)?\s*$")

#: Per base unit, the spellings accepted beside a value and their factor to the base unit.
UNITS: dict[str, dict[str, Decimal]] = {
    "MHz": {"MHz": Decimal(1), "mhz": Decimal(1), "GHz": Decimal(1000), "ghz": Decimal(1000)},
    "W": {"W": Decimal(1), "w": Decimal(1), "kW": Decimal(1000), "kw": Decimal(1000)},
    "C": {"C": Decimal(1), "°C": Decimal(1), "degC": Decimal(1)},
    "%": {"%": Decimal(1)},
}


def _number(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _parser(base: str):
    def parse(value: Any) -> Any:
        if isinstance(value, list | tuple):
            return tuple(_number(v) for v in value)
        if not isinstance(value, str):
            return value
        found = _TEXT.match(value)
        if found is None:
            raise ValueError(
                f"{value!r} is not a reading: write a number, a range as [LOW, HIGH] or 'LOW-HIGH', "
                f"optionally with a unit ({', '.join(UNITS[base])})"
            )
        unit = found["unit"] or base
        factor = UNITS[base].get(unit)
        if factor is None:
            raise ValueError(f"{value!r}: unit {unit!r} is not one of {', '.join(UNITS[base])}")
        try:
            parts = [Decimal(found["low"]) * factor]
            if found["high"] is not None:
                parts.append(Decimal(found["high"]) * factor)
        except InvalidOperation as exc:  # pragma: no cover - the pattern admits only numbers
            raise ValueError(f"{value!r} is not a number") from exc
        floats = tuple(float(p) for p in parts)
        return floats[0] if len(floats) == 1 else floats

    return parse


def _ordered(value: Any) -> Any:
    if isinstance(value, tuple) and value[0] > value[1]:
        raise ValueError(f"the range {value[0]:g}-{value[1]:g} runs backwards: write the low value first")
    return value


_Bound = Annotated[float, Field(ge=0, allow_inf_nan=False)]
_Signed = Annotated[float, Field(allow_inf_nan=False)]


def reading(base: str) -> Any:
    """The type of a non-negative reading in unit `base`: one value, or a (low, high) range."""
    return Annotated[_Bound | tuple[_Bound, _Bound], BeforeValidator(_parser(base)), AfterValidator(_ordered)]


ClockReading = reading("MHz")
PowerReading = reading("W")
#: A temperature may be below zero (a cold-plate reading).
TemperatureReading = Annotated[
    _Signed | tuple[_Signed, _Signed], BeforeValidator(_parser("C")), AfterValidator(_ordered)
]
PercentReading = reading("%")


def low(value: float | tuple[float, float] | None) -> float | None:
    """The lowest value of a reading (the value itself when it is one)."""
    return value[0] if isinstance(value, tuple) else value


def high(value: float | tuple[float, float] | None) -> float | None:
    """The highest value of a reading."""
    return value[1] if isinstance(value, tuple) else value


def text(value: float | tuple[float, float] | None) -> str:
    """A reading as pages and readings write it: `1600`, `1400-1800`."""
    if value is None:
        return ""
    if isinstance(value, tuple):
        return f"{value[0]:g}-{value[1]:g}"
    return f"{value:g}"
