"""`ledger show ID`."""

from __future__ import annotations

import json

import click
from rich.table import Table
from rich.text import Text

from .console import console
from .output import FORMAT_OPTION, open_ledger, print_json


@click.command("show")
@click.argument("record_id")
@FORMAT_OPTION
@click.pass_context
def command(ctx: click.Context, record_id: str, fmt: str) -> int:
    """Show one record: its stamps, links and body. ID may be a unique prefix."""
    ledger = open_ledger(ctx)
    rid = ledger.resolve_id(record_id)
    path = ledger.find(rid)
    assert path is not None
    raw = ledger.read_raw(path)
    if fmt == "json":
        print_json(raw)
        return 0

    record = ledger.load(path)
    out = console()
    out.print(Text(f"{record.kind} {record.id}", style="bold"))
    if record.summary():
        out.print(Text(record.summary()))
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="cyan", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("file", str(path.relative_to(ledger.root)))
    for key in sorted(raw):
        if key in ("id", "kind"):
            continue
        value = raw[key]
        if isinstance(value, (dict, list)):
            text = (
                json.dumps(value, ensure_ascii=False)
                if len(json.dumps(value)) < 100
                else json.dumps(value, indent=2, ensure_ascii=False)
            )
        else:
            text = str(value)
        # Text(), not markup: user text such as "[red]" is shown as typed.
        table.add_row(key, Text(text))
    out.print(table)
    return 0
