"""`ledger check [--all | --base REF | --pre-push]`."""

from __future__ import annotations

import sys

import click

from ..checks import run_check
from ..checks.report import RENDERERS
from .output import open_ledger, visible


@click.command("check")
@click.option("--all", "mode", flag_value="all", default=True, help="Check every record and page (the default).")
@click.option(
    "--base",
    "base",
    metavar="REF",
    default=None,
    help="Check what HEAD adds since its merge base with REF, and append-only against it.",
)
@click.option(
    "--pre-push", "pre_push", is_flag=True, help="Read git's pre-push input on stdin and check what the push adds."
)
@click.option(
    "--pushed",
    "pushed",
    metavar="BEFORE",
    default=None,
    help="CI after a push: check HEAD as a push that moved a branch from BEFORE (e.g. github.event.before; "
    "all zeros for a new branch), force-pushes included, and the records folder's whole history.",
)
@click.option(
    "--remote",
    default=None,
    metavar="NAME",
    help="The remote pushed to (the pre-push hook passes it); finds the base of a new branch.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github"]),
    default="text",
    show_default=True,
    help="text for people, json for machines, github for workflow annotations.",
)
@click.option(
    "--no-cache",
    "no_cache",
    is_flag=True,
    help="Parse every record file again instead of trusting the verification cache "
    "(.git/ledger/check-cache, keyed by git blob id; safe to delete).",
)
@click.pass_context
def command(
    ctx: click.Context,
    mode: str,
    base: str | None,
    pre_push: bool,
    pushed: str | None,
    remote: str | None,
    fmt: str,
    no_cache: bool,
) -> int:
    """Check the ledger against its rules (`ledger rules` lists them).

    Exit codes: 0 clean (warnings allowed), 1 violations, 2 usage or internal error.
    """

    if sum(1 for given in (base, pre_push, pushed) if given) > 1:
        raise click.UsageError("give one of --base REF, --pushed BEFORE and --pre-push")
    ledger = open_ledger(ctx)
    if pushed:
        result = run_check(ledger, mode="pushed", base=pushed, remote=remote, use_cache=not no_cache)
    elif pre_push:
        result = run_check(ledger, mode="pre-push", pre_push_input=sys.stdin.read(), remote=remote)
    elif base:
        result = run_check(ledger, mode="base", base=base, use_cache=not no_cache)
    else:
        result = run_check(ledger, mode="all", use_cache=not no_cache)
    out = RENDERERS[fmt](result)
    out = visible(out) if fmt == "text" else out
    # In a hook, git shows stderr to the pusher; stdout is for pipes and CI logs.
    click.echo(out, err=pre_push and fmt == "text")
    return result.exit_code
