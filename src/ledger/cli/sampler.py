"""`ledger sampler run` (sample a command's memory by phase) and `ledger sampler mark NAME`."""

from __future__ import annotations

import click
from rich.table import Table

from ..collectors.sampler import Sampler, mark, missing_pids, save, watch
from .add import build_stamping, stamping_options
from .console import console
from .output import FORMAT_OPTION, print_json
from .writing import open_for_writing


@click.group("sampler")
def group() -> None:
    """Sample MemAvailable, per-process anonymous/file RSS and GPU memory, by phase."""


def _gib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**30:+.3f}" if value < 0 else f"{value / 2**30:.3f}"


def _dgib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**30:+.3f}"


@group.command("run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--pid", "pids", type=int, multiple=True, help="Sample this process id (repeatable).")
@click.option(
    "--name",
    "names",
    multiple=True,
    help="Sample processes whose name (comm or argv[0] basename) is exactly NAME (repeatable). Never a pattern: a wrapper whose arguments mention NAME is not matched.",
)
@click.option(
    "--interval", type=click.FloatRange(min=0.01), default=0.5, show_default=True, help="Seconds between samples."
)
@click.option(
    "--marks",
    "marks_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Marks file `ledger sampler mark` appends to (default: a fresh temporary file, exported as LEDGER_SAMPLER_MARKS).",
)
@click.option(
    "--duration",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Without a command: stop after this many seconds.",
)
@click.option("--no-nvml", is_flag=True, default=False, help="Do not query NVML for GPU memory and utilization.")
@click.option("--title", default=None, help="One line for the record.")
@click.option("--dry-run", is_flag=True, default=False, help="Sample and print; write nothing.")
@stamping_options
@FORMAT_OPTION
@click.argument("cmd", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def run(
    ctx: click.Context,
    pids,
    names,
    interval,
    marks_file,
    duration,
    no_nvml,
    title,
    dry_run,
    source_path,
    source_sha,
    allocation,
    topology,
    fmt,
    cmd,
) -> int:
    """Run CMD (after --) under the sampler, or watch --pid/--name; write a memory-profile record.

    Without --pid/--name the command's own process and its descendants are sampled.
    Inside CMD, `ledger sampler mark NAME` begins a phase and `ledger sampler mark --end`
    ends it. The exit code is the command's, as with `time`.

        ledger sampler run --name python3 --interval 1 -- ./render.sh
    """
    ledger = None if dry_run else open_for_writing(ctx)
    stamping = build_stamping(source_path, source_sha, allocation, topology)
    if not cmd and not pids and not names:
        raise click.UsageError("give a command after --, or --pid / --name to watch")
    for pid in missing_pids(pids):
        raise click.BadParameter(f"no process {pid}", param_hint="--pid")
    sampler = Sampler(pids=list(pids), names=list(names), interval=interval, nvml=not no_nvml)
    watched = watch(sampler, cmd, marks_file=marks_file, duration=duration)
    exit_code, command_text = watched.exit_code, watched.command
    record = None
    if ledger is not None:
        saved = save(ledger, sampler, command=command_text, exit_code=exit_code, title=title, stamping=stamping)
        record = saved.record
        body = record.model_dump(mode="json", exclude_none=True)
    else:
        body = sampler.summary()
    if fmt == "json":
        print_json(
            {
                "id": getattr(record, "id", None),
                **{
                    k: body.get(k)
                    for k in ("samples", "duration_s", "processes", "phases", "gpu", "series", "attachments")
                },
            }
        )
    else:
        out = console()
        procs = Table(title="processes (GiB)", header_style="bold")
        for col in ("process", "found by", "anon peak", "file peak", "gpu peak", "cores max"):
            procs.add_column(col)
        for p in body.get("processes", []):
            procs.add_row(
                f"{p['name']}[{p['pid']}]",
                p["found_by"],
                _gib(p.get("anon_peak_bytes")),
                _gib(p.get("file_peak_bytes")),
                _gib(p.get("gpu_peak_bytes")),
                "-" if p.get("cpu_cores_max") is None else f"{p['cpu_cores_max']:.2f}",
            )
        out.print(procs)
        if body.get("phases"):
            phases = Table(title="phases (deltas, GiB)", header_style="bold")
            for col in ("phase", "from s", "to s", "MemAvailable", "process", "anon", "file", "gpu"):
                phases.add_column(col)
            hidden = 0
            for ph in body["phases"]:
                # The record keeps every process; the table shows those that moved by 1 MiB or more.
                moved = [
                    pr
                    for pr in ph.get("processes", [])
                    if any(
                        abs(pr.get(k) or 0) >= 2**20
                        for k in ("anon_delta_bytes", "file_delta_bytes", "gpu_delta_bytes", "anon_peak_rise_bytes")
                    )
                ]
                hidden += len(ph.get("processes", [])) - len(moved)
                rows = moved or [{}]
                for i, pr in enumerate(rows):
                    phases.add_row(
                        ph["name"] if i == 0 else "",
                        f"{ph['start_s']:.2f}" if i == 0 else "",
                        f"{ph['end_s']:.2f}" if i == 0 else "",
                        _dgib(ph.get("mem_available_delta_bytes")) if i == 0 else "",
                        pr.get("process", "-"),
                        _dgib(pr.get("anon_delta_bytes")),
                        _dgib(pr.get("file_delta_bytes")),
                        _dgib(pr.get("gpu_delta_bytes")),
                    )
            out.print(phases)
            if hidden:
                out.print(
                    f"({hidden} phase row(s) of processes that moved less than 1 MiB are in the record, not shown)"
                )
        gpu = body.get("gpu", {})
        out.print(
            f"{body.get('samples')} samples over {body.get('duration_s')} s; GPU: "
            + (f"NVML, {gpu.get('devices', 0)} device(s)" if gpu.get("nvml") else gpu.get("reason", "none"))
        )
        if record is not None:
            out.print(f"memory-profile {record.id}  series {body['series']}")
        if exit_code:
            out.print(f"command exited {exit_code}")
    return exit_code or 0


@group.command("mark")
@click.argument("name", default="")
@click.option("--end", is_flag=True, default=False, help="End the phase begun by the last mark.")
@click.option(
    "--file",
    "marks_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Marks file (default: $LEDGER_SAMPLER_MARKS, set by `ledger sampler run`).",
)
def mark_command(name: str, end: bool, marks_file: str | None) -> int:
    """Timestamp a phase boundary for the running sampler: NAME begins a phase, --end ends it."""
    if not name and not end:
        raise click.UsageError("give a phase NAME, or --end")
    mark(name, end=end, path=marks_file)
    return 0
