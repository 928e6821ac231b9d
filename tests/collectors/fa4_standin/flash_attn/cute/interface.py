"""The stand-in's kernels: attention forward and backward with explicit matmuls (fp32 inside).

Like flash-attn 4's compiled kernels, the math is invisible to dispatch modes such as
FlopCounterMode: it runs with the current modes disabled.
"""

from __future__ import annotations

import functools

import torch
from torch.utils._python_dispatch import _disable_current_modes


def _kernel(fn):
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with _disable_current_modes():
            return fn(*args, **kwargs)

    return run


#: Every call, for tests: ("fwd" | "bwd", q shape, k shape).
CALLS: list[tuple[str, tuple, tuple]] = []


def _scores(q, k, softmax_scale, causal):
    s = torch.einsum("bqhd,bkhd->bhqk", q.float(), k.float()) * softmax_scale
    if causal:
        sq, sk = s.shape[-2:]
        mask = torch.ones(sq, sk, dtype=torch.bool, device=s.device).tril(sk - sq)
        s = s.masked_fill(~mask, float("-inf"))
    return s


@_kernel
def _flash_attn_fwd(q, k, v, qv=None, *, softmax_scale=None, causal=False, return_lse=False, **kwargs):
    CALLS.append(("fwd", tuple(q.shape), tuple(k.shape)))
    softmax_scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
    s = _scores(q, k, softmax_scale, causal)
    lse = torch.logsumexp(s, dim=-1)  # (b, h, sq)
    p = torch.exp(s - lse[..., None])
    out = torch.einsum("bhqk,bkhd->bqhd", p, v.float()).to(q.dtype).contiguous()
    requires_grad = any(t.requires_grad for t in (q, k, v))
    return out, (lse if (return_lse or requires_grad) else None), None, None, None


@_kernel
def _flash_attn_bwd(q, k, v, out, dout, lse, softmax_scale=None, causal=False, *args, **kwargs):
    CALLS.append(("bwd", tuple(q.shape), tuple(k.shape)))
    softmax_scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
    p = torch.exp(_scores(q, k, softmax_scale, causal) - lse[..., None])
    do, vf = dout.float(), v.float()
    dv = torch.einsum("bhqk,bqhd->bkhd", p, do)
    dp = torch.einsum("bqhd,bkhd->bhqk", do, vf)
    delta = (do * out.float()).sum(-1).transpose(1, 2)[..., None]  # (b, h, sq, 1)
    ds = p * (dp - delta) * softmax_scale
    dq = torch.einsum("bhqk,bkhd->bqhd", ds, k.float())
    dk = torch.einsum("bhqk,bqhd->bkhd", ds, q.float())
    return dq.to(q.dtype).contiguous(), dk.to(k.dtype).contiguous(), dv.to(v.dtype).contiguous()


class FlashAttnFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, softmax_scale, causal):
        out, lse, *_ = _flash_attn_fwd(q, k, v, softmax_scale=softmax_scale, causal=causal, return_lse=True)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.softmax_scale, ctx.causal = softmax_scale, causal
        return out, lse

    @staticmethod
    def backward(ctx, dout, dlse):
        q, k, v, out, lse = ctx.saved_tensors
        return (*_flash_attn_bwd(q, k, v, out, dout, lse, ctx.softmax_scale, ctx.causal), None, None)


def flash_attn_func(q, k, v, qv=None, gather_kv_indices=None, softmax_scale=None, causal=False, *args, **kwargs):
    softmax_scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
    return FlashAttnFunc.apply(q, k, v, softmax_scale, causal)
