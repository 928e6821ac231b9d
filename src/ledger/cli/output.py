"""Rendering helpers shared by the commands: errors, JSON, rich consoles."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import click

from ..errors import LedgerError


def print_error(exc: LedgerError) -> None:
    for line in exc.lines():
        click.echo(f"error: {line}", err=True)
    if len(exc.problems) > 1:
        click.echo(f"error: {exc}", err=True)


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False))


def console(stderr: bool = False):
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    # Piped output gets a wide console so ids and SHAs are never folded (COLUMNS overrides).
    width = console_width() if not stream.isatty() or os.environ.get("COLUMNS", "").isdigit() else None
    return Console(stderr=stderr, soft_wrap=False, highlight=False, width=width)


def open_ledger(ctx: click.Context):
    from ..store import Ledger

    return Ledger.open((ctx.obj or {}).get("ledger_dir"))


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


def fit_columns(columns, rows: list[dict], width: int, *, render=str) -> list:
    """The columns to show at `width`: least important (highest `importance`, then rightmost)
    dropped first until the table fits, never the first-importance ones.

    `columns` carry key, importance and role (ledger.analysis.status.Column); `render`
    turns a cell value into the text shown.
    """

    def need(col) -> int:
        cells = [len(render(row.get(col.key))) for row in rows] or [0]
        natural = max(len(col.title), *cells)
        return natural if col.role in ("id", "figure", "date") else min(natural, max(WRAP_AT, len(col.title)))

    kept = list(columns)
    while True:
        total = sum(need(c) for c in kept) + 2 * (len(kept) - 1)
        droppable = [c for c in kept if c.importance > 1]
        if total <= width or not droppable:
            return kept
        worst = max(droppable, key=lambda c: (c.importance, kept.index(c)))
        kept.remove(worst)


def console_width() -> int:
    """The terminal's width; COLUMNS when set (a pipe or a test); else 200 for pipes, so
    ids and SHAs are never folded in piped output."""
    import shutil

    if os.environ.get("COLUMNS", "").isdigit():
        return max(int(os.environ["COLUMNS"]), 40)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return 200


def print_fitted(out, title: str | None, columns, rows: list[dict], *, render=str, empty: str = "") -> list:
    """A table of `rows` with the columns that fit the console, text columns wrapping."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    if title:
        out.print(Text(title, style="bold"))
    if not rows:
        if empty:
            out.print(Text("  " + empty))
        return []
    kept = fit_columns(columns, rows, out.width - 2, render=render)
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, show_edge=False, expand=False)
    for col in kept:
        wraps = col.role not in ("id", "figure", "date")
        table.add_column(
            col.title,
            no_wrap=not wraps,
            overflow="fold",
            justify="right" if col.role == "figure" else "left",
            max_width=None if not wraps else max(WRAP_AT, len(col.title), out.width // 2),
        )
    for row in rows:
        table.add_row(*(Text(render(row.get(col.key))) for col in kept))
    out.print(table)
    return kept
