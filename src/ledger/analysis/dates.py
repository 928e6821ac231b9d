"""When a record's evidence was taken, written no more precisely than it is known.

A date read from a pull request is known to the day (`observed_at_precision: day`); printing
it as `2026-08-16 00:00` claims a midnight nobody observed. Every surface that prints a
record's time asks here.
"""

from __future__ import annotations

from typing import Any

#: strftime format per `observed_at_precision`; `exact` and an unstated precision show minutes.
_DATE = {
    "year": "%Y",
    "month": "%Y-%m",
    "day": "%Y-%m-%d",
    "hour": "%Y-%m-%d %H:00",
    "minute": "%Y-%m-%d %H:%M",
}
_TIME = {"hour": "%H:00", "minute": "%H:%M"}


def precision(record: Any) -> str | None:
    """The precision of `record.when`: the stated one for an observed time, else exact.

    A record without `observed_at` is dated by its `created_at`, which ledger wrote itself
    and so knows exactly."""
    return record.observed_at_precision if getattr(record, "observed_at", None) else None


def when_text(record: Any, *, zone: bool = True) -> str:
    """`record.when` at its known precision; a time of day carries its zone when `zone`."""
    known = precision(record)
    text = record.when.strftime(_DATE.get(known or "", "%Y-%m-%d %H:%M"))
    return f"{text} UTC" if zone and known not in ("year", "month", "day") else text


def time_of_day(record: Any) -> str | None:
    """The time of day of `record.when`, or None where only the date (or less) is known."""
    known = precision(record)
    if known in ("year", "month", "day"):
        return None
    return record.when.strftime(_TIME.get(known or "", "%H:%M:%S"))


def approximate_note(record: Any) -> str:
    """ "(known to the day)" and the like where the date is approximate, else ""."""
    known = precision(record)
    return f" (known to the {known})" if known and known != "exact" else ""
