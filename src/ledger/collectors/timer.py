"""StepTimer: per-step times of the slowest rank, with nothing added inside the timed region.

On CUDA each step is bracketed by two CUDA events recorded on the current stream;
nothing synchronises until :meth:`StepTimer.finish`. On CPU the step is timed with
`time.perf_counter` (CPU work is synchronous, so the clock brackets the work itself).
Warmup steps are discarded. At the end, one gather across `torch.distributed` ranks
(NCCL on GPUs, gloo on CPU) brings every rank's step times together and the record
keeps each step's slowest rank, as the campaign measured it.

Two ways to use it:

    timer = StepTimer(warmup=10, global_batch=8, flop_per_sample=F, peak=VENDOR_H200_BF16)
    for batch in loader:
        with timer.step():
            train_step(batch)
        if timer.stopped:           # an OOM ends the measurement instead of the job
            break
    result = timer.finish()
    body = result.measurement()     # a `measurement` record body

    result = StepTimer(warmup=10, ...).run(train_step, steps=30)
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from ..analysis.metrics import mfu_percent, throughput
from ..schema.kinds import summarize
from ..store import add_one


@dataclass(frozen=True)
class Peak:
    """A named peak convention: the MFU denominator, TFLOP/s per GPU."""

    name: str
    tflops_per_gpu: float
    vendor_tflops_per_gpu: float | None = None
    note: str | None = None

    def as_record(self) -> dict[str, Any]:
        out = {"name": self.name, "tflops_per_gpu": self.tflops_per_gpu}
        if self.vendor_tflops_per_gpu is not None:
            out["vendor_tflops_per_gpu"] = self.vendor_tflops_per_gpu
        if self.note:
            out["note"] = self.note
        return out


#: The H200 SXM's dense bf16 figure from NVIDIA's datasheet (989.4 TFLOP/s, quoted as 989).
VENDOR_H200_BF16 = Peak("vendor-h200-dense-bf16", 989.0, 989.0, "NVIDIA H200 SXM datasheet, dense BF16 tensor core")


def _is_oom(exc: BaseException) -> bool:
    oom_type: Any = getattr(torch, "OutOfMemoryError", None) or getattr(torch.cuda, "OutOfMemoryError", ())
    if isinstance(exc, oom_type):
        return True
    # CPU allocations fail with a plain RuntimeError/MemoryError.
    return isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower())


@dataclass
class TimerResult:
    """What one timed run gives: slowest-rank step times and everything derived from them."""

    samples: list[float]
    warmup_steps: int
    world_size: int
    clock: str
    outcome: str = "ok"
    error: str | None = None
    global_batch: int | None = None
    local_batch: int | None = None
    grad_accum: int | None = None
    flop_per_sample: float | None = None
    peak: Peak | None = None
    ceiling_tflops: float | None = None
    peak_allocated_bytes: int | None = None
    peak_reserved_bytes: int | None = None
    slowest_rank: list[int] = field(default_factory=list)
    per_rank_median: list[float] = field(default_factory=list)

    @property
    def stats(self) -> dict[str, float | int]:
        return summarize(self.samples) if self.samples else {"n": 0}

    @property
    def median(self) -> float | None:
        return self.stats.get("median") if self.samples else None

    @property
    def throughput(self) -> float | None:
        if self.median and self.global_batch:
            return throughput(self.global_batch, self.median)
        return None

    @property
    def mfu_percent(self) -> float | None:
        if self.median and self.global_batch and self.flop_per_sample and self.peak:
            return mfu_percent(
                self.flop_per_sample, self.global_batch, self.median, self.world_size, self.peak.tflops_per_gpu
            )
        return None

    @property
    def mfu_vs_ceiling_percent(self) -> float | None:
        if self.median and self.global_batch and self.flop_per_sample and self.ceiling_tflops:
            return mfu_percent(
                self.flop_per_sample, self.global_batch, self.median, self.world_size, self.ceiling_tflops
            )
        return None

    def measurement(self, **fields: Any) -> dict[str, Any]:
        """A `measurement` record body; `fields` (contract, title, health...) are added as given."""
        body: dict[str, Any] = {
            "metric": "step_time",
            "unit": "s",
            "lower_is_better": True,
            "statistic": "median",
            "warmup_steps": self.warmup_steps,
            "world_size": self.world_size,
            "outcome": self.outcome,
            "command": shlex.join(sys.argv) if sys.argv and sys.argv[0] else None,
        }
        if self.outcome == "ok":
            body["samples"] = list(self.samples)
            body.update(self.stats)
        for name in ("global_batch", "local_batch", "grad_accum", "peak_allocated_bytes", "peak_reserved_bytes"):
            if getattr(self, name) is not None:
                body[name] = getattr(self, name)
        if self.throughput is not None:
            body["throughput"] = self.throughput
            body["throughput_unit"] = "samples/s"
        if self.mfu_percent is not None and self.peak:
            body["mfu_percent"] = self.mfu_percent
            body["peak_convention"] = self.peak.name
        if self.mfu_vs_ceiling_percent is not None:
            body["mfu_vs_ceiling_percent"] = self.mfu_vs_ceiling_percent
        extra: dict[str, Any] = {
            "clock": self.clock,
            "rank_reduction": "slowest-rank" if self.world_size > 1 else "single",
        }
        if self.world_size > 1:
            extra["slowest_rank_per_step"] = self.slowest_rank
            extra["per_rank_median_s"] = self.per_rank_median
        if self.flop_per_sample:
            extra["flop_per_sample"] = self.flop_per_sample
        if self.ceiling_tflops:
            extra["ceiling_tflops"] = self.ceiling_tflops
        if self.error:
            body["notes"] = self.error
        body["extra"] = extra
        body.update(fields)
        if "extra" in fields:
            body["extra"] = {**extra, **fields["extra"]}
        return {k: v for k, v in body.items() if v is not None}


class StepTimer:
    """Times steps without synchronising inside them; see the module docstring.

    `device`: a CUDA device to time with events, or None to pick CUDA when the current
    device is available and perf_counter otherwise. `group`: the torch.distributed group
    to reduce over (default: the world, when initialised).
    """

    def __init__(
        self,
        *,
        warmup: int = 10,
        global_batch: int | None = None,
        local_batch: int | None = None,
        grad_accum: int | None = None,
        flop_per_sample: float | None = None,
        peak: Peak | None = None,
        ceiling_tflops: float | None = None,
        device: torch.device | str | None = None,
        group: Any = None,
    ) -> None:
        if warmup < 0:
            raise ValueError("warmup must be >= 0")
        self.warmup = warmup
        self.global_batch = global_batch
        self.local_batch = local_batch
        self.grad_accum = grad_accum
        self.flop_per_sample = flop_per_sample
        self.peak = peak
        self.ceiling_tflops = ceiling_tflops
        self.group = group
        if device is None:
            device = (
                torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
            )
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self._events: list[tuple[Any, Any]] = []
        self._cpu_times: list[float] = []
        self._steps = 0
        self.outcome = "ok"
        self.error: str | None = None
        self._finished: TimerResult | None = None

    @property
    def stopped(self) -> bool:
        """True once a step failed (e.g. out of memory): stop the loop and call finish()."""
        return self.outcome != "ok"

    @property
    def steps(self) -> int:
        return self._steps

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        """Time one step. An out-of-memory error inside ends the measurement as `oom`."""
        if self.stopped:
            # A step after a failure is not timed: the record already says what happened.
            yield
            return
        if self.cuda:
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
        else:
            t0 = time.perf_counter()
        try:
            yield
        except BaseException as exc:
            if not self._fail(exc):
                raise
            return
        if self.cuda:
            end.record()
            self._events.append((start, end))
        else:
            self._cpu_times.append(time.perf_counter() - t0)
        self._steps += 1

    def _fail(self, exc: BaseException) -> bool:
        if not _is_oom(exc):
            return False
        self.outcome = "oom"
        self.error = f"out of memory at step {self._steps} ({'warmup' if self._steps < self.warmup else 'measured'}): {str(exc).splitlines()[0][:300]}"
        if self.cuda:
            # Free what the failed step held so that finish() and the caller can go on.
            torch.cuda.empty_cache()
        return True

    def run(self, step_fn: Callable[[], Any], steps: int) -> TimerResult:
        """Call `step_fn` `steps` times (warmup included), timing each call; then finish()."""
        for _ in range(steps):
            with self.step():
                step_fn()
            if self.stopped:
                break
        return self.finish()

    def _local_times(self) -> list[float]:
        if self.cuda:
            torch.cuda.synchronize(self.device)
            return [s.elapsed_time(e) / 1000.0 for s, e in self._events]
        return list(self._cpu_times)

    def _memory(self) -> tuple[int | None, int | None]:
        if self.cuda:
            return torch.cuda.max_memory_allocated(self.device), torch.cuda.max_memory_reserved(self.device)
        return None, None

    def finish(self) -> TimerResult:
        """Synchronise once, gather across ranks once, and reduce to the slowest rank per step."""
        if self._finished is not None:
            return self._finished
        times = self._local_times()[self.warmup :]
        alloc, reserved = self._memory()
        payload = {"times": times, "outcome": self.outcome, "error": self.error, "alloc": alloc, "reserved": reserved}
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            world = dist.get_world_size(self.group)
            gathered: list[Any] = [None] * world
            # One gather of small Python objects: lengths may differ when a rank ran out
            # of memory, and the cost is paid once, after the measured steps.
            dist.all_gather_object(gathered, payload, group=self.group)
        else:
            world, gathered = 1, [payload]
        self._finished = self._reduce(gathered, world)
        return self._finished

    def _reduce(self, gathered: list[dict[str, Any]], world: int) -> TimerResult:
        failed = [(rank, p) for rank, p in enumerate(gathered) if p["outcome"] != "ok"]
        lengths = {len(p["times"]) for p in gathered}
        result = TimerResult(
            samples=[],
            warmup_steps=self.warmup,
            world_size=world,
            clock="cuda-events" if self.cuda else "perf_counter",
            global_batch=self.global_batch,
            local_batch=self.local_batch,
            grad_accum=self.grad_accum,
            flop_per_sample=self.flop_per_sample,
            peak=self.peak,
            ceiling_tflops=self.ceiling_tflops,
        )
        allocs = [p["alloc"] for p in gathered if p["alloc"] is not None]
        reserved = [p["reserved"] for p in gathered if p["reserved"] is not None]
        result.peak_allocated_bytes = max(allocs) if allocs else None
        result.peak_reserved_bytes = max(reserved) if reserved else None
        if failed:
            result.outcome = failed[0][1]["outcome"]
            result.error = "; ".join(f"rank {rank}: {p['error']}" for rank, p in failed)
            return result
        if len(lengths) != 1:
            result.outcome = "failed"
            result.error = f"ranks timed different numbers of steps: {sorted(len(p['times']) for p in gathered)}"
            return result
        n = lengths.pop()
        if n == 0:
            result.outcome = "failed"
            result.error = f"no measured step: {self._steps} step(s) timed, {self.warmup} discarded as warmup"
            return result
        for i in range(n):
            per_rank = [p["times"][i] for p in gathered]
            slowest = max(range(world), key=per_rank.__getitem__)
            result.samples.append(per_rank[slowest])
            result.slowest_rank.append(slowest)
        result.per_rank_median = [summarize(p["times"])["median"] for p in gathered]
        return result

    def record(self, ledger: Any, stamping: Any = None, **fields: Any):
        """Finish and add the measurement to `ledger` (rank 0 only; other ranks return None)."""
        result = self.finish()
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized() and dist.get_rank(self.group) != 0:
            return None

        return add_one(ledger, "measurement", result.measurement(**fields), stamping)
