"""Derived figures: a unit ledger can place, and every figure a record states that follows
from itself or from the records it cites recomputed and compared at the rounding it was
written at. (From the LTX-2 training campaign re-entered: a step in `ms` gave MFU 1000x too
small with no warning; a sandwich's midpoint of 0.9 s beside arms of 0.721 s, an `a_value`
of 0.5 s naming an arm whose median is 0.721040 s, and `mfu_percent: 45.0` beside an audit,
median and batch that give 40.810314% were all accepted.)

Per record (`record_problems`, at add and in check): unit-known; a sandwich's midpoint, delta,
delta_percent and drift_percent against its own A, candidate and B values; a measurement's
throughput against its batch and median. Across records (`check`, on the `Info` of each):
a sandwich's arm values against the arms' recorded values (converted between units of
time), and a measurement's mfu_percent against its FLOP audit, median, batch and GPUs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..analysis.consistency import disagreement, sandwich_problems
from ..analysis.metrics import gpu_count
from ..units import TIME_UNITS, convert, is_time, same_quantity, seconds_per
from .info import Info
from .result import ERROR, Violation
from .rule import Rule

#: The rules of this family, as data (ledger.checks.registry lists the families).
RULES: tuple[Rule, ...] = (
    Rule(
        "unit-known",
        "derived",
        ERROR,
        "A measurement whose figures ledger derives from its time (MFU and throughput from "
        "`global_batch` or a `flop_audit`, FLOP/s from `flop`, a stated `mfu_percent` or "
        "`throughput`) is in a unit of time ledger knows: "
        + ", ".join(TIME_UNITS)
        + " (also spelled sec, msec, usec, µs, minutes, hours..., optionally per step: `ms/step`). "
        "A unit it cannot place would give figures off by a factor nobody sees.",
        "Record the step time in one of " + ", ".join(TIME_UNITS) + " (`unit: ms`); a record is "
        "append-only, so write a corrected one with `ledger add` that lists this id in `supersedes`.",
    ),
    Rule(
        "derived-figures",
        "derived",
        ERROR,
        "Every figure a record states that follows from its own fields or from the records it "
        "cites agrees with what they give, beyond the rounding either was written at: a "
        "sandwich's midpoint, delta, delta_percent and drift_percent (from its A, candidate and "
        "B values), its A, candidate and B values (from its arms' recorded values of the same metric, "
        "converted between units of time), a measurement's throughput (global batch / median step) and "
        "mfu_percent (its FLOP audit's numerator x batch / step / (GPUs x peak)).",
        "Omit the derived field and let ledger compute it (`ledger sandwich --records A X B` "
        "writes a sandwich's figures; `ledger status` recomputes MFU), or correct the figure it "
        "was copied from; a correction is a new record that lists this id in `supersedes`.",
    ),
)


def _v(rules, rule_id: str, display: str, message: str, field: str | None) -> Violation:
    return Violation(display, None, field, rule_id, rules.severity[rule_id], message, rules.fix[rule_id])


def needs_time(record: Any) -> str | None:
    """The field that makes ledger derive a figure from a measurement's time, or None."""
    for name in ("global_batch", "flop_audit", "flop", "mfu_percent", "throughput"):
        if getattr(record, name, None) is not None:
            return name
    return None


def record_problems(display: str, record: Any, kind: str, rules, out: list[Violation]) -> None:
    """unit-known and the single-record derived figures of one valid record."""
    if kind == "measurement":
        why = needs_time(record)
        if rules.on("unit-known") and why and not is_time(record.unit):
            out.append(
                _v(
                    rules,
                    "unit-known",
                    display,
                    f"unit {record.unit!r} is not a unit of time ledger knows, and `{why}` asks for figures "
                    f"derived from the step time; use one of {', '.join(TIME_UNITS)}",
                    "unit",
                )
            )
        if rules.on("derived-figures") and record.throughput is not None and record.global_batch:
            factor = seconds_per(record.unit)
            step = record.median
            if factor and step and record.outcome == "ok" and (record.throughput_unit or "samples/s") == "samples/s":
                found = disagreement(
                    record.throughput, lambda b, t: b / (t * factor), (record.global_batch, step), exact=(True,)
                )
                if found:
                    out.append(
                        _v(
                            rules,
                            "derived-figures",
                            display,
                            f"throughput = {record.throughput:g} samples/s but global_batch / median = "
                            f"{record.global_batch} / {step:g} {record.unit} gives {found[0]:.8g} samples/s",
                            "throughput",
                        )
                    )
    elif kind == "sandwich" and rules.on("derived-figures"):
        for name, message in sandwich_problems(record):
            out.append(_v(rules, "derived-figures", display, message, name))


