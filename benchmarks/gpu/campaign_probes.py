"""Probes of the H200 campaign's phase h27 (issue #27): what a number is made of.

- `attention_timing`: each attention kernel at the workload's shapes timed three ways: the
  host's time to issue one call, CUDA events around each call issued back to back (what
  `ledger collect attention` does), and the same events issued while the GPU is held by a
  spin (`torch.cuda._sleep`) long enough for the host to queue every call first, so the
  events time the device alone. When the host takes longer to issue a call than the kernel
  runs, back-to-back events time the host; queued events do not.
- `profile_step`: one training step of a configuration under torch.profiler: device time by
  kernel family (matmul, attention, Triton fusions from torch.compile, the optimizer, casts
  and copies), the step's wall time, and the optimizer step timed alone with events.
"""

from __future__ import annotations

import contextlib
import re
import statistics
import time

import torch
import torch.nn.functional as F
from campaign_workload import Config, Workload

from ledger.collectors.attention import attention_flops
from ledger.collectors.flash import flash_attn_func


def _sdpa_cudnn():
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.CUDNN_ATTENTION])


def _events(fn, repeats: int, spin_s: float = 0.0) -> list[float]:
    """Seconds per call by CUDA events; with spin_s > 0 the calls are queued behind a GPU spin."""
    if spin_s > 0:
        torch.cuda._sleep(int(spin_s * 2.0e9))  # ~2 GHz SM clock: cycles for spin_s seconds
    pairs = []
    for _ in range(repeats):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        pairs.append((a, b))
    torch.cuda.synchronize()
    return [a.elapsed_time(b) / 1000.0 for a, b in pairs]


def _host_seconds(fn, repeats: int) -> float:
    """Median host seconds to issue one call while the GPU is busy (so no call waits on it)."""
    torch.cuda._sleep(int(0.5 * 2.0e9))
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return statistics.median(out)


def attention_timing(shape, device: torch.device, say, batches=(2, 8), repeats: int = 20) -> list[dict]:
    if device.type != "cuda":
        return []
    rows = []
    h, d = shape.heads, shape.head_dim
    for batch in batches:
        for what, sk in (("self", shape.video_tokens), ("cross", shape.text_tokens)):
            sq = shape.video_tokens
            gen = torch.Generator(device=device).manual_seed(batch * 7 + sk)

            def t(s, gen=gen, batch=batch):
                return torch.randn(batch, s, h, d, device=device, dtype=torch.bfloat16, generator=gen).requires_grad_()

            q, k, v = t(sq), t(sk), t(sk)
            for impl in ("flash-attn-4", "torch-sdpa-cudnn"):
                if impl == "flash-attn-4":
                    ctx = contextlib.nullcontext()

                    def call(q=q, k=k, v=v):
                        return flash_attn_func(q, k, v)
                else:
                    ctx = _sdpa_cudnn()

                    def call(q=q, k=k, v=v):
                        return F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2))

                try:
                    with ctx:
                        for _ in range(3):
                            out = call()
                        grad = torch.randn_like(out)

                        def bwd(out=out, grad=grad, q=q, k=k, v=v):
                            return torch.autograd.grad(out, (q, k, v), grad, retain_graph=True)

                        for _ in range(3):
                            bwd()
                        torch.cuda.synchronize()
                        for direction, fn in (("fwd", call), ("bwd", bwd)):
                            host = _host_seconds(fn, repeats)
                            back_to_back = _events(fn, repeats)
                            queued = _events(fn, repeats, spin_s=host * repeats * 2 + 0.05)
                            flop = attention_flops(batch, sq, h, d, seq_k=sk, direction=direction)
                            row = {
                                "impl": impl,
                                "attention": what,
                                "batch": batch,
                                "seq_q": sq,
                                "seq_k": sk,
                                "heads": h,
                                "head_dim": d,
                                "direction": direction,
                                "flop": flop,
                                "host_s_per_call": host,
                                "back_to_back_s": back_to_back,
                                "queued_s": queued,
                                "back_to_back_tflops": [flop / x / 1e12 for x in back_to_back],
                                "queued_tflops": [flop / x / 1e12 for x in queued],
                            }
                            rows.append(row)
                            say(
                                f"  {impl} {what} B{batch} {direction}: host {host * 1e6:.0f} us/call, kernel "
                                f"{statistics.median(queued) * 1e6:.0f} us; back to back "
                                f"{statistics.median(row['back_to_back_tflops']):.0f} TFLOP/s, queued "
                                f"{statistics.median(row['queued_tflops']):.0f} TFLOP/s"
                            )
                except Exception as exc:  # a kernel that cannot run is a row with its reason
                    rows.append(
                        {"impl": impl, "attention": what, "batch": batch, "error": f"{type(exc).__name__}: {exc}"[:500]}
                    )
                    say(f"  {impl} {what} B{batch}: FAILED {exc}")
            del q, k, v
            torch.cuda.empty_cache()
    return rows


