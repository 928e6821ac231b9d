"""A record's time is printed no more precisely than it is known, on every surface."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ledger.analysis.dates import approximate_note, time_of_day, when_text
from ledger.schema.registry import model_for

BASE = {
    "id": "01M8Z4V0ASDHCCK7Y5CTXQH0AV",
    "kind": "note",
    "body": "b",
    "created_at": "2026-12-03T23:46:36Z",
    "tool": {"version": "1"},
    "sha256": "0" * 64,
}


def note(**fields):
    return model_for("note").model_validate({**BASE, **fields})


@pytest.mark.parametrize(
    ("fields", "when", "clock", "aside"),
    [
        ({}, "2026-12-03 23:46 UTC", "23:46:36", ""),
        ({"observed_at": "2026-08-16T10:59:57Z"}, "2026-08-16 10:59 UTC", "10:59:57", ""),
        (
            {"observed_at": "2026-08-16T00:00:00Z", "observed_at_precision": "day"},
            "2026-08-16",
            None,
            " (known to the day)",
        ),
        (
            {"observed_at": "2026-08-01T00:00:00Z", "observed_at_precision": "month"},
            "2026-08",
            None,
            " (known to the month)",
        ),
        (
            {"observed_at": "2026-08-16T10:00:00Z", "observed_at_precision": "hour"},
            "2026-08-16 10:00 UTC",
            "10:00",
            " (known to the hour)",
        ),
        (
            {"observed_at": "2026-08-16T10:59:57Z", "observed_at_precision": "exact"},
            "2026-08-16 10:59 UTC",
            "10:59:57",
            "",
        ),
    ],
)
def test_a_time_is_written_at_its_precision(fields, when, clock, aside):
    record = note(**fields)
    assert when_text(record) == when
    assert time_of_day(record) == clock
    assert approximate_note(record) == aside
    assert when_text(record, zone=False) == when.removesuffix(" UTC")


def test_created_at_is_known_exactly_whatever_precision_a_record_could_state():
    # created_at is ledger's own clock: no stated precision applies to it
    record = note()
    assert record.when == datetime(2026, 12, 3, 23, 46, 36, tzinfo=UTC)
    assert time_of_day(record) == "23:46:36"
