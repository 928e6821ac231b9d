"""Rendering helpers shared by the commands: errors, JSON, rich consoles."""

from __future__ import annotations

import json
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
    # Piped output gets a wide console so ids and SHAs are never folded.
    width = None if stream.isatty() else 200
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
