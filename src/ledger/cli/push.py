"""`ledger push`: commit new records, fetch, merge, check what is new, push; many writers at once."""

from __future__ import annotations

import json

import click

from ..checks.report import text as check_text
from ..errors import LedgerError
from ..git import GitError
from ..sync import PushOptions, push
from .output import open_ledger, print_json, visible


@click.command("push")
@click.argument("remote", default="origin")
@click.option(
    "--branch", default=None, metavar="NAME", help="The remote's branch (default: its default branch); one it has."
)
@click.option("--new-branch", is_flag=True, help="--branch names a branch the remote lacks: create it.")
@click.option(
    "--attempts",
    type=click.IntRange(1, 100),
    default=4,
    show_default=True,
    help="Pushes that try to land this commit, at most (the first, integrations, retries).",
)
@click.option(
    "--wait",
    type=click.FloatRange(0),
    default=300.0,
    show_default=True,
    help="Seconds to wait for a queued push to land before leaving it queued on the remote.",
)
@click.option(
    "--job",
    default=None,
    metavar="NAME",
    help="This job's name in its queue ref (default: SLURM, CI, torchrun or host).",
)
@click.option(
    "--no-queue", is_flag=True, help="No queue ref: fetch, merge, check, push, retry (remotes that refuse other refs)."
)
@click.option(
    "--integrate", "integrate_only", is_flag=True, help="Only land the queued pushes (CI, or a job after an array)."
)
@click.option("-m", "--message", default=None, help="Message of the commit of records not committed yet.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.pass_context
def command(
    ctx: click.Context,
    remote: str,
    branch: str | None,
    new_branch: bool,
    attempts: int,
    wait: float,
    job: str | None,
    no_queue: bool,
    integrate_only: bool,
    message: str | None,
    fmt: str,
) -> int:
    """Land this clone's records on REMOTE's branch, however many writers push at once.

    Commits the record files not committed yet, fetches, merges (never rebases, so stamped
    commits stay reachable), checks only what the push adds as the pre-push hook does, and
    pushes. A push that loses the race waits in its own queue ref (refs/ledger/incoming/...)
    until a writer integrates the queue; a killed push's leftovers are undone first.

    Exit codes: 0 landed (or queued, or nothing to push), 1 the check refused it (with
    --integrate: or refused a queued push, left queued and named), 2 bad usage,
    git failing, or a stale lock that blocks the remote (the command that clears it is printed).
    """

    try:
        return _push(ctx, remote, branch, new_branch, attempts, wait, job, no_queue, integrate_only, message, fmt)
    except (LedgerError, GitError) as exc:
        if fmt == "json":
            # A script reads one JSON object whatever happened (another push in this clone,
            # an unreachable remote, no git identity); stderr and the exit code are as in text.
            problems = exc.problems if isinstance(exc, LedgerError) else []
            lines = exc.lines() if isinstance(exc, LedgerError) else [str(exc)]
            print_json(
                {
                    "outcome": "error",
                    "message": "; ".join(lines),
                    "remote": remote,
                    "problems": [p.as_dict() for p in problems],
                    "exit_code": exc.exit_code if isinstance(exc, LedgerError) else 2,
                }
            )
        raise


def _push(
    ctx: click.Context,
    remote: str,
    branch: str | None,
    new_branch: bool,
    attempts: int,
    wait: float,
    job: str | None,
    no_queue: bool,
    integrate_only: bool,
    message: str | None,
    fmt: str,
) -> int:
    ledger = open_ledger(ctx)
    options = PushOptions(
        remote=remote,
        branch=branch,
        new_branch=new_branch,
        job=job,
        attempts=attempts,
        wait=wait,
        queue=not no_queue,
        integrate_only=integrate_only,
        message=message,
    )
    report = push(ledger, options, say=lambda line: click.echo(visible(f"ledger push: {line}"), err=True))
    if report.check is not None:
        click.echo(visible(check_text(report.check)), err=True)
    elif report.warned is not None:
        # A push that lands with warnings shows them, as the hook would have.
        click.echo(visible(check_text(report.warned)), err=True)
    for ref, refused in report.left_queued_checks.items():
        # Another writer's push that cannot go in: say why here too, since its writer's clone
        # may be gone (a SLURM task's node-local scratch) and this may be the only run that sees it.
        click.echo(f"ledger push: queued push {ref} was refused and left queued:", err=True)
        click.echo(visible(check_text(refused)), err=True)
    if fmt == "json":
        click.echo(json.dumps(report.as_dict(), indent=2))
    return report.exit_code
