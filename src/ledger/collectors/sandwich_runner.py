"""Run an A/candidate/B sandwich on one allocation and record it.

Each round runs A, then the candidate, then B (A again unless a B is given), so slow
drift of the machine lands on both sides of the candidate. An arm is a shell command or,
through the API, a Python callable:

* a command that prints a ``LEDGER {json}`` line (or the BF16_* family) is measured by
  that line's median (or the median of its samples); otherwise its wall time is taken;
* a callable may return a number, a measurement dict (as a LEDGER line holds), or None
  (then its wall time is taken).

The result is one measurement per arm (its samples are the per-round values) and a
sandwich record pointing at them, all stamped with one allocation and written together:
if anything fails, nothing is written. Arms that report different allocations or
contracts are refused. The library never prints: progress goes to a callback.
"""

from __future__ import annotations

import os
import shlex
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..analysis.metrics import audit_of, contract_audits, recompute
from ..analysis.sandwich import SandwichResult, check_same_allocation_and_contract, compute, floor_from_config
from ..errors import InputError, NotFound, Problem
from ..redact import redact
from ..store.add import Stamping, add
from ..store.inputs import Item
from ..store.runlog import parse_log, value_of
from ..store.stamps import detect_allocation
from ..units import convert, same_quantity

ARMS = ("a", "candidate", "b")
#: LEDGER-line fields whose sandwich delta is recorded in `extra_deltas`, and its key there.
LINE_DELTAS = (
    ("mfu_percent", "mfu_points"),
    ("throughput", "throughput"),
    ("peak_allocated_bytes", "peak_allocated_bytes"),
    ("peak_reserved_bytes", "peak_reserved_bytes"),
)
ARM_NAMES = {"a": "A", "candidate": "candidate", "b": "B"}


@dataclass
class Arm:
    """One side of the sandwich: a shell command or a callable."""

    command: str | None = None
    func: Callable[[], Any] | None = None
    env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if (self.command is None) == (self.func is None):
            raise ValueError("an arm is a command or a callable, not both and not neither")

    def describe(self) -> str:
        """The arm as the records show it: a token on the command line is redacted."""
        if self.command is not None:
            return redact(self.command)
        return getattr(self.func, "__qualname__", repr(self.func))


@dataclass(frozen=True)
class ArmRun:
    arm: str
    round: int
    value: float
    wall_s: float
    data: dict[str, Any] | None  # the structured line's fields, when there was one


@dataclass
class SandwichRun:
    result: SandwichResult
    runs: list[ArmRun]
    measurements: dict[str, Any] = field(default_factory=dict)  # arm -> Measurement record
    sandwich: Any = None
    paths: list[Path] = field(default_factory=list)


ProgressCallback = Callable[[int, int, str, int], None]


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def run_arm_once(
    arm: Arm, label: str, round_no: int, *, cwd: Path | None = None, timeout: float | None = None
) -> ArmRun:
    """Run one arm once and measure it."""
    env_extra = {"LEDGER_SANDWICH_ARM": label, "LEDGER_SANDWICH_ROUND": str(round_no), **arm.env}
    where = f"arm {ARM_NAMES[label]}, round {round_no}"
    if arm.func is not None:
        saved = {k: os.environ.get(k) for k in env_extra}
        os.environ.update(env_extra)
        try:
            start = time.perf_counter()
            returned = arm.func()
            wall = time.perf_counter() - start
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        if returned is None:
            return ArmRun(label, round_no, wall, wall, None)
        if isinstance(returned, dict):
            value = value_of(returned)
            if value is None:
                raise InputError(
                    f"{where}: no value",
                    [
                        Problem(
                            arm.describe(),
                            where,
                            "the callable returned a dict with no median and no samples",
                            "return a number, a measurement dict, or None for wall time",
                        )
                    ],
                )
            return ArmRun(label, round_no, value, wall, returned)
        if isinstance(returned, (int, float)) and not isinstance(returned, bool):
            return ArmRun(label, round_no, float(returned), wall, None)
        raise InputError(
            f"{where}: bad return",
            [
                Problem(
                    arm.describe(),
                    where,
                    f"the callable returned {type(returned).__name__}",
                    "return a number, a measurement dict, or None for wall time",
                )
            ],
        )

    assert arm.command is not None
    env = {**os.environ, **env_extra}
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            arm.command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, errors="replace", timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise InputError(
            f"{where}: timed out",
            [
                Problem(
                    arm.command, where, f"did not finish within {timeout:g} s", "raise --timeout or shorten the command"
                )
            ],
        ) from None
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise InputError(
            f"{where}: command failed",
            [
                Problem(
                    arm.command,
                    where,
                    f"exited {proc.returncode}: {_tail(proc.stderr or proc.stdout) or 'no output'}",
                    "fix the command; a failed arm measures nothing, so nothing was written",
                )
            ],
        )
    items = parse_log(proc.stdout + "\n" + proc.stderr, f"output of {ARM_NAMES[label]} ({arm.command})")
    if not items:
        return ArmRun(label, round_no, wall, wall, None)
    data = items[-1].data
    value = value_of(data) if isinstance(data, dict) else None
    if value is None:
        raise InputError(
            f"{where}: no value",
            [
                Problem(
                    arm.command,
                    where,
                    "its last LEDGER line has no median and no samples",
                    "print the measured median or samples",
                )
            ],
        )
    return ArmRun(label, round_no, value, wall, data)


