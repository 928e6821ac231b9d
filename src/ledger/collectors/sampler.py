"""The process sampler: MemAvailable, per-process anonymous and file-backed RSS, GPU memory.

A background thread samples, at a chosen interval:

* ``MemAvailable`` from /proc/meminfo (what the machine can still give);
* for each target process, ``RssAnon``, ``RssFile`` and ``RssShmem`` from
  /proc/PID/status and its CPU time (cores busy between two samples). File-backed RSS is
  sampled because an mmap'd checkpoint grows it while anonymous memory stays flat;
* through NVML (nvidia-ml-py) when it answers: each device's utilization and memory
  used, and each target process's GPU memory (compute apps).

Targets are found by exact pid, or by exact process name: ``/proc/PID/comm`` or the
basename of ``argv[0]`` equal to the name, never a pattern over the command line, which
would match a ``sudo``/``docker`` wrapper whose arguments mention the workload.

Phases are timestamped by ``with sampler.phase("decode"):`` in-process, or by
``ledger sampler mark NAME`` (or :func:`mark`) from anything the sampler launched: a
JSON line appended to the marks file named by ``LEDGER_SAMPLER_MARKS``. A mark begins a
phase and ends the previous marked one; ``--end`` ends it.

The result is a ``memory-profile`` record: peaks and per-phase deltas, and the full
series as a gzip'd JSON Lines attachment whose sha256 is in the record. No torch here.
"""

from __future__ import annotations

import gzip
import json
import os
import shlex
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from ..redact import redact
from ..store.add import add
from ..store.inputs import Item
from ..store.ledger import write_attachment

#: Environment variable naming the marks file; set for the command `ledger sampler run` starts.
MARKS_ENV = "LEDGER_SAMPLER_MARKS"
SERIES_FORMAT = "ledger-sampler/1"
ATTACHMENT_FOLDER = "memory-profile"  # under the records folder's attachments/
_COMM_LEN = 15  # the kernel truncates comm to 15 characters
_CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# -- /proc readers ------------------------------------------------------------------------


def read_meminfo() -> dict[str, int]:
    """/proc/meminfo in bytes (MemTotal, MemAvailable, ...)."""
    out: dict[str, int] = {}
    with open("/proc/meminfo", "rb") as fh:
        for line in fh:
            key, _, rest = line.partition(b":")
            parts = rest.split()
            if parts:
                out[key.decode()] = int(parts[0]) * (1024 if parts[1:2] == [b"kB"] else 1)
    return out


