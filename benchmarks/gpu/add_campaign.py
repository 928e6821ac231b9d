"""Add what benchmarks/gpu/campaign.py wrote to a ledger: the campaign of issue #16 as records.

    python benchmarks/gpu/add_campaign.py FOLDER --ledger . --source-sha SHA [--note TEXT]

FOLDER holds the campaign-*.json files of one allocation, in the order they ran (by file
time in the JSON: base, then fa4, then any follow-up). Written, each kind validated and
every reference checked by `ledger.store.add`:

- per phase: the environment idle and under load, the measured ceiling (-> the load
  environment), the attention measurements (-> environment, ceiling), a FLOP audit per
  attention implementation (-> contract);
- once: the campaign contract (what stays fixed: the model, fp32 master parameters and AdamW
  state, bf16 compute, per-sample shapes; the knobs are named in it);
- per sandwich: three measurements (A, candidate, B: every measured step of every round, the
  rounds interleaved on one allocation) and a sandwich record whose values are seconds per
  sample (batch differs between arms of the batch sandwich), with its verdict recomputed here
  by ledger.analysis.sandwich.compute; a sandwich that could not run is a measurement with
  its outcome (oom, failed) instead;
- the final measurement of each fa4 phase (the configuration reached, --final-steps steps);
- one decision per family of changes, citing its sandwiches, with where to continue.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from ledger.analysis.metrics import mfu_percent
from ledger.analysis.sandwich import compute
from ledger.schema.envelope import Source
from ledger.schema.kinds import summarize
from ledger.store import Item, Ledger, Stamping, add

CONTRACT = {
    "name": "dit8-ltx2like-fp32master-bf16-1xh200-campaign",
    "model": "DiT reference stack: 8 blocks, d4096, 32x128 heads, FFN 4x, self + cross attention, adaLN-single "
    "(benchmarks/gpu/reference_workload.py), trained one step at a time",
    "param_precision": "fp32",
    "optimizer_state_precision": "fp32 AdamW moments",
    "compute_precision": "bf16 autocast",
    "shape": {
        "blocks": 8,
        "dim": 4096,
        "heads": 32,
        "head_dim": 128,
        "ffn_mult": 4,
        "video_tokens": 4290,
        "text_tokens": 1024,
        "latent_channels": 128,
        "text_dim": 3840,
        "timestep_freq": 256,
    },
    "attention": "exact softmax attention, non-causal (SDPA cuDNN or flash-attn 4: a knob)",
    "compile": "none or per-block torch.compile (a knob)",
    "checkpointing": "none",
    "statistic": "median",
    "rank_reduction": "single",
    "extra": {
        "knobs": "attention kernel (per attention: self and cross), torch.compile regions (blocks or the whole "
        "model), AdamW implementation (fused/foreach, or fused with a bf16 weight copy it writes), CUDA graph of the "
        "whole step, samples per step; each changed by one sandwich on one allocation",
        "fixed": "model and its parameters, fp32 master weights and AdamW state, bf16 autocast compute, per-sample "
        "shapes (4,290 video and 1,024 text tokens), the exact FLOP count per sample",
        "issue": "16, 27",
    },
    # The files that define what is measured: the model, the step and its knobs, the optimizer
    # kernel, the timing driver and its launcher, the pinned kernel wheels, flash-attn 4's counted
    # op and StepTimer. A change elsewhere (README, LICENSE, docs, records) owes no re-gate.
    "recipe_paths": [
        "benchmarks/gpu/reference_workload.py",
        "benchmarks/gpu/campaign_workload.py",
        "benchmarks/gpu/bf16_adamw.py",
        "benchmarks/gpu/campaign.py",
        "benchmarks/gpu/run_campaign.sh",
        "benchmarks/gpu/fetch_wheels.sh",
        "src/ledger/collectors/flash.py",
        "src/ledger/collectors/timer.py",
    ],
    "description": "The H200 campaign of issues #16 and #27: the reference DiT workload toward 62% MFU against "
    "989 TFLOP/s on one H200, every change a sandwich on one allocation. Samples per step may change; "
    "throughput and MFU are per sample, so measurements at different batch sizes compare. This record corrects "
    "the first one of its name: the same contract, with the files that define its recipe named.",
}

# family, verdict rule, mechanism, where to continue: per change name of campaign.py.
FAMILIES = {
    "batch": (
        "samples per step (batch 2 -> 4 -> 8)",
        "The optimizer step over 2.27 B fp32 parameters (fused AdamW reads and writes about 28 bytes per "
        "parameter, 64 GB) and the bf16 casts of the weights cost the same per step whatever the batch; more "
        "samples per step spread them (expected mechanism; the step was not profiled).",
        "Untested: batch 16. Peak allocated memory grew from 58 GiB at batch 4 to 87 GiB at batch 8, so batch 16 "
        "would need about 145 GiB, more than the H200's 139 GiB; continue with activation checkpointing of the FFN, "
        "or shard the optimizer state over two GPUs (FSDP2) when a two-GPU machine is lent.",
    ),
    "optimizer": (
        "AdamW implementation: foreach (capturable) in place of fused",
        "The fused AdamW kernel does the whole update in one pass over parameters, gradients and both moments; "
        "foreach launches a kernel per operation and list chunk, with more passes over the same 64 GB "
        "(expected mechanism; not profiled).",
        "Keep fused AdamW. Next on the optimizer: keep a bf16 copy of the weights written by the optimizer "
        "step, so the forward stops casting fp32 weights each step.",
    ),
    "compile": (
        "torch.compile regions: each transformer block",
        "Inductor can fuse the RMSNorms, the adaLN modulation, the gates, the residual adds and the tanh-GELU "
        "into few kernels, removing memory-bound elementwise passes between the matmuls (expected mechanism; the "
        "kernels were not profiled). The blocks share one compiled graph per input dtype (the first block sees "
        "bf16 activations, the others fp32).",
        "Compile the whole model (the embeddings and output projection too), and try mode max-autotune for the "
        "matmul templates; measure compile time against the run length it serves.",
    ),
    "graphs": (
        "CUDA graph of the whole step (forward, backward, fused AdamW)",
        "At batch 4 the captured step (0.4425 s) was within the 0.5% floor of the eager step (0.4434 s): with "
        "steps this long, launch gaps are a negligible share (inferred from the result, not profiled). The graph's "
        "private pool keeps the whole step's activations and gradients (62.75 GiB at batch 8), so at batch 8 the "
        "eager control arm beside it ran out of memory.",
        "Not worth its memory at this step length. Revisit only for short steps (small batch, many GPUs), with "
        "torch.compile mode reduce-overhead per block rather than a whole-step capture.",
    ),
    "attention": (
        "attention kernel: flash-attn 4 in place of SDPA cuDNN",
        "flash-attn 4 (CuTe DSL, Hopper wgmma and TMA) ran the workload's self-attention at about 700/630 "
        "TFLOP/s forward/backward against cuDNN's 600/540, and takes (batch, seq, heads, dim) tensors as the "
        "projections produce them (no transposes); it runs as ledger's counted custom op, so the FLOP audit "
        "stays exact and torch.compile treats it as one opaque op.",
        "Cross-attention (4,290 x 1,024) is where flash-attn 4 is weakest (forward 390-580 TFLOP/s across runs "
        "against cuDNN's 610); try cuDNN for cross- and flash-attn 4 for self-attention.",
    ),
    "weights": (
        "bf16 weight copy written by the optimizer step (in place of autocast's per-step casts)",
        "A Triton pass per parameter (benchmarks/gpu/bf16_adamw.py) updates the fp32 master and moments from a bf16 "
        "gradient and writes the bf16 copy the next forward uses; autocast's cast of the 2.27 B fp32 weights each "
        "forward and of their gradients back to fp32 each backward are gone (12 bytes per parameter less per step). "
        "The numerics are autocast's (same rounding of the same master). Peak memory fell from 91.5 to 87.3 GiB at "
        "batch 8.",
        "Kept. The optimizer is now 1.4% of the step (17 ms at batch 12): little is left there.",
    ),
    "batch12": (
        "samples per step: batch 12 (beyond 8)",
        "The per-step costs (the optimizer over 2.27 B parameters, weight-sized passes) spread over more samples, "
        "and larger matmuls run closer to the ceiling. Peak allocated memory: 87 GiB at batch 8, 116 GiB at 12, "
        "so 16 (about 145 GiB) does not fit the H200's 139 GiB.",
        "Batch 12 kept (batch 14: its own decision). Beyond, only by trading memory: activation "
        "checkpointing (recompute, not model FLOP) or the optimizer state sharded over GPUs (FSDP2).",
    ),
    "batch14": None,
    "cross-attention": (
        "cross-attention kernel: SDPA cuDNN in place of flash-attn 4 (flash-attn 4 kept for self-attention)",
        "Timed alone at batch 8 with the host queued ahead, cuDNN's cross-attention forward is 917 us against "
        "flash-attn 4's 963, its backward 2,985 us against 2,670: the backward's loss outweighs the forward's gain. "
        "The 389 vs 582 TFLOP/s of the two earlier runs was the host: flash-attn 4 takes 148 us of host time to "
        "issue a 245 us cross-attention forward at batch 2, and events around calls issued back to back time the "
        "host whenever it is the slower (389 TFLOP/s is 370 us per call); queued behind a GPU spin, both kernels "
        "read the same in every run.",
        "Keep flash-attn 4 for both attentions. Attention is 19.5% of the step; its backward (577 TFLOP/s for "
        "self-attention at batch 8) is the larger share.",
    ),
    "compile-model": (
        "torch.compile of the whole model (in place of per-block)",
        "One graph for the embeddings, the eight blocks and the output projection lets Inductor fuse across block "
        "boundaries; the Triton fusions were 8.7% of the step, the matmuls (cuBLAS nvjet kernels, unchanged) 70%.",
        "Timing-neutral (-0.28% per sample) for a longer compile: keep per-block compile. What remains is matmul "
        "time: 0.86 s of the 1.23 s step at batch 12 runs at about 700 TFLOP/s, 88% of the measured ceiling.",
    ),
}
FAMILIES["fused-projections"] = (
    "projection GEMMs: q/k/v as one GEMM and cross-attention k/v as one (on the bf16 weight copies)",
    "The bf16 copies of q/k/v (and of the cross-attention's k/v) are row blocks of one [3d, d] ([2d, d]) leaf the "
    "Triton AdamW writes, so the forward runs one N=12288 GEMM instead of three N=4096 ones and the backward one "
    "input-gradient GEMM with K=12288 instead of three and two adds. At batch 12 each projection GEMM is already "
    "51,480 x 4,096 x 4,096 (1.7 TFLOP), large enough to run near the ceiling, so merging saves little; peak memory "
    "rose from 121.6 to 125.5 GiB (the grouped copies kept in both layouts). Measured with SDPA cuDNN attention: "
    "flash-attn 4's wheels (101 MB) need two device calls on one warm machine, and this session's calls each got a "
    "fresh machine.",
    "Rejected (-0.12% per sample, inside the 0.5% floor). What is left at batch 12: the matmuls' rate under the "
    "700 W power cap and the Triton fusions' share (about 9%): try compile with pointwise autotuning "
    "(phase h28's compile-tuned) and max-autotune, both written and not yet run on the GPU.",
)
FAMILIES["batch14"] = (
    "samples per step: batch 14 (beyond 12)",
    "Past batch 12 the per-step costs are already spread: per sample, batch 14 ran as batch 12 (+0.02%), "
    "at 131 GiB of the H200's 139; again on a second allocation at the fifth round's driver (+0.08%, drift "
    "0.10%; 131.1 GiB against 116.7 GiB at batch 12).",
    "Stop raising the batch on one GPU; see the decision on batch 12 for what would trade memory for more.",
)
FAMILIES["batch16"] = (
    "samples per step: batch 16 (beyond 14)",
    "Out of memory in its first step: 137.81 GiB allocated by PyTorch of the H200's 139.80 GiB when the step "
    "asked for 2.10 GiB more. Peak allocated memory is 116.7 GiB at batch 12 and 131.1 GiB at batch 14 (about "
    "7.2 GiB per sample beside about 30 GiB of weights, gradients and fp32 AdamW state), so batch 16 needs about "
    "145 GiB, as the batch 12 decision predicted; no arm was timed.",
    "Not on one H200 without trading memory: activation checkpointing (recomputed FLOP are not model FLOP, so "
    "it costs MFU) or the optimizer state sharded over two GPUs (FSDP2). Batch 14 is per sample as fast as "
    "batch 12, so a larger batch is not where the points to 62% are.",
)
FAMILIES["fused-projections"] = (
    FAMILIES["fused-projections"][0],
    "The bf16 copies of q/k/v (and of the cross-attention's k/v) are row blocks of one [3d, d] ([2d, d]) leaf the "
    "Triton AdamW writes, so the forward runs one N=12288 GEMM instead of three N=4096 ones and the backward one "
    "input-gradient GEMM with K=12288 instead of three and two adds. At batch 12 each projection GEMM is already "
    "51,480 x 4,096 x 4,096 (1.7 TFLOP, 2.07 ms in cuBLAS by the max-autotune log of phase h28), large enough to "
    "run near the ceiling, so merging saves nothing measurable: -0.12% per sample under SDPA cuDNN (first, when "
    "flash-attn 4's wheels could not reach the device) and -0.01% under flash-attn 4 (phase h28 again, on the "
    "allocation of phase h29).",
    "Rejected under both attention kernels, inside the 0.5% floor. The projection GEMMs run at cuBLAS's rate; "
    "what is left is that rate under the 700 W power cap.",
)
FAMILIES["compile-tuned"] = (
    "torch.compile mode: pointwise and reduction kernels autotuned, coordinate-descent tuning of their launch "
    "configs (per-block compile kept)",
    "Inductor benchmarks block sizes, warps and stages for each Triton fusion (the RMSNorms, adaLN modulation, "
    "gates, residual adds, tanh-GELU and their backward: 8.7% of the step at batch 12 by the h27 profile) instead "
    "of its heuristics. The fusions are memory-bound passes over 51,480 x 4,096 activations, already near the "
    "copy rate with the default configs: the -0.42% per sample is inside the 0.5% floor, for a compile of 146 s "
    "against 26 s.",
    "Rejected (neutral). The fusions' share cannot carry 2 points of MFU: even removed entirely they are 8.7%. "
    "Fewer passes (fusing across the matmuls, e.g. norm and modulation into the GEMM prologue) would need custom "
    "kernels, not compile options.",
)
FAMILIES["compile-autotune"] = (
    "torch.compile mode max-autotune-no-cudagraphs (matmuls autotuned: Triton templates against cuBLAS)",
    "Inductor timed every GEMM of the block against its Triton mm templates: for all 15 GEMM shapes of the "
    "forward and backward at batch 12, cuBLAS won (bias_addmm / mm), the best Triton template reaching 76-93% "
    "of cuBLAS's speed (the table is in the failed measurement's extra). So max-autotune keeps cuBLAS for every "
    "matmul and can only change the pointwise kernels, which the compile-tuned sandwich measured as neutral. The "
    "compile itself did not finish within the 590 s device call, so no arm was timed.",
    "Rejected without a timed arm: the autotuner's own timings leave it nothing to win on the matmuls. Do not "
    "retry max-autotune for this workload unless the GEMM backends change (CUTLASS templates, "
    "max_autotune_gemm_backends), with a compile cache warmed in an earlier call.",
)
FAMILIES["compile-graphs"] = (
    "torch.compile mode reduce-overhead: each compiled block's forward and backward replayed as CUDA graphs "
    "(cudagraph trees, one step one generation; per-block compile, batch 12)",
    "The step at batch 12 is about 1.23 s of large kernels: launch gaps are a small share of it, so replaying the "
    "blocks as graphs has little to remove, and the graphs' private pools (84.5 GiB at batch 12) cannot be shared "
    "with an eager arm, so each graphed arm was built, timed and released alone (torch._dynamo.reset between "
    "arms, the other arm recompiling in its untimed warmup). Two earlier calls failed before a timed arm: arm A "
    "out of memory beside the candidate's pools, then a replay of a shut-down graph after resetting the trees "
    "alone.",
    "Rejected (neutral): launch overhead is not where the 1.8 points to 62% are. The whole step as one graph "
    "(optimizer included) needs the bf16-copy AdamW kernel's bias corrections on the device instead of host "
    "scalars, and memory for its pool beside nothing else; that is the only graph lead left.",
)
FAMILIES["optim-overlap"] = (
    "optimizer step overlapped with the backward: each parameter's bf16-copy AdamW pass issued on a side stream "
    "as soon as its gradient is accumulated (post-accumulate-grad hooks)",
    "The optimizer was 16.4 ms of the 1.217 s step at batch 12 (1.3%; 210 Triton passes of 28 bytes per "
    "parameter, 86% of the 4.3 TB/s copy rate), run after the whole backward with nothing beside it. Issued "
    "from hooks, each block's updates run beside the backward of the blocks below it; the update per parameter "
    "is the same (checked on the GPU: all 210 parameters updated once, all issued during the backward; on the "
    "CPU the masters and moments equal the plain step's bit for bit). The step got 0.31% faster per sample in "
    "every round (A 1.2218-1.2235 s, candidate 1.2186-1.2195 s, B 1.2220-1.2238 s), drift 0.04%: a real gain "
    "under the 0.5% floor, because the passes share the GPU with compute-bound GEMMs held by the 700 W cap.",
    "Rejected (neutral by the 0.5% floor). At most the optimizer's 1.3% can be won this way; it is not where the "
    "points to 62% are. The step is 99.6% device-busy and 70% cuBLAS GEMMs at about 700 TFLOP/s under the "
    "power cap (SM clock median 1,485 MHz by the series): the remaining lever is fewer memory passes fused into "
    "the GEMMs (custom kernels) or more GPUs.",
)
FAMILIES["cross-attention"] = (
    FAMILIES["cross-attention"][0],
    "Timed alone with the host queued ahead, cuDNN's cross-attention forward is faster (B8: 917 us against "
    "flash-attn 4's 963) and its backward slower (2,985 us against 2,670), so the pair loses. Why the forward "
    "read 389 and 582 TFLOP/s in two runs: it was the host. The phase h30 probe timed the B2 4,290 x 1,024 "
    "forward back to back (591 TFLOP/s, single calls down to 165), queued behind a GPU spin (589, 563-595), and "
    "with another Python thread holding the GIL (3 TFLOP/s, 36.6 ms of host per call): events around calls "
    "issued back to back time the host once it issues a call slower than the 245 us kernel runs (135-290 us of "
    "host per call for flash-attn 4's Python path, 33 us for cuDNN). The 389 run's samples spread 344-428 "
    "(host jitter), the 582 run's 575-585. ledger collect attention now queues its calls behind a spin: three "
    "runs on one allocation read 585, 584 and 581 TFLOP/s (cuDNN 605, 603, 601).",
    "Keep flash-attn 4 for both attentions: on the sixth round's allocation cuDNN for cross-attention was slower "
    "again (+0.79% per sample, drift 0.55%). Attention is 19.5% of the step (forward 61 ms, backward 163 ms, its "
    "pre/post passes 13 ms at batch 12); its backward is the larger share.",
)
FAMILIES["graphs"] = (
    FAMILIES["graphs"][0],
    "A graph removes the device's idle time between kernels and nothing else. One profiled step of the "
    "configuration reached (batch 12, phase h30) had its kernels busy {busy} of its {wall} wall time (the union "
    "of kernel spans): {idle} idle, {idle_pct} of the step, below the 0.5% floor a sandwich needs to call a change "
    "faster. Earlier: at batch 4 the whole-step graph was neutral (-0.16%), at batch 8 out of memory beside the "
    "eager arm, and CUDA-graphed compiled blocks were neutral at batch 12 (+0.16%).",
    "Rejected by the bound, without a sandwich: no graph of this step (whole or per block, the optimizer "
    "included) can gain more than the {idle_pct} of idle time. Revisit only for short steps (small batch per GPU, "
    "many GPUs).",
)
FAMILIES["ffn-quack"] = (
    "FFN kernels: the tanh-GELU and its derivative in quack GEMM epilogues (ff1 forward, ff2 input gradient), "
    "through ledger::gemm_gelu/gemm_dgelu",
    "Per block at batch 12 the FFN's activation is a [51,480, 16,384] bf16 tensor (1.69 GB): Inductor's fusions "
    "read and wrote it around the cuBLAS GEMMs in the forward (GELU) and the backward (GELU's derivative, the "
    "activation recomputed for ff2's weight gradient). quack's CuTe DSL GEMM (128x192 tile, cluster 2x1, "
    "ping-pong; untuned default) does that work in its epilogue: ff1 writes the pre-activation and the GELU in one "
    "kernel, ff2's input gradient applies GELU's derivative of the saved pre-activation and writes the "
    "recomputed activation in one kernel. Timed alone at batch 12 the quack GEMMs are slower than cuBLAS (ff1 "
    "forward 690 TFLOP/s plain, 676 with the GELU epilogue, against cuBLAS 712; ff2 input gradient 682 with the "
    "derivative epilogue against cuBLAS 715; a 51,480x4,096x4,096 projection 768 against 821), yet the step got "
    "faster in all three rounds (A 1.2158-1.2188 s, candidate 1.2068-1.2132 s, B 1.2139-1.2161 s): the passes "
    "removed outweigh the slower GEMMs, and peak allocated memory fell from 120.4 to 109.4 GiB (the activation no "
    "longer saved beside its pre-activation). One profiled step after: 1.2025 s wall, 0.46% idle; matmul 0.854 s "
    "with the two quack kernels (76.4 and 75.8 ms over 8 calls each), Triton fusions 83.5 ms (106 ms before), "
    "flash-attn 4 fwd 63.4 ms, bwd 161.4 ms. The first call of the phase could not run the epilogues (quack "
    "refused to fingerprint them with the wheels under /tmp/site; install_wheels.sh now installs into "
    "/tmp/site-packages).",
    "Kept. 60.9% MFU, 1.1 points short of 62%. Next on the same mechanism: the other epilogues (the gate multiply "
    "and residual add after o and ff2, the RMSNorm and modulation before q/k/v and ff1) as quack epilogues or "
    "prologues, and quack's autotuned configs (tuned=True, compile cache warmed in an earlier call) for the two "
    "FFN GEMMs, now 4-5% slower than cuBLAS alone. The 11 GiB freed also reopen batch 16 (out of memory at "
    "137.8 GiB before), though batch 14 was neutral against 12.",
)
#: Changes that share one decision (their sandwiches cite the family's decision together).
DECISION_OF: dict[str, str] = {}


ATTN_WORDS = {"sdpa": "SDPA cuDNN", "fa4": "flash-attn 4", "mixed": "flash-attn 4 self + cuDNN cross"}


def _outcome(s: dict, with_attention: bool = False) -> str:
    """One sandwich's outcome in words, e.g. 'timing-neutral at batch 4 (-0.16%)'."""
    words = {"faster": "faster", "slower": "slower", "neutral": "timing-neutral", "failed": "did not run"}
    verdict = s.get("verdict") or "failed"  # a sandwich cut short before its first round has none
    text = f"{words.get(verdict, verdict)} at batch {s['candidate']['batch']}"
    if with_attention:
        text += f" with {ATTN_WORDS.get(s['candidate'].get('attn'), s['candidate'].get('attn'))}"
    if s.get("per_sample"):
        ps = s["per_sample"]
        text += f" ({100 * (ps['candidate'] / ((ps['a'] + ps['b']) / 2) - 1):+.2f}% per sample)"
    if "out of memory" in s.get("error", ""):
        text += " (out of memory)"
    elif s.get("error") and not s.get("rounds"):
        text += " (failed before its first round)"
    elif not s.get("rounds") and not s.get("per_sample"):
        text += " (cut short before its first round)"
    return text


