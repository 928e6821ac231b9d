"""`ledger rules`: every rule of `ledger check` with its severity, parameters and documentation."""

from __future__ import annotations

from typing import Any

import click

from ..checks import Active, all_rules, configure
from ..errors import LedgerError
from .console import console
from .output import open_ledger, print_json


@click.command("rules")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--defaults", is_flag=True, help="Show the built-in defaults, not this ledger's configuration.")
@click.pass_context
def command(ctx: click.Context, fmt: str, defaults: bool) -> int:
    """List the rules of `ledger check`, as configured in ledger.yaml (`rules:`)."""

    rules = all_rules()
    active: dict[str, Active] | None = None
    if not defaults:
        try:
            active = configure(open_ledger(ctx).config.rules)
        except LedgerError as exc:
            if "no ledger.yaml" not in str(exc):
                raise
    rows: list[dict[str, Any]] = []
    for rule_id, rule in rules.items():
        conf = active[rule_id] if active else None
        rows.append(
            {
                "id": rule_id,
                "family": rule.family,
                "severity": conf.severity if conf else rule.severity,
                "default_severity": rule.severity,
                "params": conf.params if conf else rule.params,
                "param_docs": rule.param_docs,
                "doc": rule.doc,
                "fix": rule.fix,
            }
        )
    if fmt == "json":
        print_json(rows)
        return 0
    out = console()
    for row in rows:
        params = ", ".join(f"{k}={v!r}" for k, v in row["params"].items())
        out.print(f"[bold]{row['id']}[/bold]  {row['severity']}  ({row['family']}){'  ' + params if params else ''}")
        out.print(f"    {row['doc']}", markup=False)
        out.print(f"    fix: {row['fix']}", markup=False)
    return 0
