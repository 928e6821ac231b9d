"""flash-attn 4 and 2 as calls that `FlopCounterMode` counts.

flash-attn 4 (`pip install flash-attn-4`, imported as `flash_attn.cute`) is an autograd
Function that launches kernels compiled by the CuTe DSL: no aten op runs, so
`FlopCounterMode` counts its forward and backward as zero. Here its forward and
backward are routed through two custom ops, `ledger::fa4_fwd` and `ledger::fa4_bwd`,
each with a FLOP formula registered with `torch.utils.flop_counter.register_flop_formula`.
Any `FlopCounterMode` (the audit's or your own) then counts them, and `torch.compile`
sees one opaque op instead of tracing the DSL.

Use `flash_attn_func(q, k, v, causal=...)` from this module where the model called
`flash_attn.cute.flash_attn_func`; it takes the same (batch, seq, heads, dim) tensors
and returns the attention output (the log-sum-exp stays inside; no gradient flows
through it).

flash-attn 2 (`from flash_attn import flash_attn_func`) registers its own custom ops
(`torch.ops.flash_attn._flash_attn_forward` ...) since 2.7; the FLOP audit maps those
(`ledger.collectors.flops.default_custom_mapping`).

The formulas are PyTorch's SDPA convention, the one FlopCounterMode applies to
`scaled_dot_product_attention`: forward 4·B·H·Sq·Sk·D (two matmuls), backward 2.5x
(five, the score recompute included). A causal mask is not halved, so a model counts
the same whichever kernel ran.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import torch
from torch.utils.flop_counter import register_flop_formula, sdpa_backward_flop_count, sdpa_flop_count

FA4_DISTRIBUTION = "flash-attn-4"
FA2_DISTRIBUTION = "flash-attn"


def _bhsd(shape) -> tuple[int, int, int, int]:
    """flash-attn lays tensors out (batch, seq, heads, dim); SDPA's formulas take (b, h, s, d)."""
    b, s, h, d = shape
    return b, h, s, d


def distribution_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def fa4_interface() -> Any:
    """flash-attn 4's `flash_attn.cute.interface` module; raises ImportError when it is not installed."""
    return importlib.import_module("flash_attn.cute.interface")


def fa4_status() -> tuple[str | None, str | None]:
    """(version, None) when flash-attn 4 imports here, else (None, the reason)."""
    try:
        fa4_interface()
    except Exception as exc:  # an import failure is a reason, not a crash
        return None, f"flash-attn 4 is not importable here: {type(exc).__name__}: {str(exc).strip()[:200]}"
    return distribution_version(FA4_DISTRIBUTION) or "unknown version", None


def fa2_status() -> tuple[str | None, str | None]:
    """(version, None) when flash-attn 2's `flash_attn_func` imports here, else (None, the reason)."""
    try:
        from flash_attn import flash_attn_func  # noqa: F401
    except Exception as exc:
        return None, f"flash-attn 2 is not importable here: {type(exc).__name__}: {str(exc).strip()[:200]}"
    return distribution_version(FA2_DISTRIBUTION) or "unknown version", None


@torch.library.custom_op("ledger::fa4_fwd", mutates_args=())
def fa4_fwd(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, softmax_scale: float, causal: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """flash-attn 4 forward: (out, lse), lse (batch, heads, seq_q) in fp32."""
    out, lse = fa4_interface()._flash_attn_fwd(q, k, v, softmax_scale=softmax_scale, causal=causal, return_lse=True)[:2]
    return out, lse


@fa4_fwd.register_fake
def _(q, k, v, softmax_scale, causal):
    b, sq, h, _ = q.shape
    return q.new_empty((b, sq, h, v.shape[-1])), q.new_empty((b, h, sq), dtype=torch.float32)


@torch.library.custom_op("ledger::fa4_bwd", mutates_args=())
def fa4_bwd(
    dout: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse: torch.Tensor,
    softmax_scale: float,
    causal: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """flash-attn 4 backward: (dq, dk, dv)."""
    dq, dk, dv = fa4_interface()._flash_attn_bwd(q, k, v, out, dout, lse, softmax_scale, causal)[:3]
    return dq, dk, dv


@fa4_bwd.register_fake
def _(dout, q, k, v, out, lse, softmax_scale, causal):
    return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


def _fa4_setup(ctx, inputs, output) -> None:
    q, k, v, softmax_scale, causal = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse)
    ctx.softmax_scale, ctx.causal = softmax_scale, causal


def _fa4_backward(ctx, dout, dlse):
    q, k, v, out, lse = ctx.saved_tensors
    if dout is None:
        dout = torch.zeros_like(out)
    dq, dk, dv = torch.ops.ledger.fa4_bwd(dout.contiguous(), q, k, v, out, lse, ctx.softmax_scale, ctx.causal)
    return dq, dk, dv, None, None


fa4_fwd.register_autograd(_fa4_backward, setup_context=_fa4_setup)


@register_flop_formula(torch.ops.ledger.fa4_fwd)
def _fa4_fwd_flop(q_shape, k_shape, v_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(_bhsd(q_shape), _bhsd(k_shape), _bhsd(v_shape))


@register_flop_formula(torch.ops.ledger.fa4_bwd)
def _fa4_bwd_flop(dout_shape, q_shape, k_shape, v_shape, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(_bhsd(dout_shape), _bhsd(q_shape), _bhsd(k_shape), _bhsd(v_shape))


def flash_attn_func(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, softmax_scale: float | None = None, causal: bool = False
) -> torch.Tensor:
    """flash-attn 4 attention on (batch, seq, heads, dim) tensors, counted by FlopCounterMode.

    Returns the output only (flash-attn 4's own function returns (out, lse)). Under autocast
    the inputs are cast to the autocast dtype, as autocast does for SDPA.
    """
    device_type = q.device.type
    if torch.is_autocast_enabled(device_type):
        dtype = torch.get_autocast_dtype(device_type)
        q, k, v = (t.to(dtype) for t in (q, k, v))
    if softmax_scale is None:
        softmax_scale = q.shape[-1] ** -0.5
    out, _ = torch.ops.ledger.fa4_fwd(q, k, v, float(softmax_scale), bool(causal))
    return out