def _cut_short(s: dict, ph: dict) -> str:
    """Why a sandwich with no round has none: its error, or the call's end before the first round."""
    if s.get("error"):
        return s["error"]
    built = ", ".join(f"{k} built in {s[k + '_prime_s']:.1f} s" for k in ("a", "candidate") if f"{k}_prime_s" in s)
    return (
        f"the device call ended (its time limit) before the sandwich's first round: {built or 'nothing built'}; "
        f"the driver's last log line: {ph['log'][-1][:300] if ph.get('log') else '-'}"
    )


def autotune_table(stdout: str) -> list[dict]:
    """Inductor's max-autotune choices from a driver's stdout: per GEMM, the winner and the best
    Triton template ('Autotune Choices Stats' lines, as torch 2.11 prints them)."""
    rows = []
    for m in re.finditer(r"Autotune Choices Stats:\n(\{.*?\})\nAUTOTUNE (\S+\(.*?\))\n", stdout):
        d = json.loads(m.group(1))
        best, triton = d.get("best_time"), d.get("best_triton_time")
        rows.append(
            {
                "op": m.group(2),
                "winner": d.get("best_kernel"),
                "winner_ms": round(best, 4) if best else None,
                "best_triton_ms": round(triton, 4) if triton else None,
                "triton_speed_vs_winner_percent": round(100 * best / triton, 1) if best and triton else None,
                "choices": d.get("num_choices"),
            }
        )
    return rows


