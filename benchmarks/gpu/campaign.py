"""The H200 campaign of issue #16: the reference DiT workload toward 50% MFU, one sandwich per change.

Run on the GPU machine from the repository root (see run_campaign.sh):

    python3 benchmarks/gpu/campaign.py --phase base --out "$OUT"    # changes that need no flash-attn 4
    python3 benchmarks/gpu/campaign.py --phase fa4 --out "$OUT"     # flash-attn 4: kernels, audit, sandwich, final

Each phase is one allocation: it records the environment idle and under load (health), the
measured ceiling, and, for every change, a sandwich on that allocation: the current
configuration (A), the configuration with the change (candidate), the current one again (B),
interleaved for --rounds rounds, each arm-round timed by StepTimer (warmup discarded). The
candidate is taken into the current configuration when its time per sample is faster by
ledger's own rule (ledger.analysis.sandwich.compute: |delta| beyond max(A/B drift, 0.5%)).
The current configuration is kept in --state between phases, so the flash-attn 4 phase
starts from what the first phase accepted. Everything measured is written as JSON into
--out; benchmarks/gpu/add_campaign.py turns it into records here. `--small` runs the same
path on CPU (tiny shapes; a test of the driver, not a measurement).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "src"))

import torch  # noqa: E402
from campaign_probes import attention_timing, check_overlap, gemm_probe, host_bound, profile_step  # noqa: E402
from campaign_workload import BASELINE, Config, Workload  # noqa: E402
from reference_workload import LTX2_LIKE, SMALL, analytic_flops  # noqa: E402

from ledger.analysis.sandwich import compute  # noqa: E402
from ledger.collectors.attention import benchmark_attention  # noqa: E402
from ledger.collectors.ceiling import measure_ceiling  # noqa: E402
from ledger.collectors.environment import LoadSampler, collect_environment, series_readings  # noqa: E402
from ledger.collectors.flash import fa4_status  # noqa: E402
from ledger.collectors.flops import audit_flops  # noqa: E402
from ledger.collectors.timer import VENDOR_H200_BF16, Peak, StepTimer  # noqa: E402
from ledger.store.stamps import detect_allocation  # noqa: E402

DERIVATION = (
    "exact model-FLOP count of the DiT reference stack (benchmarks/gpu/reference_workload.py:analytic_flops), "
    "FlopCounterMode conventions: linear 2*tokens*in*out fwd, weight grad + input grad where needed; "
    "attention 4*H*Sq*Sk*Dh fwd, 2.5x bwd ({attn}); reconciled integer-exactly over one training step"
)


def main() -> int:  # one driver, read top to bottom
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phase", choices=["base", "fa4", "h27", "h28", "h29", "h30", "h31"], required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--state", type=Path, default=Path("/tmp/ledger-campaign/state.json"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=8, help="measured steps per arm and round")
    ap.add_argument("--final-steps", type=int, default=20)
    ap.add_argument("--small", action="store_true", help="tiny shapes on CPU")
    ap.add_argument("--only", default=None, help="comma-separated change names to run (default: the phase's)")
    ap.add_argument(
        "--start",
        default=None,
        help="the configuration to start from, as key=value pairs (attn=fa4,compile=blocks,batch=8); "
        "default: the one --state holds, else the baseline",
    )
    ap.add_argument(
        "--budget-s",
        type=float,
        default=540.0,
        help="driver seconds after which no further sandwich starts (the device call's limit is 600 s)",
    )
    ap.add_argument(
        "--deadline-s",
        type=float,
        default=0.0,
        help="driver seconds the whole call may take (0: none): a sandwich starts only when its estimated "
        "length (its compiles and 9 arm-rounds at the current step time) ends before it, the final measurement "
        "kept",
    )
    ap.add_argument(
        "--no-probes",
        action="store_true",
        help="phase h27: skip the attention timing and the profile before the sandwiches",
    )
    args = ap.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    device = torch.device("cuda" if torch.cuda.is_available() and not args.small else "cpu")
    cuda = device.type == "cuda"
    shape = SMALL if args.small else LTX2_LIKE
    warmup, steps = (1, 2) if args.small else (args.warmup, args.steps)
    torch._dynamo.config.cache_size_limit = 64
    alloc = detect_allocation().model_dump(mode="json", exclude_none=True)
    gpu_name = torch.cuda.get_device_name(device) if cuda else "cpu"
    alloc["topology"] = f"1x {gpu_name.removeprefix('NVIDIA ')}" if cuda else "cpu"
    result: dict = {
        "started_at": dt.datetime.now(dt.UTC).isoformat(),
        "phase": args.phase,
        "allocation": alloc,
        "gpu": gpu_name,
        "torch": torch.__version__,
        "shape": shape.as_dict(),
        "warmup": warmup,
        "steps": steps,
        "rounds": args.rounds,
        "sandwiches": [],
        "log": [],
    }

    def say(msg: str) -> None:
        line = f"[{time.perf_counter() - t_start:7.1f}s] {msg}"
        print(line, flush=True)
        result["log"].append(line)

    def save() -> None:
        result["device_seconds_driver"] = time.perf_counter() - t_start
        result["environment_load"] = env_load  # saved as soon as sampled: a call cut short keeps it
        (out / f"campaign-{args.phase}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")

    env_load: dict = {}
    load_samples: list = []  # every timed arm's NVML readings, in order
    state = json.loads(args.state.read_text()) if args.state.exists() else {}
    current = Config(**state["current"]) if "current" in state else BASELINE
    if args.phase == "h27" and "current" not in state and not args.start:
        args.start = "attn=fa4,compile=blocks,optim=fused,batch=8"  # what issue #16's campaign reached
    if args.phase == "h28" and "current" not in state and not args.start:
        args.start = "attn=fa4,compile=blocks,optim=fused,weights=bf16-copy,batch=12"  # what h27 reached
    if args.phase in ("h29", "h30", "h31") and "current" not in state and not args.start:
        # What h27 reached (h28's fused projections were neutral), with flash-attn 4 this time.
        args.start = "attn=fa4,compile=blocks,optim=fused,weights=bf16-copy,batch=12"
    if args.start:
        fields = dict(kv.split("=", 1) for kv in args.start.split(","))
        current = Config(
            **{
                k: (int(v) if k == "batch" else v == "true" if k == "graphs" else v)
                for k, v in {**current.as_dict(), **fields}.items()
            }
        )
    if args.small:
        current = current.with_(batch=1, attn="sdpa")  # flash-attn 4 runs on the GPU only
    say(f"start: phase {args.phase}, current configuration {current.label()}")

    # 1. Environment idle, ceiling.
    result["environment_idle"] = collect_environment(under_load=False)
    say(f"environment idle: {result['environment_idle']['health']['verdict']}")
    if cuda:
        ceiling = measure_ceiling(device, matmul_size=8192, copy_bytes=4 << 30, repeats=30)
    else:
        ceiling = measure_ceiling(device, matmul_size=256, copy_bytes=1 << 22, dtype=torch.float32, repeats=5)
    result["ceiling"] = ceiling
    say(f"ceiling: {ceiling['title']}")
    ceiling_peak = Peak(
        f"measured-ceiling-{'h200' if cuda else 'cpu'}-bf16-matmul",
        ceiling["matmul_tflops"],
        note="median bf16 8192^3 matmul rate measured in the same run",
    )
    fa4_version, fa4_reason = fa4_status()
    result["fa4"] = {"version": fa4_version, "reason": fa4_reason}
    say(f"flash-attn 4: {fa4_version or fa4_reason}")
    if args.phase in ("h29", "h30", "h31") and cuda and not fa4_version:
        # h29 measures from flash-attn 4 (h28 had to run without it): without it, stop here
        # rather than spend the call on sandwiches no decision could use.
        result["stopped"] = f"flash-attn 4 is not installed: {fa4_reason}"
        save()
        say(result["stopped"])
        return 3

    # 2. Attention kernels at the workload's shapes (FA4, FA2, each SDPA backend), before the model.
    if args.phase == "h27" and not args.no_probes:
        # Why did flash-attn 4's cross-attention forward read 389 and 582 TFLOP/s in two runs?
        # Each kernel timed three ways: host time per call, events back to back (ledger's
        # collector), and events queued behind a GPU spin (device time alone).
        result["attention_timing"] = attention_timing(shape, device, say)
        save()
    if args.phase == "h30" and not args.no_probes:
        # Issue #27: flash-attn 4's cross-attention forward read 389 and 582 TFLOP/s in two runs.
        try:
            result["host_bound"] = host_bound(shape, device, say)
        except Exception as exc:  # a probe that breaks costs its own rows, not the call
            result["host_bound"] = [{"error": f"{type(exc).__name__}: {exc}"[:1500]}]
            say(f"host-bound probe FAILED: {exc}")
        save()
    if cuda and args.phase in ("h27", "h28", "h29", "h30", "h31"):
        from bf16_adamw import check as check_bf16_adamw

        result["bf16_adamw_check"] = check_bf16_adamw("cuda")
        say(f"bf16-copy AdamW kernel against the reference update: {result['bf16_adamw_check']}")
    if args.phase == "fa4":
        dtype = torch.bfloat16 if cuda else torch.float32
        records = []
        for sq, sk in [(shape.video_tokens, shape.video_tokens), (shape.video_tokens, shape.text_tokens)]:
            records += benchmark_attention(
                batch=shape.batch,
                seq_q=sq,
                seq_k=sk,
                heads=shape.heads,
                head_dim=shape.head_dim,
                dtype=dtype,
                device=device,
                repeats=20 if cuda else 2,
            )
        result["attention"] = records
        for rec in records:
            value = (
                f"{statistics.median(rec['samples']):.1f} TFLOP/s" if rec.get("samples") else rec.get("notes", "")[:100]
            )
            say(f"  {rec['title']}: {value}")
        save()

    # 3. The workload and its FLOP audit (per attention implementation this phase uses).
    work = Workload(shape, device)
    say(f"workload: {shape.blocks} blocks, {work.params() / 1e9:.3f} B params fp32")
    flop_per_sample = sum(analytic_flops(shape).values())
    result["audits"] = {}
    audit_cfgs = {
        "sdpa": Config(attn="sdpa", batch=shape.batch),
        "fa4": Config(attn="fa4", batch=shape.batch),
        "mixed": Config(attn="mixed", batch=shape.batch),
        # The fused projections' GEMMs must count what the separate ones did.
        "fa4-fused": Config(attn="fa4", weights="bf16-copy", proj="fused", batch=shape.batch),
        "sdpa-fused": Config(attn="sdpa", weights="bf16-copy", proj="fused", batch=shape.batch),
        # Issue #27, phase h31: the FFN's GEMMs through quack (ledger::gemm_gelu, ledger::gemm_dgelu).
        "fa4-quack": Config(attn="fa4", weights="bf16-copy", ffn="quack", batch=shape.batch),
    }
    if args.small:
        audit_cfgs["fa4-fused"] = audit_cfgs["fa4-fused"].with_(attn="sdpa")
        audit_cfgs["fa4-quack"] = audit_cfgs["fa4-quack"].with_(attn="sdpa")
    for name in {
        "base": ["sdpa"],
        "fa4": ["fa4"],
        "h27": ["fa4", "mixed"],
        "h28": [f"{current.attn}-fused"],
        "h29": [current.attn],
        "h30": [current.attn],
        "h31": ["fa4-quack"],
    }[args.phase]:
        cfg = audit_cfgs[name]
        attn = cfg.attn
        try:
            step = work.step_fn(cfg)
            step()
            audit = audit_flops(
                step,
                analytic=analytic_flops(shape),
                samples_per_step=shape.batch,
                peak=VENDOR_H200_BF16,
                peaks=[ceiling_peak],
                derivation=DERIVATION.format(
                    attn={
                        "sdpa": "SDPA cuDNN",
                        "fa4": "flash-attn 4 through ledger::fa4_fwd/fa4_bwd",
                        "mixed": "flash-attn 4 through ledger::fa4_fwd/fa4_bwd for self-attention, SDPA cuDNN "
                        "for cross-attention",
                    }[attn]
                    + (
                        "; q/k/v and cross-attention k/v projections as one GEMM each on the bf16 weight copies"
                        if cfg.proj == "fused"
                        else ""
                    )
                    + (
                        "; the FFN's ff1 GEMM (+ bias + tanh-GELU epilogue) and ff2 input-gradient GEMM (+ GELU "
                        "derivative epilogue) as quack GEMMs through ledger::gemm_gelu/gemm_dgelu, counted as the "
                        "linears they replace"
                        if cfg.ffn == "quack"
                        else ""
                    )
                ),
            )
            result["audits"][name] = {
                "record": audit.record(),
                "report": audit.report(),
                "counted_by_op": audit.counted_by_op,
            }
            say(f"audit {name}: exact {audit.exact}\n{audit.report()}")
        except Exception as exc:
            result["audits"][name] = {"error": f"{type(exc).__name__}: {exc}"[:2000]}
            say(f"audit {name} FAILED: {type(exc).__name__}: {str(exc)[:1500]}")
        work.drop(cfg)
    save()
    if args.phase == "h31" and not args.no_probes:
        # The FFN's GEMMs at batch 12, cuBLAS against quack (with and without the GELU epilogues).
        try:
            result["gemm_probe"] = gemm_probe(shape, device, say)
        except Exception as exc:
            result["gemm_probe"] = [{"error": f"{type(exc).__name__}: {exc}"[:1500]}]
            say(f"GEMM probe FAILED: {exc}")
        if cuda:
            torch.cuda.empty_cache()
        save()

    # 4. Sandwiches, one per change, each on top of the current configuration.
    primes: list[float] = []  # seconds each arm's first step took (compile, capture, first call)
    step_s: list[float] = []  # the last arm's median step

    def time_arm(cfg: Config, sample_env: bool = False) -> dict:
        step = work.step_fn(cfg)
        timer = StepTimer(
            warmup=warmup,
            global_batch=cfg.batch,
            local_batch=cfg.batch,
            flop_per_sample=flop_per_sample,
            peak=VENDOR_H200_BF16,
            ceiling_tflops=ceiling["matmul_tflops"],
            device=device,
        )
        if cuda:
            torch.cuda.reset_peak_memory_stats(device)
            torch.cuda.synchronize()
        started = dt.datetime.now(dt.UTC).isoformat()
        # NVML read every 0.5 s through the timed steps (not the warmup): the allocation's health
        # is judged from every timed arm's readings pooled, not from one instant (a reading of
        # 399 W between two kernels once made a 690 W run "degraded").
        sampler = None
        for i in range(warmup + steps):
            if i == warmup and sample_env:
                sampler = LoadSampler(interval_s=0.5).start()
            with timer.step():
                step()
            if timer.stopped:
                break
        res = timer.finish()
        load = sampler.stop() if sampler else []
        if load:
            load_samples.extend(load)
            env_load.clear()
            env_load.update(collect_environment(under_load=True, series=load_samples))
        elif sample_env and not env_load:
            env_load.update(collect_environment(under_load=cuda))  # no GPU to read: the machine as it is
        if res.median:
            step_s.append(res.median)
        return {
            "load": series_readings(load)[1] if load else None,
            "started_at": started,
            "samples": res.samples,
            "outcome": res.outcome,
            "error": res.error,
            "median": res.median,
            "mfu_percent": res.mfu_percent,
            "mfu_vs_ceiling_percent": res.mfu_vs_ceiling_percent,
            "peak_allocated_bytes": res.peak_allocated_bytes,
            "peak_reserved_bytes": res.peak_reserved_bytes,
        }

    def release(cfg: Config) -> None:
        """Give back what `cfg`'s cudagraph trees hold (their private pools: 84.5 GiB at batch 12),
        so the other arm fits beside it; the next arm of `cfg` builds and captures again (in its
        warmup steps, which are not timed). Dynamo's caches go too: code compiled for the pools
        given back would replay a shut-down graph; the other arm recompiles (warm Inductor cache)
        in its own untimed warmup."""
        work.drop(cfg)
        torch._dynamo.reset()  # also resets the cudagraph trees
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()

    def sandwich(name: str, candidate: Config) -> None:
        nonlocal current
        a_cfg = current
        # CUDA-graphed blocks keep their activations in private pools the other arm cannot use:
        # each arm of them is built, timed and released on its own.
        isolate = "graphs" in (a_cfg.mode, candidate.mode)
        entry = {
            "change": name,
            "a": a_cfg.as_dict(),
            "candidate": candidate.as_dict(),
            "a_label": a_cfg.label(),
            "candidate_label": candidate.label(),
            "rounds": [],
        }
        result["sandwiches"].append(entry)
        say(f"sandwich {name}: A = {a_cfg.label()} | candidate = {candidate.label()}")
        try:
            for label, cfg in (("a", a_cfg), ("candidate", candidate)):
                t0 = time.perf_counter()
                work.step_fn(cfg)()  # build: compile, capture, first call
                if cuda:
                    torch.cuda.synchronize()
                entry[f"{label}_prime_s"] = time.perf_counter() - t0
                primes.append(entry[f"{label}_prime_s"])
                say(f"  {label} built and stepped once in {entry[f'{label}_prime_s']:.1f} s")
                save()
                if isolate and label == "candidate":
                    release(candidate)
            for r in range(args.rounds):
                row = {}
                for label, cfg in (("a", a_cfg), ("candidate", candidate), ("b", a_cfg)):
                    row[label] = time_arm(cfg, sample_env=True)
                    if isolate and label == "candidate":
                        release(candidate)
                    if row[label]["outcome"] != "ok":
                        raise RuntimeError(f"arm {label} round {r + 1}: {row[label]['outcome']} {row[label]['error']}")
                entry["rounds"].append(row)
                say(f"  round {r + 1}: " + "  ".join(f"{k} {v['median']:.5f}s" for k, v in row.items()))
            per_sample = {
                k: statistics.median(row[k]["median"] for row in entry["rounds"])
                / (candidate.batch if k == "candidate" else a_cfg.batch)
                for k in ("a", "candidate", "b")
            }
            verdict = compute(per_sample["a"], per_sample["candidate"], per_sample["b"])
            entry["per_sample"] = per_sample
            entry["verdict"] = verdict.verdict
            entry["reason"] = verdict.reason()
            take = verdict.verdict == "faster"
            entry["taken"] = take
            say(
                f"  per sample A {per_sample['a']:.5f} cand {per_sample['candidate']:.5f} B {per_sample['b']:.5f}: "
                f"{verdict.verdict} ({verdict.reason()}){' -> taken' if take else ''}"
            )
            if take:
                work.drop(a_cfg)
                current = candidate
            else:
                work.drop(candidate)
        except Exception as exc:
            entry["error"] = f"{type(exc).__name__}: {str(exc)[:1500]}"
            entry["traceback"] = traceback.format_exc()[-4000:]
            entry["verdict"], entry["taken"] = "failed", False
            say(f"  FAILED: {entry['error']}")
            work.drop(candidate)
            if cuda:
                # An arm out of memory leaves its cached blocks behind: give them back so the next
                # sandwich and the final measurement start from what the control arm holds.
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
        state["current"] = current.as_dict()
        args.state.parent.mkdir(parents=True, exist_ok=True)
        args.state.write_text(json.dumps(state))
        save()

    changes = {
        "batch": lambda c: c.with_(batch=c.batch * 2),
        "optimizer": lambda c: c.with_(optim="foreach" if c.optim == "fused" else "fused"),
        "compile": lambda c: c.with_(compile="blocks"),
        "graphs": lambda c: c.with_(graphs=True),
        "attention": lambda c: c.with_(attn="fa4"),
        # Issue #27.
        "weights": lambda c: c.with_(weights="bf16-copy"),
        "batch12": lambda c: c.with_(batch=12),
        "batch14": lambda c: c.with_(batch=14),
        # Issue #27, fifth round: batch 16 (batch 14 fitted at 131 GiB; 16 is expected not to).
        "batch16": lambda c: c.with_(batch=16),
        "cross-attention": lambda c: c.with_(attn="mixed"),
        "compile-model": lambda c: c.with_(compile="model"),
        # Issue #27, second round (phase h28).
        "fused-projections": lambda c: c.with_(proj="fused"),
        "compile-tuned": lambda c: c.with_(mode="tuned"),
        "compile-autotune": lambda c: c.with_(mode="max-autotune"),
        # Issue #27, fourth round: the compiled blocks as CUDA graphs (mode reduce-overhead).
        "compile-graphs": lambda c: c.with_(mode="graphs"),
        # Issue #27, sixth round: each parameter's AdamW pass issued as its gradient arrives,
        # on a side stream beside the rest of the backward.
        "optim-overlap": lambda c: c.with_(optim="overlap"),
        # Issue #27, seventh round (phase h31): the FFN's GELU fused into quack GEMMs' epilogues.
        "ffn-quack": lambda c: c.with_(ffn="quack"),
    }
    # How much longer than a default compile a change's compile is expected to take (for the deadline).
    compile_factor = {"compile-tuned": 2.0, "compile-autotune": 4.0, "compile-graphs": 1.5, "ffn-quack": 1.5}
    order = {
        "base": ["batch", "optimizer", "compile", "graphs"],
        "fa4": ["attention"],
        "h27": ["weights", "batch12", "cross-attention"],
        "h28": ["fused-projections", "compile-tuned", "compile-autotune"],
        # Issue #27, third round: h28's compile modes, under flash-attn 4 (h28 ran without it).
        "h29": ["compile-tuned", "compile-autotune"],
        # Issue #27, sixth round: the optimizer beside the backward, then cuDNN cross-attention again.
        "h30": ["optim-overlap", "cross-attention"],
        # Issue #27, seventh round: the FFN's tanh-GELU and its derivative in the GEMMs' epilogues.
        "h31": ["ffn-quack"],
    }[args.phase]
    if args.only:
        order = [c for c in args.only.split(",") if c]
    if args.phase in ("h27", "h30") and not args.no_probes:
        # Where a step of the configuration reached goes, before any change: kernel time by
        # family (torch.profiler, one step), idle time, and the optimizer step timed alone.
        try:
            result["profile_start"] = profile_step(work, current, cuda, say)
        except Exception as exc:
            result["profile_start"] = {"error": f"{type(exc).__name__}: {exc}"[:1500]}
            say(f"profile FAILED: {exc}")
        save()
    for name in order:
        if args.small and name in ("compile", "graphs", "compile-model", "compile-autotune") and not args.only:
            continue
        cand = changes[name](current)
        if cand == current:
            continue
        if name == "optim-overlap":
            try:
                result["overlap_check"] = check_overlap(work, cand, say)
            except Exception as exc:
                result["overlap_check"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:1500]}
                say(f"overlapped optimizer check FAILED: {exc}")
            save()
            if not result["overlap_check"].get("ok"):
                continue
        spent = time.perf_counter() - t_start
        if spent > args.budget_s:
            say(f"sandwich {name}: not started, {spent:.0f} s of the {args.budget_s:.0f} s budget spent")
            result.setdefault("not_started", []).append(name)
            continue
        if args.deadline_s:
            per_step = step_s[-1] if step_s else 1.3 * cand.batch / 12
            first = max(primes) if primes else 60.0
            estimate = (
                (0 if primes else first)  # the control arm's compile, when nothing is compiled yet
                + first * compile_factor.get(name, 1.0)
                + args.rounds * 3 * (warmup + steps) * per_step * max(1.0, cand.batch / current.batch)
            )
            reserve = (args.final_steps + 2) * per_step + 10
            if spent + estimate + reserve > args.deadline_s:
                say(
                    f"sandwich {name}: not started, {spent:.0f} s spent + {estimate:.0f} s estimated + {reserve:.0f} s "
                    f"for the final measurement would pass the {args.deadline_s:.0f} s deadline"
                )
                result.setdefault("not_started", []).append(name)
                continue
        sandwich(name, cand)

    # 5. The configuration reached, timed once more for the stopping point (fa4, h27 phases; h28
    # when a change was taken; h29 always: the re-gate of the stopping point at this commit).
    taken = any(x.get("taken") for x in result["sandwiches"])
    final_s = (args.final_steps + 2) * (step_s[-1] if step_s else 1.3)
    in_time = not args.deadline_s or time.perf_counter() - t_start + final_s < args.deadline_s
    if (
        args.phase in ("fa4", "h27")
        or (args.phase == "h28" and taken and in_time)
        or (args.phase in ("h29", "h30", "h31") and in_time)
    ) and time.perf_counter() - t_start < args.budget_s + 30:
        say(f"final: {current.label()}")
        try:
            work.step_fn(current)()
            # The final arm samples the environment under load itself when no sandwich arm did
            # (`--only ,` runs it alone: the stopping point's re-gate needs its health beside it).
            final = time_arm(current, sample_env=True) if args.small else None
            if not args.small:
                saved = steps
                steps = args.final_steps
                final = time_arm(current, sample_env=True)
                steps = saved
            result["final"] = {"config": current.as_dict(), "label": current.label(), **final}
            say(
                f"  median {final['median']:.5f} s, MFU {final['mfu_percent']:.2f}% of 989, "
                f"{final['mfu_vs_ceiling_percent']:.2f}% of the measured ceiling"
            )
        except Exception as exc:
            result["final"] = {"config": current.as_dict(), "error": f"{type(exc).__name__}: {exc}"[:1500]}
            say(f"  final FAILED: {exc}")
    profile_in_time = not args.deadline_s or time.perf_counter() - t_start + 15 < args.deadline_s
    if args.phase in ("h27", "h28", "h29", "h30", "h31") and taken and (args.phase == "h27" or profile_in_time):
        if time.perf_counter() - t_start < args.budget_s + 30:
            result["profile_end"] = profile_step(work, current, cuda, say)
    result["environment_load"] = env_load
    result["current"] = current.as_dict()
    save()
    rows = [
        (
            s["change"],
            s.get("verdict"),
            f"{s.get('per_sample', {}).get('a', 0):.5f}",
            f"{s.get('per_sample', {}).get('candidate', 0):.5f}",
            s.get("reason") or s.get("error", "")[:80],
        )
        for s in result["sandwiches"]
    ]
    print("\nchange      verdict  A s/sample  cand s/sample  reason")
    for r in rows:
        print(f"{r[0]:<11} {r[1]:<8} {r[2]:>10} {r[3]:>13}  {r[4]}")
    print(f"health under load: {env_load.get('health', {}).get('verdict')} {env_load.get('health', {}).get('reasons')}")
    print(f"current: {current.label()}  driver {time.perf_counter() - t_start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
