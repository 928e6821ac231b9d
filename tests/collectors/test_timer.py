"""StepTimer on CPU: slowest rank per step across two gloo ranks, warmup, OOM, MFU arithmetic."""

from __future__ import annotations

import os
import socket
import time

import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from ledger.collectors.timer import Peak, StepTimer, TimerResult  # noqa: E402
from ledger.schema.kinds import Measurement  # noqa: E402

STEPS, WARMUP = 8, 2
#: measured step -> the rank made slow on it (by 60 ms)
SLOW = {0: 1, 1: 1, 2: 0, 3: 1, 4: 0, 5: 0}


def _worker(rank: int, world: int, port: int, queue) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=world)
    try:
        timer = StepTimer(warmup=WARMUP, global_batch=4, local_batch=2, device="cpu")
        for i in range(STEPS):
            with timer.step():
                measured = i - WARMUP
                time.sleep(0.06 if SLOW.get(measured) == rank else 0.001)
        result = timer.finish()
        queue.put((rank, timer._cpu_times[WARMUP:], result))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_gloo_ranks_record_the_slowest_rank_per_step():
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    mp.start_processes(_worker, args=(2, _free_port(), queue), nprocs=2, join=True, start_method="spawn")
    got = dict((rank, (times, result)) for rank, times, result in (queue.get(timeout=30) for _ in range(2)))
    result: TimerResult = got[0][1]
    local = {rank: got[rank][0] for rank in got}
    assert result.world_size == 2
    assert len(result.samples) == STEPS - WARMUP
    # Every step's sample is exactly the slower rank's own time for that step.
    assert result.samples == [max(local[0][i], local[1][i]) for i in range(STEPS - WARMUP)]
    assert result.slowest_rank == [SLOW[i] for i in range(STEPS - WARMUP)]
    # Both ranks reach the same result from the one gather.
    assert got[1][1].samples == result.samples
    body = result.measurement()
    assert body["extra"]["rank_reduction"] == "slowest-rank"
    assert body["extra"]["slowest_rank_per_step"] == result.slowest_rank
    Measurement.model_validate(
        {
            **body,
            "id": "01M8MMZGG183HMXFSPKCH0XKD6",
            "created_at": "2026-01-01T00:00:00Z",
            "tool": {"version": "0"},
            "sha256": "0" * 64,
        }
    )


def _validate(body):
    return Measurement.model_validate(
        {
            **body,
            "id": "01M8MMZGG183HMXFSPKCH0XKD6",
            "created_at": "2026-01-01T00:00:00Z",
            "tool": {"version": "0"},
            "sha256": "0" * 64,
        }
    )


def test_warmup_is_discarded_and_the_step_function_form_gives_the_same_record_shape():
    calls = []
    result = StepTimer(warmup=3, device="cpu").run(lambda: calls.append(1), steps=10)
    assert len(calls) == 10 and len(result.samples) == 7 and result.clock == "perf_counter"
    record = _validate(result.measurement(title="t"))
    assert record.n == 7 and record.warmup_steps == 3 and record.median == result.median


def test_out_of_memory_becomes_an_oom_measurement_not_a_crash():
    timer = StepTimer(warmup=1, device="cpu")
    for i in range(5):
        with timer.step():
            if i == 3:
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")
        if timer.stopped:
            break
    assert i == 3
    record = _validate(timer.finish().measurement())
    assert record.outcome == "oom" and not record.samples and "step 3 (measured)" in record.notes
    assert not record.baseline_eligible


def test_other_errors_are_not_swallowed():
    timer = StepTimer(warmup=0, device="cpu")
    with pytest.raises(ValueError):
        with timer.step():
            raise ValueError("a bug in the step")


def test_no_measured_step_is_a_failed_outcome():
    result = StepTimer(warmup=5, device="cpu").run(lambda: None, steps=3)
    assert result.outcome == "failed" and "no measured step" in result.error


@pytest.mark.parametrize(
    ("gpus", "batch", "step_s", "expected"),
    [
        # The campaign's stopping-point rows: 353,880,819,892,224 FLOP/sample against the 2,450 house peak.
        (4, 8, 0.707865914, 40.810314),
        (8, 24, 0.993335918, 43.623053),
    ],
)
def test_mfu_arithmetic_reproduces_the_campaign_rows(gpus, batch, step_s, expected):
    house = Peak("house-2450", 2450.0, 2500.0)
    result = TimerResult(
        samples=[step_s],
        warmup_steps=10,
        world_size=gpus,
        clock="cuda-events",
        global_batch=batch,
        flop_per_sample=353_880_819_892_224,
        peak=house,
        ceiling_tflops=2500.0,
    )
    assert result.mfu_percent == pytest.approx(expected, abs=5e-6)
    assert result.throughput == pytest.approx(batch / step_s)
    # Against another denominator the same run scales by the ratio of peaks (x 0.98 here).
    assert result.mfu_vs_ceiling_percent == pytest.approx(expected * 2450 / 2500)
    body = result.measurement()
    assert body["peak_convention"] == "house-2450" and body["mfu_percent"] == result.mfu_percent
