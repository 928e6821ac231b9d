"""MFU and throughput arithmetic, in one place so every page and check computes them alike.

MFU = FLOP per sample x global batch / step time / (GPUs x peak FLOP/s per GPU).
The peak is always named (a convention such as the vendor's dense bf16 figure or a
house figure below it): an MFU without its convention is not comparable.
"""

from __future__ import annotations

from ..schema.envelope import Allocation
from ..schema.kinds import FlopAudit, Measurement
from ..units import seconds_per
from .figures import quote_of


def throughput(global_batch: int, step_s: float) -> float:
    """Samples per second."""
    if step_s <= 0:
        raise ValueError("step time must be positive")
    return global_batch / step_s


def mfu_percent(
    flop_per_sample: float, global_batch: int, step_s: float, gpus: int, peak_tflops_per_gpu: float
) -> float:
    """Model FLOP utilisation in percent of `gpus` x `peak_tflops_per_gpu`."""
    if gpus <= 0 or peak_tflops_per_gpu <= 0:
        raise ValueError("gpus and peak must be positive")
    achieved = flop_per_sample * throughput(global_batch, step_s)
    return 100.0 * achieved / (gpus * peak_tflops_per_gpu * 1e12)


def convert_mfu(mfu: float, from_peak_tflops: float, to_peak_tflops: float) -> float:
    """The same utilisation against another peak (e.g. house 2,450 -> vendor 2,500: x 0.98)."""
    return mfu * from_peak_tflops / to_peak_tflops


def gpu_count(measurement: Measurement) -> int | None:
    """GPUs the measurement ran on: world size, else the allocation's nodes x GPUs per node."""
    if measurement.world_size:
        return measurement.world_size
    alloc: Allocation | None = measurement.allocation
    if alloc and alloc.nodes and alloc.gpus_per_node:
        return alloc.nodes * alloc.gpus_per_node
    return None


def step_seconds(measurement: Measurement) -> float | None:
    """The median step in seconds, whatever time unit it was recorded in (ms, us, min...);
    None when it has none or its unit is not a time (rule unit-known refuses such a record
    when it asks for derived figures)."""
    factor = seconds_per(measurement.unit)
    if measurement.outcome != "ok" or measurement.median is None or factor is None:
        return None
    return measurement.median * factor


def peaks_of(audit: FlopAudit) -> list:
    """The audit's peak conventions: its `peak` first, then the others it names (`peaks`)."""
    seen = {audit.peak.name}
    out = [audit.peak]
    for peak in audit.peaks:
        if peak.name not in seen:
            seen.add(peak.name)
            out.append(peak)
    return out


def recompute(measurement: Measurement, audit: FlopAudit) -> dict[str, float] | None:
    """Throughput and MFU recomputed by ledger from the median step (converted to seconds),
    batch and GPU count; MFU against the audit's `peak`."""
    gpus = gpu_count(measurement)
    step = step_seconds(measurement)
    if step is None or step <= 0 or not measurement.global_batch or not gpus:
        return None
    return {
        "throughput": throughput(measurement.global_batch, step),
        "mfu_percent": mfu_percent(
            audit.flop_per_sample, measurement.global_batch, step, gpus, audit.peak.tflops_per_gpu
        ),
    }


def mfu_by_peak(measurement: Measurement, audit: FlopAudit) -> list[tuple[str, float, float]]:
    """(peak name, TFLOP/s per GPU, MFU percent) under every peak the audit names, `peak` first."""
    gpus = gpu_count(measurement)
    step = step_seconds(measurement)
    if step is None or step <= 0 or not measurement.global_batch or not gpus:
        return []
    return [
        (
            p.name,
            p.tflops_per_gpu,
            mfu_percent(audit.flop_per_sample, measurement.global_batch, step, gpus, p.tflops_per_gpu),
        )
        for p in peaks_of(audit)
    ]


def flop_rate_gflops(measurement: Measurement) -> float | None:
    """GFLOP/s achieved: the FLOP of one measured unit of work over its median time (seconds)."""
    m = measurement
    step = step_seconds(m)
    if m.flop is None or not step:
        return None
    return m.flop / step / 1e9


