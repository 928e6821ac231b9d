"""rich consoles and tables for the commands that print them (list, show, status, ...).

Kept apart from `cli.output` so the commands that print plain lines (`ledger check` on every
push, `ledger add`) do not import rich.
"""

from __future__ import annotations

import os
import sys

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .output import WRAP_AT, column_need, console_width, fit_columns, visible


class _VisibleConsole(Console):
    """A rich console that shows every control character in printed text escaped (`visible`):
    rich's own styling is added after this, from the segments' styles, so colours still work."""

    def _render_buffer(self, buffer):
        return super()._render_buffer(seg if seg.control else seg._replace(text=visible(seg.text)) for seg in buffer)


def console(stderr: bool = False):

    stream = sys.stderr if stderr else sys.stdout
    # Piped output gets a wide console so ids and SHAs are never folded (COLUMNS overrides).
    width = console_width() if not stream.isatty() or os.environ.get("COLUMNS", "").isdigit() else None
    return _VisibleConsole(stderr=stderr, soft_wrap=False, highlight=False, width=width)


def print_fitted(out, title: str | None, columns, rows: list[dict], *, render=str, empty: str = "") -> list:
    """A table of `rows` with the columns that fit the console, text columns wrapping."""

    if title:
        out.print(Text(title, style="bold"))
    if not rows:
        if empty:
            out.print(Text("  " + empty))
        return []
    kept = fit_columns(columns, rows, out.width - 2, render=render)
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, show_edge=False, expand=False)
    for col in kept:
        wraps = col.wraps
        table.add_column(
            col.title,
            no_wrap=not wraps,
            overflow="fold",
            # A heading or a figure is never folded; only text wraps to make room.
            min_width=len(col.title) if wraps else column_need(col, rows, render),
            justify="right" if col.role == "figure" else "left",
            max_width=None if not wraps else max(WRAP_AT, len(col.title), out.width // 2),
        )
    for row in rows:
        table.add_row(*(Text(render(row.get(col.key))) for col in kept))
    out.print(table)
    return kept
