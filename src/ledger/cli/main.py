"""The `ledger` command. Subcommands are registered as data and imported only when run,
so `ledger add` never pays for the site, the checker or torch.

`pip install ledger` is the core (init, add, show, list, check, hook, status and the other
record commands); the site and the collectors are extras. A command whose extra is not
installed says which one to install and exits 2 (`MissingExtra`), also in `--help`.
"""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

from ..errors import LedgerError, MissingExtra
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
    "push": "ledger.cli.push:command",
    "rules": "ledger.cli.rules:command",
    "demo": "ledger.cli.demo:command",
    "import": "ledger.cli.import_:command",
    "compare": "ledger.cli.compare:command",
    "collect": "ledger.cli.collect:group",
    "sandwich": "ledger.cli.sandwich:command",
    "sampler": "ledger.cli.sampler:group",
    "gate": "ledger.cli.gate:command",
}


#: top-level package -> the extra of ledger that installs it (pyproject.toml's optional-dependencies).
EXTRA_OF_PACKAGE: dict[str, str] = {
    "jinja2": "site",
    "markupsafe": "site",
    "mkdocs": "site",
    "material": "site",
    "markdown": "site",
    "matplotlib": "site",
    "numpy": "site",
    "torch": "collectors",
    "pynvml": "collectors",
}


def missing_extra(exc: ModuleNotFoundError, command: str) -> MissingExtra | None:
    """The error to report when `command` failed because an extra is not installed, else None."""
    package = (exc.name or "").split(".")[0]
    extra = EXTRA_OF_PACKAGE.get(package)
    return None if extra is None else MissingExtra(command, extra, package)


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(name)
        if target is None:
            return None
        module, attr = target.split(":")
        try:
            return getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            error = missing_extra(exc, f"ledger {name}")
            if error is None:
                raise
            return _unavailable(name, error)


def _unavailable(name: str, error: MissingExtra) -> click.Command:
    """A stand-in for a command whose extra is not installed: listed, and saying so when run."""

    def fail(args: tuple[str, ...]) -> None:
        raise error

    return click.Command(
        name,
        callback=fail,
        params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        add_help_option=False,
        short_help=f"(needs the {error.extra} extra: pip install 'ledger[{error.extra}]')",
        help=str(error),
    )


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
    except Exception as exc:  # the last line of defence: no traceback for users
        # A command that imports an optional package only when it runs (torch, for one).
        words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")][:2]
        error = missing_extra(exc, " ".join(["ledger", *words])) if isinstance(exc, ModuleNotFoundError) else None
        if error is not None:
            print_error(error)
            return error.exit_code
        if os.environ.get("LEDGER_DEBUG"):
            raise
        click.echo(f"error: internal error: {type(exc).__name__}: {exc}", err=True)
        click.echo(
            "error: this is a bug in ledger; rerun with LEDGER_DEBUG=1 for the traceback and report it", err=True
        )
        return 2
    return int(rv or 0)


def entry() -> None:
    # A short-lived command that builds one object per record: with the default thresholds
    # the cyclic collector rescans the whole record set again and again (a warm `check --all`
    # of 100,000 records spent a third of its time there). Freeze what the imports made and
    # collect rarely, as mypy does for the same reason (mypy/main.py: gc.set_threshold).
    gc.freeze()
    gc.set_threshold(200_000, 30, 30)
    sys.exit(main())


if __name__ == "__main__":
    entry()
