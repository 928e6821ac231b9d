"""`ledger compare A B`."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text

from ..analysis.compare import compare, load_side
from .console import console
from .output import FORMAT_OPTION, open_ledger, print_json


@click.command("compare")
@click.argument("a")
@click.argument("b")
@click.option(
    "--allow-cross-allocation",
    is_flag=True,
    help="Compare across allocations anyway; the result is labelled NOT ATTRIBUTABLE.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=0.05,
    show_default=True,
    help="Significance level of the Mann-Whitney U test.",
)
@FORMAT_OPTION
@click.pass_context
def command(ctx: click.Context, a: str, b: str, allow_cross_allocation: bool, alpha: float, fmt: str) -> int:
    """Compare measurement B against measurement A.

    A and B are record ids (or unique prefixes), or comma-separated lists of ids for two
    sets. One measurement contributes its raw samples; a set contributes one value (its
    median) per measurement. Across contracts, metrics or units the comparison is
    refused; across allocations it is refused unless --allow-cross-allocation, which
    labels it not attributable. Refusals exit 2.
    """

    ledger = open_ledger(ctx)
    result = compare(
        load_side(ledger, a), load_side(ledger, b), allow_cross_allocation=allow_cross_allocation, alpha=alpha
    )
    if fmt == "json":
        print_json(result.as_dict())
        return 0

    out = console()
    table = Table(
        title=f"{result.a.metric} ({result.a.unit}, {'lower' if result.lower_is_better else 'higher'} is better)",
        title_justify="left",
    )
    table.add_column("")
    table.add_column("A", overflow="fold")
    table.add_column("B", overflow="fold")
    short = lambda ids: ", ".join(i[-8:] if len(ids) > 3 else i for i in ids)  # noqa: E731
    table.add_row("records", short(result.a.ids), short(result.b.ids))
    table.add_row("values", f"{result.a.n} ({result.a.basis})", f"{result.b.n} ({result.b.basis})")
    stat = result.a.statistic if result.a.statistic == result.b.statistic else "median"
    table.add_row(stat, f"{result.a.median_text} {result.a.unit}", f"{result.b.median_text} {result.b.unit}")
    table.add_row("spread", Text(result.a.spread), Text(result.b.spread))
    table.add_row("allocation", Text(str(result.a.allocation)), Text(str(result.b.allocation)))
    out.print(table)
    facts = Table(show_header=False, box=None)
    facts.add_column(style="cyan")
    facts.add_column()
    facts.add_row(
        "difference B - A", f"{result.difference_text}" + (f" ({result.percent_text})" if result.percent_text else "")
    )
    t = result.test
    if t.method == "99% interval overlap":
        facts.add_row("interval test", t.note or "")
    else:
        facts.add_row(
            "Mann-Whitney U",
            f"U = {t.u:g}, p = {t.p:.3g} ({t.method})" if t.p is not None else f"not testable: {t.note}",
        )
        if t.note and t.p is not None:
            facts.add_row("", Text(t.note, style="yellow"))
    facts.add_row(
        "effect size",
        f"Cliff's delta {result.cliffs_delta:+.2f} ({result.cliffs_magnitude}); Hodges-Lehmann shift {result.hodges_lehmann_text}"
        if result.cliffs_delta is not None
        else "none: a side is one value without samples",
    )
    facts.add_row("verdict", Text(result.verdict, style="bold"))
    facts.add_row("attribution", Text(result.label, style="bold red" if not result.attributable else "green"))
    facts.add_row("contract", result.contract or Text("none named", style="yellow"))
    out.print(facts)
    for warning in result.warnings:
        out.print(Text(f"warning: {warning}", style="yellow"))
    return 0
