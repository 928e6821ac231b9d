"""`ledger init [DIR]`."""

from __future__ import annotations

from pathlib import Path

import click

from ..site.mkdocs_run import prepare_mkdocs
from ..store import Ledger
from ..store.init import init
from .output import FORMAT_OPTION, print_json


@click.command("init")
@click.argument("directory", type=click.Path(file_okay=False), default=".")
@FORMAT_OPTION
def command(directory: str, fmt: str) -> int:
    """Write ledger.yaml, the records folder and mkdocs.yml in DIRECTORY. Running it twice changes nothing."""
    result = init(Path(directory))
    # What `ledger site build` adds to mkdocs.yml is written now, before the first commit.
    ledger = Ledger.open(result.root)
    mkdocs = result.root / ledger.config.site.mkdocs_yml
    if prepare_mkdocs(ledger) and mkdocs not in result.created + result.updated:
        result.updated.append(mkdocs)
    if fmt == "json":
        print_json(
            {
                "root": str(result.root),
                "created": [str(p) for p in result.created],
                "updated": [str(p) for p in result.updated],
            }
        )
        return 0
    for path in result.created:
        click.echo(f"created {path.relative_to(result.root)}")
    for path in result.updated:
        click.echo(f"updated {path.relative_to(result.root)}")
    if not result.changed:
        click.echo(f"{result.root} is already a ledger; nothing changed")
    else:
        click.echo("next: `ledger add KIND FILE`, then commit the records folder")
    return 0