def figures_of(record: Any) -> tuple[tuple[str, Any], ...]:
    """What the cross-record rules of this family need of one record (Info.figures)."""
    kind = record.kind
    if kind == "measurement":
        return (
            ("metric", record.metric),
            ("unit", record.unit),
            ("value", record.headline if record.outcome == "ok" else None),
            ("median", record.median if record.outcome == "ok" else None),
            ("global_batch", record.global_batch),
            ("gpus", gpu_count(record)),
            ("mfu_percent", record.mfu_percent),
            ("peak_convention", record.peak_convention),
        )
    if kind == "flop-audit":
        peaks = [record.peak, *record.peaks]
        return (
            ("flop_per_sample", record.flop_per_sample),
            ("peaks", tuple((p.name, p.tflops_per_gpu) for p in peaks)),
        )
    if kind == "sandwich":
        return (
            ("metric", record.metric),
            ("unit", record.unit),
            ("control_a", record.a_value),
            ("candidate", record.candidate_value),
            ("control_b", record.b_value),
        )
    return ()


Lookup = Callable[[str], "Info | None"]
Emit = Callable[..., None]

_VALUE_FIELD = {"control_a": "a_value", "candidate": "candidate_value", "control_b": "b_value"}


def check(info: Info, lookup: Lookup, emit: Emit) -> None:
    """The cross-record derived figures of one record."""
    figures = dict(info.figures)
    if info.kind == "sandwich" and info.arms:
        _sandwich_arms(info, figures, lookup, emit)
    elif info.kind == "measurement" and figures.get("mfu_percent") is not None and info.flop_audit:
        _mfu(info, figures, lookup, emit)


def _sandwich_arms(info: Info, figures: dict, lookup: Lookup, emit: Emit) -> None:
    unit = figures.get("unit")
    for name, ref in info.arms:
        arm = lookup(ref)
        if arm is None or arm.kind != "measurement":
            continue  # reference-resolves and sandwich-arms report it
        arm_figures = dict(arm.figures)
        value, arm_unit = arm_figures.get("value"), arm_figures.get("unit")
        stated = figures.get(name)
        if value is None or stated is None or arm_figures.get("metric") != figures.get("metric"):
            # A sandwich of another metric than its arms' (time per sample from step times)
            # derives its values by a rule of its own: nothing here to recompute them by.
            continue
        if not same_quantity(arm_unit, unit):
            emit(
                "derived-figures",
                info.path,
                f"the sandwich is in {unit!r} but arm {name} ({ref}) is in {arm_unit!r}: they do not convert",
                field="unit",
            )
            continue
        factor = convert(1.0, arm_unit, unit)
        found = disagreement(stated, lambda x, k=factor: x * k, (value,))
        if found:
            field = _VALUE_FIELD[name]
            emit(
                "derived-figures",
                info.path,
                f"{field} = {stated:g} {unit} but arm {name} ({ref}) records {value:g} {arm_unit}"
                + (f" = {found[0]:.9g} {unit}" if arm_unit != unit else ""),
                field=field,
            )


def _mfu(info: Info, figures: dict, lookup: Lookup, emit: Emit) -> None:
    audit = lookup(info.flop_audit or "")
    if audit is None or audit.kind != "flop-audit":
        return  # reference-resolves and mfu-audit report it
    a = dict(audit.figures)
    peaks = dict(a.get("peaks") or ())
    flop, step, batch, gpus = (
        a.get("flop_per_sample"),
        figures.get("median"),
        figures.get("global_batch"),
        figures.get("gpus"),
    )
    factor = seconds_per(figures.get("unit"))
    if not (flop and step and batch and gpus and factor and peaks):
        return
    convention = figures.get("peak_convention")
    if convention in peaks:
        names = [convention]
    else:
        first = next(iter(peaks))
        names = [first]
    stated = figures["mfu_percent"]
    for name in names:
        peak = peaks[name]
        found = disagreement(
            stated,
            lambda t, b=batch, g=gpus, p=peak: 100.0 * flop * b / (t * factor) / (g * p * 1e12),
            (step,),
        )
        if found:
            emit(
                "derived-figures",
                info.path,
                f"mfu_percent = {stated:g} but the FLOP audit ({flop:,} FLOP/sample), global batch {batch}, "
                f"median {step:g} {figures.get('unit')} and {gpus} GPUs at {peak:g} TFLOP/s ({name}) give "
                f"{found[0]:.8g}%",
                field="mfu_percent",
            )
