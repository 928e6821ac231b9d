"""The machine at measurement time: GPUs through NVML, versions, allowlisted flags, load, health.

Works without torch and without a GPU: a machine with no GPU gets a record that says so
in `no_gpu_reason`, and a health verdict of `unknown`. Only environment variables whose
names match the allowlist are captured, and never one whose name looks like a secret.
"""

from __future__ import annotations

import os
import platform
import re
import socket
import statistics
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

from ..redact import redact

#: Prefixes of environment variables that change performance (issue #5).
ALLOWED_PREFIXES: tuple[str, ...] = (
    "TORCHINDUCTOR_",
    "NCCL_",
    "CUBLASLT_",
    "CUBLAS_",
    "CUDA_",
    "PYTORCH_",
    "TORCH_",
    "NVSHMEM_",
    "OMP_NUM_THREADS",
)
#: A name containing any of these is never captured, whatever its prefix: secrets
#: are redacted at capture, not filtered later.
SECRET_WORDS: tuple[str, ...] = (
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "KEY",
    "CREDENTIAL",
    "AUTH",
    "COOKIE",
    "SESSION",
    "PRIVATE",
    "SIGNATURE",
)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")

# NVML clock-event ("throttle") reason bits. pynvml renamed the constants from
# ClocksThrottleReason* to ClocksEventReason* across versions, so the bits are written
# here once (they are part of NVML's stable ABI) rather than looked up by either name.
CLOCK_EVENT_REASONS: dict[int, str] = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}
#: Reasons that do not mean the GPU was held back from its work.
BENIGN_REASONS = frozenset({"gpu_idle", "display_clock_setting"})
#: Under load, an SM clock below this fraction of its maximum is degraded. H200s under a
#: dense bf16 load were seen at 1,980 MHz of 1,980; the campaign's degraded GB200 pair
#: ran at 1,965 of 2,062 (95.3%), so the line sits just above that.
SM_CLOCK_FRACTION = 0.97
#: A GPU drawing at least this fraction of its *default* power limit while `sw_power_cap`
#: holds its clocks is spending its full budget as designed: a dense bf16 load on an H200
#: drew 694 of 700 W at 1,620 MHz. That is the board's normal operating point, not a
#: degraded allocation; a limit set below the default still is.
POWER_BUDGET_FRACTION = 0.95


def decode_clock_event_reasons(mask: int) -> list[str]:
    """NVML's clock-event bitmask as names, unknown bits as hex."""
    names = [name for bit, name in CLOCK_EVENT_REASONS.items() if mask & bit]
    unknown = mask & ~sum(CLOCK_EVENT_REASONS)
    if unknown:
        names.append(f"unknown_0x{unknown:x}")
    return names


def _looks_secret(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in SECRET_WORDS)


def allowlisted_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Performance-relevant variables only; names that look like secrets never pass."""
    env = os.environ if env is None else env
    out: dict[str, str] = {}
    for name, value in env.items():
        if not name.upper().startswith(ALLOWED_PREFIXES) or _looks_secret(name):
            continue
        # A token can sit inside an allowed variable's value (a cache path, a log URL).
        out[name] = redact(_URL_CREDENTIALS.sub("", value))
    return dict(sorted(out.items()))


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _flash_attn_versions() -> str | None:
    """flash-attn 2's version, and flash-attn 3's or 4's named, e.g. '2.8.3; flash-attn-4 4.0.0b36'."""
    first = _version("flash-attn") or _version("flash_attn")
    parts = [first] if first else []
    parts += [f"{dist} {v}" for dist in ("flash-attn-3", "flash-attn-4") if (v := _version(dist))]
    return "; ".join(parts) if parts else None


