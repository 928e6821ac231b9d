"""Collectors: turn a training or inference step into records that can be trusted.

Built on PyTorch and shipped as the `collectors` extra (`pip install ledger[collectors]`).
Nothing here is imported until it is used, so `ledger add`, `ledger check` and
`ledger site` never pay for torch:

    from ledger.collectors import StepTimer          # imports torch now, not before
    timer = StepTimer(warmup=10, global_batch=8, flop_per_sample=..., peak=VENDOR_H200)

Every collector returns a record body (a plain dict) that `ledger add KIND` accepts, or
writes it through `ledger.store.add_one` when given a ledger.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> module that defines it (imported on first attribute access).
_EXPORTS: dict[str, str] = {
    "collect_environment": "environment",
    "assess_health": "environment",
    "judge_series": "environment",
    "LoadSampler": "environment",
    "allowlisted_env": "environment",
    "decode_clock_event_reasons": "environment",
    "StepTimer": "timer",
    "TimerResult": "timer",
    "Peak": "timer",
    "VENDOR_H200_BF16": "timer",
    "audit_flops": "flops",
    "FlopAuditError": "flops",
    "FlopAuditResult": "flops",
    "default_custom_mapping": "flops",
    "measure_ceiling": "ceiling",
    "benchmark_attention": "attention",
    "attention_flops": "attention",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ledger.collectors' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
