"""Run a test command as a gate: its exit code, its duration, and the machine's load while it ran.

The context documents read gates that "passed while measuring nothing" and gates run at
load 82-94 on a shared box; a gate record keeps both facts beside the counts. The counts
come from the report the command writes (JUnit XML) or from ctest's output, through the
importers, so a run that executed no test is recorded as `no-tests`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, Problem

#: At most this many load samples are kept (evenly thinned), so a long gate stays compact.
MAX_LOAD_SAMPLES = 120


@dataclass
class GateRun:
    command: list[str]
    exit_code: int
    duration_s: float
    load_samples: list[float] = field(default_factory=list)
    output: Path | None = None

    @property
    def load_summary(self) -> list[float]:
        """min, median and max of the one-minute load average while the command ran."""
        if not self.load_samples:
            return []
        return [min(self.load_samples), statistics.median(self.load_samples), max(self.load_samples)]


def _thin(values: list[float], limit: int) -> list[float]:
    if len(values) <= limit:
        return values
    step = len(values) / limit
    return [values[int(i * step)] for i in range(limit)]


def run_gate(
    command: Sequence[str],
    *,
    interval_s: float = 1.0,
    capture: Path | None = None,
    on_line: Callable[[str], None] | None = None,
    cwd: Path | None = None,
) -> GateRun:
    """Run `command`, sampling the one-minute load average every `interval_s` seconds.

    Output lines go to `on_line` (the CLI echoes them) and, when `capture` is given, to that file.
    """
    if not command:
        raise InputError(
            "no command",
            [
                Problem(
                    "<command line>",
                    "CMD",
                    "no test command given",
                    "put it after `--`, e.g. `ledger gate run --junit r.xml -- pytest --junitxml r.xml`",
                )
            ],
        )
    samples: list[float] = [os.getloadavg()[0]]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(interval_s):
            samples.append(os.getloadavg()[0])

    sampler = threading.Thread(target=sample, name="ledger-gate-load", daemon=True)
    started = time.perf_counter()
    try:
        proc = subprocess.Popen(
            list(command), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )
    except OSError as exc:
        raise InputError(
            "command did not start",
            [Problem("<command line>", "CMD", f"{command[0]}: {exc.strerror}", "check the command and its PATH")],
        ) from None
    sampler.start()
    sink = capture.open("w", encoding="utf-8") if capture else None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if on_line:
                on_line(line.rstrip("\n"))
            if sink:
                sink.write(line)
        exit_code = proc.wait()
    finally:
        done.set()
        sampler.join()
        if sink:
            sink.close()
        if proc.stdout is not None:
            proc.stdout.close()  # else an unclosed-file ResourceWarning when it is collected
    samples.append(os.getloadavg()[0])
    return GateRun(list(command), exit_code, time.perf_counter() - started, _thin(samples, MAX_LOAD_SAMPLES), capture)