def resolve_contract(ledger: Any, text: str | None) -> str | None:
    """A contract id from an id, an id prefix, or a contract name."""
    if not text:
        name = getattr(ledger.config, "contract", None)
        if not name:
            return None
        text = name
    for record in ledger.records("contract"):
        if getattr(record, "name", None) == text:
            return record.id
    try:
        record_id = ledger.resolve_id(text)
    except NotFound:
        raise InputError(
            "no such contract",
            [
                Problem(
                    "<command line>",
                    "--contract",
                    f"no contract record with id or name {text!r}",
                    "`ledger list contract` shows the contracts; add one first",
                )
            ],
        ) from None
    path = ledger.find(record_id)
    if path is None or path.parent.parent.name != "contract":
        raise InputError(
            "not a contract",
            [
                Problem(
                    "<command line>", "--contract", f"{text!r} is not a contract record", "give a contract's id or name"
                )
            ],
        )
    return record_id


def _consistent(runs: list[ArmRun]) -> tuple[str, str, bool]:
    """Metric, unit and direction shared by every run; refuse a mixture."""
    structured = {r.data is not None for r in runs}
    if len(structured) > 1:
        raise InputError(
            "arms measured differently",
            [
                Problem(
                    "<sandwich>",
                    "arms",
                    "some runs printed a LEDGER line and others did not, so some values are wall times",
                    "make every arm print its measurement, or none",
                )
            ],
        )
    if structured == {False}:
        return "wall_time", "s", True
    keys = {
        (r.data.get("metric", "step_time"), r.data.get("unit", "s"), bool(r.data.get("lower_is_better", True)))
        for r in runs
        if r.data
    }
    if len(keys) > 1:
        raise InputError(
            "arms measured different things",
            [
                Problem(
                    "<sandwich>",
                    "metric",
                    f"the arms reported different metrics/units: {sorted(keys)}",
                    "every arm must measure the same metric in the same unit",
                )
            ],
        )
    return keys.pop()


def _check_reported_stamps(runs: list[ArmRun], contract: str | None) -> None:
    """Arms whose LEDGER lines name an allocation or contract must agree with each other and the run."""
    per_arm: dict[str, dict[str, Any]] = {}
    for r in runs:
        if not r.data:
            continue
        alloc = r.data.get("allocation")
        reported_contract = r.data.get("contract", contract)
        key = f"{ARM_NAMES[r.arm]} round {r.round}"
        per_arm[key] = {
            "allocation": alloc if alloc is not None else {"id": "<this allocation>"},
            "contract": reported_contract,
        }
    if per_arm:
        check_same_allocation_and_contract(per_arm)
        reported = {v["contract"] for v in per_arm.values()}
        if contract is not None and reported != {contract}:
            raise InputError(
                "contract mismatch",
                [
                    Problem(
                        "<sandwich>",
                        "contract",
                        f"the arms report contract {sorted(map(str, reported))} but --contract is {contract}",
                        "measure under the contract you name",
                    )
                ],
            )


