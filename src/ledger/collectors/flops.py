"""FLOP audit: count one step with `FlopCounterMode` and reconcile it with the analytic count.

The MFU numerator is the analytic model-FLOP count. It is trusted only when
`counted + itemised == analytic` to the FLOP, where `itemised` are named terms the user
declares (e.g. an op FlopCounterMode cannot see). Anything else fails loudly, naming
the counted ops, the analytic terms and the ops that ran but counted zero.

FlopCounterMode counts zero for ops outside its registry. Two families matter:
flash-attn's custom ops (`flash_attn::_flash_attn_forward`...) and PyTorch's own CPU
flash attention (`aten._scaled_dot_product_flash_attention_for_cpu`). The default
mapping below counts them with PyTorch's SDPA convention (forward 4·B·H·Sq·Sk·D, two
matmuls; backward 2.5x forward, five matmuls including the score recompute; causal
masks are not halved), so one model counts the same whichever kernel ran.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import FlopCounterMode, sdpa_backward_flop_count, sdpa_flop_count

from .timer import Peak

_ATTN_OR_MATMUL = re.compile(r"attn|attention|mm|matmul|conv|linear|gemm|einsum", re.I)


class FlopAuditError(AssertionError):
    """The counted and analytic totals disagree beyond the itemised terms."""


def _bhsd(shape) -> tuple[int, int, int, int]:
    """flash-attn lays tensors out (batch, seq, heads, dim); SDPA's formulas take (b, h, s, d)."""
    b, s, h, d = shape
    return b, h, s, d