def _timing_body(r: dict, probe: dict) -> dict:
    """One attention kernel timed alone (queued behind a GPU spin), with the host's time per call
    and the back-to-back reading beside it."""
    b2b = statistics.median(r["back_to_back_tflops"])
    return {
        **probe,
        "title": f"{r['impl']} {r['attention']}-attention {r['direction']} B{r['batch']} S{r['seq_q']}x{r['seq_k']}: "
        "device time (calls queued behind a GPU spin)",
        "metric": f"attention_{r['direction']}_tflops",
        "unit": "TFLOP/s",
        "lower_is_better": False,
        "statistic": "median",
        "samples": r["queued_tflops"],
        **summarize(r["queued_tflops"]),
        "command": "bash benchmarks/gpu/run_campaign.sh h27",
        "extra": {
            "implementation": r["impl"],
            "attention": r["attention"],
            "batch": r["batch"],
            "seq_q": r["seq_q"],
            "seq_k": r["seq_k"],
            "heads": r["heads"],
            "head_dim": r["head_dim"],
            "timing": "CUDA events around each call, the calls queued behind torch.cuda._sleep",
            "host_us_per_call": round(r["host_s_per_call"] * 1e6, 1),
            "kernel_us_median": round(statistics.median(r["queued_s"]) * 1e6, 1),
            "back_to_back_tflops_median": round(b2b, 1),
            "convention": "flash-attn: fwd 4*B*Sq*Sk*H*D; bwd 2.5x fwd",
        },
    }