def run_sandwich(
    ledger: Any,
    a: Arm,
    candidate: Arm,
    b: Arm | None = None,
    *,
    rounds: int = 1,
    contract: str | None = None,
    floor_percent: float | None = None,
    lower_is_better: bool | None = None,
    metric: str | None = None,
    candidate_label: str | None = None,
    title: str | None = None,
    stamping: Any = None,
    cwd: Path | None = None,
    timeout: float | None = None,
    write: bool = True,
    on_progress: ProgressCallback | None = None,
) -> SandwichRun:
    """Interleave A, candidate, B for `rounds` rounds; record three measurements and a sandwich."""
    if rounds < 1:
        raise InputError(
            "bad rounds", [Problem("<command line>", "--rounds", f"{rounds} rounds", "run at least one round")]
        )
    arms = {"a": a, "candidate": candidate, "b": b or a}
    floor = floor_from_config(ledger.config) if floor_percent is None else floor_percent
    contract_id = resolve_contract(ledger, contract)
    total = rounds * 3
    runs: list[ArmRun] = []
    for round_no in range(1, rounds + 1):
        for label in ARMS:
            if on_progress:
                on_progress(len(runs), total, label, round_no)
            runs.append(run_arm_once(arms[label], label, round_no, cwd=cwd, timeout=timeout))
    if on_progress:
        on_progress(total, total, "done", rounds)

    found_metric, unit, found_lower = _consistent(runs)
    _check_reported_stamps(runs, contract_id)
    lower = found_lower if lower_is_better is None else lower_is_better
    values = {label: [r.value for r in runs if r.arm == label] for label in ARMS}
    medians = {label: statistics.median(v) for label, v in values.items()}
    extra_deltas: dict[str, float] = {}
    # Each arm's per-round MFU, which its measurement records (beside the deltas below).
    mfus = {
        label: [
            r.data["mfu_percent"]
            for r in runs
            if r.arm == label and r.data and isinstance(r.data.get("mfu_percent"), (int, float))
        ]
        for label in ARMS
    }
    # Each figure every arm's LEDGER line reports in every round: its median per arm, and the
    # candidate against the A, B midpoint (as `ledger sandwich --records` derives them).
    for field_name, key in LINE_DELTAS:
        per_arm = {
            label: [
                r.data[field_name]
                for r in runs
                if r.arm == label
                and r.data
                and isinstance(r.data.get(field_name), (int, float))
                and not isinstance(r.data.get(field_name), bool)
            ]
            for label in ARMS
        }
        if all(len(per_arm[label]) == rounds for label in ARMS):
            med = {label: statistics.median(v) for label, v in per_arm.items()}
            extra_deltas[key] = med["candidate"] - (med["a"] + med["b"]) / 2
    result = compute(
        medians["a"],
        medians["candidate"],
        medians["b"],
        floor_percent=floor,
        lower_is_better=lower,
        extra_deltas=extra_deltas,
    )
    outcome = SandwichRun(result=result, runs=runs)
    if not write:
        return outcome
    _write(
        ledger,
        outcome,
        arms,
        contract_id=contract_id,
        metric=metric or found_metric,
        unit=unit,
        rounds=rounds,
        candidate_label=candidate_label,
        title=title,
        stamping=stamping,
        mfus=mfus,
    )
    return outcome


def _arm_measurement(
    label: str,
    arm: Arm,
    runs: list[ArmRun],
    *,
    contract_id: str | None,
    metric: str,
    unit: str,
    lower: bool,
    mfus: list[float],
) -> dict[str, Any]:
    mine = [r for r in runs if r.arm == label]
    data: dict[str, Any] = {
        "title": f"sandwich arm {ARM_NAMES[label]}: {arm.describe()}"[:500],
        "metric": metric,
        "unit": unit,
        "lower_is_better": lower,
        "samples": [r.value for r in mine],
        "statistic": "median",
        "command": arm.describe() if arm.command is not None else None,
        "extra": {
            "sandwich_arm": label,
            "per_round": "each sample is one round's value",
            "wall_s": [round(r.wall_s, 6) for r in mine],
        },
    }
    if contract_id:
        data["contract"] = contract_id
    first = mine[0].data or {}
    if len(mfus) == len(mine) and mfus:
        # An MFU figure is reportable only beside the FLOP audit of its numerator (rule
        # mfu-audit): without one the harness's figure is kept, marked, in `extra`.
        if first.get("flop_audit"):
            data["mfu_percent"] = statistics.median(mfus)
        else:
            data["extra"]["mfu_percent_unaudited"] = statistics.median(mfus)
    for key in (
        "world_size",
        "local_batch",
        "grad_accum",
        "global_batch",
        "warmup_steps",
        "peak_convention",
        "flop_audit",
    ):
        if first.get(key) is not None:
            data[key] = first[key]
    for key in ("peak_allocated_bytes", "peak_reserved_bytes"):
        peaks = [int(r.data[key]) for r in mine if r.data and isinstance(r.data.get(key), int)]
        if peaks:
            data[key] = max(peaks)
    if first.get("source"):
        data["source"] = first["source"]
    return {k: v for k, v in data.items() if v is not None}


