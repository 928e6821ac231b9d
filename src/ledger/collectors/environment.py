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
import sys
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


def _versions(import_torch: bool) -> dict[str, str | None]:
    out: dict[str, str | None] = {
        "torch": _version("torch"),
        "triton": _version("triton") or _version("pytorch-triton"),
        "flash_attn": _version("flash-attn") or _version("flash_attn") or _version("flash-attn-3"),
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


def collect_environment(
    *,
    under_load: bool = False,
    env: Mapping[str, str] | None = None,
    import_torch: bool = True,
    title: str | None = None,
) -> dict[str, Any]:
    """An `environment` record body for `ledger add environment`.

    `under_load`: the caller states that the GPUs were busy with the measured work while
    this ran (see :func:`sample_under_load`); only then are SM clocks judged.
    """
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
        "health": assess_health(gpus, under_load),
        "title": title or _title(gpus, no_gpu, under_load),
    }
    return {k: v for k, v in body.items() if v is not None}


def _title(gpus: list[dict[str, Any]], no_gpu: str | None, under_load: bool) -> str:
    if no_gpu:
        return f"{socket.gethostname()}: no GPU"
    names = sorted({g.get("name", "GPU") for g in gpus})
    return f"{socket.gethostname()}: {len(gpus)}x {'/'.join(names)} ({'under load' if under_load else 'idle'})"


def sample_under_load(seconds: float = 3.0, device: int = 0, size: int = 8192) -> dict[str, Any]:
    """Queue about `seconds` of bf16 matrix products on the GPU, then sample NVML halfway through.

    The samples are taken while the products run, so SM clocks and power are judged
    under load. Without a CUDA device this is :func:`collect_environment` at idle.
    """

    import torch

    if not torch.cuda.is_available():
        return collect_environment(under_load=False)
    dev = torch.device("cuda", device)
    a = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
    b = torch.randn(size, size, device=dev, dtype=torch.bfloat16)
    torch.matmul(a, b)
    torch.cuda.synchronize(dev)
    start = time.perf_counter()
    torch.matmul(a, b)
    torch.cuda.synchronize(dev)
    one = max(time.perf_counter() - start, 1e-4)
    for _ in range(max(1, int(seconds / one))):
        torch.matmul(a, b)
    time.sleep(seconds / 2)
    body = collect_environment(under_load=True)
    torch.cuda.synchronize(dev)
    return body
