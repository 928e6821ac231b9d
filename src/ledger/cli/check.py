"""`ledger check [--all | --base REF | --pre-push]`."""

from __future__ import annotations

import sys

import click

from ..checks import run_check
from ..checks.report import RENDERERS
from .output import open_ledger


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
    ctx: click.Context, mode: str, base: str | None, pre_push: bool, remote: str | None, fmt: str, no_cache: bool
) -> int:
    """Check the ledger against its rules (`ledger rules` lists them).

    Exit codes: 0 clean (warnings allowed), 1 violations, 2 usage or internal error.
    """

    if base and pre_push:
        raise click.UsageError("give one of --base REF and --pre-push")
    ledger = open_ledger(ctx)
    if pre_push:
        result = run_check(ledger, mode="pre-push", pre_push_input=sys.stdin.read(), remote=remote)
    elif base:
        result = run_check(ledger, mode="base", base=base)
    else:
        result = run_check(ledger, mode="all", use_cache=not no_cache)
    out = RENDERERS[fmt](result)
    # In a hook, git shows stderr to the pusher; stdout is for pipes and CI logs.
    click.echo(out, err=pre_push and fmt == "text")
    return result.exit_code