def _write(
    ledger: Any,
    outcome: SandwichRun,
    arms: dict[str, Arm],
    *,
    contract_id: str | None,
    metric: str,
    unit: str,
    rounds: int,
    candidate_label: str | None,
    title: str | None,
    stamping: Any,
    mfus: dict[str, list[float]],
) -> None:

    stamping = stamping or Stamping()
    if stamping.allocation is None:
        # One allocation stamp for all four records, detected once.
        stamping = replace(stamping, allocation=detect_allocation(overrides=stamping.overrides))
    result = outcome.result
    m_items = [
        Item(
            _arm_measurement(
                label,
                arms[label],
                outcome.runs,
                contract_id=contract_id,
                metric=metric,
                unit=unit,
                lower=result.lower_is_better,
                mfus=mfus[label],
            ),
            "<sandwich>",
            None,
        )
        for label in ARMS
    ]
    # One batch for all four records: a failure leaves none of them behind.
    with ledger.batch(stamping) as batch:
        measurements = batch.add("measurement", m_items)
        body = _sandwich_body(
            outcome.result,
            arms,
            dict(zip(ARMS, (m.id for m in measurements))),
            contract_id=contract_id,
            metric=metric,
            unit=unit,
            rounds=rounds,
            candidate_label=candidate_label,
            title=title,
        )
        batch.add("sandwich", [Item(body, "<sandwich>", None)])
    outcome.paths = batch.paths
    outcome.measurements = dict(zip(ARMS, batch.records[: len(ARMS)]))
    outcome.sandwich = batch.records[-1]


def _sandwich_body(
    result: SandwichResult,
    arms: dict[str, Arm],
    ids: dict[str, str],
    *,
    contract_id: str | None,
    metric: str,
    unit: str,
    rounds: int,
    candidate_label: str | None,
    title: str | None,
) -> dict[str, Any]:
    """The sandwich record's fields: the three arms' ids and the verdict their numbers give."""
    body: dict[str, Any] = {
        "title": title
        or f"sandwich: {candidate_label or arms['candidate'].describe()} vs {arms['a'].describe()}"[:500],
        "control_a": ids["a"],
        "candidate": ids["candidate"],
        "control_b": ids["b"],
        "candidate_label": candidate_label or arms["candidate"].describe(),
        "metric": metric,
        "unit": unit,
        "lower_is_better": result.lower_is_better,
        "rounds": rounds,
        **result.record_fields(),
    }
    if contract_id:
        body["contract"] = contract_id
    return body


def sandwich_from_records(
    ledger: Any,
    a_id: str,
    candidate_id: str,
    b_id: str,
    *,
    floor_percent: float | None = None,
    candidate_label: str | None = None,
    title: str | None = None,
    stamping: Any = None,
    write: bool = True,
    fields: dict[str, Any] | None = None,
) -> SandwichRun:
    """A sandwich of three measurements already in the ledger; refused across allocations or contracts.

    The record carries the candidate arm's source commit (unless `stamping` names one), its
    arms' allocation, the latest of its arms' `observed_at`, and `fields` (family, mechanism,
    tags, links, regate, observed_at...) as given."""

    records = {label: ledger.get(rid) for label, rid in zip(ARMS, (a_id, candidate_id, b_id))}
    ids = [r.id for r in records.values()]
    if len(set(ids)) < 3:
        # A X A reuses the control as B: its drift is zero by construction and proves nothing.
        same = [ARM_NAMES[label] for label, r in records.items() if ids.count(r.id) > 1]
        raise InputError(
            "a sandwich needs three distinct arms; nothing was written",
            [
                Problem(
                    "--records",
                    "A X B",
                    f"a sandwich needs three distinct arms: {' and '.join(same)} are the same record, so the "
                    "drift between A and B would be 0 by construction",
                    "B is a second run of A after the candidate: give three different measurement ids",
                )
            ],
        )
    problems = []
    for label, rec in records.items():
        if rec.kind != "measurement":
            problems.append(
                Problem(
                    rec.id,
                    "kind",
                    f"arm {ARM_NAMES[label]} is a {rec.kind}, not a measurement",
                    "give three measurement ids",
                )
            )
        elif rec.outcome != "ok" or rec.median is None:
            problems.append(
                Problem(
                    rec.id,
                    "outcome",
                    f"arm {ARM_NAMES[label]} has no valid value (outcome {rec.outcome})",
                    "a sandwich needs three measured arms",
                )
            )
    if problems:
        raise InputError("the arms are not measurements with values; nothing was written", problems)
    check_same_allocation_and_contract(records)
    # Arms recorded in different units of time (one in ms, one in s) are one metric: their
    # values are taken in the candidate's unit.
    unit = records["candidate"].unit
    convertible = all(same_quantity(r.unit, unit) for r in records.values())
    kinds = {(r.metric, unit if convertible else r.unit, r.lower_is_better) for r in records.values()}
    if len(kinds) > 1:
        raise InputError(
            "arms measure different things",
            [
                Problem(
                    "<sandwich>", "metric", f"the arms measure {sorted(kinds)}", "give three measurements of one metric"
                )
            ],
        )
    metric, unit, lower = kinds.pop()
    values = {label: convert(r.median, r.unit, unit) for label, r in records.items()}
    floor = floor_from_config(ledger.config) if floor_percent is None else floor_percent
    extra = arm_deltas(ledger, records)
    result = compute(
        values["a"],
        values["candidate"],
        values["b"],
        floor_percent=floor,
        lower_is_better=lower,
        extra_deltas=extra,
    )
    outcome = SandwichRun(result=result, runs=[], measurements=records)
    if not write:
        return outcome
    body = {
        "title": title or f"sandwich of {a_id} / {candidate_id} / {b_id}",
        "control_a": records["a"].id,
        "candidate": records["candidate"].id,
        "control_b": records["b"].id,
        "metric": metric,
        "unit": unit,
        "lower_is_better": lower,
        "rounds": max(1, min(len(r.samples) or 1 for r in records.values())),
        **result.record_fields(),
        # The sandwich was measured where its arms were: it carries their allocation.
        "allocation": records["a"].allocation.model_dump(mode="json", exclude_none=True),
    }
    if candidate_label:
        body["candidate_label"] = candidate_label
    if records["a"].contract:
        body["contract"] = records["a"].contract
    stamping = stamping or Stamping()
    body.update(_from_arms(records, stamping))
    body.update(fields or {})
    [outcome.sandwich] = add(ledger, "sandwich", [Item(body, "<sandwich>", None)], stamping or Stamping())
    return outcome


