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
    # quack's CuTe DSL GEMMs (phase h31's FFN) are named kernel_cutlass_kernel_quack...: matmuls, not attention.
    ("matmul", re.compile(r"quack", re.I)),
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
    spans: list[tuple[float, float]] = []
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA and ev.device_time_total > 0:
            kernels.setdefault(ev.name, []).append(ev.device_time_total / 1e6)
            spans.append((ev.time_range.start / 1e6, ev.time_range.end / 1e6))
    # The device's busy time is the union of kernel spans (two streams may overlap); what the
    # step's wall time has beyond it is idle: launch gaps, host waits, the final sync.
    union, end = 0.0, float("-inf")
    for a, b in sorted(spans):
        if b > end:
            union += b - max(a, end)
            end = b
    first, last = (min(a for a, _ in spans), max(b for _, b in spans)) if spans else (0.0, 0.0)
    attention = {"fwd": 0.0, "bwd": 0.0, "bwd pre/post": 0.0}
    for name, times in kernels.items():
        if family(name) == "attention (flash-attn 4)":
            key = "fwd" if "Forward" in name else "bwd" if "BackwardSm" in name else "bwd pre/post"
            attention[key] += sum(times)
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
        "device_busy_s": union,
        "first_to_last_kernel_s": last - first,
        "idle_s": wall - union,
        "attention_s": attention,
    }
    say(
        f"profile of {cfg.label()}: wall {wall:.4f} s, kernels {busy:.4f} s, device busy (union) {union:.4f} s, "
        f"idle {wall - union:.4f} s ({100 * (wall - union) / wall:.2f}%), first to last kernel {last - first:.4f} s"
    )
    say("  flash-attn 4: " + ", ".join(f"{k} {v:.4f} s" for k, v in attention.items()))
    for fam, sec in out["by_family_s"].items():
        say(f"  {fam:<36} {sec:8.4f} s  {100 * sec / wall:5.1f}% of the step")
    say(f"  optimizer step alone: {statistics.median(opt_s):.4f} s ({100 * statistics.median(opt_s) / wall:.1f}%)")
    return out


def host_bound(shape, device: torch.device, say, repeats: int = 30) -> list[dict]:
    """Why flash-attn 4's cross-attention forward read 389 TFLOP/s in one run and 582 in another.

    Events recorded back to back around each call time the host when the host takes longer
    to issue a call than the kernel runs (the 389 run's samples spread 344-428, the 582 run's
    575-585). The same B2 4,290 x 1,024 call is timed back to back, queued behind a GPU spin
    (device time alone), and back to back again while another Python thread holds the GIL in
    a busy loop (a host slowed as a busy process slows it), with the host's time per call for each.
    """
    if device.type != "cuda":
        return []
    import threading

    h, d = shape.heads, shape.head_dim
    gen = torch.Generator(device=device).manual_seed(389)
    q, k, v = (
        torch.randn(2, s, h, d, device=device, dtype=torch.bfloat16, generator=gen)
        for s in (shape.video_tokens, shape.text_tokens, shape.text_tokens)
    )
    flop = attention_flops(2, shape.video_tokens, h, d, seq_k=shape.text_tokens, direction="fwd")
    rows = []
    for impl, ctx, call in (
        ("flash-attn-4", contextlib.nullcontext, lambda: flash_attn_func(q, k, v)),
        (
            "torch-sdpa-cudnn",
            _sdpa_cudnn,
            lambda: F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)),
        ),
    ):
        with ctx():
            for _ in range(5):
                call()
            torch.cuda.synchronize()
            for how in ("back to back", "queued", "back to back, GIL contended"):
                stop = threading.Event()
                busy = None
                if "contended" in how:

                    def spin(stop=stop):
                        x = 0
                        while not stop.is_set():
                            x += 1

                    busy = threading.Thread(target=spin)
                    busy.start()
                try:
                    host = _host_seconds(call, repeats)
                    secs = _events(call, repeats, spin_s=0.3 if how == "queued" else 0.0)
                finally:
                    stop.set()
                    if busy:
                        busy.join()
                tf = [flop / x / 1e12 for x in secs]
                row = {
                    "impl": impl,
                    "how": how,
                    "host_s_per_call": host,
                    "seconds": secs,
                    "tflops": tf,
                    "tflops_median": statistics.median(tf),
                    "tflops_min": min(tf),
                    "tflops_max": max(tf),
                }
                rows.append(row)
                say(
                    f"  {impl} cross fwd B2, {how}: host {host * 1e6:.0f} us/call, "
                    f"{row['tflops_median']:.0f} TFLOP/s (range {row['tflops_min']:.0f}-{row['tflops_max']:.0f})"
                )
    return rows


def check_overlap(work: Workload, cfg: Config, say) -> dict:
    """One step of the overlapped optimizer `cfg`: every parameter updated exactly once (its
    step count +1), how many updates were issued during the backward (by their hooks) rather
    than after it, and, on the CPU, the masters and moments against one step of the same
    configuration without overlap from the same state (the same update, so equal)."""
    params = [p for g in work.opt.param_groups for p in g["params"]]
    before = {id(p): int(work.opt.state[p]["step"].item()) if work.opt.state.get(p) else 0 for p in params}
    full = work.device.type == "cpu"
    plain = cfg.with_(optim="fused")
    if full:
        saved = _snapshot(work, params)
        work.step_fn(plain)()
        want = _snapshot(work, params)
        _restore(work, params, saved)
    work.step_fn(cfg)()
    overlap = work.overlaps[cfg.key()]
    after = {id(p): int(work.opt.state[p]["step"].item()) for p in params}
    out = {
        "params": len(params),
        "updated_once": sum(after[i] - before[i] == 1 for i in after),
        "issued_during_backward": overlap.fired_in_backward,
    }
    if full:
        got = _snapshot(work, params)
        out["max_abs_difference"] = max(float((a - b).abs().max()) for a, b in zip(got[0], want[0], strict=True))
        _restore(work, params, saved)
    out["ok"] = out["updated_once"] == len(params) and out.get("max_abs_difference", 0.0) == 0.0
    say(f"overlapped optimizer check: {out}")
    return out


