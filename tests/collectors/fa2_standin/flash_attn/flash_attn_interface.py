"""flash-attn 2's custom ops and autograd Function, with exact attention inside (CPU stand-in)."""

from __future__ import annotations

import torch


def _scores(q, k, softmax_scale, causal):
    s = torch.einsum("bqhd,bkhd->bhqk", q.float(), k.float()) * softmax_scale
    if causal:
        sq, sk = s.shape[-2:]
        s = s.masked_fill(~torch.ones(sq, sk, dtype=torch.bool).tril(sk - sq), float("-inf"))
    return s


def _forward(
    q,
    k,
    v,
    dropout_p,
    softmax_scale,
    causal,
    window_size_left,
    window_size_right,
    softcap,
    alibi_slopes,
    return_softmax,
):
    s = _scores(q, k, softmax_scale, causal)
    lse = torch.logsumexp(s, dim=-1)
    out = torch.einsum("bhqk,bkhd->bqhd", torch.exp(s - lse[..., None]), v.float()).to(q.dtype).contiguous()
    return out, lse, q.new_empty((0,)), torch.zeros(2, dtype=torch.int64)


def _backward(
    dout,
    q,
    k,
    v,
    out,
    softmax_lse,
    dq,
    dk,
    dv,
    dropout_p,
    softmax_scale,
    causal,
    window_size_left,
    window_size_right,
    softcap,
    alibi_slopes,
    deterministic,
    rng_state=None,
):
    p = torch.exp(_scores(q, k, softmax_scale, causal) - softmax_lse[..., None])
    do = dout.float()
    delta = (do * out.float()).sum(-1).transpose(1, 2)  # (b, h, sq)
    ds = p * (torch.einsum("bqhd,bkhd->bhqk", do, v.float()) - delta[..., None]) * softmax_scale
    dq.copy_(torch.einsum("bhqk,bkhd->bqhd", ds, k.float()))
    dk.copy_(torch.einsum("bhqk,bqhd->bkhd", ds, q.float()))
    dv.copy_(torch.einsum("bhqk,bqhd->bkhd", p, do))
    return delta


def _register():
    if hasattr(torch.ops.flash_attn, "_flash_attn_forward"):  # registered by an earlier import in this process
        return
    lib = torch.library.Library("flash_attn", "FRAGMENT")
    lib.define(
        "_flash_attn_forward(Tensor q, Tensor k, Tensor v, float dropout_p, float softmax_scale, bool causal, "
        "int window_size_left, int window_size_right, float softcap, Tensor? alibi_slopes, bool return_softmax) "
        "-> (Tensor, Tensor, Tensor, Tensor)"
    )
    lib.define(
        "_flash_attn_backward(Tensor dout, Tensor q, Tensor k, Tensor v, Tensor out, Tensor softmax_lse, "
        "Tensor(a!)? dq, Tensor(b!)? dk, Tensor(c!)? dv, float dropout_p, float softmax_scale, bool causal, "
        "int window_size_left, int window_size_right, float softcap, Tensor? alibi_slopes, bool deterministic, "
        "Tensor? rng_state=None) -> Tensor"
    )
    lib.impl("_flash_attn_forward", _forward, "CPU")
    lib.impl("_flash_attn_backward", _backward, "CPU")
    _register.lib = lib  # keep the library alive


_register()


class FlashAttnFunc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, softmax_scale, causal):
        out, lse, _, rng = torch.ops.flash_attn._flash_attn_forward(
            q, k, v, 0.0, softmax_scale, causal, -1, -1, 0.0, None, False
        )
        ctx.save_for_backward(q, k, v, out, lse, rng)
        ctx.softmax_scale, ctx.causal = softmax_scale, causal
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, out, lse, rng = ctx.saved_tensors
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        torch.ops.flash_attn._flash_attn_backward(
            dout, q, k, v, out, lse, dq, dk, dv, 0.0, ctx.softmax_scale, ctx.causal, -1, -1, 0.0, None, False, rng
        )
        return dq, dk, dv, None, None


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False, *args, **kwargs):
    softmax_scale = q.shape[-1] ** -0.5 if softmax_scale is None else softmax_scale
    return FlashAttnFunc.apply(q, k, v, softmax_scale, causal)
