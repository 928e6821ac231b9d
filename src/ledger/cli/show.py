"""`ledger show ID`."""

from __future__ import annotations

import json

import click
from rich.table import Table
from rich.text import Text

from ..analysis.eligibility import Judge
from ..analysis.figures import (
    SPREAD_FIELDS,
    as_recorded,
    exact_bytes,
    measurement_uncertainty,
    quote_field,
    readable_bytes,
    readable_duration,
    result_line,
    sandwich_figures,
    sandwich_result,
)
from ..analysis.gates import gate_load, gate_result, margin_share, mutation_result
from ..analysis.metrics import audit_of, contract_audits, derived_facts
from ..analysis.sandwich import arm_rounds
from ..checks.registry import eligibility_thresholds
from .console import console
from .list import summary
from .output import FORMAT_OPTION, open_ledger, print_json


#: Measurement fields quoted to the digits the measurement's spread supports.
def text_of(record, key: str, value) -> str:
    """A field's value as the one digit policy writes it; the exact value beside a unit change."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key.endswith("_bytes") and isinstance(value, int):
        return f"{readable_bytes(value)} ({exact_bytes(value)})"
    if isinstance(value, (int, float)) and (key.endswith("_s") or key.endswith("_seconds")):
        return f"{readable_duration(value)} ({as_recorded(value)} s)"
    if isinstance(value, float):
        if record.kind == "measurement" and key in SPREAD_FIELDS:
            return quote_field(record, key, value)
        return as_recorded(value)
    if key == "samples" and isinstance(value, list):
        return ", ".join(as_recorded(v) for v in value)
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) < 100 else json.dumps(value, indent=2, ensure_ascii=False)
    return str(value)


def result_lines(record) -> list[str]:
    """What a decision, mutation or gate leads with, as its record page does: the verdict or
    result first, then a gate's load and its goldens, the closest to failing first."""
    if record.kind == "decision":
        return [record.verdict + (f"; {record.qualifier}" if record.qualifier else "")]
    if record.kind == "mutation":
        return [mutation_result(record)]
    if record.kind != "gate":
        return []
    margins = sorted(record.margins, key=lambda m: m.fraction, reverse=True)
    load = gate_load(record)
    return [gate_result(record), *([load] if load else []), *map(margin_share, margins)]


@click.command("show")
@click.argument("record_id")
@FORMAT_OPTION
@click.pass_context
def command(ctx: click.Context, record_id: str, fmt: str) -> int:
    """Show one record: its result, stamps, links and body. ID may be a unique prefix.

    Text quotes each figure by the one digit policy (to the digits its spread supports,
    else as recorded; byte counts in readable units with the exact count beside them);
    --format json prints the record exactly as stored."""
    ledger = open_ledger(ctx)
    rid = ledger.resolve_id(record_id)
    path = ledger.find(rid)
    assert path is not None
    raw = ledger.read_raw(path)
    if fmt == "json":
        print_json(raw)
        return 0

    record = ledger.load(path)
    out = console()
    out.print(Text(f"{record.kind} {record.id}", style="bold"))
    if summary(record) and (record.kind != "measurement" or record.title):
        out.print(Text(summary(record)))
    if record.kind == "measurement":
        # The result first, as the record page leads with it.
        out.print(Text(result_line(record), style="bold"))
        # What ledger derives from it: MFU under every peak its FLOP audit names, throughput.
        audits = contract_audits(ledger.records("flop-audit"))
        cited = {}
        if record.flop_audit and ledger.exists(record.flop_audit):
            cited[record.flop_audit] = ledger.get(record.flop_audit)
        for label, text in derived_facts(record, audit_of(record, cited, audits)):
            out.print(Text(f"{label}: {text}"))
        # Health as the stopping point judges it: from the allocation's environments.
        thresholds = eligibility_thresholds(ledger.config.rules)
        health, reasons = Judge([record, *ledger.records("environment")], thresholds).health(record)
        out.print(Text(f"Allocation health: {health}" + (f" ({'; '.join(reasons)})" if reasons else "")))
    if record.kind == "environment":
        # Its health as every surface judges it: from the readings under ledger.yaml's thresholds.
        health, reasons = Judge([record], eligibility_thresholds(ledger.config.rules)).environment(record)
        out.print(
            Text(f"Allocation health: {health} by its readings" + (f" ({'; '.join(reasons)})" if reasons else ""))
        )
    for n, line in enumerate(result_lines(record)):
        out.print(Text(line, style="bold" if n == 0 else ""))
    if record.kind == "sandwich":
        # The verdict and the delta first, as its record page leads with them; the arms'
        # spreads set the digits, as there.
        arms = {
            r: ledger.get(r) for r in (record.control_a, record.candidate, record.control_b) if r and ledger.exists(r)
        }
        shown = sandwich_figures(record, lambda rid: measurement_uncertainty(arms.get(rid)))
        order = [arms.get(r) for r in (record.control_a, record.candidate, record.control_b)]
        result, detail = sandwich_result(record, shown, arm_rounds(order) if None not in order else None)
        out.print(Text(result, style="bold"))
        out.print(Text(detail))
        b = "not run (a pair)" if record.is_pair else shown["b"]
        out.print(Text(f"A {shown['a']} · candidate {shown['candidate']} · B {b} · delta {shown['delta']}"))
    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="cyan", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("file", str(path.relative_to(ledger.root)))
    for key in sorted(raw):
        if key in ("id", "kind"):
            continue
        # Text(), not markup: user text such as "[red]" is shown as typed.
        table.add_row(key, Text(text_of(record, key, raw[key])))
    out.print(table)
    return 0