def _snapshot(work: Workload, params) -> tuple[list, list]:
    tensors = [p.detach().clone() for p in params]
    for p in params:
        st = work.opt.state.get(p, {})
        tensors += [st[k].detach().clone() for k in ("exp_avg", "exp_avg_sq") if k in st]
    steps = [work.opt.state[p]["step"].clone() if work.opt.state.get(p) else None for p in params]
    return tensors, steps


def _restore(work: Workload, params, saved) -> None:
    tensors, steps = saved
    it = iter(tensors)
    with torch.no_grad():
        for p in params:
            p.copy_(next(it))
        for p in params:
            st = work.opt.state.get(p, {})
            for k in ("exp_avg", "exp_avg_sq"):
                if k in st:
                    st[k].copy_(next(it))
        for p, s in zip(params, steps, strict=True):
            if s is None:
                work.opt.state.pop(p, None)
            else:
                work.opt.state[p]["step"].copy_(s)
    for held in (work._bf16, work._fused):
        if held is not None:
            held[1].__dict__.pop("_steps", None)
    work.active = None  # the next step rewrites the bf16 copies from the restored masters


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


def gemm_probe(shape, device: torch.device, say, batch: int = 12, repeats: int = 20) -> list[dict]:
    """The FFN's GEMMs at the workload's batch-`batch` shapes (issue #27, phase h31): cuBLAS
    (F.linear with its bias, the mm of an input gradient) against quack's CuTe DSL GEMM with the
    same bias and with the GELU (or GELU-derivative) epilogue, each call queued behind a GPU spin
    (device time alone), median of `repeats`. The GELU passes Inductor would run beside cuBLAS are
    not in these rows: the probe says what quack's GEMMs cost, the sandwich what the step gains."""
    if device.type != "cuda":
        return []
    from campaign_workload import gemm_dgelu, gemm_gelu
    from quack.gemm_interface import gemm

    m, d, f = batch * shape.video_tokens, shape.dim, shape.ffn_mult * shape.dim
    gen = torch.Generator(device=device).manual_seed(31)

    def t(*s, scale=1.0):
        return torch.randn(*s, device=device, dtype=torch.bfloat16, generator=gen) * scale

    x, w1, b1 = t(m, d), t(f, d, scale=d**-0.5), t(f)
    w2, b2, pre, dout = t(d, f, scale=f**-0.5), t(d), t(m, f), t(m, d)
    cases = [
        ("ff1 forward", "cuBLAS F.linear + bias", m, d, f, lambda: F.linear(x, w1, b1)),
        ("ff1 forward", "quack GEMM + bias", m, d, f, lambda: gemm(x, w1.T, bias=b1, tuned=False)),
        ("ff1 forward", "quack GEMM + bias + tanh-GELU epilogue", m, d, f, lambda: gemm_gelu(x, w1, b1)),
        ("ff2 input gradient", "cuBLAS mm", m, d, f, lambda: dout.mm(w2)),
        ("ff2 input gradient", "quack GEMM + GELU-derivative epilogue", m, d, f, lambda: gemm_dgelu(dout, w2, pre)),
        ("projection forward", "cuBLAS F.linear + bias", m, d, d, lambda: F.linear(x, w2[:, :d], b2)),
        (
            "projection forward",
            "quack GEMM + bias",
            m,
            d,
            d,
            lambda: gemm(x, w2[:, :d].contiguous().T, bias=b2, tuned=False),
        ),
    ]
    rows = []
    for gemm_name, impl, mm, kk, nn_, fn in cases:
        row = {"gemm": gemm_name, "impl": impl, "m": mm, "k": kk, "n": nn_, "batch": batch}
        try:
            t0 = time.perf_counter()
            fn()  # first call: quack compiles its kernel here
            torch.cuda.synchronize()
            row["first_call_s"] = time.perf_counter() - t0
            for _ in range(3):
                fn()
            secs = _events(fn, repeats, spin_s=0.1)
            med = statistics.median(secs)
            row.update(
                samples_s=secs,
                median_s=med,
                tflops=2 * mm * kk * nn_ / med / 1e12,
                tflops_range=[2 * mm * kk * nn_ / max(secs) / 1e12, 2 * mm * kk * nn_ / min(secs) / 1e12],
            )
            say(
                f"  gemm {gemm_name}, {impl}: {med * 1e3:.3f} ms, {row['tflops']:.0f} TFLOP/s (first call {row['first_call_s']:.1f} s)"
            )
        except Exception as exc:  # a kernel that fails costs its own row
            row["error"] = f"{type(exc).__name__}: {exc}"[:1500]
            say(f"  gemm {gemm_name}, {impl}: FAILED {row['error'][:300]}")
        rows.append(row)
    return rows
