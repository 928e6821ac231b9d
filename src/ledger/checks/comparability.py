"""Comparability: a sandwich's arms share one allocation and one contract, and an MFU
figure needs a FLOP audit of the same contract. (From the MFU campaign: a run under a
different contract, or on another allocation, was compared as if it were the baseline.)"""

from __future__ import annotations

from collections.abc import Callable

from ..analysis.sandwich import compute
from ..errors import LedgerError
from .info import Info
from .result import ERROR
from .rule import Rule

#: The rules of this family, as data (ledger.checks.registry lists the families).
RULES: tuple[Rule, ...] = (
    Rule(
        "sandwich-arms",
        "comparability",
        ERROR,
        "A sandwich's arms (control_a, candidate, control_b) are measurements on ONE allocation "
        "under ONE contract, the sandwich's own. A cross-allocation delta is not attributable to the change.",
        "Re-run all three arms on one allocation under one contract (`ledger sandwich`), and record that.",
    ),
    Rule(
        "mfu-audit",
        "comparability",
        ERROR,
        "A measurement that reports mfu_percent names a flop_audit record whose contract is the "
        "measurement's contract: an MFU numerator nobody audited is not evidence.",
        "Record the FLOP audit for this contract (`ledger collect flops` or `ledger add flop-audit`) "
        "and point the measurement's flop_audit at it.",
    ),
    Rule(
        "sandwich-verdict",
        "comparability",
        ERROR,
        "A sandwich's recorded verdict follows from its own numbers: the candidate's delta against "
        "the A/B midpoint counts only when it clears max(drift, floor_percent) (ledger.analysis.sandwich.compute). "
        "`floor_percent` here is also the floor `ledger sandwich` uses when no --floor is given.",
        "Record the verdict the numbers give (`ledger sandwich` computes it); a correction is a new "
        "sandwich record that supersedes this one.",
        {"floor_percent": 0.5},
        {"floor_percent": "Smallest |delta| that counts, percent of the control midpoint (for `ledger sandwich`)."},
    ),
)


def verdict_problem(record) -> str | None:
    """Why a sandwich record's verdict does not follow from its numbers, or None."""

    try:
        expected = compute(
            record.a_value,
            record.candidate_value,
            record.b_value,
            floor_percent=record.floor_percent,
            lower_is_better=record.lower_is_better,
        )
    except LedgerError as exc:
        return str(exc)
    if expected.verdict != record.verdict:
        return f"verdict is {record.verdict!r} but the numbers give {expected.verdict!r}: {expected.reason()}"
    return None


Lookup = Callable[[str], "Info | None"]


def check(info: Info, lookup: Lookup, emit, corrected: bool = False) -> None:
    """Emit violations for one record; `lookup(id)` finds referenced records. `corrected`: a
    record among those checked supersedes this one, so a missing FLOP audit is judged on the
    correction (records never change: a correction is the only way to supply one)."""
    if info.kind == "sandwich" and info.arms:
        arms = {name: lookup(ref) for name, ref in info.arms}
        found = {name: arm for name, arm in arms.items() if arm is not None}
        for name, arm in found.items():
            if arm.kind != "measurement":
                emit("sandwich-arms", info.path, f"arm {name} is a {arm.kind} record, not a measurement", field=name)
        allocations = {arm.allocation for arm in found.values()}
        if len(allocations) > 1:
            detail = ", ".join(f"{name} on {arm.allocation}" for name, arm in found.items())
            emit(
                "sandwich-arms",
                info.path,
                f"arms ran on {len(allocations)} allocations ({detail}); a sandwich is one allocation",
                field="allocation",
            )
        arm_allocations = {arm.allocation for arm in found.values() if arm.allocation}
        if info.allocation and len(arm_allocations) == 1 and info.allocation not in arm_allocations:
            emit(
                "sandwich-arms",
                info.path,
                f"the sandwich is stamped on allocation {info.allocation} but its arms ran on "
                f"{next(iter(arm_allocations))}; a sandwich is stamped where its arms ran",
                field="allocation",
            )
        contracts = {arm.contract for arm in found.values()} | ({info.contract} if info.contract else set())
        if len(contracts) > 1:
            detail = ", ".join(f"{name} under {arm.contract}" for name, arm in found.items())
            emit(
                "sandwich-arms",
                info.path,
                f"arms and sandwich name {len(contracts)} contracts ({detail}; sandwich: {info.contract})",
                field="contract",
            )
    if info.kind == "measurement" and info.mfu:
        if not info.flop_audit and corrected:
            return
        if not info.flop_audit:
            emit("mfu-audit", info.path, "reports mfu_percent but names no flop_audit", field="flop_audit")
            return
        audit = lookup(info.flop_audit)
        if audit is None:
            return  # reference-resolves reports the dangling id
        if audit.kind != "flop-audit":
            emit("mfu-audit", info.path, f"flop_audit points at a {audit.kind} record", field="flop_audit")
        elif audit.contract != info.contract:
            emit(
                "mfu-audit",
                info.path,
                f"the FLOP audit is for contract {audit.contract}, the measurement is under {info.contract}",
                field="flop_audit",
            )