def _requack(prof: dict) -> dict:
    """A profile whose quack GEMMs the driver filed under flash-attn 4 (its classifier before fb581bb's
    successor: 'kernel_cutlass' matched first), moved to matmul from its top kernels (each 's' is the
    kernel's total seconds over the step), flash-attn 4's 'bwd pre/post' reduced by the same."""
    quack = [k for k in prof.get("top_kernels", []) if "quack" in k["name"]]
    fams = prof["by_family_s"]
    if not quack or "attention (flash-attn 4)" not in fams:
        return prof
    moved = sum(k["s"] for k in quack)
    fams = {**fams, "matmul": fams.get("matmul", 0.0) + moved}
    fams["attention (flash-attn 4)"] -= moved
    att = dict(prof.get("attention_s", {}))
    if "bwd pre/post" in att:
        att["bwd pre/post"] -= moved
    return {**prof, "by_family_s": fams, "attention_s": att, "requacked_s": moved}


def _profile_body(prof: dict, key: str, probe: dict, ph: dict) -> dict:
    """The optimizer step timed alone, with one profiled step's kernel time by family beside it."""
    prof = _requack(prof)
    samples = prof["optimizer_step_s"]
    wall = prof["wall_s"]
    return {
        **probe,
        "title": f"optimizer step alone and one profiled step by kernel family: {prof['label']}",
        "metric": "optimizer_step_time",
        "unit": "s",
        "lower_is_better": True,
        "statistic": "median",
        "samples": samples,
        **summarize(samples),
        "command": f"bash benchmarks/gpu/run_campaign.sh {ph['phase']}",
        "extra": {
            "config": prof["config"],
            "when": "before the sandwiches" if key == "profile_start" else "after the sandwiches",
            "profiled_step_wall_s": round(wall, 5),
            "optimizer_share_of_step_percent": round(100 * statistics.median(samples) / wall, 2),
            "kernel_seconds_by_family": {k: round(v, 5) for k, v in prof["by_family_s"].items()},
            "kernel_share_of_step_percent": {k: round(100 * v / wall, 2) for k, v in prof["by_family_s"].items()},
            "top_kernels": [f"{k['s']:.4f} s, {k['calls']} calls: {k['name'][:120]}" for k in prof["top_kernels"][:12]],
            **(
                {
                    "device_busy_s": round(prof["device_busy_s"], 5),
                    "idle_s": round(prof["idle_s"], 5),
                    "idle_share_of_step_percent": round(100 * prof["idle_s"] / wall, 2),
                    "flash_attn_4_seconds": {k: round(v, 5) for k, v in prof["attention_s"].items()},
                    **(
                        {"quack_gemm_seconds_moved_to_matmul": round(prof["requacked_s"], 5)}
                        if "requacked_s" in prof
                        else {}
                    ),
                }
                if "idle_s" in prof
                else {}
            ),
        },
    }