def arm_deltas(ledger: Any, records: dict[str, Any]) -> dict[str, float]:
    """The sandwich's other deltas, derived from its arms as the delta is (candidate minus the
    A, B midpoint): MFU points and throughput (recorded, else derived from the FLOP audit the
    arm's MFU comes from), and peak allocated and reserved memory in bytes. A figure only some
    arms have gives no delta."""
    flop_audits = ledger.records("flop-audit")
    audits = contract_audits(flop_audits)
    by_id = {a.id: a for a in flop_audits}

    def derived(m: Any) -> dict[str, float]:
        audit = audit_of(m, by_id, audits)
        return (recompute(m, audit) if audit is not None else None) or {}

    figures: dict[str, dict[str, float | None]] = {}
    for label, m in records.items():
        again = derived(m)
        figures[label] = {
            "mfu_points": m.mfu_percent if m.mfu_percent is not None else again.get("mfu_percent"),
            "throughput": m.throughput if m.throughput is not None else again.get("throughput"),
            "peak_allocated_bytes": m.peak_allocated_bytes,
            "peak_reserved_bytes": m.peak_reserved_bytes,
        }
    out: dict[str, float] = {}
    for key in ("mfu_points", "throughput", "peak_allocated_bytes", "peak_reserved_bytes"):
        a, x, b = (figures[label][key] for label in ARMS)
        if a is not None and x is not None and b is not None:
            out[key] = float(x) - (float(a) + float(b)) / 2
    return out


def _from_arms(records: dict[str, Any], stamping: Any) -> dict[str, Any]:
    """What a sandwich of recorded arms takes from them: the candidate's commit (unless the
    command line names a source) and the latest of the arms' `observed_at`."""
    body: dict[str, Any] = {}
    if stamping.source is None and stamping.source_path is None:
        # The sandwich measured the candidate's source: it carries the candidate arm's commit,
        # never the HEAD of whatever checkout the command ran in.
        candidate = records["candidate"]
        if candidate.source is not None:
            body["source"] = candidate.source.model_dump(mode="json", exclude_none=True)
        elif candidate.source_unknown:
            body["source_unknown"] = candidate.source_unknown
    observed = [r.observed_at for r in records.values() if r.observed_at is not None]
    if observed:
        # Observed when its last arm was: a re-entered campaign files it under its own day.
        body["observed_at"] = max(observed).isoformat().replace("+00:00", "Z")
        precisions = {r.observed_at_precision for r in records.values() if r.observed_at_precision}
        if len(precisions) == 1:
            body["observed_at_precision"] = precisions.pop()
    return body


def split_command(text: str) -> str:
    """Commands run through the shell as given; this only checks that they parse."""
    try:
        shlex.split(text)
    except ValueError as exc:
        raise InputError(
            "command does not parse",
            [Problem("<command line>", "command", f"{text!r}: {exc}", "quote the command for the shell")],
        ) from None
    return text