def flop_utilisation_percent(measurement: Measurement) -> float | None:
    """FLOP-based utilisation against the measurement's named peak (CPU or GPU), in percent.
    Not MFU: MFU is the training convention (model FLOP per sample, per-GPU peak, flop-audit)."""
    rate = flop_rate_gflops(measurement)
    peak = measurement.peak_flops
    if rate is None or peak is None:
        return None
    return 100.0 * rate / peak.gflops


def percentiles(measurement: Measurement, wanted: tuple[float, ...] = (50, 90, 99)) -> dict[str, float]:
    """Latency percentiles: the recorded ones, else computed from the raw samples (inclusive method)."""
    if measurement.percentiles:
        return dict(measurement.percentiles)
    xs = sorted(measurement.samples)
    if len(xs) < 2:
        return {}
    out = {}
    for q in wanted:
        pos = (len(xs) - 1) * q / 100.0
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        out[f"p{q:g}"] = xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)
    return out


def contract_audits(records) -> dict[str, FlopAudit]:
    """Each contract's live FLOP audit (the newest by id that nothing supersedes), by contract id."""
    records = list(records)
    superseded = {s for r in records for s in r.supersedes}
    out: dict[str, FlopAudit] = {}
    for a in sorted((r for r in records if isinstance(r, FlopAudit)), key=lambda a: a.id):
        if a.id not in superseded and a.contract:
            out[a.contract] = a
    return out


def audit_of(measurement: Measurement, by_id, audits: dict[str, FlopAudit]) -> FlopAudit | None:
    """The FLOP audit a measurement's MFU is derived from: the one it cites (`flop_audit`),
    else its contract's (the stopping point, status, `show` and the record page agree)."""
    own = by_id.get(measurement.flop_audit) if measurement.flop_audit else None
    if isinstance(own, FlopAudit):
        return own
    return audits.get(measurement.contract or "")


def mfu_under_peaks(measurement: Measurement, audit: FlopAudit | None) -> list[dict]:
    """MFU under every peak the audit names, its `peak` first, as every surface quotes it:
    [{"peak", "tflops_per_gpu", "value", "text"}] ("42.750592%" beside the house 43.623053%)."""
    if audit is None:
        return []
    return [
        {"peak": name, "tflops_per_gpu": tflops, "value": value, "text": quote_of(measurement, value, "%")}
        for name, tflops, value in mfu_by_peak(measurement, audit)
    ]


def peak_label(name: str, tflops: float) -> str:
    """`vendor-dense-bf16, 2,500 TFLOP/s per GPU`."""
    return f"{name}, {tflops:,g} TFLOP/s per GPU"


def derived_facts(measurement: Measurement, audit: FlopAudit | None) -> list[tuple[str, str]]:
    """What `ledger show` and the record page print beside a measurement's result, derived
    by ledger: MFU under every peak its FLOP audit names, and throughput; the recorded
    figures (as recorded, said so) where there is no audit to derive them from."""
    m = measurement
    if m.outcome != "ok":
        return []
    out: list[tuple[str, str]] = []
    peaks = mfu_under_peaks(m, audit)
    values = recompute(m, audit) if audit is not None else None
    if peaks and audit is not None:
        shown = "; ".join(f"{p['text']} ({peak_label(p['peak'], p['tflops_per_gpu'])})" for p in peaks)
        out.append(("MFU", f"{shown}, recomputed from flop audit {audit.id}"))
    elif m.mfu_percent is not None:
        convention = f" ({m.peak_convention})" if m.peak_convention else " (peak convention not named)"
        out.append(("MFU", f"{quote_of(m, m.mfu_percent, '%', field='mfu_percent')}{convention}, as recorded"))
    if values is not None:
        out.append(("Throughput", quote_of(m, values["throughput"], m.throughput_unit or "samples/s")))
    elif m.throughput is not None:
        out.append(("Throughput", quote_of(m, m.throughput, m.throughput_unit or "", field="throughput")))
    elif m.global_batch and (step := step_seconds(m)):
        out.append(("Throughput", quote_of(m, throughput(m.global_batch, step), "samples/s")))
    return out
