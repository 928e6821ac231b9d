"""Plain output helpers shared by the commands: errors, JSON, the ledger to open, the width to
fit. Tables and colour are in `cli.console` (rich), which `ledger check` never loads."""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

import click

from ..errors import LedgerError
from ..store import Ledger
from ..text import show_controls, show_invisible


def visible(text: str) -> str:
    """`text` with every terminal control character shown escaped (`\x1b`), and every bidi
    control and zero-width character too (`\\u202e`), so a record holding ESC/OSC sequences
    cannot drive the terminal that prints it nor reorder what it shows. The one filter every
    text the commands print goes through (rich consoles, errors, warnings, check reports)."""
    return show_invisible(show_controls(text))


def print_error(exc: LedgerError) -> None:
    for line in exc.lines():
        click.echo(visible(f"error: {line}"), err=True)
    if len(exc.problems) > 1:
        click.echo(visible(f"error: {exc}"), err=True)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


def open_ledger(ctx: click.Context):
    """The ledger the command works on (a command that writes records opens it with
    `cli.writing.open_for_writing`)."""
    return Ledger.open((ctx.obj or {}).get("ledger_dir"))


def print_warnings(ledger) -> None:
    """Warnings the write-time check found (the records were written)."""
    admission = getattr(ledger, "admission", None)
    for v in getattr(admission, "warnings", []):
        where = ", ".join(p for p in (f"line {v.line}" if v.line else "", f"field {v.field}" if v.field else "") if p)
        click.echo(
            visible(f"warning: {v.file}{':' + where if where else ''}: {v.rule}: {v.message} ({v.fix})"), err=True
        )


FORMAT_OPTION = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output for people (text) or machines (json).",
)


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()


#: A text column wider than this wraps rather than pushing other columns out.
WRAP_AT = 28


def column_need(col, rows: list[dict], render=str) -> int:
    """The width a column asks for: whole for ids, figures and dates; text up to WRAP_AT."""
    cells = [len(render(row.get(col.key))) for row in rows] or [0]
    natural = max(len(col.title), *cells)
    return natural if not col.wraps else min(natural, max(WRAP_AT, len(col.title)))


def fit_columns(columns, rows: list[dict], width: int, *, render=str) -> list:
    """The columns to show at `width`: least important (highest `importance`, then rightmost)
    dropped first until the table fits, never the first-importance ones.

    `columns` carry key, importance and role (ledger.analysis.status.Column); `render`
    turns a cell value into the text shown.
    """

    def need(col) -> int:
        return column_need(col, rows, render)

    kept = list(columns)
    while True:
        # Columns are three characters apart: padding on either side and rich's divider.
        total = sum(need(c) for c in kept) + 3 * (len(kept) - 1)
        droppable = [c for c in kept if c.importance > 1]
        if total <= width or not droppable:
            return kept
        worst = max(droppable, key=lambda c: (c.importance, kept.index(c)))
        kept.remove(worst)


def console_width() -> int:
    """The terminal's width; COLUMNS when set (a pipe or a test); else 200 for pipes, so
    ids and SHAs are never folded in piped output."""

    if os.environ.get("COLUMNS", "").isdigit():
        return max(int(os.environ["COLUMNS"]), 40)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return 200
