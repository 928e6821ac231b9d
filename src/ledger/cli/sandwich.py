"""`ledger sandwich`: A, candidate, B on one allocation, interleaved for N rounds, and the verdict."""

from __future__ import annotations

from functools import partial
from types import SimpleNamespace
from typing import Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..analysis.figures import measurement_uncertainty, readable_bytes, sandwich_figures
from ..analysis.sandwich import arm_rounds, leaning
from ..collectors.sandwich_runner import Arm, run_sandwich, sandwich_from_records, split_command
from .add import build_stamping, stamping_options
from .console import console
from .output import FORMAT_OPTION, print_json
from .writing import open_for_writing


@click.command("sandwich")
@click.option("--a", "a_cmd", metavar="CMD", default=None, help="The control command (arm A).")
@click.option("--candidate", "candidate_cmd", metavar="CMD", default=None, help="The candidate command.")
@click.option("--b", "b_cmd", metavar="CMD", default=None, help="Arm B (default: A again).")
@click.option("--rounds", type=click.IntRange(min=1), default=1, show_default=True, help="Rounds of A, candidate, B.")
@click.option(
    "--contract", default=None, help="Contract id or name the arms are measured under (default: the config's)."
)
@click.option(
    "--floor",
    "floor_percent",
    type=click.FloatRange(min=0),
    default=None,
    help="Smallest |delta| that counts, percent (default: rules.sandwich-verdict.floor_percent, else 0.5).",
)
@click.option("--label", "candidate_label", default=None, help="What the candidate changes (a commit, env flags).")
@click.option("--title", default=None, help="One line for the sandwich record.")
@click.option(
    "--metric", default=None, help="Name of the measured metric (default: the LEDGER line's, else wall_time)."
)
@click.option("--higher-is-better", is_flag=True, default=False, help="The metric is a rate (throughput), not a time.")
@click.option(
    "--timeout", type=click.FloatRange(min=0, min_open=True), default=None, help="Seconds each command may run."
)
@click.option(
    "--records",
    "record_ids",
    nargs=3,
    default=None,
    metavar="A X B",
    help="Sandwich three measurements already in the ledger instead of running commands.",
)
@click.option("--family", default=None, help="The family of changes the candidate belongs to (decisions index it).")
@click.option("--mechanism", default=None, help="Why the candidate should change the figure.")
@click.option("--tag", "tags", multiple=True, help="A tag for the sandwich record (repeat for more).")
@click.option("--link-url", "link_urls", multiple=True, help="A URL the evidence lives at (repeat for more).")
@click.option("--tracker-run", "tracker_runs", multiple=True, help="A tracker run id, e.g. W&B (repeat for more).")
@click.option(
    "--observed-at",
    default=None,
    help="When the sandwich was measured (ISO date or time); with --records the default is its last arm's.",
)
@click.option(
    "--regate",
    is_flag=True,
    default=False,
    help="The candidate is the measured source moved to a newer commit: a neutral verdict carries the "
    "stopping point forward to it (see docs/guide/guidance.md).",
)
@click.option(
    "--drift-vs-a",
    type=float,
    default=None,
    metavar="PERCENT",
    help="The control drift against A, |A - B| / A, as the report states it (0.124980): kept as typed, "
    "checked against the arms.",
)
@click.option("--dry-run", is_flag=True, default=False, help="Run and print the verdict; write nothing.")
@stamping_options
@FORMAT_OPTION
@click.pass_context
def command(
    ctx: click.Context,
    a_cmd,
    candidate_cmd,
    b_cmd,
    rounds,
    contract,
    floor_percent,
    candidate_label,
    title,
    metric,
    higher_is_better,
    timeout,
    record_ids,
    family,
    mechanism,
    tags,
    link_urls,
    tracker_runs,
    observed_at,
    regate,
    drift_vs_a,
    dry_run,
    source_path,
    source_sha,
    allocation,
    topology,
    fmt: str,
) -> int:
    """Run A, the candidate and B (A again) interleaved on this allocation, and record the verdict.

    Each command either prints a `LEDGER {json}` line (its median is the arm's value) or
    is timed by its wall time. The verdict is neutral unless |delta| clears both the
    control drift |A - B| and the floor.

        ledger sandwich --a 'python bench.py' --candidate 'FLAG=1 python bench.py' --rounds 3
    """

    ledger = open_for_writing(ctx)
    stamping = build_stamping(source_path, source_sha, allocation, topology)
    fields = _fields(family, mechanism, tags, link_urls, tracker_runs, observed_at, regate)
    if drift_vs_a is not None:
        fields["drift_vs_a_percent"] = drift_vs_a
    if record_ids:
        if a_cmd or candidate_cmd or b_cmd:
            raise click.UsageError("give either --records A X B or commands (--a, --candidate), not both")
        outcome = sandwich_from_records(
            ledger,
            *record_ids,
            floor_percent=floor_percent,
            candidate_label=candidate_label,
            title=title,
            stamping=stamping,
            write=not dry_run,
            fields=fields,
        )
    else:
        if fields:
            raise click.UsageError(
                "--family, --mechanism, --tag, --link-url, --tracker-run, --observed-at, --regate and --drift-vs-a "
                "go with "
                "--records A X B (a sandwich of recorded arms)"
            )
        if not a_cmd or not candidate_cmd:
            raise click.UsageError("--a CMD and --candidate CMD are required (or --records A X B)")
        a_arm, candidate_arm = Arm(command=split_command(a_cmd)), Arm(command=split_command(candidate_cmd))
        b_arm = Arm(command=split_command(b_cmd)) if b_cmd else None  # None: B is A again
        arms = (a_arm, candidate_arm, b_arm)
        run = partial(
            run_sandwich,
            ledger,
            arms[0],
            arms[1],
            arms[2],
            rounds=rounds,
            contract=contract,
            floor_percent=floor_percent,
            lower_is_better=False if higher_is_better else None,
            metric=metric,
            candidate_label=candidate_label,
            title=title,
            stamping=stamping,
            timeout=timeout,
            write=not dry_run,
        )
        if fmt == "text":
            progress = Progress(
                TextColumn("[bold]sandwich[/] {task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console(stderr=True),
                transient=False,
            )
            task = progress.add_task("", total=rounds * 3)

            def on_progress(done: int, total: int, label: str, round_no: int) -> None:
                name = {"a": "A", "candidate": "candidate", "b": "B"}.get(label, label)
                progress.update(task, completed=done, description=f"round {round_no}/{rounds}: {name}")

            with progress:
                outcome = run(on_progress=on_progress)
        else:
            outcome = run()
    r = outcome.result
    ids = {label: getattr(m, "id", None) for label, m in outcome.measurements.items()}
    sandwich_id = getattr(outcome.sandwich, "id", None)
    if fmt == "json":
        print_json({"sandwich": sandwich_id, "arms": ids, **r.as_dict(), "reason": r.reason(), "written": not dry_run})
        return 0

    _print_result(outcome, ids, sandwich_id, dry_run, fields.get("drift_vs_a_percent"))
    return 0


def _print_result(outcome: Any, ids: dict, sandwich_id: str | None, dry_run: bool, drift_vs_a: float | None) -> None:
    """The arms, figures and verdict as every page prints them (analysis.figures.sandwich_figures)."""
    r = outcome.result
    candidate = outcome.measurements.get("candidate")
    unit = outcome.sandwich.unit if outcome.sandwich is not None else getattr(candidate, "unit", "")
    # The figures as every page prints them: arms with the digits that let a reader
    # recompute the delta from them (analysis.figures.sandwich_figures).
    spreads = {getattr(m, "id", None): measurement_uncertainty(m) for m in outcome.measurements.values()}
    shown = sandwich_figures(
        SimpleNamespace(
            **r.record_fields(),
            unit=unit,
            control_a=ids.get("a"),
            candidate=ids.get("candidate"),
            control_b=ids.get("b"),
            drift_vs_a_percent=drift_vs_a,
        ),
        spreads.get,
    )
    table = Table(show_header=True, header_style="bold")
    for col in ("arm", "value", "record"):
        table.add_column(col)
    for label, name in (("a", "A"), ("candidate", "candidate"), ("b", "B")):
        table.add_row(name, shown[label].strip(), ids.get(label) or "-")
    out = console()
    out.print(table)
    out.print(
        f"midpoint {shown['midpoint']}  delta {shown['delta']} ({shown['delta_percent']})  "
        f"drift {shown['drift_percent']} ({shown['drift_vs_a_percent']} against A)  floor {shown['floor_percent']}"
    )
    for key, value in r.extra_deltas.items():
        out.print(f"{key} {_extra(key, value)}")
    recorded = [outcome.measurements.get(k) for k in ("a", "candidate", "b")]
    lean = leaning(r.a, r.candidate, r.b, r.verdict, r.lower_is_better, arm_rounds(recorded))
    out.print(f"verdict: [bold]{r.verdict}[/]  ({r.reason()})" + (f"; observed: {lean}" if lean else ""))
    if sandwich_id:
        out.print(f"sandwich {sandwich_id}")
    elif dry_run:
        out.print("dry run: nothing written")


def _extra(key: str, value: float) -> str:
    """An extra delta as the terminal prints it: bytes readable with the exact count beside."""
    if key.endswith("_bytes"):
        sign = "+" if value >= 0 else "-"
        return f"{sign}{readable_bytes(round(abs(value)))} ({value:+,.0f} B)"
    return f"{value:+.6g}"


def _fields(family, mechanism, tags, link_urls, tracker_runs, observed_at, regate) -> dict:
    """The sandwich record's own fields given on the command line (validated by `ledger add`'s schema)."""
    fields: dict = {}
    if family:
        fields["family"] = family
    if mechanism:
        fields["mechanism"] = mechanism
    if tags:
        fields["tags"] = list(tags)
    links = {k: list(v) for k, v in (("urls", link_urls), ("tracker_runs", tracker_runs)) if v}
    if links:
        fields["links"] = links
    if observed_at:
        fields["observed_at"] = observed_at
    if regate:
        fields["regate"] = True
    return fields
