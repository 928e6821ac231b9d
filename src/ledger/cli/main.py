"""The `ledger` command. Subcommands are registered as data and imported only when run,
so `ledger add` never pays for the site, the checker or torch."""

from __future__ import annotations

import importlib
import os
import sys

import click

from ..errors import LedgerError
from ..version import __version__
from .output import print_error

#: command name -> "module:attribute" of its click command.
SUBCOMMANDS: dict[str, str] = {
    "init": "ledger.cli.init:command",
    "add": "ledger.cli.add:command",
    "show": "ledger.cli.show:command",
    "list": "ledger.cli.list:command",
    "status": "ledger.cli.status:command",
    "schema": "ledger.cli.schema:command",
    "site": "ledger.cli.site:command",
    "check": "ledger.cli.check:command",
    "hook": "ledger.cli.hook:command",
    "rules": "ledger.cli.rules:command",
    "demo": "ledger.cli.demo:command",
    "import": "ledger.cli.import_:command",
    "compare": "ledger.cli.compare:command",
    "collect": "ledger.cli.collect:group",
    "sandwich": "ledger.cli.sandwich:command",
    "sampler": "ledger.cli.sampler:group",
    "gate": "ledger.cli.gate:command",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        return getattr(importlib.import_module(module), attr)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ledger")
@click.option(
    "-C",
    "--ledger",
    "ledger_dir",
    type=click.Path(file_okay=False),
    default=None,
    envvar="LEDGER_DIR",
    help="Folder of the ledger (default: nearest ledger.yaml at or above the current folder).",
)
@click.pass_context
def cli(ctx: click.Context, ledger_dir: str | None) -> None:
    """An evidence ledger for performance engineering.

    Exit codes: 0 fine, 1 the check found violations, 2 bad input or usage.
    """
    ctx.ensure_object(dict)
    ctx.obj["ledger_dir"] = ledger_dir


def main(argv: list[str] | None = None) -> int:
    try:
        rv = cli.main(args=argv, prog_name="ledger", standalone_mode=False)
    except LedgerError as exc:
        print_error(exc)
        return exc.exit_code
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return 2 if isinstance(exc, click.UsageError) else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        if os.environ.get("LEDGER_DEBUG"):
            raise
        click.echo(f"error: internal error: {type(exc).__name__}: {exc}", err=True)
        click.echo(
            "error: this is a bug in ledger; rerun with LEDGER_DEBUG=1 for the traceback and report it", err=True
        )
        return 2
    return int(rv or 0)


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
