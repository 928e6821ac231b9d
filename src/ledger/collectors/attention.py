"""Attention benchmark: flash-attn 4, flash-attn 2 and each PyTorch SDPA backend.

Every implementation is tried and named by what ran, with its version (flash-attn 4's or
2's distribution version; torch's, and cuDNN's for the cuDNN backend). flash-attn 4 runs
through ledger's counted custom op (`ledger.collectors.flash`), the same call a model
audited by `audit_flops` makes. One that is not installed or cannot run here is a
`failed` record with the reason.

Rates use flash-attn's own benchmark convention, so figures compare with its tables:
forward 4·B·S²·H·D FLOP (Sq·Sk when they differ), halved when causal; backward 2.5x
the forward. Each implementation that was tried gives one record per direction, named
by what actually ran; one that cannot run here is recorded as `failed` with the reason.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Any

import torch
import torch.nn.functional as F

from .ceiling import _timed, device_name
from .flash import fa2_status, fa4_status, flash_attn_func

SDPA_BACKENDS = ("flash", "cudnn", "efficient", "math")
#: The device's SM clock is at most about 2 GHz: cycles for torch.cuda._sleep per second of spin
#: (a slower clock only makes the spin longer).
_SPIN_CYCLES_PER_S = 2.0e9


def _device_timed(fn, repeats: int, device: torch.device) -> list[float]:
    """Seconds per call of the device alone: CUDA events around each call, with every call
    queued behind a GPU spin long enough for the host to issue them all first.

    Events around calls issued back to back time the host whenever it takes longer to issue
    a call than the kernel runs: flash-attn 4's cross-attention forward at batch 2 (a 245 us
    kernel, 135-290 us of host time per call) read 389 TFLOP/s in one run (samples 344-428)
    and 582 in another (575-585), and in a third back to back 591 with single calls as low as
    165, while queued it read 587-598 every time. On CPU this is `_timed` (wall time)."""
    if device.type != "cuda":
        return _timed(fn, repeats, device)
    torch.cuda._sleep(int(0.05 * _SPIN_CYCLES_PER_S))  # the GPU busy, so no call below waits on it
    t0 = time.perf_counter()
    for _ in range(3):
        fn()
    host = (time.perf_counter() - t0) / 3
    torch.cuda.synchronize(device)
    torch.cuda._sleep(int((2 * host * repeats + 0.05) * _SPIN_CYCLES_PER_S))
    return _timed(fn, repeats, device)


def attention_flops(
    batch: int,
    seq_q: int,
    heads: int,
    head_dim: int,
    *,
    seq_k: int | None = None,
    causal: bool = False,
    direction: str = "fwd",
) -> float:
    """FLOP of one attention call under flash-attn's convention."""
    seq_k = seq_q if seq_k is None else seq_k
    fwd = 4 * batch * seq_q * seq_k * heads * head_dim / (2 if causal else 1)
    return {"fwd": fwd, "bwd": 2.5 * fwd, "fwd_bwd": 3.5 * fwd}[direction]


def _sdpa_context(backend: str):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    names = {"flash": "FLASH_ATTENTION", "cudnn": "CUDNN_ATTENTION", "efficient": "EFFICIENT_ATTENTION", "math": "MATH"}
    member = getattr(SDPBackend, names[backend], None)
    if member is None:
        raise RuntimeError(f"this PyTorch has no SDPA backend {backend}")
    return sdpa_kernel([member])


def _sdpa_version(backend: str) -> str:
    version = f"torch {torch.__version__}"
    if backend == "cudnn":
        try:
            cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        except Exception:  # a CPU build without cuDNN
            cudnn = None
        if cudnn:
            version += f", cuDNN {cudnn}"
    return version


Impl = tuple[str, str | None, Any, str | None]


def _implementations(backends: list[str] | None) -> list[Impl]:
    """(name, version, maker, reason) for each implementation to try; q/k/v are (B, S, H, D).

    `maker(q, k, v, causal)` returns (context, call). When it cannot be tried here, maker is
    None and reason says why: that becomes a `failed` record, not a silent gap.
    """
    wanted = set(backends or [])
    want = (lambda name: name in wanted) if backends else (lambda name: True)
    out: list[Impl] = []
    if want("flash-attn-4"):
        version, reason = fa4_status()
        if version:

            def fa4(q, k, v, causal):
                return contextlib.nullcontext(), lambda: flash_attn_func(q, k, v, causal=causal)

            out.append((f"flash-attn-4 {version}", version, fa4, None))
        else:
            out.append(("flash-attn-4", None, None, reason))
    if want("flash-attn"):
        version, reason = fa2_status()
        if version:
            from flash_attn import flash_attn_func as fa2_func

            def fa2(q, k, v, causal):
                return contextlib.nullcontext(), lambda: fa2_func(q, k, v, causal=causal)

            out.append((f"flash-attn {version}", version, fa2, None))
        else:
            out.append(("flash-attn", None, None, reason))
    for backend in [b for b in SDPA_BACKENDS if want(b)]:

        def make(q, k, v, causal, backend=backend):
            qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
            return _sdpa_context(backend), lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)

        out.append((f"torch-sdpa-{backend}", _sdpa_version(backend), make, None))
    return out


