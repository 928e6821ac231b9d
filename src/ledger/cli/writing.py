"""The ledger of a command that writes records: every write first runs the rules `ledger
check` would refuse (ledger.checks.admission). Apart from `cli.output` so the commands that
only read (show, list, status) never load the checker."""

from __future__ import annotations

import click

from ..checks.admission import admit
from ..store import Ledger
from .output import open_ledger


def open_for_writing(ctx: click.Context) -> Ledger:
    ledger = open_ledger(ctx)
    admit(ledger)
    return ledger
