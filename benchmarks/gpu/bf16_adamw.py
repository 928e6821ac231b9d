"""One Triton pass of AdamW that also writes the bf16 copy of the weight (issue #27).

`adamw_bf16_copy(p, grad, exp_avg, exp_avg_sq, copy, ...)` updates, in place, the fp32
master `p` and its fp32 moments from `grad` (bf16 or fp32), exactly as torch.optim.AdamW's
update (decoupled weight decay, bias-corrected moments), and writes `copy` (bf16) from the
new master. Per element it reads 4 + 2 + 4 + 4 bytes and writes 4 + 4 + 4 + 2: 28 bytes
against fused AdamW's 28 with an fp32 gradient, while the forward's cast of the fp32
weight (6 bytes) and the backward's cast of the bf16 weight gradient to fp32 (6 bytes)
are gone. `campaign_workload.adamw_reference` is the same update in plain torch; `check()`
compares the two on random tensors (the campaign driver runs it before it times anything).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

BLOCK = 4096


@triton.jit
def _adamw_kernel(
    p_ptr,
    g_ptr,
    m_ptr,
    v_ptr,
    c_ptr,
    n,
    lr,
    one_minus_beta1,
    beta2,
    one_minus_beta2,
    eps,
    decay,
    step_size,
    bc2_sqrt,
    HAS_COPY: tl.constexpr,
    BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    p = tl.load(p_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float32)
    m = tl.load(m_ptr + offs, mask=mask)
    v = tl.load(v_ptr + offs, mask=mask)
    p = p * decay
    # 1 - beta comes from the host in double precision, as torch's update forms it: formed
    # here from beta2 = 0.999 rounded to fp32 it is 4.7e-5 off (the first run's check caught it).
    m = m + (g - m) * one_minus_beta1
    v = v * beta2 + g * g * one_minus_beta2
    denom = tl.sqrt(v) / bc2_sqrt + eps
    p = p - step_size * (m / denom)
    tl.store(p_ptr + offs, p, mask=mask)
    tl.store(m_ptr + offs, m, mask=mask)
    tl.store(v_ptr + offs, v, mask=mask)
    if HAS_COPY:
        tl.store(c_ptr + offs, p.to(tl.bfloat16, fp_downcast_rounding="rtne"), mask=mask)


def adamw_bf16_copy(p, grad, exp_avg, exp_avg_sq, copy, lr, beta1, beta2, eps, wd, bc1, bc2_sqrt) -> None:
    for t in (p, grad, exp_avg, exp_avg_sq) + ((copy,) if copy is not None else ()):
        if not t.is_contiguous():
            raise ValueError("adamw_bf16_copy takes contiguous tensors")
    n = p.numel()
    grid = (triton.cdiv(n, BLOCK),)
    _adamw_kernel[grid](
        p,
        grad,
        exp_avg,
        exp_avg_sq,
        copy if copy is not None else p,
        n,
        lr,
        1.0 - beta1,
        beta2,
        1.0 - beta2,
        eps,
        1.0 - lr * wd,
        lr / bc1,
        bc2_sqrt,
        HAS_COPY=copy is not None,
        BLOCK=BLOCK,
        num_warps=8,
    )


def check(device: str = "cuda", steps: int = 3) -> dict:
    """This kernel against `adamw_reference` on fresh random tensors: the largest relative
    error of master, moments and copy after `steps` updates (fp32 rounding: ~1e-7)."""
    import math

    from campaign_workload import adamw_reference

    gen = torch.Generator(device=device).manual_seed(27)
    n = 3 * BLOCK + 123  # a ragged tail
    p = torch.randn(n, device=device, generator=gen)
    m, v = torch.zeros_like(p), torch.zeros_like(p)
    ref = [p.clone(), m.clone(), v.clone()]
    copy, ref_copy = (
        torch.empty(n, device=device, dtype=torch.bfloat16),
        torch.empty(n, device=device, dtype=torch.bfloat16),
    )
    lr, b1, b2, eps, wd = 1e-3, 0.9, 0.999, 1e-8, 0.01
    for t in range(1, steps + 1):
        g = torch.randn(n, device=device, generator=gen).to(torch.bfloat16)
        bc1, bc2s = 1 - b1**t, math.sqrt(1 - b2**t)
        adamw_bf16_copy(p, g, m, v, copy, lr, b1, b2, eps, wd, bc1, bc2s)
        adamw_reference(ref[0], g, ref[1], ref[2], ref_copy, lr, b1, b2, eps, wd, bc1, bc2s)

    def rel(a, b):
        return float((a.double() - b.double()).norm() / b.double().norm())

    out = {
        "master": rel(p, ref[0]),
        "exp_avg": rel(m, ref[1]),
        "exp_avg_sq": rel(v, ref[2]),
        "copy": rel(copy, ref_copy),
    }
    out["copy_is_rounded_master"] = bool(torch.equal(copy, p.to(torch.bfloat16)))
    # Triton's interpreter (TRITON_INTERPRET=1, on the CPU) truncates to bf16; the GPU rounds to nearest even.
    exact_copy = out["copy_is_rounded_master"] or device == "cpu"
    out["ok"] = all(out[k] < 1e-5 for k in ("master", "exp_avg", "exp_avg_sq")) and exact_copy
    return out
