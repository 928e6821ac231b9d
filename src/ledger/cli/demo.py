"""`ledger demo [DIR]`: build the example campaign, check it, build its site, summarise it."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from ..analysis.status import Column, Section, Status, verdict_phrase
from ..demo import build_demo
from ..demo.summary import summarize
from .console import console
from .output import FORMAT_OPTION, print_json
from .status import render as render_sections


@click.command("demo")
@click.argument("directory", type=click.Path(file_okay=False), default="ledger-demo")
@click.option("--no-site", is_flag=True, help="Skip building the site.")
@click.option(
    "--campaign",
    type=click.Choice(["ltx2", "decode"]),
    default="ltx2",
    show_default=True,
    help="ltx2: the FastVideo LTX-2 training-MFU campaign on GB200 allocations. decode: the LTX-2.5 "
    "decode-speed and memory investigation (a CPU thread sweep, transcribed memory phases, review findings).",
)
@FORMAT_OPTION
def command(directory: str, no_site: bool, campaign: str, fmt: str) -> int:
    """Write an example campaign into DIRECTORY as a git repository, check it and build its site."""

    demo = build_demo(Path(directory), campaign)
    summary = summarize(demo, build_site=not no_site)
    if fmt == "json":
        print_json(summary.as_dict())
    elif campaign == "decode":
        render_status(summary, console())
    else:
        render(summary, console())
    return summary.exit_code


def render_status(summary, out) -> None:
    """A campaign without training words: its `ledger status` (stopping point, sweep, decisions, owed)."""

    out.print(Text(f"Example campaign written to {summary.root}", style="bold"))
    out.print("records: " + ", ".join(f"{n} {kind}" for kind, n in summary.counts.items()))
    data = summary.status
    sections = [
        Section(
            s["key"],
            s["title"],
            [Column(**c) for c in s["columns"]],
            s["rows"],
            s["empty"],
            s["notes"],
            s.get("extra", {}),
        )
        for s in data["sections"]
    ]
    status = Status(data["contract"], data["contract_rule"], sections, data["records"])
    render_sections(status, out, {}, [])
    _tail(summary, out)


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
            row.median_text,
            row.throughput_text,
            row.mfu_text,
            Text(row.status),
        )
    out.print(table)
    decisions = Table(title="Decision index")
    for col in ("Family", "Decision", "Where to continue"):
        decisions.add_column(col, overflow="fold")
    for d in summary.decisions:
        verdict = verdict_phrase(d["verdict"], d["qualifier"])
        decisions.add_row(Text(d["family"]), Text(verdict), Text(d["where_to_continue"] or ""))
    out.print(decisions)
    _tail(summary, out)


def _tail(summary, out) -> None:

    if summary.check is not None:
        c = summary.check
        out.print(f"ledger check --all: exit {c['exit_code']}, {c['errors']} error(s), {c['warnings']} warning(s)")
        for line in c["messages"]:
            out.print(Text("  " + line))
        out.print(
            Text(
                "  (sha-abbreviated is off in this demo's ledger.yaml: the campaign's published SHAs are "
                "abbreviated commits of a repository not cloned here; the comment there says so)"
            )
        )
    if summary.site and summary.site.get("index"):
        out.print(Text(f"site: open {summary.site['index']}  (or `ledger -C {summary.root} site serve`)", style="bold"))
