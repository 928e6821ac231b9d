"""`ledger list [--kind K]`."""

from __future__ import annotations

import click

from ..analysis.dates import when_text
from ..analysis.figures import quote_of
from ..analysis.keyed import key_text
from ..analysis.status import Column, unique_prefixes
from ..schema.registry import KINDS
from .console import console, print_fitted
from .output import FORMAT_OPTION, open_ledger, print_json

#: Columns by importance: id, kind, summary and the value stay at any width (the summary
#: wraps to make room; an imported record's summary is its title, without the value);
#: detail leaves first.
COLUMNS = [
    Column("id", "id", 1, "id"),
    Column("kind", "kind", 1),
    Column("key", "key", 3, "figure"),
    Column("summary", "summary", 1),
    Column("value", "value", 1, "figure"),
    Column("when", "when", 3, "date"),
    Column("topology", "topology", 4),
    Column("commit", "commit", 5, "figure"),
    Column("allocation", "allocation", 6),
]


def summary(record) -> str:
    """A record's one-line summary, its figure quoted by the one digit policy."""
    if record.kind == "measurement" and not record.title and record.outcome == "ok" and record.median is not None:
        field = record.headline_field
        return f"{record.metric} {record.headline_label} {quote_of(record, getattr(record, field), record.unit, field=field)}"
    return record.summary()


def value(record) -> str | None:
    """A measurement's value as every surface quotes it; an issue's state and owner (None for
    other kinds)."""
    if record.kind == "issue":
        return record.status + (f", {record.owner}" if record.owner else "")
    if record.kind != "measurement":
        return None
    field = record.headline_field
    if record.outcome != "ok" or getattr(record, field) is None:
        return record.outcome if record.outcome != "ok" else None
    return quote_of(record, getattr(record, field), record.unit, field=field)


@click.command("list")
@click.option("--kind", type=click.Choice(sorted(KINDS)), default=None, help="Only records of this kind.")
@click.option("--limit", type=int, default=None, help="Only the newest N records.")
@click.option(
    "--live", is_flag=True, help="Only live records: none a correction supersedes (each issue once, as it stands)."
)
@FORMAT_OPTION
@click.pass_context
def command(ctx: click.Context, kind: str | None, limit: int | None, live: bool, fmt: str) -> int:
    """List records, oldest first, by when the evidence was taken.

    Every record is listed, a corrected one marked "(superseded by ...)"; --live lists only
    what stands. Ids are shown as their shortest unique prefix (`ledger show PREFIX` takes
    it); on a narrow terminal the allocation, commit, topology and time columns leave first."""
    ledger = open_ledger(ctx)
    records = ledger.records(kind)
    everything = ledger.records() if kind else records
    superseded_by = {old: r.id for r in everything for old in r.supersedes}
    if live:
        records = [r for r in records if r.id not in superseded_by]
    if limit is not None:
        records = records[-limit:]
    rows = [
        {
            "id": r.id,
            "kind": r.kind,
            "key": key_text(r) or None,
            "superseded_by": superseded_by.get(r.id),
            "when": r.when.isoformat().replace("+00:00", "Z"),
            "allocation": r.allocation.id if r.allocation else None,
            "topology": r.allocation.topology if r.allocation else None,
            "commit": r.source.sha[:12] if r.source else None,
            "summary": summary(r),
            "value": value(r),
        }
        for r in records
    ]
    if fmt == "json":
        print_json(rows)
        return 0
    # Prefixes unique among every record of the ledger, not only those listed.
    prefixes = unique_prefixes(p.stem for p in ledger.iter_paths())
    shown = [
        {
            **row,
            "id": prefixes.get(row["id"], row["id"]),
            "when": when_text(r, zone=False),
            "summary": row["summary"]
            + (f" (superseded by {prefixes.get(row['superseded_by'])})" if row["superseded_by"] else ""),
        }
        for r, row in zip(records, rows, strict=True)
    ]
    columns = [c for c in COLUMNS if c.key not in ("value", "key") or any(r[c.key] for r in rows)]
    print_fitted(
        console(),
        f"{len(rows)} record(s) in {ledger.records_dir.relative_to(ledger.root)}",
        columns,
        shown,
        render=lambda v: "" if v is None else str(v),
        empty="no records yet: `ledger add KIND FILE` appends one",
    )
    return 0
