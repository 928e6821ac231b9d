"""Attention benchmark: flash-attn when it imports, otherwise each PyTorch SDPA backend.

Rates use flash-attn's own benchmark convention, so figures compare with its tables:
forward 4·B·S²·H·D FLOP (Sq·Sk when they differ), halved when causal; backward 2.5x
the forward. Each implementation that was tried gives one record per direction, named
by what actually ran; one that cannot run here is recorded as `failed` with the reason.
"""

from __future__ import annotations

import contextlib
import statistics
from typing import Any

import torch
import torch.nn.functional as F

from .ceiling import _timed, device_name

SDPA_BACKENDS = ("flash", "cudnn", "efficient", "math")


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


def _implementations(backends: list[str] | None) -> list[tuple[str, Any]]:
    """(name, (q, k, v, causal) -> out) for what will be tried; q/k/v are (B, S, H, D)."""
    out: list[tuple[str, Any]] = []
    wanted = backends or []
    if not backends or "flash-attn" in wanted:
        try:
            from importlib.metadata import version

            from flash_attn import flash_attn_func

            name = f"flash-attn {version('flash-attn')}"
            out.append(
                (
                    name,
                    lambda q, k, v, causal: (contextlib.nullcontext(), lambda: flash_attn_func(q, k, v, causal=causal)),
                )
            )
        except Exception:
            if "flash-attn" in wanted:
                out.append(("flash-attn", None))
    if out and out[0][1] is not None and not backends:
        return out
    for backend in [b for b in SDPA_BACKENDS if not backends or b in wanted]:

        def make(q, k, v, causal, backend=backend):
            qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
            return _sdpa_context(backend), lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal)

        out.append((f"torch-sdpa-{backend}", make))
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
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(device)
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
    for name, impl in _implementations(backends):
        base = {
            "unit": "TFLOP/s",
            "lower_is_better": False,
            "statistic": "median",
            "warmup_steps": warmup,
            "extra": {
                "implementation": name,
                "device": device_name(device),
                "convention": "flash-attn: fwd 4*B*Sq*Sk*H*D, /2 causal; bwd 2.5x fwd",
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
                        "notes": "flash-attn is not importable here",
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
                fwd_s = _timed(call, repeats, device)
                out = call()
                grad = torch.randn_like(out)
                backward = lambda: torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)  # noqa: E731
                for _ in range(warmup):
                    backward()
                bwd_s = _timed(backward, repeats, device)
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
            if device.type == "cuda":
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
