"""`ledger schema export DIR` and `ledger schema show KIND`."""

from __future__ import annotations

from pathlib import Path

import click

from ..schema.export import export_schemas, schema_for
from ..schema.registry import KINDS
from .output import print_json


@click.group("schema")
def command() -> None:
    """JSON Schemas of the record kinds."""


@command.command("export")
@click.argument("directory", type=click.Path(file_okay=False))
def export(directory: str) -> int:
    """Write one JSON Schema per kind into DIRECTORY."""
    for path in export_schemas(Path(directory)):
        click.echo(str(path))
    return 0


@command.command("show")
@click.argument("kind", type=click.Choice(sorted(KINDS)))
def show(kind: str) -> int:
    """Print the JSON Schema of KIND."""
    print_json(schema_for(kind))
    return 0
