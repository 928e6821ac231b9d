"""What one sample of the process sampler costs, side by side in one run.

    python benchmarks/sampler_cost.py [--record]

Prints the median and p90 wall time of `Sampler.sample()` for: one pid; one pid plus an
exact-name scan of /proc; one pid with NVML (when it answers). The cost divided by the
interval (or by 2 s for the full name scan) is the share of one core the sampler's thread takes. With --record, the figures
go into this repository's own ledger as a note.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ledger.collectors.sampler import Sampler

REPEATS = 300


def cost(sampler: Sampler, *, uncached: bool = False) -> tuple[float, float]:
    sampler._nvml = None  # set below when wanted
    times = []
    for _ in range(REPEATS):
        if uncached:
            sampler._last_full_scan = 0.0  # force the full /proc scan the cache saves
        t = time.perf_counter()
        sampler.sample()
        times.append(time.perf_counter() - t)
    times.sort()
    return statistics.median(times), times[int(0.9 * len(times))]


def main() -> int:
    from ledger.collectors.sampler import _Nvml

    rows = []
    procs = sum(1 for e in os.scandir("/proc") if e.name.isdigit())
    s = Sampler(pids=[os.getpid()], nvml=False)
    rows.append(("1 pid", *cost(s)))
    s = Sampler(pids=[os.getpid()], names=["no-such-process"], nvml=False)
    rows.append((f"1 pid + name, cached ({procs} processes)", *cost(s)))
    s = Sampler(pids=[os.getpid()], names=["no-such-process"], nvml=False)
    rows.append(("1 pid + name, full /proc scan (every 2 s)", *cost(s, uncached=True)))
    nv = _Nvml(True)
    if nv.ok:
        s = Sampler(pids=[os.getpid()], nvml=True)
        times = []
        s._nvml = nv
        for _ in range(REPEATS):
            t = time.perf_counter()
            s.sample()
            times.append(time.perf_counter() - t)
        times.sort()
        rows.append((f"1 pid + NVML ({len(nv.handles)} GPU)", statistics.median(times), times[int(0.9 * len(times))]))
    else:
        rows.append((f"NVML: {nv.reason}", float("nan"), float("nan")))
    print(f"{'case':45s} {'median us':>10s} {'p90 us':>10s} {'share of a core':>16s}")
    for name, med, p90 in rows:
        period = 2.0 if "every 2 s" in name else 0.5  # how often this cost is paid at the default interval
        print(f"{name:45s} {med * 1e6:10.1f} {p90 * 1e6:10.1f} {med / period * 100:15.4f}%")
    machine = f"{platform.node()} {os.cpu_count()} cores, python {platform.python_version()}"
    print(machine)
    if "--record" in sys.argv:
        body = (
            "sampler cost per sample (median / p90, microseconds), "
            + machine
            + ": "
            + "; ".join(f"{n}: {m * 1e6:.1f} / {p * 1e6:.1f}" for n, m, p in rows if m == m)
            + ". Rerun: python benchmarks/sampler_cost.py"
        )
        root = Path(__file__).resolve().parents[1]
        subprocess.run(
            [str(Path(sys.executable).with_name("ledger")), "-C", str(root), "add", "note", "-"],
            input=json.dumps(
                {"title": "process sampler: cost of one sample", "body": body, "tags": ["benchmark", "sampler"]}
            ),
            text=True,
            check=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