def _versions(import_torch: bool) -> dict[str, str | None]:
    out: dict[str, str | None] = {
        "torch": _version("torch"),
        "triton": _version("triton") or _version("pytorch-triton"),
        "flash_attn": _flash_attn_versions(),
        "python": platform.python_version(),
        "cuda": None,
        "cudnn": None,
        "nccl": None,
    }
    if out["torch"] and (import_torch or "torch" in sys.modules):
        import torch

        out["torch"] = torch.__version__
        out["cuda"] = torch.version.cuda
        try:
            cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
            out["cudnn"] = str(cudnn) if cudnn else None
        except Exception:  # cuDNN missing from a CPU build is not an error of the record
            out["cudnn"] = None
        try:
            nccl = torch.cuda.nccl.version() if torch.cuda.is_available() else None
            out["nccl"] = ".".join(str(p) for p in nccl) if isinstance(nccl, tuple) else (str(nccl) if nccl else None)
        except Exception:
            out["nccl"] = None
    return out


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _nvml_call(fn, *args, default=None):
    try:
        return fn(*args)
    except Exception:  # NVMLError_NotSupported and friends: the field is simply unknown
        return default


def read_gpus() -> tuple[list[dict[str, Any]], str | None, str | None]:
    """(gpu states, driver version, why there are none). Never raises."""
    try:
        import pynvml
    except ImportError:
        return [], None, "nvidia-ml-py (pynvml) is not installed: pip install 'ledger[collectors]'"
    try:
        pynvml.nvmlInit()
    except Exception as exc:
        return [], None, f"no NVIDIA GPU: NVML could not start ({exc})"
    try:
        driver = _nvml_call(pynvml.nvmlSystemGetDriverVersion)
        driver = driver.decode() if isinstance(driver, bytes) else driver
        count = pynvml.nvmlDeviceGetCount()
        if count == 0:
            return [], driver, "no NVIDIA GPU: NVML started but reports 0 devices"
        gpus = [_gpu_state(pynvml, i) for i in range(count)]
        return gpus, driver, None
    finally:
        _nvml_call(pynvml.nvmlShutdown)


