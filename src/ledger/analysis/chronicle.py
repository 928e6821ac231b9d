"""What happened each month of a campaign: the decisions taken, the sandwiches run and their
verdicts, and where the current contract's stopping point stood at the month's end (the
chronological report reads this; the day-by-day record tables are the site's).

A month is the `YYYY-MM` of a record's `when` (its observation time, else when it was written),
the same key the report's month pages are filed under, so a month's summary and its page always
hold the same records.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..schema.envelope import Envelope
from ..schema.kinds import Contract, Decision, Sandwich
from .eligibility import Judge
from .status import stopping_row
from .stopping_point import DEGRADED, NO_VALID_STEP, Row, stopping_point


@dataclass(frozen=True)
class Standing:
    """One stopping-point row as it stood at a month's end, and whether the month moved it."""

    topology: str
    status: str
    measurement: str | None
    headline: str
    mfu: str
    #: "new" (no row for this topology the month before), "moved" (another measurement, or the
    #: same one with another status), or "" (as the month before).
    change: str


@dataclass
class Month:
    month: str
    records: int
    kinds: list[tuple[str, int]]
    #: Decisions recorded this month, newest first; superseded ones are marked by the caller.
    decisions: list[Decision] = field(default_factory=list)
    #: Sandwich verdicts this month, in the order `faster, slower, neutral, ...` of their counts.
    sandwiches: list[tuple[str, int]] = field(default_factory=list)
    standing: list[Standing] = field(default_factory=list)


def _row_class(status: str) -> str:
    # A topology has up to three rows (its best, its degraded run, its failure): each moves alone.
    if status == DEGRADED:
        return "degraded"
    return "failed" if status.startswith(NO_VALID_STEP) else "best"


def month_of(record: Envelope) -> str:
    return record.when.strftime("%Y-%m")


def months(
    records: Iterable[Envelope],
    contract: Contract | None,
    judge: Judge | None = None,
    final_rows: list[Row] | None = None,
) -> list[Month]:
    """Every month that holds a record, newest first, with the stopping point of `contract` at its end.

    The stopping point at a month's end is derived from the records of that month and every month
    before it, exactly as `ledger status` would have derived it then (a later correction of an
    earlier record counts from the month it was made in). `final_rows`: the stopping point of
    all `records`, when the caller derived it already (the last month's end).
    """
    records = list(records)
    by_month: dict[str, list[Envelope]] = {}
    for r in records:
        by_month.setdefault(month_of(r), []).append(r)
    out: list[Month] = []
    so_far: list[Envelope] = []
    before: dict[tuple[str, str], tuple[str | None, str]] = {}
    for key in sorted(by_month):
        held = by_month[key]
        so_far.extend(held)
        standing: list[Standing] = []
        if contract is not None:
            judge = judge or Judge(records)
            now: dict[tuple[str, str], tuple[str | None, str]] = {}
            last = key == max(by_month)
            # The last month's end is the ledger as it is: the caller's rows, when it has them.
            rows = final_rows if last and final_rows is not None else None
            if rows is None:
                rows = stopping_point(so_far, contract=contract, judge=judge)[1]
            for row in rows:
                shown = stopping_row(row)
                where = (row.topology, _row_class(row.status))
                state = (shown["measurement"], row.status)
                change = "new" if where not in before else ("moved" if before[where] != state else "")
                now[where] = state
                standing.append(
                    Standing(row.topology, row.status, shown["measurement"], shown["median"], shown["mfu"], change)
                )
            before = now
        decisions = sorted((d for d in held if isinstance(d, Decision)), key=lambda d: (d.when, d.id), reverse=True)
        verdicts: Counter[str] = Counter(s.verdict for s in held if isinstance(s, Sandwich))
        out.append(
            Month(
                month=key,
                records=len(held),
                kinds=sorted(Counter(r.kind for r in held).items(), key=lambda kv: (-kv[1], kv[0])),
                decisions=decisions,
                sandwiches=sorted(verdicts.items(), key=lambda kv: (-kv[1], kv[0])),
                standing=standing,
            )
        )
    out.reverse()
    return out


def summary_of(month: Month) -> dict[str, Any]:
    """The month's counts as plain data (for `--json` readers and tests)."""
    return {
        "month": month.month,
        "records": month.records,
        "kinds": dict(month.kinds),
        "decisions": [d.id for d in month.decisions],
        "sandwiches": dict(month.sandwiches),
        "standing": [s.__dict__ for s in month.standing],
    }