def _host_bound_bodies(rows: list[dict], probe: dict, ph: dict) -> list[dict]:
    """The cross-attention forward at B2 timed three ways (phase h30): back to back, queued behind a GPU
    spin (device time), back to back with the GIL contended."""
    out = []
    b2b = {r["impl"]: r["tflops_median"] for r in rows if r.get("how") == "back to back"}
    for r in rows:
        if "tflops" not in r:
            continue
        queued = r["how"] == "queued"
        title = f"{r['impl']} cross-attention fwd B2 S4290x1024: " + (
            "device time (calls queued behind a GPU spin)" if queued else r["how"]
        )
        out.append(
            {
                **probe,
                "title": title,
                "metric": "attention_fwd_tflops",
                "unit": "TFLOP/s",
                "lower_is_better": False,
                "statistic": "median",
                "samples": r["tflops"],
                **summarize(r["tflops"]),
                "command": f"bash benchmarks/gpu/run_campaign.sh {ph['phase']}",
                "extra": {
                    "implementation": r["impl"],
                    "attention": "cross",
                    "batch": 2,
                    "seq_q": 4290,
                    "seq_k": 1024,
                    "heads": 32,
                    "head_dim": 128,
                    "timing": {
                        "queued": "CUDA events around each call, the calls queued behind torch.cuda._sleep",
                        "back to back": "CUDA events around each call, issued back to back (the earlier collector)",
                    }.get(
                        r["how"],
                        "CUDA events around each call, issued back to back while another Python "
                        "thread spins holding the GIL",
                    ),
                    "host_us_per_call": round(r["host_s_per_call"] * 1e6, 1),
                    "kernel_us_median": round(statistics.median(r["seconds"]) * 1e6, 1),
                    "back_to_back_tflops_median": round(b2b.get(r["impl"], 0.0), 1),
                    "convention": "flash-attn: fwd 4*B*Sq*Sk*H*D; bwd 2.5x fwd",
                },
            }
        )
    return out


