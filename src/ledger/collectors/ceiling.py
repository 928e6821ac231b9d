"""Ceilings: the device's measured bf16 matmul rate and device-to-device copy rate.

These are positive controls recorded beside measurements: an MFU against the measured
matmul rate says how close the workload came to what this very device did that day,
and a low ceiling flags the device before a workload is blamed. Inputs are random
(zeros run faster than real data) and each matrix is several times the L2 cache.
"""

from __future__ import annotations

import platform
import statistics
import time
from typing import Any

import torch


def _timed(fn, repeats: int, device: torch.device) -> list[float]:
    """Seconds per call: CUDA events around each call, perf_counter on CPU."""
    out = []
    if device.type == "cuda":
        pairs = []
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize(device)
        return [s.elapsed_time(e) / 1000.0 for s, e in pairs]
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)

    return f"cpu ({platform.processor() or platform.machine()})"


def measure_ceiling(
    device: str | torch.device | None = None,
    *,
    matmul_size: int = 8192,
    copy_bytes: int = 2 << 30,
    dtype: torch.dtype = torch.bfloat16,
    repeats: int = 20,
    warmup: int = 3,
    title: str | None = None,
) -> dict[str, Any]:
    """A `ceiling` record body: median matmul TFLOP/s and copy TB/s (bytes read + written)."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
    n = matmul_size
    gen = torch.Generator(device=device).manual_seed(0)
    # One after the other, each in its own function: the matmul's inputs are freed before
    # the copy's buffers are made.
    tflops = _matmul_tflops(n, dtype, device, gen, warmup, repeats)
    tbps, moved = _copy_tbps(copy_bytes, device, gen, warmup, repeats)
    name = device_name(device)
    dtype_name = str(dtype).removeprefix("torch.")
    return {
        "device": name,
        "matmul_tflops": statistics.median(tflops),
        "matmul_dtype": dtype_name,
        "matmul_shape": [n, n, n],
        "copy_tbps": statistics.median(tbps),
        "copy_bytes": moved,
        "samples": {"matmul_tflops": tflops, "copy_tbps": tbps},
        "title": title
        or f"{name}: {dtype_name} matmul {statistics.median(tflops):.3g} TFLOP/s, copy {statistics.median(tbps):.3g} TB/s",
    }


def _matmul_tflops(n: int, dtype: torch.dtype, device: torch.device, gen, warmup: int, repeats: int) -> list[float]:
    """TFLOP/s of an n x n x n matmul, per timed repeat."""
    # Three input pairs in rotation, so repeated products are not served from cache.
    pairs = [
        (
            torch.randn(n, n, device=device, dtype=dtype, generator=gen),
            torch.randn(n, n, device=device, dtype=dtype, generator=gen),
        )
        for _ in range(3)
    ]
    out = torch.empty(n, n, device=device, dtype=dtype)
    turn = iter(range(1 << 62))

    def matmul():
        a, b = pairs[next(turn) % 3]
        torch.matmul(a, b, out=out)

    _timed(matmul, warmup, device)
    return [2 * n**3 / s / 1e12 for s in _timed(matmul, repeats, device)]


def _copy_tbps(copy_bytes: int, device: torch.device, gen, warmup: int, repeats: int) -> tuple[list[float], int]:
    """TB/s of a device-to-device copy (bytes read + written), per timed repeat, and the bytes moved."""
    src = torch.rand(max(1, copy_bytes // 4), device=device, dtype=torch.float32, generator=gen)
    dst = torch.empty_like(src)
    _timed(lambda: dst.copy_(src), warmup, device)
    cp_s = _timed(lambda: dst.copy_(src), repeats, device)
    moved = 2 * src.numel() * src.element_size()  # read once + written once
    return [moved / s / 1e12 for s in cp_s], moved