def read_status(pid: int) -> dict[str, int | str] | None:
    """RssAnon/RssFile/RssShmem/VmRSS (bytes) and Name of a process; None when it is gone."""
    wanted = {b"RssAnon": "anon", b"RssFile": "file", b"RssShmem": "shmem", b"VmRSS": "rss"}
    out: dict[str, int | str] = {}
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                key, _, rest = line.partition(b":")
                if key == b"Name":
                    out["name"] = rest.strip().decode("utf-8", "replace")
                elif key in wanted:
                    out[wanted[key]] = int(rest.split()[0]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return out


def read_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name may hold spaces and parentheses: fields start after the last ')'.
    fields = data[data.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
        return int(data[data.rindex(b")") + 2 :].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def process_names(pid: int) -> tuple[str | None, str | None]:
    """(comm, basename of argv[0]) of a process."""
    try:
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None, None
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        argv0 = ""
    return comm, (os.path.basename(argv0) or None)


def name_matches(name: str, comm: str | None, argv0: str | None) -> bool:
    """Exact equality with comm (as the kernel truncates it) or with argv[0]'s basename."""
    if comm is not None and (comm == name or (len(name) > _COMM_LEN and comm == name[:_COMM_LEN])):
        return True
    return argv0 is not None and argv0 == name


def find_by_name(name: str, *, exclude: set[int] | None = None) -> list[int]:
    """Pids whose comm or argv[0] basename is exactly `name` (never a substring or pattern)."""
    exclude = exclude or set()
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        if pid in exclude:
            continue
        if name_matches(name, *process_names(pid)):
            out.append(pid)
    return sorted(out)


def descendants(root: int) -> list[int]:
    """Every process below `root` in the process tree (by parent pid, exact)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            parent = _ppid(int(entry.name))
            if parent is not None:
                children.setdefault(parent, []).append(int(entry.name))
    out, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(children.get(pid, []))
    return sorted(out)


# -- marks from a shell -------------------------------------------------------------------


def mark(name: str, *, end: bool = False, path: str | os.PathLike[str] | None = None) -> Path:
    """Append a timestamped phase mark to the marks file (`path`, else $LEDGER_SAMPLER_MARKS)."""
    target = path or os.environ.get(MARKS_ENV)
    if not target:
        raise InputError(
            "no marks file",
            [
                Problem(
                    "<environment>",
                    MARKS_ENV,
                    "no marks file is known",
                    f"run under `ledger sampler run`, or pass --file / set {MARKS_ENV}",
                )
            ],
        )
    if (not name and not end) or "\n" in name:
        raise InputError(
            "bad phase name",
            [Problem("<command line>", "NAME", f"{name!r} is not a phase name", "give one word, e.g. decode")],
        )
    line = json.dumps({"t": time.time(), "name": name, "event": "end" if end else "begin", "pid": os.getpid()}) + "\n"
    # One O_APPEND write of a short line: concurrent markers never interleave.
    fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return Path(target)


# -- NVML ---------------------------------------------------------------------------------


class _Nvml:
    def __init__(self, enabled: bool) -> None:
        self.ok = False
        self.reason: str | None = None
        self.handles: list[Any] = []
        if not enabled:
            self.reason = "disabled"
            return
        try:
            import pynvml  # nvidia-ml-py

            pynvml.nvmlInit()
            self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            self.nvml = pynvml
            self.ok = True
        except ImportError:
            self.reason = "nvidia-ml-py is not installed"
        except Exception as exc:  # any NVML failure means no GPU column, said plainly
            self.reason = f"NVML did not start: {exc}"

    def sample(self, pids: set[int]) -> tuple[list[float | None], list[int | None], dict[int, int] | None]:
        """Utilization and memory used per device, and GPU bytes per target pid.

        The per-pid map is None when a device could not list its compute apps; when every
        device answered, a target it does not list holds 0 bytes there.
        """
        utils: list[float | None] = []
        used: list[int | None] = []
        per_pid: dict[int, int] | None = dict.fromkeys(pids, 0)
        nv = self.nvml
        for h in self.handles:
            try:
                utils.append(float(nv.nvmlDeviceGetUtilizationRates(h).gpu))
            except Exception:  # an unsupported counter is a blank, not a failure
                utils.append(None)
            try:
                used.append(int(nv.nvmlDeviceGetMemoryInfo(h).used))
            except Exception:  # e.g. [N/A] on unified-memory parts
                used.append(None)
            try:
                listed = nv.nvmlDeviceGetComputeRunningProcesses(h)
            except Exception:  # no per-process column rather than a wrong one
                per_pid = None
                continue
            if per_pid is None:
                continue
            for proc in listed:
                if proc.pid in pids and proc.usedGpuMemory is not None:
                    per_pid[proc.pid] += int(proc.usedGpuMemory)
        return utils, used, per_pid

    def close(self) -> None:
        if self.ok:
            try:
                self.nvml.nvmlShutdown()
            except Exception:
                pass


# -- the sampler --------------------------------------------------------------------------


@dataclass
class _Target:
    pid: int
    name: str
    found_by: str


@dataclass
class _Event:
    t: float  # seconds after start
    name: str
    event: str  # begin | end
    source: str  # api | marker


class Sampler:
    """Sample memory of chosen processes in a background thread.

    with Sampler(names=["python3"], interval=0.5) as s:
        with s.phase("load"):
            ...
    body, series = s.summary(), s.series_bytes()
    """

    def __init__(
        self,
        *,
        pids: list[int] | tuple[int, ...] = (),
        names: list[str] | tuple[str, ...] = (),
        tree: list[int] | tuple[int, ...] = (),
        interval: float = 0.5,
        marks_file: str | os.PathLike[str] | None = None,
        nvml: bool = True,
    ) -> None:
        if interval <= 0:
            raise ValueError("interval must be positive")
        self.interval = float(interval)
        self.names = list(names)
        self.tree_roots = list(tree)
        self.marks_file = Path(marks_file) if marks_file else None
        self._targets: dict[int, _Target] = {}
        for pid in pids:
            self._add(pid, "pid")
        self._rows: list[dict[str, Any]] = []
        self._events: list[_Event] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._cpu_last: dict[int, tuple[float, float]] = {}
        self._marks_offset = 0
        self._mark_open: str | None = None
        self._nvml_enabled = nvml
        self._nvml: _Nvml | None = None
        self._meminfo_total: int | None = None
        self.t0_wall = time.time()
        self.t0 = time.perf_counter()
        self.started_at: float | None = None
        self.stopped_at: float | None = None
        self._self_pids = {os.getpid()}
        self._name_cache: dict[int, bool] = {}
        self._ppid_cache: dict[int, int | None] = {}
        self._last_full_scan = 0.0

    # -- targets ---------------------------------------------------------------------------

    def _add(self, pid: int, found_by: str) -> None:
        if pid in self._targets:
            return
        status = read_status(pid)
        name = str(status.get("name")) if status else (process_names(pid)[0] or "?")
        self._targets[pid] = _Target(pid, name, found_by)

    def add_pid(self, pid: int, found_by: str = "pid") -> None:
        with self._lock:
            self._add(pid, found_by)

    def add_tree(self, root: int) -> None:
        """Sample `root` (as the launched child) and every process below it."""
        with self._lock:
            self._add(root, "child")
            self.tree_roots.append(root)

    def _discover(self) -> None:
        if not self.names and not self.tree_roots:
            return
        # Reading every process's comm and cmdline on each tick costs milliseconds on a busy
        # host; new pids are read at once, and the cache is dropped every 2 s so that a
        # process that exec'd into the workload's name is found too.
        now = time.monotonic()
        if now - self._last_full_scan >= 2.0:
            self._name_cache.clear()
            self._ppid_cache.clear()
            self._last_full_scan = now
        live = [int(e.name) for e in os.scandir("/proc") if e.name.isdigit()]
        for pid in live:
            if pid in self._self_pids or pid in self._targets:
                continue
            if self.names and pid not in self._name_cache:
                comm, argv0 = process_names(pid)
                self._name_cache[pid] = any(name_matches(n, comm, argv0) for n in self.names)
                if self._name_cache[pid]:
                    self._add(pid, "name")
            if self.tree_roots and pid not in self._ppid_cache:
                self._ppid_cache[pid] = _ppid(pid)
        if self.tree_roots:
            # Walk down from each root through the cached parent links (exact pids only).
            children: dict[int, list[int]] = {}
            for pid, parent in self._ppid_cache.items():
                if parent is not None:
                    children.setdefault(parent, []).append(pid)
            stack = [r for r in self.tree_roots]
            while stack:
                for child in children.get(stack.pop(), []):
                    if child not in self._targets:
                        self._add(child, "descendant")
                    stack.append(child)

    # -- sampling --------------------------------------------------------------------------

    def _now(self) -> float:
        return time.perf_counter() - self.t0

    def _read_marks(self) -> None:
        if self.marks_file is None:
            return
        try:
            with open(self.marks_file, "rb") as fh:
                fh.seek(self._marks_offset)
                data = fh.read()
        except FileNotFoundError:
            return
        # Only whole lines: a mark being written is read on the next tick.
        complete = data[: data.rfind(b"\n") + 1]
        self._marks_offset += len(complete)
        for raw in complete.splitlines():
            try:
                m = json.loads(raw)
                t = float(m["t"]) - self.t0_wall
                name = str(m["name"])
                event = "end" if m.get("event") == "end" else "begin"
            except (ValueError, KeyError, TypeError):
                continue
            if event == "begin":
                if self._mark_open is not None:
                    self._events.append(_Event(t, self._mark_open, "end", "marker"))
                self._mark_open = name
                self._events.append(_Event(t, name, "begin", "marker"))
            elif self._mark_open is not None and name in (self._mark_open, ""):
                self._events.append(_Event(t, self._mark_open, "end", "marker"))
                self._mark_open = None

    def sample(self) -> dict[str, Any]:
        """Take one sample now (the thread calls this; phase boundaries call it too)."""
        with self._lock:
            return self._sample_locked()

    def _sample_locked(self) -> dict[str, Any]:
        self._read_marks()
        self._discover()
        t = self._now()
        meminfo = read_meminfo()
        self._meminfo_total = meminfo.get("MemTotal")
        row: dict[str, Any] = {"t": round(t, 4), "mem_available": meminfo.get("MemAvailable")}
        procs: dict[str, dict[str, Any]] = {}
        wall = time.perf_counter()
        for pid in list(self._targets):
            status = read_status(pid)
            cpu = read_cpu_seconds(pid)
            if status is None:
                continue
            entry: dict[str, Any] = {k: status[k] for k in ("anon", "file", "shmem") if k in status}
            if cpu is not None:
                last = self._cpu_last.get(pid)
                if last is not None and wall > last[1]:
                    entry["cpu"] = round(max(0.0, (cpu - last[0]) / (wall - last[1])), 3)
                self._cpu_last[pid] = (cpu, wall)
            procs[str(pid)] = entry
        if self._nvml is not None and self._nvml.ok:
            utils, used, per_pid = self._nvml.sample(set(self._targets))
            row["gpu_util"] = utils
            row["gpu_used"] = used
            for pid, nbytes in (per_pid or {}).items():
                if str(pid) in procs:
                    procs[str(pid)]["gpu"] = nbytes
        row["procs"] = procs
        self._rows.append(row)
        return row

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def start(self) -> Sampler:
        if self._thread is not None:
            raise RuntimeError("the sampler is already running")
        self._nvml = _Nvml(self._nvml_enabled)
        self.t0_wall = time.time()
        self.t0 = time.perf_counter()
        self.started_at = self.t0_wall
        self.sample()
        self._thread = threading.Thread(target=self._run, name="ledger-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> Sampler:
        if self._thread is None:
            return self
        self._stop.set()
        self._thread.join()
        with self._lock:
            self._sample_locked()
            end = self._now()
            if self._mark_open is not None:
                self._events.append(_Event(end, self._mark_open, "end", "marker"))
                self._mark_open = None
            self.stopped_at = self.t0_wall + end
        if self._nvml is not None:
            self._nvml.close()
        self._thread = None
        return self

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Timestamp a phase in-process; a sample is taken at each boundary."""
        with self._lock:
            self._sample_locked()
            self._events.append(_Event(self._now(), name, "begin", "api"))
        try:
            yield
        finally:
            with self._lock:
                self._sample_locked()
                self._events.append(_Event(self._now(), name, "end", "api"))

    # -- results ---------------------------------------------------------------------------

    @property
    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._rows)

    def _phases(self) -> list[tuple[str, float, float, str]]:
        open_: dict[str, list[tuple[float, str]]] = {}
        out: list[tuple[str, float, float, str]] = []
        end_of_run = self._rows[-1]["t"] if self._rows else 0.0
        for ev in sorted(self._events, key=lambda e: e.t):
            if ev.event == "begin":
                open_.setdefault(ev.name, []).append((ev.t, ev.source))
            elif open_.get(ev.name):
                start, source = open_[ev.name].pop()
                out.append((ev.name, start, ev.t, source))
        for name, starts in open_.items():
            for start, source in starts:
                out.append((name, start, max(start, end_of_run), source))
        return sorted(out, key=lambda p: (p[1], p[2]))

    def summary(self) -> dict[str, Any]:
        """The memory-profile body (without command, attachment and envelope)."""
        with self._lock:
            rows = list(self._rows)
            phases = self._phases()
            targets = dict(self._targets)
        avail = [r["mem_available"] for r in rows if r.get("mem_available") is not None]

        def at(t: float) -> dict[str, Any]:
            # The state at time t: the last sample taken at or before t (or the first one).
            chosen = rows[0]
            for r in rows:
                if r["t"] <= t + 1e-9:
                    chosen = r
                else:
                    break
            return chosen

        processes = []
        for pid, target in sorted(targets.items()):
            series = [r["procs"][str(pid)] for r in rows if str(pid) in r["procs"]]
            if not series:
                continue

            def peak(key: str, series: list = series) -> int | None:
                vals = [s[key] for s in series if key in s]
                return max(vals) if vals else None

            cpus = [s["cpu"] for s in series if "cpu" in s]
            processes.append(
                {
                    "pid": pid,
                    "name": target.name,
                    "found_by": target.found_by,
                    "samples": len(series),
                    "anon_peak_bytes": peak("anon"),
                    "file_peak_bytes": peak("file"),
                    "shmem_peak_bytes": peak("shmem"),
                    "gpu_peak_bytes": peak("gpu"),
                    "cpu_cores_max": max(cpus) if cpus else None,
                    "cpu_cores_mean": round(statistics.fmean(cpus), 3) if cpus else None,
                }
            )
        phase_out = []
        for name, start, end, source in phases:
            a, b = at(start), at(end)
            inside = [r for r in rows if start - 1e-9 <= r["t"] <= end + 1e-9] or [a, b]
            per = []
            for pid, target in sorted(targets.items()):
                key = str(pid)
                alive_a, alive_b = key in a["procs"], key in b["procs"]
                seen_inside = any(key in r["procs"] for r in inside)
                if not (alive_a or alive_b or seen_inside):
                    continue
                # A process not alive at a boundary held nothing there: one born or gone
                # inside the phase has its whole footprint attributed to the phase.
                has_gpu = any("gpu" in r["procs"].get(key, {}) for r in rows)
                pa = a["procs"].get(key) if alive_a else {"anon": 0, "file": 0, **({"gpu": 0} if has_gpu else {})}
                pb = b["procs"].get(key) if alive_b else {"anon": 0, "file": 0, **({"gpu": 0} if has_gpu else {})}

                def delta(k: str, pa: dict = pa, pb: dict = pb) -> int | None:
                    return pb[k] - pa[k] if k in pa and k in pb else None

                anon_inside = [
                    r["procs"][key]["anon"] for r in inside if key in r["procs"] and "anon" in r["procs"][key]
                ]
                cpu_inside = [r["procs"][key]["cpu"] for r in inside if key in r["procs"] and "cpu" in r["procs"][key]]
                per.append(
                    {
                        "process": f"{target.name}[{pid}]",
                        "anon_delta_bytes": delta("anon"),
                        "file_delta_bytes": delta("file"),
                        "gpu_delta_bytes": delta("gpu"),
                        "anon_peak_rise_bytes": (max(anon_inside) - pa["anon"])
                        if anon_inside and "anon" in pa
                        else None,
                        "cpu_cores_mean": round(statistics.fmean(cpu_inside), 3) if cpu_inside else None,
                    }
                )
            utils = [u for r in inside for u in (r.get("gpu_util") or []) if u is not None]
            avail_inside = [r["mem_available"] for r in inside if r.get("mem_available") is not None]
            phase_out.append(
                {
                    "name": name,
                    "start_s": round(start, 4),
                    "end_s": round(end, 4),
                    "source": source,
                    "mem_available_delta_bytes": (b["mem_available"] - a["mem_available"])
                    if a.get("mem_available") is not None and b.get("mem_available") is not None
                    else None,
                    "mem_available_min_bytes": min(avail_inside) if avail_inside else None,
                    "gpu_utilization_max_percent": max(utils) if utils else None,
                    "processes": per,
                }
            )
        nv = self._nvml
        all_utils = [u for r in rows for u in (r.get("gpu_util") or []) if u is not None]
        used = [u for r in rows for u in (r.get("gpu_used") or []) if u is not None]
        gpu = {
            "nvml": bool(nv and nv.ok),
            "reason": None if nv and nv.ok else (nv.reason if nv else "not started"),
            "devices": len(nv.handles) if nv and nv.ok else 0,
            "utilization_max_percent": max(all_utils) if all_utils else None,
            "utilization_nonzero_samples": sum(1 for u in all_utils if u > 0) if all_utils else None,
            "memory_used_peak_bytes": max(used) if used else None,
        }
        targets_desc = [f"pid={p}" for p, t in targets.items() if t.found_by == "pid"] + [
            f"name={n}" for n in self.names
        ]
        targets_desc += [f"tree={r}" for r in self.tree_roots]
        return _drop_none(
            {
                "interval_s": self.interval,
                "duration_s": round(rows[-1]["t"] - rows[0]["t"], 4) if rows else 0.0,
                "samples": len(rows),
                "targets": targets_desc,
                "mem_total_bytes": self._meminfo_total,
                "mem_available_start_bytes": avail[0] if avail else None,
                "mem_available_min_bytes": min(avail) if avail else None,
                "mem_available_end_bytes": avail[-1] if avail else None,
                "processes": processes,
                "phases": phase_out,
                "gpu": gpu,
            }
        )

    def series_bytes(self) -> bytes:
        """The full series: gzip'd JSON Lines, a header line, one line per sample, then the marks."""
        with self._lock:
            rows = list(self._rows)
            events = sorted(self._events, key=lambda e: e.t)
            targets = {str(p): {"name": t.name, "found_by": t.found_by} for p, t in self._targets.items()}
        lines = [
            json.dumps(
                {
                    "format": SERIES_FORMAT,
                    "started_at": self.started_at,
                    "interval_s": self.interval,
                    "targets": targets,
                    "units": {
                        "mem_available": "bytes",
                        "anon": "bytes",
                        "file": "bytes",
                        "shmem": "bytes",
                        "gpu": "bytes",
                        "cpu": "cores",
                        "gpu_util": "percent",
                        "gpu_used": "bytes",
                    },
                },
                sort_keys=True,
            )
        ]
        lines += [json.dumps(r, sort_keys=True, separators=(",", ":")) for r in rows]
        lines += [
            json.dumps(
                {"t": round(e.t, 4), "phase": e.name, "event": e.event, "source": e.source},
                sort_keys=True,
                separators=(",", ":"),
            )
            for e in events
        ]
        text = ("\n".join(lines) + "\n").encode()
        # mtime=0: the same series always gives the same bytes, hence the same sha256.
        return gzip.compress(text, compresslevel=9, mtime=0)


def _drop_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _drop_none(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_drop_none(v) for v in data]
    return data


def read_series(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The lines of a series attachment, header first."""
    with gzip.open(path, "rt") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# -- running a command, or watching processes, under the sampler ---------------------------


def missing_pids(pids: Sequence[int]) -> list[int]:
    """The pids of `pids` that name no running process."""
    return [pid for pid in pids if not os.path.exists(f"/proc/{pid}")]


@dataclass
class Watched:
    """What `watch` saw: the command's exit code (None when only watching) and its redacted command line."""

    exit_code: int | None
    command: str | None


def watch(
    sampler: Sampler,
    cmd: Sequence[str] = (),
    *,
    marks_file: str | os.PathLike[str] | None = None,
    duration: float | None = None,
) -> Watched:
    """Sample while CMD runs (launched with MARKS_ENV set, its process tree sampled unless the
    sampler was given pids or names), or, without a command, until `duration` seconds pass, every
    watched pid has exited, or Ctrl-C. Ctrl-C is forwarded to the command as SIGINT and its exit
    code is kept. The sampler is started and stopped here; a temporary marks file is removed.

    Raises InputError when the command cannot be started; the sampler is stopped first.
    """
    tmpdir = None
    if marks_file is None:
        tmpdir = tempfile.mkdtemp(prefix="ledger-sampler-")
        marks_file = os.path.join(tmpdir, "marks.jsonl")
    open(marks_file, "a").close()
    sampler.marks_file = Path(marks_file)
    # The command line is recorded; a token passed as an argument must not be.
    command_text = redact(shlex.join(cmd)) if cmd else None
    exit_code: int | None = None
    watched_pids = [pid for pid, target in sampler._targets.items() if target.found_by == "pid"]
    sampler.start()
    try:
        if cmd:
            exit_code = _run_child(sampler, cmd, marks_file, own_tree=not watched_pids and not sampler.names)
        else:
            _wait(sampler, watched_pids, duration)
    finally:
        sampler.stop()
        if tmpdir is not None:
            try:
                os.unlink(marks_file)
                os.rmdir(tmpdir)
            except OSError:
                pass
    return Watched(exit_code, command_text)


def _run_child(sampler: Sampler, cmd: Sequence[str], marks_file: str | os.PathLike[str], *, own_tree: bool) -> int:
    env = {**os.environ, MARKS_ENV: str(marks_file)}
    try:
        child = subprocess.Popen(list(cmd), env=env)
    except OSError as exc:
        raise InputError(
            f"cannot run {cmd[0]!r}: {exc.strerror}",
            [Problem("CMD", "", f"cannot run {cmd[0]!r}: {exc.strerror}", "check the command after --")],
        ) from None
    if own_tree:
        sampler.add_tree(child.pid)
    try:
        return child.wait()
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)
        return child.wait()


def _wait(sampler: Sampler, pids: list[int], duration: float | None) -> None:
    deadline = None if duration is None else time.monotonic() + duration
    try:
        while deadline is None or time.monotonic() < deadline:
            if pids and not sampler.names and not any(os.path.exists(f"/proc/{p}") for p in pids):
                break
            time.sleep(min(sampler.interval, 0.2))
    except KeyboardInterrupt:
        pass


# -- writing the record -------------------------------------------------------------------


@dataclass
class Saved:
    record: Any
    attachment: Path
    paths: list[Path] = field(default_factory=list)


def save(
    ledger: Any,
    sampler: Sampler,
    *,
    command: str | None = None,
    exit_code: int | None = None,
    title: str | None = None,
    stamping: Any = None,
    extra: dict[str, Any] | None = None,
) -> Saved:
    """Write the series attachment and the memory-profile record; neither stays if either fails."""

    stored = write_attachment(ledger, sampler.series_bytes(), ATTACHMENT_FOLDER, ".jsonl.gz")
    rel, digest, created = stored.path, stored.sha256, stored.created
    path = ledger.records_dir / rel
    body = {**sampler.summary(), **(extra or {})}
    if command is not None:
        body["command"] = command
    if exit_code is not None:
        body["exit_code"] = exit_code
    if title:
        body["title"] = title
    body["series"] = rel
    body["attachments"] = {rel: digest}
    try:
        [record] = add(ledger, "memory-profile", [Item(body, "<sampler>", None)], stamping)
    except BaseException:
        if created:
            path.unlink(missing_ok=True)
        raise
    return Saved(record, path, [path, ledger.path_for("memory-profile", record.id)])