AUDIT_TITLES = {
    "fa4": "reference DiT stack, flash-attn 4 through ledger::fa4_fwd/fa4_bwd: exact FLOP audit",
    "sdpa": "reference DiT stack, SDPA cuDNN: exact FLOP audit",
    "mixed": "reference DiT stack, flash-attn 4 self-attention and SDPA cuDNN cross-attention: exact FLOP audit",
    "sdpa-fused": "reference DiT stack, SDPA cuDNN, q/k/v and cross k/v projections as one GEMM each on the bf16 "
    "weight copies: exact FLOP audit",
    "fa4-fused": "reference DiT stack, flash-attn 4, q/k/v and cross k/v projections as one GEMM each on the bf16 "
    "weight copies: exact FLOP audit",
    "fa4-quack": "reference DiT stack, flash-attn 4, the FFN's GELU in quack GEMM epilogues (ledger::gemm_gelu, "
    "ledger::gemm_dgelu): exact FLOP audit",
}


def _gemm_bodies(rows: list[dict], probe: dict, ph: dict) -> list[dict]:
    """The FFN's GEMMs at batch 12 timed alone, cuBLAS against quack (phase h31)."""
    out = []
    for r in rows:
        if "tflops" not in r:
            continue
        flop = 2 * r["m"] * r["k"] * r["n"]
        samples = [flop / x / 1e12 for x in r["samples_s"]]
        out.append(
            {
                **probe,
                "title": f"{r['gemm']} GEMM {r['m']}x{r['k']}x{r['n']} bf16, {r['impl']}: device time "
                "(calls queued behind a GPU spin)",
                "metric": "gemm_tflops",
                "unit": "TFLOP/s",
                "lower_is_better": False,
                "statistic": "median",
                "samples": samples,
                **summarize(samples),
                "command": f"bash benchmarks/gpu/run_campaign.sh {ph['phase']}",
                "extra": {
                    "gemm": r["gemm"],
                    "implementation": r["impl"],
                    "m": r["m"],
                    "k": r["k"],
                    "n": r["n"],
                    "batch": r["batch"],
                    "kernel_us_median": round(r["median_s"] * 1e6, 1),
                    "first_call_s": round(r["first_call_s"], 2),
                    "timing": "CUDA events around each call, the calls queued behind torch.cuda._sleep",
                    "convention": "2*M*K*N per GEMM (the epilogue's GELU is not model FLOP)",
                },
            }
        )
    return out


def _load_of(arm: dict) -> dict | None:
    """GPU 0's NVML series over one timed arm (campaign.py from phase h30): samples, median clock and power."""
    load = arm.get("load") or {}
    gpus = load.get("gpus") or []
    if not gpus:
        return None
    g = gpus[0]
    return {
        "samples": g.get("samples"),
        "sm_clock_median_mhz": g.get("sm_clock_median_mhz"),
        "power_median_w": g.get("power_median_w"),
        "degraded_samples": g.get("degraded_samples"),
    }


