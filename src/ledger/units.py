"""Time units: every figure ledger derives from a time (MFU, throughput, FLOP/s, a delta
between records) converts it to seconds first, so a step recorded as `400.616610 ms` gives
36.054708% MFU and not 0.036%.

    seconds_per("ms")        -> 0.001
    seconds_per("s/step")    -> 1.0 (a time per step is a step time)
    seconds_per("tokens/s")  -> None (not a time: nothing can be derived from it as one)
    convert(400.0, "ms", "s") -> 0.4

The spellings are exact (case matters: `Ms` is not a millisecond); a unit ledger cannot place
is refused wherever a time is derived from it (rule `unit-known`), never guessed.
"""

from __future__ import annotations

#: Seconds in one of each unit, by every spelling ledger accepts.
_SECONDS: dict[str, float] = {}
for _names, _factor in (
    (("ns", "nsec", "nanosecond", "nanoseconds"), 1e-9),
    (("us", "µs", "μs", "usec", "microsecond", "microseconds"), 1e-6),
    (("ms", "msec", "millisecond", "milliseconds"), 1e-3),
    (("s", "sec", "secs", "second", "seconds"), 1.0),
    (("min", "mins", "minute", "minutes"), 60.0),
    (("h", "hr", "hrs", "hour", "hours"), 3600.0),
):
    for _name in _names:
        _SECONDS[_name] = _factor

#: The units of time as documentation prints them (one spelling each, smallest first).
TIME_UNITS = ("ns", "us", "ms", "s", "min", "h")

#: "per step" suffixes: `ms/step` is a step time in milliseconds.
_PER_STEP = ("/step", "/iter", "/iteration", "/it")


def seconds_per(unit: str | None) -> float | None:
    """Seconds in one `unit` (a unit of time, optionally per step), or None when it is not one."""
    if unit is None:
        return None
    text = unit.strip()
    for suffix in _PER_STEP:
        if text.endswith(suffix):
            text = text[: -len(suffix)].strip()
            break
    return _SECONDS.get(text)


def is_time(unit: str | None) -> bool:
    """True when `unit` is a unit of time ledger knows."""
    return seconds_per(unit) is not None


def to_seconds(value: float, unit: str | None) -> float:
    """`value` in `unit`, in seconds; ValueError when `unit` is not a time ledger knows."""
    factor = seconds_per(unit)
    if factor is None:
        raise ValueError(f"{unit!r} is not a unit of time ledger knows ({', '.join(TIME_UNITS)})")
    return value * factor


def convert(value: float, from_unit: str | None, to_unit: str | None) -> float:
    """`value` in `from_unit` expressed in `to_unit`: the same unit, or two units of time."""
    if from_unit == to_unit:
        return value
    a, b = seconds_per(from_unit), seconds_per(to_unit)
    if a is None or b is None:
        raise ValueError(f"cannot convert {from_unit!r} to {to_unit!r}: only units of time convert")
    return value * a / b


def same_quantity(a: str | None, b: str | None) -> bool:
    """Two units that measure one quantity: equal, or both units of time."""
    return a == b or (is_time(a) and is_time(b))
