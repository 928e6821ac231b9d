"""`ledger list [--kind K]`."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from ..analysis.keyed import key_text
from ..schema.registry import KINDS
from .console import console
from .output import FORMAT_OPTION, open_ledger, print_json


@click.command("list")
@click.option("--kind", type=click.Choice(sorted(KINDS)), default=None, help="Only records of this kind.")
@click.option("--limit", type=int, default=None, help="Only the newest N records.")
@FORMAT_OPTION
@click.pass_context
def command(ctx: click.Context, kind: str | None, limit: int | None, fmt: str) -> int:
    """List records, oldest first, by when the evidence was taken."""
    ledger = open_ledger(ctx)
    records = ledger.records(kind)
    if limit is not None:
        records = records[-limit:]
    superseded_by = {old: r.id for r in ledger.records() for old in r.supersedes}
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
            "summary": r.summary(),
        }
        for r in records
    ]
    if fmt == "json":
        print_json(rows)
        return 0

    table = Table(title=f"{len(rows)} record(s) in {ledger.records_dir.relative_to(ledger.root)}")
    cols = ["id", "kind", "key", "when", "allocation", "topology", "commit", "summary"]
    if not any(row["key"] for row in rows):
        cols.remove("key")
    for col in cols:
        table.add_column(col, overflow="fold", no_wrap=col in ("id", "when", "key"))
    for row in rows:
        summary = row["summary"] + (f" (superseded by {row['superseded_by']})" if row["superseded_by"] else "")
        table.add_row(*(Text(str((summary if c == "summary" else row[c]) or "")) for c in cols))
    console().print(table)
    return 0
