"""`ledger hook install|uninstall`: the git pre-push hook that runs `ledger check --pre-push`."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import click

from ..checks.hooks import install, uninstall
from .output import open_ledger


@click.group("hook")
def command() -> None:
    """Manage the git pre-push hook."""


def _executable() -> str:
    argv0 = Path(sys.argv[0])
    if argv0.name == "ledger" and argv0.exists():
        return str(argv0.resolve())
    found = shutil.which("ledger")
    return str(Path(found).resolve()) if found else str(Path(sys.executable).with_name("ledger"))


@command.command("install")
@click.option("--chain", is_flag=True, help="Keep an existing pre-push hook and run it before ledger's.")
@click.option(
    "--force", is_flag=True, help="Replace an existing pre-push hook (a copy is kept as pre-push.ledger-backup)."
)
@click.pass_context
def install_cmd(ctx: click.Context, chain: bool, force: bool) -> int:
    """Write .git/hooks/pre-push (or under core.hooksPath) running `ledger check --pre-push`."""

    ledger = open_ledger(ctx)
    result = install(ledger.root, _executable(), sys.executable, chain=chain, force=force)
    verb = "rewrote" if result.replaced_own else "installed"
    click.echo(f"{verb} {result.path}")
    if result.chained:
        click.echo(f"runs first: {result.chained}")
    if result.backup:
        click.echo(f"the previous hook is kept (not run) as {result.backup}")
    return 0


@command.command("uninstall")
@click.pass_context
def uninstall_cmd(ctx: click.Context) -> int:
    """Remove ledger's pre-push hook (a chained hook is put back)."""

    removed = uninstall(open_ledger(ctx).root)
    click.echo(f"removed {removed}" if removed else "no ledger pre-push hook installed")
    return 0
