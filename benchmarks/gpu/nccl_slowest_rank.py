"""StepTimer across two GPU ranks through NCCL: the record must keep the slowest rank per step.

    torchrun --nproc-per-node 2 benchmarks/gpu/nccl_slowest_rank.py --out DIR

Each rank runs the same bf16 matmul step; on chosen measured steps one rank also spins
its GPU for ~8 ms (`torch.cuda._sleep`, inside the timed region), so which rank is the
slowest changes from step to step. Rank 0 writes the measurement body StepTimer produced,
each rank's own CUDA-event times, and a verdict: every recorded sample must equal the
maximum of the ranks' own times for that step, and the slowest rank must be the one made
slow. A single all-reduce per step keeps the ranks in lockstep, as a data-parallel step does.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

import torch
import torch.distributed as dist

from ledger.collectors.timer import VENDOR_H200_BF16, StepTimer

WARMUP, MEASURED = 5, 12
#: measured step -> rank made slow on it
SLOW = {0: 1, 1: 0, 2: 1, 3: 1, 5: 0, 8: 1, 9: 0, 11: 1}
SPIN_CYCLES = 16_000_000  # ~8 ms at ~2 GHz


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    a = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    grad = torch.zeros(64 * 1024 * 1024 // 2, device=device, dtype=torch.bfloat16)
    flop_per_sample = 2 * 8192**3  # one matmul per sample, one sample per rank per step
    timer = StepTimer(
        warmup=WARMUP, global_batch=world, local_batch=1, flop_per_sample=flop_per_sample, peak=VENDOR_H200_BF16
    )
    own: list[tuple[torch.cuda.Event, torch.cuda.Event]] = []
    for i in range(WARMUP + MEASURED):
        measured = i - WARMUP
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with timer.step():
            s.record()
            c = a @ b
            if SLOW.get(measured) == rank:
                torch.cuda._sleep(SPIN_CYCLES)
            grad.add_(c.flatten()[: grad.numel()].to(grad.dtype), alpha=0)  # keep c live, no extra work
            e.record()
        own.append((s, e))
        # The step boundary of data-parallel training: both ranks wait for the slower one here,
        # outside the timed region.
        dist.all_reduce(grad)
    result = timer.finish()
    torch.cuda.synchronize()
    mine = [s.elapsed_time(e) / 1000.0 for s, e in own][WARMUP:]
    gathered: list = [None] * world
    dist.all_gather_object(gathered, mine)
    if rank == 0:
        args.out.mkdir(parents=True, exist_ok=True)
        expected_rank = [SLOW.get(i) for i in range(MEASURED)]
        max_own = [max(g[i] for g in gathered) for i in range(MEASURED)]
        # The timer's events bracket the same work as the own events, so the two agree to
        # within event resolution; what must match exactly is which rank was slowest.
        close = all(abs(x - y) <= 0.05 * y + 2e-5 for x, y in zip(result.samples, max_own))
        ranks_ok = all(exp is None or got == exp for exp, got in zip(expected_rank, result.slowest_rank))
        verdict = {
            "world_size": world,
            "backend": dist.get_backend(),
            "samples": result.samples,
            "slowest_rank": result.slowest_rank,
            "made_slow": expected_rank,
            "own_times_per_rank": gathered,
            "samples_match_max_of_ranks": close,
            "slowest_rank_matches": ranks_ok,
        }
        body = result.measurement(
            title="StepTimer over 2 NCCL ranks, one rank made slow on chosen steps",
            command="torchrun --nproc-per-node 2 benchmarks/gpu/nccl_slowest_rank.py",
            extra={
                "made_slow_per_step": expected_rank,
                "samples_match_max_of_ranks": close,
                "slowest_rank_matches": ranks_ok,
                "backend": dist.get_backend(),
                "slowest_rank_per_step": result.slowest_rank,
                "rank_reduction": "slowest-rank",
            },
        )
        (args.out / "nccl_measurement.json").write_text(json.dumps(body, indent=2))
        (args.out / "nccl_verdict.json").write_text(json.dumps(verdict, indent=2))
        print(
            json.dumps(
                {
                    k: verdict[k]
                    for k in (
                        "world_size",
                        "backend",
                        "slowest_rank",
                        "made_slow",
                        "samples_match_max_of_ranks",
                        "slowest_rank_matches",
                    )
                }
            )
        )
        print("median step", result.median, "s; peak allocated", result.peak_allocated_bytes)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