def _gpu_state(nv, index: int) -> dict[str, Any]:
    h = nv.nvmlDeviceGetHandleByIndex(index)

    def text(value):
        return value.decode() if isinstance(value, bytes) else value

    def milli_to_w(value):
        return None if value is None else value / 1000.0

    clocks_fn = (
        getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
    )
    mask = _nvml_call(clocks_fn, h)
    mem = _nvml_call(nv.nvmlDeviceGetMemoryInfo, h)
    util = _nvml_call(nv.nvmlDeviceGetUtilizationRates, h)
    state: dict[str, Any] = {
        "index": index,
        "name": text(_nvml_call(nv.nvmlDeviceGetName, h, default="unknown")),
        "uuid": text(_nvml_call(nv.nvmlDeviceGetUUID, h)),
        "sm_clock_mhz": _nvml_call(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM),
        "sm_clock_max_mhz": _nvml_call(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM),
        "mem_clock_mhz": _nvml_call(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM),
        "mem_clock_max_mhz": _nvml_call(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM),
        "power_draw_w": milli_to_w(_nvml_call(nv.nvmlDeviceGetPowerUsage, h)),
        "power_limit_w": milli_to_w(_nvml_call(nv.nvmlDeviceGetEnforcedPowerLimit, h)),
        "power_default_limit_w": milli_to_w(_nvml_call(nv.nvmlDeviceGetPowerManagementDefaultLimit, h)),
        "temperature_c": _nvml_call(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
        "clock_event_reasons": decode_clock_event_reasons(mask) if mask is not None else [],
        "ecc_errors_corrected": _nvml_call(
            nv.nvmlDeviceGetTotalEccErrors, h, nv.NVML_MEMORY_ERROR_TYPE_CORRECTED, nv.NVML_VOLATILE_ECC
        ),
        "ecc_errors_uncorrected": _nvml_call(
            nv.nvmlDeviceGetTotalEccErrors, h, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, nv.NVML_VOLATILE_ECC
        ),
        "memory_total_bytes": getattr(mem, "total", None),
        "utilization_percent": getattr(util, "gpu", None),
    }
    return {k: v for k, v in state.items() if v is not None}


def assess_health(gpus: Sequence[Mapping[str, Any]], under_load: bool) -> dict[str, Any]:
    """healthy, degraded (with reasons) or unknown.

    Degraded: any clock-event reason other than idle (power cap, thermal or hardware
    slowdown...), a power limit below the board default, uncorrected ECC errors, and,
    only when the sample was taken under load, an SM clock below the device maximum.
    Not degraded: `sw_power_cap` on a board drawing its full *default* budget, which is
    how a dense load runs at the default limit (its clocks are then set by power).
    An idle GPU clocks down by design, so an idle sample cannot judge clocks.
    """
    if not gpus:
        return {"verdict": "unknown", "reasons": ["no GPU was found, so GPU health cannot be judged"]}
    reasons: list[str] = []
    notes: list[str] = []
    for gpu in gpus:
        tag = f"GPU {gpu.get('index')}"
        limit, default = gpu.get("power_limit_w"), gpu.get("power_default_limit_w")
        draw = gpu.get("power_draw_w")
        event_reasons = gpu.get("clock_event_reasons", [])
        at_budget = (
            "sw_power_cap" in event_reasons
            and limit is not None
            and default is not None
            and draw is not None
            and limit >= default - 0.5
            and draw >= POWER_BUDGET_FRACTION * limit
        )
        bad = [r for r in event_reasons if r not in BENIGN_REASONS and not (r == "sw_power_cap" and at_budget)]
        if bad:
            reasons.append(f"{tag}: clocks held back by {', '.join(bad)}")
        if at_budget:
            notes.append(
                f"{tag}: at its full default power budget ({draw:g} of {limit:g} W), clocks set by sw_power_cap"
            )
        if limit is not None and default is not None and limit < default - 0.5:
            reasons.append(f"{tag}: power capped at {limit:g} W, below the default {default:g} W")
        if gpu.get("ecc_errors_uncorrected"):
            reasons.append(f"{tag}: {gpu['ecc_errors_uncorrected']} uncorrected ECC errors")
        sm, sm_max = gpu.get("sm_clock_mhz"), gpu.get("sm_clock_max_mhz")
        idle = "gpu_idle" in event_reasons or gpu.get("utilization_percent") == 0
        if under_load and idle:
            # A GPU the load did not use (one rank of a two-GPU host) says so itself.
            notes.append(f"{tag}: idle during the load sample, so its clocks were not judged")
            continue
        if under_load and not at_budget and sm is not None and sm_max and sm < SM_CLOCK_FRACTION * sm_max:
            reasons.append(
                f"{tag}: SM clock {sm:g} MHz under load, below {SM_CLOCK_FRACTION:.0%} of its maximum {sm_max:g} MHz"
            )
    if reasons:
        return {"verdict": "degraded", "reasons": reasons}
    if not under_load:
        return {"verdict": "healthy", "reasons": ["sampled idle: clocks were not judged under load", *notes]}
    return {"verdict": "healthy", "reasons": notes}


#: Numeric readings a series summarises by their median (per GPU, over its samples).
_SERIES_FIELDS = ("sm_clock_mhz", "mem_clock_mhz", "power_draw_w", "temperature_c", "utilization_percent")


class LoadSampler:
    """NVML readings of every GPU, every `interval_s` seconds, on a background thread.

    One instantaneous reading can land on a moment that says nothing of the run (a board
    drawing 399 W between two kernels of a step that held 690 W): start it when the timed
    steps start, stop it when they end, and judge the series (:func:`judge_series`).
    `samples` is a list of readings, each the list :func:`read_gpus` returns, with the
    Unix time of the reading under `t` in each GPU's dict (so the series of several
    samplers pool into one, in order).
    """

    def __init__(self, interval_s: float = 0.25, max_samples: int = 4000) -> None:
        self.interval_s, self.max_samples = interval_s, max_samples
        self.samples: list[list[dict[str, Any]]] = []
        self.driver: str | None = None
        self.no_gpu: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _run(self) -> None:
        while not self._stop.is_set() and len(self.samples) < self.max_samples:
            gpus, self.driver, self.no_gpu = read_gpus()
            if not gpus:
                return  # no GPU: nothing to sample, and it will not appear
            t = round(time.time(), 3)
            self.samples.append([{**g, "t": t} for g in gpus])
            self._stop.wait(self.interval_s)

    def start(self) -> LoadSampler:
        self._thread = threading.Thread(target=self._run, name="ledger-load-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> list[list[dict[str, Any]]]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        return self.samples


def series_readings(samples: Sequence[Sequence[Mapping[str, Any]]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Per GPU, one reading that stands for the series, and the series' summary.

    The reading: the median of each numeric reading over the GPU's samples, the clock-event
    reasons present in at least half of them, the largest ECC counts (they only grow), the
    rest (name, UUID, limits, maxima) from its last sample. Samples in which a GPU was idle
    (utilization 0, or `gpu_idle`) are left out of its medians while it had busy ones: a
    gap between two kernels is not the load. The summary (`load_series` of the record)
    says how many samples, the seconds from the first to the last, and per GPU
    min/median/max of clock and power and how many samples showed each reason.
    """
    per_gpu: dict[int, list[Mapping[str, Any]]] = {}
    for sample in samples:
        for gpu in sample:
            per_gpu.setdefault(int(gpu.get("index", 0)), []).append(gpu)
    readings: list[dict[str, Any]] = []
    summary_gpus: list[dict[str, Any]] = []
    for index, seen in sorted(per_gpu.items()):
        busy = [g for g in seen if not _idle(g)]
        judged = busy or list(seen)
        reading: dict[str, Any] = {k: v for k, v in seen[-1].items() if k != "t"}
        for key in _SERIES_FIELDS:
            values = [g[key] for g in judged if g.get(key) is not None]
            if values:
                reading[key] = statistics.median(values)
            else:
                reading.pop(key, None)
        counts: dict[str, int] = {}
        for g in judged:
            for reason in g.get("clock_event_reasons", []):
                counts[reason] = counts.get(reason, 0) + 1
        reading["clock_event_reasons"] = [r for r, n in counts.items() if 2 * n >= len(judged)]
        for key in ("ecc_errors_corrected", "ecc_errors_uncorrected"):
            values = [g[key] for g in seen if g.get(key) is not None]
            if values:
                reading[key] = max(values)
        readings.append(reading)
        stats: dict[str, Any] = {"index": index, "samples": len(seen), "busy_samples": len(busy)}
        for key, name, unit in (("sm_clock_mhz", "sm_clock", "mhz"), ("power_draw_w", "power", "w")):
            values = [g[key] for g in judged if g.get(key) is not None]
            if values:  # flat fields: a nested {min, median, max} would read as a measurement's figures
                for stat, value in (("min", min(values)), ("median", statistics.median(values)), ("max", max(values))):
                    stats[f"{name}_{stat}_{unit}"] = value
        stats["clock_event_reasons"] = dict(sorted(counts.items()))
        stats["degraded_samples"] = sum(
            1 for g in judged if assess_health([g], under_load=True)["verdict"] == "degraded"
        )
        summary_gpus.append(stats)
    times = [g["t"] for sample in samples for g in sample if g.get("t") is not None]
    summary = {
        "samples": len(samples),
        "seconds": round(max(times) - min(times), 3) if times else 0.0,
        "rule": "per GPU, the median of its busy samples' readings, judged as one reading",
        "gpus": summary_gpus,
    }
    return readings, summary


def _idle(gpu: Mapping[str, Any]) -> bool:
    return "gpu_idle" in gpu.get("clock_event_reasons", []) or gpu.get("utilization_percent") == 0


def judge_series(samples: Sequence[Sequence[Mapping[str, Any]]], under_load: bool = True) -> dict[str, Any]:
    """The health verdict of a series of readings: :func:`assess_health` of the per-GPU median
    readings (:func:`series_readings`), with how many single samples that rule would have
    called degraded said beside it, so one odd sample neither makes nor hides a verdict."""
    if not samples:
        return {"verdict": "unknown", "reasons": ["no readings were taken, so GPU health cannot be judged"]}
    readings, summary = series_readings(samples)
    verdict = assess_health(readings, under_load)
    notes = []
    for gpu in summary["gpus"]:
        clock = [gpu.get(f"sm_clock_{k}_mhz") for k in ("min", "max", "median")]
        power = [gpu.get(f"power_{k}_w") for k in ("min", "max", "median")]
        notes.append(
            f"GPU {gpu['index']}: judged from the median of {gpu['busy_samples']} busy samples of "
            f"{gpu['samples']} over {summary['seconds']:g} s"
            + ("; SM clock {:g}-{:g} MHz, median {:g}".format(*clock) if None not in clock else "")
            + ("; power {:g}-{:g} W, median {:g}".format(*power) if None not in power else "")
            + f"; {gpu['degraded_samples']} sample(s) degraded on their own"
        )
    return {"verdict": verdict["verdict"], "reasons": [*verdict["reasons"], *notes]}


def collect_environment(
    *,
    under_load: bool = False,
    env: Mapping[str, str] | None = None,
    import_torch: bool = True,
    title: str | None = None,
    series: Sequence[Sequence[Mapping[str, Any]]] | None = None,
) -> dict[str, Any]:
    """An `environment` record body for `ledger add environment`.

    `under_load`: the caller states that the GPUs were busy with the measured work while
    this ran (see :func:`sample_under_load`); only then are SM clocks judged.
    `series`: readings a :class:`LoadSampler` took while the work ran: the record's `gpus`
    are then the series' median readings, its health is :func:`judge_series`, and
    `load_series` summarises the samples (no new reading is taken).
    """
    if series:
        readings, summary = series_readings(series)
        gpus, no_gpu = readings, None
        driver = read_gpus()[1]
    else:
        gpus, driver, no_gpu = read_gpus()
    versions = _versions(import_torch)
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        load = []
    body: dict[str, Any] = {
        "hostname": socket.gethostname(),
        "gpus": gpus,
        "no_gpu_reason": no_gpu,
        "driver": driver,
        **versions,
        "env_flags": allowlisted_env(env),
        "load_avg": load,
        "cpu_count": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "under_load": under_load,
        "health": judge_series(series, under_load) if series else assess_health(gpus, under_load),
        "load_series": summary if series else None,
        "title": title or _title(gpus, no_gpu, under_load),
    }
    return {k: v for k, v in body.items() if v is not None}


def _title(gpus: list[dict[str, Any]], no_gpu: str | None, under_load: bool) -> str:
    if no_gpu:
        return f"{socket.gethostname()}: no GPU"
    names = sorted({g.get("name", "GPU") for g in gpus})
    return f"{socket.gethostname()}: {len(gpus)}x {'/'.join(names)} ({'under load' if under_load else 'idle'})"


def sample_under_load(seconds: float = 3.0, device: int = 0, size: int = 8192) -> dict[str, Any]:
    """Keep the GPU busy with bf16 matrix products for `seconds` and sample NVML while they run.

    The products are issued eight at a time, each batch waited for, until `seconds` have
    passed, so the GPU is busy to the end (a queue sized from one timed product ran dry
    early: four of six readings came back idle). A :class:`LoadSampler` reads every 0.25 s
    from a quarter of the way in (past the clocks' ramp) to the end, so SM clocks and power
    are judged under load, from the series. Without a CUDA device this is
    :func:`collect_environment` at idle.
    """

    import torch

    if not torch.cuda.is_available():
        return collect_environment(under_load=False)
    dev = torch.device("cuda", device)
    a = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
    out = torch.empty(size, size, device=dev, dtype=torch.bfloat16)
    torch.matmul(a, b, out=out)
    torch.cuda.synchronize(dev)
    sampler: LoadSampler | None = None
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(8):
            torch.matmul(a, b, out=out)
        torch.cuda.synchronize(dev)  # the host stays within eight products of the device
        if sampler is None and elapsed >= seconds / 4:
            sampler = LoadSampler().start()
    samples = sampler.stop() if sampler else []
    return collect_environment(under_load=True, series=samples)