def _flash_fwd(q, k, v, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(_bhsd(q), _bhsd(k), _bhsd(v))


def _flash_bwd(dout, q, k, v, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(_bhsd(dout), _bhsd(q), _bhsd(k), _bhsd(v))


def _varlen_pairs(cu_q, cu_k) -> list[tuple[int, int]]:
    lq, lk = cu_q.diff().tolist(), cu_k.diff().tolist()
    return list(zip(lq, lk))


def _flash_varlen_fwd(q, k, v, cu_q, cu_k, *args, out_val=None, **kwargs) -> int:
    h, d, dv = q.shape[1], q.shape[2], v.shape[2]
    hk = k.shape[1]
    return sum(sdpa_flop_count((1, h, sq, d), (1, hk, sk, d), (1, hk, sk, dv)) for sq, sk in _varlen_pairs(cu_q, cu_k))


def _flash_varlen_bwd(dout, q, k, v, out, lse, dq, dk, dv, cu_q, cu_k, *args, out_val=None, **kwargs) -> int:
    h, d, dvd = q.shape[1], q.shape[2], v.shape[2]
    hk = k.shape[1]
    return sum(
        sdpa_backward_flop_count((1, h, sq, dvd), (1, h, sq, d), (1, hk, sk, d), (1, hk, sk, dvd))
        for sq, sk in _varlen_pairs(cu_q, cu_k)
    )


_flash_varlen_fwd._get_raw = True  # type: ignore[attr-defined]
_flash_varlen_bwd._get_raw = True  # type: ignore[attr-defined]


def _cpu_sdpa_fwd(q, k, v, *args, out_shape=None, **kwargs) -> int:
    return sdpa_flop_count(q, k, v)


def _cpu_sdpa_bwd(grad_out, q, k, v, *args, out_shape=None, **kwargs) -> int:
    return sdpa_backward_flop_count(grad_out, q, k, v)


def default_custom_mapping() -> dict[Any, Callable[..., int]]:
    """Formulas for ops FlopCounterMode counts as zero, for those present in this process."""
    mapping: dict[Any, Callable[..., int]] = {}
    aten = torch.ops.aten
    cpu_ops: tuple[tuple[str, Callable[..., int]], ...] = (
        ("_scaled_dot_product_flash_attention_for_cpu", _cpu_sdpa_fwd),
        ("_scaled_dot_product_flash_attention_for_cpu_backward", _cpu_sdpa_bwd),
    )
    for name, fn in cpu_ops:
        if hasattr(aten, name):
            mapping[getattr(aten, name)] = fn
    try:
        import flash_attn  # noqa: F401  (registers torch.ops.flash_attn on import)
    except Exception:
        return mapping
    ops = getattr(torch.ops, "flash_attn", None)
    for name, fn in (
        ("_flash_attn_forward", _flash_fwd),
        ("_flash_attn_backward", _flash_bwd),
        ("_flash_attn_varlen_forward", _flash_varlen_fwd),
        ("_flash_attn_varlen_backward", _flash_varlen_bwd),
    ):
        try:
            mapping[getattr(ops, name)] = fn
        except (AttributeError, RuntimeError):
            continue
    return mapping


class _OpsSeen(TorchDispatchMode):
    """Names every op that ran, so uncounted matmul- or attention-like ops can be named."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: dict[str, int] = {}
        self.packets: dict[str, Any] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func.overloadpacket)
        self.calls[name] = self.calls.get(name, 0) + 1
        self.packets[name] = func.overloadpacket
        return func(*args, **(kwargs or {}))


@dataclass
class FlopAuditResult:
    analytic_flop_per_sample: int
    counted_flop_per_sample: int
    samples_per_step: int
    counted_by_op: dict[str, int]
    analytic_terms: dict[str, int]
    itemised: dict[str, int] = field(default_factory=dict)
    uncounted_ops: dict[str, int] = field(default_factory=dict)
    derivation: str = ""
    peak: Peak | None = None
    peaks: list[Peak] = field(default_factory=list)

    @property
    def difference(self) -> int:
        """analytic - counted - itemised; zero when reconciled."""
        return self.analytic_flop_per_sample - self.counted_flop_per_sample - sum(self.itemised.values())

    @property
    def exact(self) -> bool:
        return self.difference == 0 and not self.itemised

    def report(self) -> str:
        lines = [
            f"analytic {self.analytic_flop_per_sample:,} FLOP/sample; FlopCounterMode {self.counted_flop_per_sample:,} "
            f"FLOP/sample ({self.samples_per_step} sample(s) per step)"
        ]
        lines += [f"  analytic     {name:<56} {v:>24,}" for name, v in self.analytic_terms.items()]
        lines += [f"  counted/step {name:<56} {v:>24,}" for name, v in sorted(self.counted_by_op.items())]
        lines += [f"  itemised     {name:<56} {v:>24,}" for name, v in self.itemised.items()]
        if self.uncounted_ops:
            lines.append(
                "  ran but counted zero (supply custom_mapping or itemise them): "
                + ", ".join(f"{k} x{v}" for k, v in sorted(self.uncounted_ops.items()))
            )
        lines.append(f"  unexplained difference {self.difference:+,}")
        return "\n".join(lines)

    def record(self, **fields: Any) -> dict[str, Any]:
        """A `flop-audit` record body."""
        if self.peak is None:
            raise ValueError("a flop-audit record names its peak convention: pass peak= to audit_flops")
        body: dict[str, Any] = {
            "flop_per_sample": self.analytic_flop_per_sample,
            "counted_flop_per_sample": self.counted_flop_per_sample,
            "itemised": dict(self.itemised),
            "derivation": self.derivation
            or "analytic count reconciled against torch.utils.flop_counter.FlopCounterMode over one step",
            "peak": self.peak.as_record(),
            "peaks": [p.as_record() for p in self.peaks],
        }
        body.update(fields)
        return body


def audit_flops(
    step_fn: Callable[[], Any],
    *,
    analytic: int | dict[str, int],
    samples_per_step: int = 1,
    itemised: dict[str, int] | None = None,
    custom_mapping: dict[Any, Callable[..., int]] | None = None,
    derivation: str = "",
    peak: Peak | None = None,
    peaks: list[Peak] | None = None,
    strict: bool = True,
    default_mapping: bool = True,
) -> FlopAuditResult:
    """Run `step_fn` once under FlopCounterMode and reconcile with `analytic` (FLOP per sample).

    `analytic` may be a dict of named terms (summed). `itemised` names terms that explain
    analytic minus counted. With `strict` (the default) a difference raises
    FlopAuditError with the itemised report. `default_mapping=False` leaves out the
    formulas for ops FlopCounterMode counts as zero (to see what it misses).
    """
    terms = dict(analytic) if isinstance(analytic, dict) else {"total": int(analytic)}
    total = sum(int(v) for v in terms.values())
    mapping = {**(default_custom_mapping() if default_mapping else {}), **(custom_mapping or {})}
    seen = _OpsSeen()
    counter = FlopCounterMode(display=False, custom_mapping=mapping)
    with counter, seen:
        step_fn()
    counted_step = counter.get_total_flops()
    by_op = {str(op): int(v) for op, v in counter.get_flop_counts().get("Global", {}).items()}
    counted_names = set(by_op) | {str(k) for k in counter.flop_registry}
    uncounted = {
        name: n
        for name, n in seen.calls.items()
        if name not in counted_names
        and _ATTN_OR_MATMUL.search(name.split(".")[-1])
        and name.split(".")[-1] not in _ZERO_FLOP_OPS
    }
    if counted_step % samples_per_step:
        raise FlopAuditError(
            f"FlopCounterMode counted {counted_step:,} FLOP for a step of {samples_per_step} samples, "
            "which does not divide evenly: check samples_per_step"
        )
    result = FlopAuditResult(
        analytic_flop_per_sample=total,
        counted_flop_per_sample=counted_step // samples_per_step,
        samples_per_step=samples_per_step,
        counted_by_op=by_op,
        analytic_terms=terms,
        itemised=dict(itemised or {}),
        uncounted_ops=uncounted,
        derivation=derivation,
        peak=peak,
        peaks=list(peaks or []),
    )
    if strict and result.difference != 0:
        raise FlopAuditError("the FLOP audit does not reconcile:\n" + result.report())
    return result


# Ops whose names look like matmuls but which do no multiply-adds worth counting.
_ZERO_FLOP_OPS = frozenset({"mm_backward", "_mm_plus_mm", "nonzero", "native_layer_norm", "commit", "summary"})
