"""`ledger gate run`: run a test command and record it as a gate."""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path

import click

from ..collectors.gate_runner import run_gate
from ..errors import InputError, Problem
from ..importers.base import ImportOptions, import_files
from ..store.add import add_one
from .output import FORMAT_OPTION, print_json
from .writing import open_for_writing


@click.group("gate")
def command() -> None:
    """Gate records: test runs with their exit code, counts, skips and machine load."""


@command.command("run", context_settings={"ignore_unknown_options": True})
@click.option(
    "--junit",
    "junit",
    type=click.Path(dir_okay=False),
    default=None,
    help="The JUnit XML report the command writes (pytest --junitxml, ctest --output-junit).",
)
@click.option("--ctest", "ctest", is_flag=True, help="Read the counts from ctest's console output.")
@click.option("--interval", type=float, default=1.0, show_default=True, help="Seconds between load samples.")
@click.option("--source-sha", default=None, help="Commit of the tested source, when it is not this checkout.")
@click.option("--quiet", is_flag=True, help="Do not echo the command's output.")
@FORMAT_OPTION
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED, required=True)
@click.pass_context
def run(
    ctx: click.Context,
    junit: str | None,
    ctest: bool,
    interval: float,
    source_sha: str | None,
    quiet: bool,
    fmt: str,
    cmd: tuple[str, ...],
) -> int:
    """Run CMD (after `--`), then record a gate from its report.

    Exit 0 when the gate passed, 1 when it failed or executed no test.

        ledger gate run --junit report.xml -- pytest -q --junitxml report.xml
        ledger gate run --ctest -- ctest --test-dir build
    """

    if bool(junit) == ctest:
        raise InputError(
            "say where the counts are",
            [
                Problem(
                    "<command line>",
                    "--junit/--ctest",
                    "give exactly one of --junit FILE or --ctest",
                    "a gate needs the counts of what ran",
                )
            ],
        )
    ledger = open_for_writing(ctx)
    report = Path(junit) if junit else None
    if report is not None and report.exists():
        report.unlink()  # a stale report from an earlier run must not count for this one
    echo = None if quiet or fmt == "json" else click.echo
    with tempfile.TemporaryDirectory(prefix="ledger-gate-") as tmp:
        capture = Path(tmp) / "ctest-output.txt" if ctest else None
        gate = run_gate(cmd, interval_s=interval, capture=capture, on_line=echo)
        options = ImportOptions(
            source_sha=source_sha,
            exit_code=gate.exit_code,
            load_avg=gate.load_summary,
            command=shlex.join(gate.command),
        )
        path = capture if ctest else report
        if path is not None and path.exists():
            records = import_files(ledger, "ctest" if ctest else "junit", [path], options).records
        else:
            records = [
                add_one(
                    ledger,
                    "gate",
                    {
                        "title": "the test command wrote no report",
                        "command": shlex.join(gate.command),
                        "exit_code": gate.exit_code,
                        "executed": 0,
                        "duration_s": gate.duration_s,
                        "load_avg": gate.load_summary,
                        "format": "junit",
                        "outcome": "no-tests",
                        "extra": {"missing_report": str(report)},
                    },
                )
            ]
    rec = records[0]
    outcome = getattr(rec, "outcome", None)
    if fmt == "json":
        print_json(
            {
                "id": rec.id,
                "outcome": outcome,
                "exit_code": gate.exit_code,
                "executed": getattr(rec, "executed", None),
                "duration_s": round(gate.duration_s, 3),
                "load_avg": gate.load_summary,
            }
        )
    else:
        click.echo(
            f"gate {rec.id}: {outcome}, {getattr(rec, 'executed', 0)} executed, exit code {gate.exit_code}, "
            f"load {'/'.join(f'{v:.2f}' for v in gate.load_summary)} (min/median/max)",
            err=True,
        )
    return 0 if outcome == "pass" else 1