def sort_phases(phases: list[dict]) -> list[dict]:
    order = {"base": 0, "fa4": 1, "h27": 2, "h28": 3, "h29": 4, "h30": 5, "h31": 6}
    phases.sort(
        key=lambda d: (order[d["phase"]], len(d.get("log", [])) and d["log"][0], d.get("device_seconds_driver"))
    )
    return phases


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--ledger", default=".")
    ap.add_argument(
        "--source-sha",
        required=True,
        nargs="+",
        help="commit the driver ran from; one per file of --files when the calls ran different commits",
    )
    ap.add_argument("--files", nargs="*", help="campaign JSON files in the order they ran (default: all in FOLDER)")
    ap.add_argument("--note", default=None)
    ap.add_argument(
        "--verify",
        type=Path,
        default=None,
        help="verify-collectors.json of benchmarks/gpu/verify_collectors.py (its own allocation): its environment, "
        "ceiling and attention records, the attention ones cited by the cross-attention decision",
    )
    ap.add_argument("--verify-sha", default=None, help="commit verify_collectors.py ran from")
    ap.add_argument("--verify-allocation", default=None, help="allocation id of the verify call")
    args = ap.parse_args()
    book = Ledger.open(args.ledger)
    shas = list(args.source_sha)
    stamping = Stamping(source=Source(sha=shas[0]))
    if args.files:
        paths = [args.folder / f for f in args.files]  # an absolute file stays itself
    else:
        paths = [p for p in args.folder.glob("campaign-*.json")]
    phases = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    for p, ph in zip(paths, phases, strict=True):
        stdout = p.with_name(f"stdout-{ph['phase']}.txt")  # run_campaign.sh tees the driver's output there
        if stdout.exists() and (table := autotune_table(stdout.read_text(encoding="utf-8", errors="replace"))):
            ph["autotune"] = table
    if not args.files:
        phases = sort_phases(phases)
    written = []

    def put(kind, bodies, origin):
        recs = add(book, kind, [Item(b, origin, f"record {i + 1}") for i, b in enumerate(bodies)], stamping)
        written.extend(recs)
        return recs

    # The contract's live record (none superseding it); when it names other recipe paths than
    # CONTRACT does, a corrected record of the same name supersedes it (records never change).
    same = [c for c in book.records("contract") if c.name == CONTRACT["name"]]
    replaced = {ref for c in same for ref in c.supersedes}
    live = [c for c in same if c.id not in replaced]
    if not live:
        contract = put("contract", [CONTRACT], "<campaign contract>")[0]
    elif list(live[-1].recipe_paths) != CONTRACT["recipe_paths"]:
        contract = put("contract", [{**CONTRACT, "supersedes": [live[-1].id]}], "<corrected campaign contract>")[0]
    else:
        contract = live[-1]
    # An arm whose attention this call did not audit cites the contract's latest audit of it: the
    # FLOP count depends on the model and the attention kernel's op, not on the allocation.
    audits: dict[str, str] = {
        key: r.id
        for r in sorted(book.records("flop-audit"), key=lambda r: r.id)
        for key, title in AUDIT_TITLES.items()
        if r.contract == contract.id and r.title == title
    }
    by_change: dict[str, list[str]] = {}
    bound: dict[str, str] = {}  # the profile's idle time, for the graphs decision's text
    finals: list[str] = []
    for n, ph in enumerate(phases, 1):
        origin = f"campaign-{ph['phase']} (call {n})"
        stamping = Stamping(source=Source(sha=shas[min(n - 1, len(shas) - 1)]))
        alloc = ph["allocation"]
        # A call cut short before any arm ran sampled no environment under load: its health is the idle one's.
        loaded = ph["environment_load"] if ph.get("environment_load", {}).get("health") else None
        envs = put(
            "environment",
            [{**ph["environment_idle"], "allocation": alloc}] + ([{**loaded, "allocation": alloc}] if loaded else []),
            origin,
        )
        env_id = envs[-1].id
        health = (loaded or ph["environment_idle"])["health"]
        ceiling = put("ceiling", [{**ph["ceiling"], "allocation": alloc, "environment": env_id}], origin)[0]
        if ph.get("attention"):
            put(
                "measurement",
                [{**m, "allocation": alloc, "environment": env_id, "ceiling": ceiling.id} for m in ph["attention"]],
                origin,
            )
        for attn, audit in ph["audits"].items():
            if "record" not in audit:
                continue
            title = AUDIT_TITLES[attn]
            rec = put(
                "flop-audit",
                [{**audit["record"], "contract": contract.id, "allocation": alloc, "title": title}],
                origin,
            )[0]
            audits[attn] = rec.id
        probe = {"allocation": alloc, "environment": env_id, "ceiling": ceiling.id}
        timing = [r for r in ph.get("attention_timing", []) if "queued_tflops" in r]
        if timing:
            put("measurement", [_timing_body(r, probe) for r in timing], origin)
        rows = [r for r in ph.get("host_bound", []) if "tflops" in r]
        if rows:
            by_change.setdefault("cross-attention", []).extend(
                r.id for r in put("measurement", _host_bound_bodies(rows, probe, ph), origin)
            )
        gemm_rows = [r for r in ph.get("gemm_probe", []) if "tflops" in r]
        if gemm_rows:
            by_change.setdefault("ffn-quack", []).extend(
                r.id for r in put("measurement", _gemm_bodies(gemm_rows, probe, ph), origin)
            )
        for key in ("profile_start", "profile_end"):
            if ph.get(key) and "wall_s" in ph[key]:
                prof_rec = put("measurement", [_profile_body(ph[key], key, probe, ph)], origin)[0]
                if ph["phase"] == "h30" and key == "profile_start":
                    # The whole-step graph is decided by this profile's idle time (see FAMILIES["graphs"]).
                    by_change.setdefault("graphs", []).append(prof_rec.id)
                    prof = ph[key]
                    bound.update(
                        busy=f"{prof['device_busy_s']:.4f} s",
                        wall=f"{prof['wall_s']:.4f} s",
                        idle=f"{prof['idle_s'] * 1000:.1f} ms",
                        idle_pct=f"{100 * prof['idle_s'] / prof['wall_s']:.2f}%",
                    )
        flop_per_sample = next(
            (a["record"]["flop_per_sample"] for a in ph["audits"].values() if "record" in a),
            None,
        ) or next(r.flop_per_sample for r in book.records("flop-audit") if r.contract == contract.id)
        ceiling_tflops = ph["ceiling"]["matmul_tflops"]
        common = {
            "contract": contract.id,
            "environment": env_id,
            "ceiling": ceiling.id,
            "allocation": alloc,
            "health": health["verdict"],
            "health_reasons": health.get("reasons", []),
            "world_size": 1,
        }

        def arm_body(
            cfg: dict,
            label: str,
            samples: list[float],
            per_round: list[float],
            mem: list[int | None],
            title: str,
            extra: dict,
            when: str | None = None,
            ph=ph,
            common=common,
            flop_per_sample=flop_per_sample,
            ceiling_tflops=ceiling_tflops,
        ) -> dict:
            med = statistics.median(samples)
            body = {
                **common,
                "title": title,
                "metric": "step_time",
                "unit": "s",
                "lower_is_better": True,
                "statistic": "median",
                "samples": samples,
                **summarize(samples),
                "warmup_steps": ph["warmup"],
                "global_batch": cfg["batch"],
                "local_batch": cfg["batch"],
                "throughput": cfg["batch"] / med,
                "throughput_unit": "samples/s",
                "mfu_percent": mfu_percent(flop_per_sample, cfg["batch"], med, 1, 989.0),
                "peak_convention": "vendor-h200-dense-bf16",
                "mfu_vs_ceiling_percent": mfu_percent(flop_per_sample, cfg["batch"], med, 1, ceiling_tflops),
                "command": f"bash benchmarks/gpu/run_campaign.sh {ph['phase']}",
                **({"observed_at": when} if when else {}),
                "extra": {
                    "config": cfg,
                    "arm": label,
                    "per_round_median_s": per_round,
                    "clock": "cuda-events",
                    "timer": "StepTimer",
                    "ceiling_tflops": ceiling_tflops,
                    **extra,
                },
            }
            audit_key = f"{cfg['attn']}-fused" if cfg.get("proj") == "fused" else cfg["attn"]
            if cfg.get("ffn") == "quack":
                audit_key = f"{cfg['attn']}-quack"
            if audits.get(audit_key):
                body["flop_audit"] = audits[audit_key]
            peaks = [m for m in mem if m]
            if peaks:
                body["peak_allocated_bytes"] = max(peaks)
            return body

        for s in ph["sandwiches"]:
            name = s["change"]
            if not s["rounds"]:
                # Could not run: the arm that failed is recorded with its outcome, as StepTimer saw it.
                oom = "out of memory" in s.get("error", "")
                body = {
                    **common,
                    "title": f"sandwich {name}: {s['candidate_label']} vs {s['a_label']}: did not run",
                    "metric": "step_time",
                    "unit": "s",
                    "outcome": "oom" if oom else "failed",
                    "global_batch": s["candidate"]["batch"],
                    "local_batch": s["candidate"]["batch"],
                    "notes": _cut_short(s, ph)[:1000],
                    "command": f"bash benchmarks/gpu/run_campaign.sh {ph['phase']}",
                    "extra": {
                        "config": s["candidate"],
                        "control_config": s["a"],
                        "change": name,
                        "arm": "sandwich (failed before its first round)",
                        **({"autotune": ph["autotune"]} if ph.get("autotune") else {}),
                    },
                }
                by_change.setdefault(name, []).extend(r.id for r in put("measurement", [body], origin))
                continue
            arms = {}
            for label, key, cfg in (("a", "a", s["a"]), ("candidate", "candidate", s["candidate"]), ("b", "b", s["a"])):
                samples = [x for r in s["rounds"] for x in r[key]["samples"]]
                per_round = [r[key]["median"] for r in s["rounds"]]
                mem = [r[key]["peak_allocated_bytes"] for r in s["rounds"]]
                when = s["rounds"][0][key].get("started_at")  # written by campaign.py since the first campaign
                arm_name = {"a": "A", "candidate": "candidate", "b": "B"}[label]
                title = f"sandwich {name}, arm {arm_name}: " + (
                    s["candidate_label"] if label == "candidate" else s["a_label"]
                )
                loads = [_load_of(r[key]) for r in s["rounds"]]
                extra = {"change": name, "rounds": len(s["rounds"])}
                if any(loads):
                    extra["load_per_round"] = loads
                arms[label] = arm_body(cfg, arm_name, samples, per_round, mem, title, extra, when)
            ms = put("measurement", [arms["a"], arms["candidate"], arms["b"]], origin)
            ps = s["per_sample"]
            res = compute(ps["a"], ps["candidate"], ps["b"])
            assert res.verdict == s["verdict"], (name, res.verdict, s["verdict"])
            mfu = {k: arms[k]["mfu_percent"] for k in arms}
            sw = {
                "title": f"sandwich {name}: {s['candidate_label']} vs {s['a_label']}",
                "contract": contract.id,
                "allocation": alloc,
                "control_a": ms[0].id,
                "candidate": ms[1].id,
                "control_b": ms[2].id,
                "candidate_label": s["candidate_label"],
                "metric": "time_per_sample",
                "unit": "s/sample",
                "lower_is_better": True,
                "rounds": len(s["rounds"]),
                "a_value": res.a,
                "candidate_value": res.candidate,
                "b_value": res.b,
                "midpoint": res.midpoint,
                "delta": res.delta,
                "delta_percent": res.delta_percent,
                "drift_percent": res.drift_percent,
                "floor_percent": res.floor_percent,
                "verdict": res.verdict,
                "extra_deltas": {"mfu_points": mfu["candidate"] - (mfu["a"] + mfu["b"]) / 2},
            }
            by_change.setdefault(name, []).extend([put("sandwich", [sw], origin)[0].id])
        if ph.get("final") and ph["final"].get("samples"):
            f = ph["final"]
            body = arm_body(
                f["config"],
                "final",
                f["samples"],
                [f["median"]],
                [f.get("peak_allocated_bytes")],
                f"configuration reached: {f['label']} ({len(f['samples'])} steps)",
                {"final": True, **({"load": _load_of(f)} if _load_of(f) else {})},
                f.get("started_at"),
            )
            rec = put("measurement", [body], origin)[0]
            finals.append(rec.id)
            last = f["config"]
            if ph["phase"] in ("base", "fa4", "h27", "h28"):
                reached_by: str | None = {8: "batch", 4: "attention"}.get(last["batch"], "batch12")
                if last.get("weights") == "bf16-copy" and last["batch"] == 8:
                    reached_by = "weights"
            else:
                # From h29 on: the final measurement belongs to the change this phase took last; when
                # it took none, it is the re-gate of the stopping point at this commit (a plain run,
                # no sandwich's arm, that no decision needs to cite).
                took = [s["change"] for s in ph["sandwiches"] if s.get("taken")]
                reached_by = took[-1] if took else None
            if reached_by:
                by_change.setdefault(reached_by, []).append(rec.id)

    if args.verify is not None:
        v = json.loads(args.verify.read_text(encoding="utf-8"))
        phase_stamping = stamping  # the decisions below are stamped with the last phase's commit
        stamping = Stamping(source=Source(sha=args.verify_sha or shas[-1]))
        alloc = {
            "id": args.verify_allocation or "verify-collectors",
            "scheduler": "local",
            "topology": "1x H200",
            "hosts": ["vm"],
        }
        origin = "verify-collectors"
        env = put("environment", [{**v["environment_load"], "allocation": alloc}], origin)[0]
        ceiling = put("ceiling", [{**v["ceiling"], "allocation": alloc, "environment": env.id}], origin)[0]
        recs = put(
            "measurement",
            [
                {
                    **m,
                    "allocation": alloc,
                    "environment": env.id,
                    "ceiling": ceiling.id,
                    "title": f"{m['title']}, run {m['extra']['run']} of {v['runs']} (queued behind a GPU spin)",
                    "command": "python3 benchmarks/gpu/verify_collectors.py --out $OUT --runs 3",
                }
                for m in v["attention"]
                if m.get("samples")
            ],
            origin,
        )
        by_change.setdefault("cross-attention", []).extend(r.id for r in recs if "4290x1024" in (r.title or ""))
        stamping = phase_stamping

    # Decisions, one per family, from the sandwiches' verdicts.
    decisions = []
    merged: dict[str, list[str]] = {}
    for name, ids in by_change.items():
        merged.setdefault(DECISION_OF.get(name, name), []).extend(ids)
    superseded = {ref for d in book.records("decision") for ref in d.supersedes}
    for name, ids in merged.items():
        family, mechanism, where = FAMILIES[name]
        if name == "graphs" and bound:
            mechanism, where = mechanism.format(**bound), where.format(**bound)
        names = {name} | {k for k, v in DECISION_OF.items() if v == name}
        mine = [s for ph in phases for s in ph["sandwiches"] if s["change"] in names]
        verdicts = [s.get("verdict") for s in mine]
        # A family decided before (its live decision in the ledger) is decided again with all its
        # evidence: the new decision supersedes the old one, cites its evidence too, and keeps its
        # outcomes; the new outcomes name their attention kernel.
        before = [d for d in book.records("decision") if d.family == family and d.id not in superseded]
        earlier = before[-1] if before else None
        if earlier is not None:
            verdicts.append("faster" if earlier.verdict == "accepted" else "neutral")
        verdict = "accepted" if any(v == "faster" for v in verdicts) else "rejected"
        qualifier = "; ".join(
            ([earlier.qualifier] if earlier is not None and earlier.qualifier else [])
            + [_outcome(s, with_attention=earlier is not None) for s in mine]
            + (
                [f"bounded at batch 12 by one profiled step's idle time ({bound['idle_pct']})"]
                if name == "graphs" and bound
                else []
            )
        )
        if earlier is not None:
            ids = [*earlier.evidence, *(i for i in ids if i not in earlier.evidence)]
        decisions.append(
            {
                **({"supersedes": [earlier.id]} if earlier is not None else {}),
                "family": family,
                "verdict": verdict,
                "qualifier": qualifier,
                "mechanism": mechanism,
                "where_to_continue": where,
                "evidence": ids,
                "title": f"decision: {family}: {verdict}",
            }
        )
    put("decision", decisions, "<campaign decisions>")
    if args.note:
        put("note", [{"body": args.note, "title": "H200 campaign: device time and commands"}], "<note>")
    for r in written:
        print(r.kind, r.id, r.summary()[:110])
    return 0


if __name__ == "__main__":
    sys.exit(main())
