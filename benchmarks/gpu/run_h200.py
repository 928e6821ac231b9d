"""H200 driver: environment, health and ceiling records, then the reference workload.

Run on the GPU machine from the repository root (see run_h200.sh):

    python3 benchmarks/gpu/run_h200.py --out "$OUT"

It writes record bodies as JSON files into --out, to be added to the ledger afterwards
with benchmarks/gpu/add_records.py (or `ledger add KIND FILE` one by one), and prints a
table last. The reference workload is timed three times in one run: a bare CUDA-event
loop (A), StepTimer, the bare loop again (B), so StepTimer is compared with the
midpoint of A and B on one allocation. `--small` runs the same path on CPU in seconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "src"))

import torch  # noqa: E402
from reference_workload import LTX2_LIKE, SMALL, analytic_flops, build  # noqa: E402

from ledger.collectors.attention import benchmark_attention  # noqa: E402
from ledger.collectors.ceiling import measure_ceiling  # noqa: E402
from ledger.collectors.environment import collect_environment  # noqa: E402
from ledger.collectors.flops import audit_flops  # noqa: E402
from ledger.collectors.timer import VENDOR_H200_BF16, Peak, StepTimer  # noqa: E402
from ledger.schema.kinds import summarize  # noqa: E402
from ledger.store.stamps import detect_allocation  # noqa: E402

WARMUP, MEASURED = 10, 20


def bare_loop(step, warmup: int, measured: int) -> tuple[list[float], float]:
    """The control: CUDA events around each step, nothing else. Returns (samples, wall s/step)."""
    pairs = []
    for i in range(warmup + measured):
        if i == warmup:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        step()
        e.record()
        pairs.append((s, e))
    torch.cuda.synchronize()
    wall = (time.perf_counter() - t0) / measured
    return [s.elapsed_time(e) / 1000.0 for s, e in pairs[warmup:]], wall


def cpu_bare_loop(step, warmup: int, measured: int) -> tuple[list[float], float]:
    out = []
    for i in range(warmup + measured):
        t0 = time.perf_counter()
        step()
        if i >= warmup:
            out.append(time.perf_counter() - t0)
    return out, statistics.mean(out)


def timer_host_cost(device: torch.device, n: int = 2000) -> float:
    """Seconds of host time StepTimer itself adds per step (an empty timed step), median of 5 runs."""
    runs = []
    for _ in range(5):
        timer = StepTimer(warmup=0, device=device)
        t0 = time.perf_counter()
        for _ in range(n):
            with timer.step():
                pass
        runs.append((time.perf_counter() - t0) / n)
        timer.finish()
    return statistics.median(runs)


def bare_host_cost(device: torch.device, n: int = 2000) -> float:
    """Host time of the bare loop's own two events per step, for the same comparison."""
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            if device.type == "cuda":
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                e.record()
            else:
                time.perf_counter()
                time.perf_counter()
        runs.append((time.perf_counter() - t0) / n)
        if device.type == "cuda":
            torch.cuda.synchronize()
    return statistics.median(runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--small", action="store_true", help="tiny shapes on CPU (a test of the driver, not a measurement)")
    ap.add_argument("--blocks", type=int, default=None)
    ap.add_argument("--batch", type=int, default=None)
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    device = torch.device("cuda" if torch.cuda.is_available() and not args.small else "cpu")
    shape = SMALL if args.small else LTX2_LIKE
    if args.blocks or args.batch:
        from dataclasses import replace

        shape = replace(shape, blocks=args.blocks or shape.blocks, batch=args.batch or shape.batch)
    warmup, measured = (2, 5) if args.small else (WARMUP, MEASURED)
    alloc = detect_allocation().model_dump(mode="json", exclude_none=True)
    gpu_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    alloc["topology"] = f"1x {gpu_name.removeprefix('NVIDIA ')}" if device.type == "cuda" else "cpu"
    log = []

    def say(msg: str) -> None:
        line = f"[{time.perf_counter() - t_start:7.1f}s] {msg}"
        print(line, flush=True)
        log.append(line)

    def write(name: str, data) -> None:
        (out / name).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    # 1. Environment at idle, before any work.
    env_idle = collect_environment(under_load=False, title=None)
    say(f"environment idle: {env_idle['health']['verdict']} {env_idle.get('no_gpu_reason', '')}")

    # 2. Ceilings: the positive controls.
    if device.type == "cuda":
        ceiling = measure_ceiling(device, matmul_size=8192, copy_bytes=4 << 30, repeats=30)
    else:
        ceiling = measure_ceiling(device, matmul_size=256, copy_bytes=1 << 22, dtype=torch.float32, repeats=5)
    say(f"ceiling: {ceiling['title']}")
    ceiling_peak = Peak(
        f"measured-ceiling-{'h200' if device.type == 'cuda' else 'cpu'}-bf16-matmul",
        ceiling["matmul_tflops"],
        note="median bf16 8192^3 matmul rate measured in the same run",
    )

    # 3. The workload and its FLOP audit (one step under FlopCounterMode, after one warm step).
    model, opt, step = build(shape, device)
    params = sum(p.numel() for p in model.parameters())
    say(f"workload: {shape.blocks} blocks, {params / 1e9:.3f} B params fp32, batch {shape.batch}")
    step()
    analytic = analytic_flops(shape)
    audit = audit_flops(
        step,
        analytic=analytic,
        samples_per_step=shape.batch,
        peak=VENDOR_H200_BF16,
        peaks=[ceiling_peak],
        derivation=(
            "exact model-FLOP count of the DiT reference stack (benchmarks/gpu/reference_workload.py:analytic_flops), "
            "FlopCounterMode conventions: linear 2*tokens*in*out fwd, weight grad + input grad where needed; "
            "SDPA 4*H*Sq*Sk*Dh fwd, 2.5x bwd; reconciled integer-exactly over one training step"
        ),
    )
    say(audit.report())
    flop_per_sample = audit.analytic_flop_per_sample

    # 4. A (bare) / StepTimer / B (bare), one allocation, one process. The environment
    #    under load is sampled from a thread while the StepTimer arm runs.
    loop = bare_loop if device.type == "cuda" else cpu_bare_loop
    env_load: dict = {}

    def sample_env():
        time.sleep(1.0 if device.type == "cuda" else 0.0)
        env_load.update(collect_environment(under_load=device.type == "cuda"))

    a_samples, a_wall = loop(step, warmup, measured)
    say(f"bare A median {statistics.median(a_samples):.6f} s")
    sampler = threading.Thread(target=sample_env)
    timer = StepTimer(
        warmup=warmup,
        global_batch=shape.batch,
        local_batch=shape.batch,
        flop_per_sample=flop_per_sample,
        peak=VENDOR_H200_BF16,
        ceiling_tflops=ceiling["matmul_tflops"],
        device=device,
    )
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    sampler.start()
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = None
    for i in range(warmup + measured):
        if i == warmup:
            if device.type == "cuda":
                torch.cuda.synchronize()
            t0 = time.perf_counter()
        with timer.step():
            step()
    if device.type == "cuda":
        torch.cuda.synchronize()
    timer_wall = (time.perf_counter() - t0) / measured
    result = timer.finish()
    sampler.join()
    say(f"StepTimer median {result.median:.6f} s, outcome {result.outcome}")
    b_samples, b_wall = loop(step, warmup, measured)
    say(f"bare B median {statistics.median(b_samples):.6f} s")

    host_timer = timer_host_cost(device)
    host_bare = bare_host_cost(device)
    mid = (statistics.median(a_samples) + statistics.median(b_samples)) / 2
    median_delta_pct = 100 * (result.median - mid) / mid
    drift_pct = 100 * abs(statistics.median(a_samples) - statistics.median(b_samples)) / mid
    overhead_pct = 100 * max(host_timer - host_bare, 0.0) / result.median
    wall_delta_pct = 100 * (timer_wall - (a_wall + b_wall) / 2) / ((a_wall + b_wall) / 2)
    gates = {"overhead_le_0.2pct": overhead_pct <= 0.2, "medians_within_0.5pct": abs(median_delta_pct) <= 0.5}

    # 5. Attention kernels at the workload's shapes (self- and cross-attention).
    free_model = device.type == "cuda"
    if free_model:
        del model, opt, step
        torch.cuda.empty_cache()
    att_shapes = [(shape.video_tokens, shape.video_tokens), (shape.video_tokens, shape.text_tokens)]
    attention = []
    for sq, sk in att_shapes:
        attention += benchmark_attention(
            batch=shape.batch,
            seq_q=sq,
            seq_k=sk,
            heads=shape.heads,
            head_dim=shape.head_dim,
            dtype=torch.bfloat16 if device.type == "cuda" else torch.float32,
            device=device,
            repeats=10 if device.type == "cuda" else 3,
        )
    for rec in attention:
        if rec.get("samples"):
            say(f"{rec['title']}: median {statistics.median(rec['samples']):.1f} TFLOP/s")
        else:
            say(f"{rec['title']}: {rec.get('notes', '')[:120]}")

    # 6. Records.
    health = env_load.get("health", {"verdict": "unknown", "reasons": []})
    contract = {
        "name": f"ref-dit{shape.blocks}-ltx2like-b{shape.batch}-fp32master-bf16" + ("-small-cpu" if args.small else ""),
        "model": f"DiT reference stack: {shape.blocks} blocks, d{shape.dim}, {shape.heads}x{shape.head_dim} heads, FFN {shape.ffn_mult}x, "
        "self + cross attention, adaLN-single (benchmarks/gpu/reference_workload.py)",
        "param_precision": "fp32",
        "optimizer_state_precision": "fp32 AdamW moments (fused)",
        "compute_precision": "bf16 autocast",
        "shape": shape.as_dict(),
        "attention": "torch SDPA, default backend choice",
        "compile": "none",
        "checkpointing": "none",
        "warmup_steps": warmup,
        "measured_steps": measured,
        "statistic": "median",
        "rank_reduction": "single",
        "description": "The collectors' reference workload on one GPU (issue #5).",
    }
    common = {"allocation": alloc, "health": health["verdict"], "health_reasons": health.get("reasons", [])}
    measurement = result.measurement(
        title=f"reference DiT step, StepTimer, 1x {gpu_name}",
        **common,
        extra={
            "arm": "StepTimer",
            "bare_a_median_s": statistics.median(a_samples),
            "bare_b_median_s": statistics.median(b_samples),
            "median_delta_vs_bare_midpoint_percent": median_delta_pct,
            "bare_drift_percent": drift_pct,
            "timer_host_s_per_step": host_timer,
            "bare_host_s_per_step": host_bare,
            "timer_overhead_percent": overhead_pct,
            "wall_s_per_step": {"bare_a": a_wall, "timer": timer_wall, "bare_b": b_wall},
            "wall_delta_percent": wall_delta_pct,
            "gates": gates,
            "params": params,
            "device_seconds_driver": None,
        },
    )
    bare = []
    for label, samples in (("bare CUDA-event loop A", a_samples), ("bare CUDA-event loop B", b_samples)):
        bare.append(
            {
                "metric": "step_time",
                "unit": "s",
                "samples": samples,
                "warmup_steps": warmup,
                "world_size": 1,
                "global_batch": shape.batch,
                "local_batch": shape.batch,
                **common,
                "title": f"reference DiT step, {label}, 1x {gpu_name}",
                "extra": {"arm": label, "clock": "cuda-events" if device.type == "cuda" else "perf_counter"},
            }
        )
    for rec in attention:
        rec["allocation"] = alloc
    env_idle["allocation"] = alloc
    env_load["allocation"] = alloc
    ceiling["allocation"] = alloc
    measurement["extra"]["device_seconds_driver"] = time.perf_counter() - t_start
    write("environment.json", [env_idle, env_load])
    write("ceiling.json", ceiling)
    write("contract.json", contract)
    write(
        "flop_audit.json",
        audit.record(title=f"reference DiT stack ({shape.blocks} blocks, LTX-2-like shapes): exact FLOP audit"),
    )
    write("measurements.json", [measurement, *bare])
    write("attention.json", attention)

    rows = [
        ("GPU", gpu_name),
        ("health under load", f"{health['verdict']} {'; '.join(health.get('reasons', []))}"),
        ("ceiling bf16 matmul", f"{ceiling['matmul_tflops']:.1f} TFLOP/s"),
        ("ceiling copy", f"{ceiling['copy_tbps']:.2f} TB/s"),
        ("FLOP/sample (exact)", f"{flop_per_sample:,}"),
        ("bare A median", f"{statistics.median(a_samples):.6f} s"),
        (
            "StepTimer median",
            f"{result.median:.6f} s  (min {min(result.samples):.6f}, max {max(result.samples):.6f}, IQR {summarize(result.samples)['iqr']:.6f}, n {len(result.samples)})",
        ),
        ("bare B median", f"{statistics.median(b_samples):.6f} s"),
        ("StepTimer vs bare midpoint", f"{median_delta_pct:+.3f}% (A/B drift {drift_pct:.3f}%)"),
        (
            "StepTimer host overhead",
            f"{overhead_pct:.4f}% of a step ({(host_timer - host_bare) * 1e6:.2f} us/step over bare events)",
        ),
        ("wall per step A / timer / B", f"{a_wall:.6f} / {timer_wall:.6f} / {b_wall:.6f} s ({wall_delta_pct:+.3f}%)"),
        ("throughput", f"{result.throughput:.3f} samples/s"),
        ("MFU vs 989 TFLOP/s", f"{result.mfu_percent:.2f}%"),
        ("MFU vs measured ceiling", f"{result.mfu_vs_ceiling_percent:.2f}%"),
        (
            "peak allocated / reserved",
            f"{(result.peak_allocated_bytes or 0) / 2**30:.1f} / {(result.peak_reserved_bytes or 0) / 2**30:.1f} GiB",
        ),
        ("gates", ", ".join(f"{k}={'PASS' if v else 'FAIL'}" for k, v in gates.items())),
        ("driver wall time", f"{time.perf_counter() - t_start:.1f} s"),
    ]
    width = max(len(k) for k, _ in rows)
    table = "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
    print(table, flush=True)
    (out / "log.txt").write_text("\n".join(log) + "\n\n" + table + "\n", encoding="utf-8")
    return 0 if all(gates.values()) or args.small else 1


if __name__ == "__main__":
    sys.exit(main())