FAMILIES = [
    ("attention (flash-attn 4)", re.compile(r"flash|FlashAttention|fmha_?sm90|kernel_cutlass", re.I)),
    ("attention (cuDNN)", re.compile(r"cudnn|fmha|sdpa", re.I)),
    ("optimizer", re.compile(r"adam|multi_tensor", re.I)),
    ("matmul", re.compile(r"gemm|nvjet|xmma|cutlass|sm90_|ampere_|Kernel2|splitK|cublas", re.I)),
    ("Triton fusions (torch.compile)", re.compile(r"^triton_|_kernel$", re.I)),
    ("casts and copies", re.compile(r"copy|cast|convert", re.I)),
    ("reductions and elementwise (eager)", re.compile(r"reduce|elementwise|vectorized|norm|gelu|softmax", re.I)),
]


def family(name: str) -> str:
    for fam, rx in FAMILIES:
        if rx.search(name):
            return fam
    return "other"


def profile_step(work: Workload, cfg: Config, cuda: bool, say) -> dict:
    """One profiled step of `cfg` (after two unprofiled ones) and its optimizer step alone."""
    if not cuda:
        return {}
    from torch.profiler import ProfilerActivity, profile

    step = work.step_fn(cfg)
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    kernels: dict[str, list[float]] = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and ev.device_time_total > 0:
            kernels.setdefault(ev.name, []).append(ev.device_time_total / 1e6)
    by_family: dict[str, float] = {}
    for name, times in kernels.items():
        by_family[family(name)] = by_family.get(family(name), 0.0) + sum(times)
    busy = sum(by_family.values())
    top = sorted(((sum(v), len(v), n) for n, v in kernels.items()), reverse=True)[:40]
    # The optimizer step alone: forward and backward (one sample: the step's cost does not
    # depend on the batch, and an eager forward at batch 8 would need more memory than the
    # compiled one), then events around the step, 3 times.
    opt_s = []
    body_lin = work.copies_for(cfg)[1]
    for _ in range(3):
        latents, text, target, t = work.batch(1)
        work.enter(cfg)
        loss = _loss(work, cfg, latents, text, target, t)
        loss.backward()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        (body_lin.step if body_lin is not None else work.opt.step)()
        b.record()
        torch.cuda.synchronize()
        opt_s.append(a.elapsed_time(b) / 1000.0)
        work.zero_grad()
    out = {
        "config": cfg.as_dict(),
        "label": cfg.label(),
        "wall_s": wall,
        "kernel_s": busy,
        "by_family_s": dict(sorted(by_family.items(), key=lambda kv: -kv[1])),
        "top_kernels": [{"name": n[:200], "calls": c, "s": s} for s, c, n in top],
        "optimizer_step_s": opt_s,
    }
    say(f"profile of {cfg.label()}: wall {wall:.4f} s, kernels {busy:.4f} s")
    for fam, sec in out["by_family_s"].items():
        say(f"  {fam:<36} {sec:8.4f} s  {100 * sec / wall:5.1f}% of the step")
    say(f"  optimizer step alone: {statistics.median(opt_s):.4f} s ({100 * statistics.median(opt_s) / wall:.1f}%)")
    return out


def _loss(work: Workload, cfg: Config, latents, text, target, t):
    """The step's forward and loss, eager (the profile's optimizer timing needs only the gradients)."""
    from campaign_workload import BlockRunner, model_forward, sdpa_context

    lin = work.copies_for(cfg)[0]
    runners = [BlockRunner(b, cfg.attn, lin) for b in work.model.blocks]
    work._set_optimizer(cfg)
    with (
        torch.autocast("cuda", dtype=torch.bfloat16),
        sdpa_context(work.device) if cfg.attn in ("sdpa", "mixed") else contextlib.nullcontext(),
    ):
        pred = model_forward(work.model, runners, latents, text, t, lin)
    return F.mse_loss(pred.float(), target)
