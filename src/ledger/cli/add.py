"""`ledger add KIND [FILE|-]`."""

from __future__ import annotations

import os
from pathlib import Path

import click
from pydantic import ValidationError

from ..errors import InputError, Problem
from ..git import Git
from ..schema.envelope import Source
from ..store.add import Stamping, add
from ..store.inputs import read_items
from ..store.limits import Limits
from ..store.runlog import read_log
from ..store.stamps import AllocationOverrides
from .output import FORMAT_OPTION, print_json, print_warnings
from .writing import open_for_writing


def stamping_options(func):
    """--source, --source-sha, --allocation, --topology: shared by every command that writes."""
    func = click.option("--topology", default=None, help="Topology such as '4x GB200' (overrides detection).")(func)
    func = click.option("--allocation", default=None, help="Allocation id (overrides SLURM/torchrun/CI detection).")(
        func
    )
    func = click.option(
        "--source-sha",
        default=None,
        help="Explicit commit SHA of the measured source (historical evidence; may be abbreviated).",
    )(func)
    func = click.option(
        "--source",
        "source_path",
        type=click.Path(exists=True, file_okay=False),
        default=None,
        help="Checkout of the measured source (default: the config's `source`).",
    )(func)
    return func


def build_stamping(
    source_path: str | None, source_sha: str | None, allocation: str | None, topology: str | None
) -> Stamping:
    source = None
    if source_sha:
        try:
            source = Source(sha=source_sha)
        except ValidationError as exc:
            msg = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise InputError(
                "bad --source-sha",
                [
                    Problem(
                        "<command line>", "--source-sha", msg, "give the commit's SHA, e.g. from `git rev-parse HEAD`"
                    )
                ],
            ) from None
    return Stamping(
        source_path=Path(source_path) if source_path else None,
        source=source,
        overrides=AllocationOverrides(id=allocation, topology=topology),
    )


@click.command("add")
@click.argument("kind")
@click.argument("file", default="-")
@click.option(
    "--from-log",
    "from_log",
    type=click.Path(dir_okay=False),
    default=None,
    help="Read measurements from a run's output: `LEDGER {json}` and BF16_* lines (docs/guide/sandwich.md).",
)
@click.option(
    "--warmup",
    type=click.IntRange(min=0),
    default=None,
    help="With --from-log: warmup steps, when the log does not say.",
)
@stamping_options
@FORMAT_OPTION
@click.pass_context
def command(
    ctx: click.Context, kind: str, file: str, from_log, warmup, source_path, source_sha, allocation, topology, fmt: str
) -> int:
    """Add records of KIND from FILE (YAML, JSON, JSON Lines) or standard input.

    Bad input exits 2 and writes nothing; every problem is printed with its place.
    """
    ledger = open_for_writing(ctx)
    stamping = build_stamping(source_path, source_sha, allocation, topology)
    if from_log is not None:
        if kind != "measurement" or file != "-":
            raise click.UsageError(
                "--from-log reads measurements: use `ledger add measurement --from-log FILE` with no FILE argument"
            )

        items = read_log(from_log, warmup=warmup)
    else:
        items = read_items(file, Limits.of(ledger.config.rules))
    for item in items:
        for warning in dict.fromkeys(item.warnings):
            click.echo(f"warning: {item.file}: {warning}", err=True)
    records = add(ledger, kind, items, stamping)
    print_warnings(ledger)
    _warn_ignored(ledger, records)
    if fmt == "json":
        print_json(
            [
                {"id": r.id, "kind": r.kind, "path": str(ledger.path_for(r.kind, r.id).relative_to(ledger.root))}
                for r in records
            ]
        )
    else:
        for r in records:
            click.echo(r.id)
    return 0


def _warn_ignored(ledger, records) -> None:
    """Records that a .gitignore line hides are written but would never be committed: say so."""

    paths = [os.path.relpath(ledger.path_for(r.kind, r.id), ledger.root) for r in records]
    hidden = Git(ledger.root).ignored(paths)
    if hidden:
        path, why = hidden[0]
        click.echo(
            f"warning: {len(hidden)} of the {len(paths)} record file(s) written are ignored by git "
            f"({why}; first: {path}), so they will not be committed. Remove that .gitignore line; "
            "`git check-ignore -v FILE` shows the rule. `ledger check --pre-push` refuses the push (records-ignored).",
            err=True,
        )