def benchmark_attention(
    *,
    batch: int,
    seq_q: int,
    heads: int,
    head_dim: int,
    seq_k: int | None = None,
    causal: bool = False,
    dtype: torch.dtype = torch.bfloat16,
    device: str | torch.device | None = None,
    backends: list[str] | None = None,
    repeats: int = 20,
    warmup: int = 3,
) -> list[dict[str, Any]]:
    """`measurement` record bodies, two per implementation (fwd and bwd TFLOP/s samples)."""
    device = torch.device(device if device is not None else ("cuda" if torch.cuda.is_available() else "cpu"))
    seq_k = seq_q if seq_k is None else seq_k
    shape = {
        "batch": batch,
        "seq_q": seq_q,
        "seq_k": seq_k,
        "heads": heads,
        "head_dim": head_dim,
        "causal": causal,
        "dtype": str(dtype).removeprefix("torch."),
    }
    gen = torch.Generator(device=device).manual_seed(0)

    def tensor(s):
        return torch.randn(batch, s, heads, head_dim, device=device, dtype=dtype, generator=gen).requires_grad_(True)

    records: list[dict[str, Any]] = []
    for name, version, impl, reason in _implementations(backends):
        base: dict[str, Any] = {
            "unit": "TFLOP/s",
            "lower_is_better": False,
            "statistic": "median",
            "warmup_steps": warmup,
            "extra": {
                "implementation": name,
                "version": version,
                "device": device_name(device),
                "convention": "flash-attn: fwd 4*B*Sq*Sk*H*D, /2 causal; bwd 2.5x fwd",
                "timing": "CUDA events around each call, the calls queued behind a GPU spin (device time)"
                if str(device).startswith("cuda")
                else "wall time per call",
                **shape,
            },
        }
        if impl is None:
            for direction in ("fwd", "bwd"):
                records.append(
                    {
                        **base,
                        "metric": f"attention_{direction}_tflops",
                        "outcome": "failed",
                        "notes": reason,
                        "title": f"{name} attention {direction}: not importable",
                    }
                )
            continue
        q, k, v = tensor(seq_q), tensor(seq_k), tensor(seq_k)
        try:
            ctx, call = impl(q, k, v, causal)
            with ctx:
                for _ in range(warmup):
                    out = call()
                fwd_s = _device_timed(call, repeats, device)
                out = call()
                grad = torch.randn_like(out)
                backward = lambda out=out, grad=grad, inputs=(q, k, v): torch.autograd.grad(  # noqa: E731
                    out, inputs, grad, retain_graph=True
                )
                for _ in range(warmup):
                    backward()
                bwd_s = _device_timed(backward, repeats, device)
        except Exception as exc:  # an unsupported backend is a recorded outcome, not a crash
            reason = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
            for direction in ("fwd", "bwd"):
                records.append(
                    {
                        **base,
                        "metric": f"attention_{direction}_tflops",
                        "outcome": "failed",
                        "notes": f"{name} did not run: {reason}",
                        "title": f"{name} attention {direction}: did not run",
                    }
                )
            continue
        finally:
            if str(device).startswith("cuda"):
                torch.cuda.empty_cache()
        for direction, secs in (("fwd", fwd_s), ("bwd", bwd_s)):
            flop = attention_flops(batch, seq_q, heads, head_dim, seq_k=seq_k, causal=causal, direction=direction)
            samples = [flop / s / 1e12 for s in secs]
            records.append(
                {
                    **base,
                    "metric": f"attention_{direction}_tflops",
                    "samples": samples,
                    "extra": {**base["extra"], "flop": flop, "seconds_median": statistics.median(secs)},
                    "title": f"{name} attention {direction} B{batch} S{seq_q}x{seq_k} H{heads} D{head_dim}{' causal' if causal else ''}",
                }
            )
    return records
