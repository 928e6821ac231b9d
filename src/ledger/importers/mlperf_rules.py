"""MLPerf's scoring rules per benchmark, as mlcommons/logging applies them.

From `mlperf_logging/result_summarizer/result_summarizer.py` and `benchmark_meta.py`
(mlcommons/logging 4.1.59):

* strong scaling (training, and HPC `strong/`): the olympic average of the runs' times to
  train, dropping the `max_dropped_scores` fastest and slowest (4 for unet3d, 1 for every
  other benchmark); a run that did not converge is one of the slowest dropped, and more of
  them than `max_dropped_scores` leaves no score. The average is multiplied by the review
  committee's `scaling_factor` when `scaling.json` sits in the benchmark's folder;
* weak scaling (HPC `weak/`): the instances ran concurrently; the score is the number of
  models that converged over the time from the first `run_start` to the last `run_stop`
  (models per minute), given at least the benchmark's result-file count of models;
* a benchmark's submission holds `_ALL_RESULT_FILE_COUNTS` result files (unet3d 40, bert
  10, resnet 5, ...); a set with fewer is flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: mlcommons/logging benchmark_meta._ALL_RESULT_FILE_COUNTS, training and HPC (no name is in both).
RESULT_FILE_COUNTS = {
    "bert": 10,
    "dlrm": 5,
    "dlrm_dcnv2": 10,
    "gnmt": 10,
    "gpt3": 3,
    "maskrcnn": 5,
    "minigo": 10,
    "resnet": 5,
    "ssd": 5,
    "retinanet": 5,
    "stable_diffusion": 10,
    "transformer": 10,
    "ncf": 10,
    "rnnt": 10,
    "unet3d": 40,
    "gnn": 10,
    "rgat": 10,
    "llama2_70b_lora": 10,
    "llama31_405b": 3,
    "llama31_8b": 10,
    "flux1": 10,
    "gpt_oss_20b": 10,
    "deepseekv3_671b": 3,
    "qwen35_397b_grpo": 3,
    "deepcam": 5,
    "cosmoflow": 10,
    "oc20": 5,
    "openfold": 10,
}

#: MLPerf's results tables give a score to three decimals (minutes; models per minute).
PUBLISHED_DECIMALS = 3


def max_dropped(benchmark: str) -> int:
    """How many fastest and slowest runs the olympic average drops (result_summarizer)."""
    return 4 if benchmark == "unet3d" else 1


@dataclass
class Olympic:
    """A strong-scaling score: the kept runs' mean, times the scaling factor."""

    average: float | None  # None: no score (too many non-converged runs, or none left)
    kept: list[int]  # indices into the converged times, fastest first
    fastest: list[int]
    slowest: list[int]
    why_none: str | None = None


def olympic(times: list[float], failed: int, benchmark: str) -> Olympic:
    """MLPerf's olympic average of converged `times` with `failed` runs that did not converge:
    `sorted(times)[k : len - (k - failed)]` for k = max_dropped(benchmark)."""
    k = max_dropped(benchmark)
    order = sorted(range(len(times)), key=lambda i: (times[i], i))
    if failed > k:
        return Olympic(
            None,
            [],
            [],
            [],
            f"{failed} runs did not converge; MLPerf allows {k} for {benchmark} and then gives no score",
        )
    end = len(order) - (k - failed)
    kept = order[k:end] if end > k else []
    if not kept:
        return Olympic(
            None,
            [],
            order[:k],
            order[max(end, k) :],
            f"too few runs: dropping {k} fastest and {k} slowest (non-converged runs count as slowest) leaves none",
        )
    return Olympic(math.fsum(times[i] for i in kept) / len(kept), kept, order[:k], order[end:])


@dataclass
class Weak:
    """A weak-scaling score: models that converged per minute of the whole concurrent run."""

    models: int
    minutes: float
    per_minute: float | None
    why_none: str | None = None
    required: int | None = field(default=None)


def weak(spans: list[tuple[float, float]], benchmark: str) -> Weak:
    """Models per minute of converged instances' (run_start, run_stop) in milliseconds."""
    required = RESULT_FILE_COUNTS.get(benchmark)
    if not spans:
        return Weak(0, 0.0, None, "no instance converged", required)
    minutes = (max(b for _, b in spans) - min(a for a, _ in spans)) / 60000.0
    if required is not None and len(spans) < required:
        return Weak(
            len(spans),
            minutes,
            None,
            f"{len(spans)} converged models; MLPerf HPC needs {required} for {benchmark} weak scaling",
            required,
        )
    if minutes <= 0:
        return Weak(len(spans), minutes, None, "the instances' run_start and run_stop span no time", required)
    return Weak(len(spans), minutes, len(spans) / minutes, None, required)
