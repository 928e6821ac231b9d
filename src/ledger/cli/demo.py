"""`ledger demo [DIR]`: build the example campaign, check it, build its site, summarise it."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from ..demo import build_demo
from ..demo.summary import summarize
from .console import console
from .output import FORMAT_OPTION, print_json


@click.command("demo")
@click.argument("directory", type=click.Path(file_okay=False), default="ledger-demo")
@click.option("--no-site", is_flag=True, help="Skip building the site.")
@FORMAT_OPTION
def command(directory: str, no_site: bool, fmt: str) -> int:
    """Write the example LTX-2 MFU campaign into DIRECTORY as a git repository, check it and build its site."""

    demo = build_demo(Path(directory))
    summary = summarize(demo, build_site=not no_site)
    if fmt == "json":
        print_json(summary.as_dict())
    else:
        render(summary, console())
    return summary.exit_code


def render(summary, out) -> None:

    out.print(Text(f"Example campaign written to {summary.root}", style="bold"))
    out.print("records: " + ", ".join(f"{n} {kind}" for kind, n in summary.counts.items()))
    out.print(Text(f"contract: {summary.contract}   MFU peak convention: {summary.peak}"))
    table = Table(title="Stopping point (derived; MFU recomputed from median step, batch and GPU count)")
    for col in ("Topology", "Local/global batch", "Median step", "Throughput", "MFU", "Status"):
        table.add_column(col, justify="right" if col in ("Median step", "Throughput", "MFU") else "left")
    for row in summary.stopping_point:
        table.add_row(
            Text(row.topology),
            row.batch,
            f"{row.median_s:.9f} s" if row.median_s is not None else "no valid step",
            f"{row.throughput:.6f} samples/s" if row.throughput is not None else "-",
            f"{row.mfu_percent:.6f}%" if row.mfu_percent is not None else "-",
            Text(row.status),
        )
    out.print(table)
    decisions = Table(title="Decision index")
    for col in ("Family", "Decision", "Where to continue"):
        decisions.add_column(col, overflow="fold")
    for d in summary.decisions:
        verdict = d["verdict"] + (f"; {d['qualifier']}" if d["qualifier"] else "")
        decisions.add_row(Text(d["family"]), Text(verdict), Text(d["where_to_continue"] or ""))
    out.print(decisions)
    if summary.check is not None:
        c = summary.check
        out.print(f"ledger check --all: exit {c['exit_code']}, {c['errors']} error(s), {c['warnings']} warning(s)")
        for line in c["messages"]:
            out.print(Text("  " + line))
    if summary.site and summary.site.get("index"):
        out.print(Text(f"site: open {summary.site['index']}  (or `ledger -C {summary.root} site serve`)", style="bold"))
