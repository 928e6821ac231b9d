"""`ledger status [--contract C]`: the stopping point, the newest decisions and what is owed."""

from __future__ import annotations

import click
from rich.text import Text

from ..analysis.status import ledger_status, unique_prefixes, verdict_phrase
from ..checks.registry import ledger_guidance
from ..errors import InputError, Problem
from ..pages import read_spec_owed
from .console import console, print_fitted
from .output import FORMAT_OPTION, open_ledger, print_json


@click.command("status")
@click.option(
    "--contract",
    "contract",
    default=None,
    metavar="NAME",
    help="Contract by name or id prefix (default: `contract:` in ledger.yaml, else the contract "
    "the newest accepted decision cites, else the one with the most valid measurements).",
)
@FORMAT_OPTION
@click.pass_context
def command(ctx: click.Context, contract: str | None, fmt: str) -> int:
    """The campaign's state: the stopping point under the current contract, the newest
    decisions and what is owed. Readable at 80 columns: detail columns drop first."""
    ledger = open_ledger(ctx)
    records = ledger.records()
    asked = contract is not None
    name = contract if asked else ledger.config.contract
    owed_items, unreadable = read_spec_owed(ledger.specs_dir)
    status = ledger_status(records, name, asked=asked, owed_items=owed_items, guidance=ledger_guidance(ledger, records))
    if name and status.contract is None:
        where = "--contract" if asked else "ledger.yaml contract:"
        known = sorted({r.name for r in records if r.kind == "contract"})
        raise InputError(
            "no such contract",
            [
                Problem(
                    str(ledger.root / "ledger.yaml") if not asked else "--contract",
                    where,
                    f"names {name!r}, which no contract record has",
                    f"use one of: {', '.join(known)}" if known else "add one with `ledger add contract FILE`",
                )
            ],
        )
    if fmt == "json":
        data = status.as_dict()
        data["unreadable_specs"] = unreadable
        print_json(data)
        return 0
    render(status, console(), unique_prefixes(r.id for r in records), unreadable)
    return 0


def render(status, out, prefixes: dict[str, str], unreadable: list[str]) -> None:

    c = status.contract
    if c:
        out.print(Text(f"Contract {c['name']}", style="bold"))
        out.print(Text(f"  {status.contract_rule}"))
    else:
        out.print(Text("No contract record yet.", style="bold"))

    def cell(value) -> str:
        if value is None or value == "":
            return "–"
        return prefixes.get(value, str(value)) if isinstance(value, str) else str(value)

    for section in status.sections:
        out.print()
        rows = section.rows
        if section.key == "stopping_point":
            rows = [
                {
                    **r,
                    "status": r["status"]
                    + (f" ({'; '.join(r['reasons'])})" if r["reasons"] else "")
                    + ("; RE-GATE OWED" if r.get("regate") == "re-gate owed" else ""),
                }
                for r in rows
            ]
        if section.key == "decisions":
            rows = [{**r, "verdict": verdict_phrase(r["verdict"], r["qualifier"])} for r in rows]
        print_fitted(out, section.title, section.columns, rows, render=cell, empty=section.empty)
        for note in section.notes:
            out.print(Text("  " + note))
    for path in unreadable:
        out.print(Text(f"note: {path}: front matter does not parse; `ledger check` says where"))
