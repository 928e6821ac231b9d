"""Campaign guidance: the habits of the best campaigns, kept for the user.

- `regate-owed`: a stopping-point row whose measured source has moved in its recipe paths
  (ledger.analysis.regate);
- `rejected-family`: a new record in a family whose latest decision is rejected, with no
  mechanism that decision did not try (ledger.analysis.families);
- `baseline-eligibility`: a measurement that records itself healthy while the readings of
  its allocation's environment records make it baseline-ineligible; its parameters are the
  eligibility thresholds the stopping point, `ledger status` and the site use
  (ledger.analysis.eligibility).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from ..analysis import families
from ..analysis.eligibility import (
    DEFAULT_THRESHOLDS,
    THRESHOLD_DOCS,
    clock_bin_problems,
    gpu_readings,
    load_limit_problems,
)
from ..analysis.regate import OWED, SCRATCH_TAG, Point, Run, establishing, points_by_contract, regate_states
from ..schema.kinds import Contract, Environment
from ..schema.migrate import upgrade
from ..schema.registry import validate_record
from .result import WARNING
from .rule import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        "regate-owed",
        "guidance",
        WARNING,
        "A stopping-point row holds at the commit it was measured (or re-gated) on. When the measured "
        "source (config `source`) has moved past it and the change touches the contract's `recipe_paths` "
        "(any change when it names none), the row is re-gate owed until, on a newer commit, a measurement "
        "re-establishes it (same topology, eligible allocation, of the current recipe: no scratch run or "
        "other experiment's arm) or a neutral re-gate sandwich (`regate: true`) on that topology covers it. "
        "Judged by `ledger check --all` and shown by `ledger status` and the site.",
        "Re-gate at the new head: an A/candidate/B sandwich of the recipe on one allocation recorded with "
        "`regate: true` (a neutral one carries the row forward), or measure the row again at head. If the "
        "change cannot affect the recipe, name the recipe's files in the contract's `recipe_paths`.",
    ),
    Rule(
        "rejected-family",
        "guidance",
        WARNING,
        "A measurement, sandwich or hypothesis names a decision `family` whose latest decision is "
        'rejected ("do not repeat without a new mechanism"), and states no `mechanism` that decision '
        "did not try (its `mechanism`, its `tried` list, and the parts of its family name).",
        "State the new mechanism this record tries in `mechanism` (a correction is a new record that "
        "supersedes this one), or record a decision that reopens the family.",
        {"verdicts": ["rejected"]},
        {"verdicts": "Decision verdicts that close a family until a new mechanism comes."},
    ),
    Rule(
        "baseline-eligibility",
        "guidance",
        WARNING,
        "Whether an allocation may serve as a baseline follows from its measured health: the readings "
        "of the environment records on it (SM clock against the device maximum under load, power limit "
        "against the default, clock-event reasons, uncorrected ECC errors, temperature). The parameters "
        "are the thresholds the stopping point, `ledger status` and the site judge by; the rule fires on "
        "a measurement recorded `health: healthy` whose allocation's readings make it ineligible.",
        "Record the measurement's health as the readings say (a correction supersedes it), re-measure on "
        "a healthy allocation, or, if the threshold is wrong for this device, set it under "
        "rules.baseline-eligibility in ledger.yaml.",
        dict(DEFAULT_THRESHOLDS),
        dict(THRESHOLD_DOCS),
        # A healthy allocation needs at least these fractions: lowering one lets a throttled or
        # capped board through; a clock reason added to the benign list stops counting.
        param_looser={
            "min_sm_clock_fraction": "lower",
            "min_power_limit_fraction": "lower",
            "power_budget_fraction": "lower",
            "benign_clock_reasons": "grow",
            "max_load_per_core": "higher",
            # A bin dropped or edited (1,965 MHz moved to healthy) lets a board through; a new
            # device's bins only add judgements, so adding an entry is a tightening.
        },
        param_checks={"max_clock_bins": clock_bin_problems, "max_load_per_core": load_limit_problems},
    ),
)

Emit = Callable[..., None]


def superseded_of(infos: Iterable[Any]) -> set[str]:
    return {ref for info in infos for where, ref in info.refs if where.startswith("supersedes[")}


def check_families(
    new: Iterable[Any], decisions: Iterable[Any], emit: Emit, verdicts: list[str], superseded=()
) -> None:
    """`rejected-family` for the records in `new`, against `decisions` (records or Infos)."""
    latest = families.latest_decisions(decisions, set(superseded))
    if not latest:
        return
    for info in new:
        if info.kind not in families.FAMILY_KINDS:
            continue
        finding = families.judge(info, latest, verdicts)
        if finding is not None and not finding.new_mechanism:
            emit(
                "rejected-family",
                info.path,
                finding.message(),
                field="mechanism" if finding.mechanism else "family",
            )


def points_of(infos: Iterable[Any], superseded: set[str], degraded: frozenset[str] = frozenset()) -> list[Point]:
    """Re-gate points from compact records, judged as `analysis.regate.points_from_records`
    judges records: `degraded` holds the allocation ids whose environment readings make them
    ineligible."""
    infos = [i for i in infos if i.id not in superseded]
    by_id = {i.id: i for i in infos}
    arms: set[str] = set()
    accepted: set[str] = set()
    rejected: set[str] = set()
    for i in infos:
        if i.kind == "sandwich":
            arms.update(m for _, m in i.arms)
        elif i.kind == "decision" and i.verdict in ("accepted", "rejected"):
            cited = set(i.evidence)
            for ref in i.evidence:
                s = by_id.get(ref)
                if s is not None and s.kind == "sandwich":
                    cited.update(m for a, m in s.arms if a == "candidate")
            (accepted if i.verdict == "accepted" else rejected).update(cited)
    measurements = [i for i in infos if i.kind == "measurement" and i.contract and i.comparable]
    runs = [
        Run(
            i.id,
            i.topology or "unknown topology",
            dict(i.figures).get("value") is not None,
            i.health != "degraded" and i.allocation not in degraded,
            SCRATCH_TAG in i.tags,
        )
        for i in measurements
    ]
    anchors = establishing(runs, arms, accepted, rejected)
    out = []
    for i, run in zip(measurements, runs, strict=True):
        when = datetime.fromisoformat(i.when) if i.when else None
        out.append(Point(i.id, "measurement", i.contract, run.topology, i.sha, when, None, i.id in anchors))
    for i in infos:
        if i.kind == "sandwich" and i.contract and i.regate:
            when = datetime.fromisoformat(i.when) if i.when else None
            topo = i.topology
            if not topo:
                candidate = by_id.get(next((m for a, m in i.arms if a == "candidate"), ""))
                topo = candidate.topology if candidate is not None else None
            out.append(Point(i.id, "sandwich", i.contract, topo, i.sha, when, i.verdict))
    return out


def degraded_allocations(environments: dict[str, Environment], th: dict[str, Any]) -> frozenset[str]:
    """Allocation ids whose environment records' readings make them baseline-ineligible."""
    th = {**DEFAULT_THRESHOLDS, **th}
    return frozenset(
        e.allocation.id
        for e in environments.values()
        if e.allocation is not None and e.allocation.known and gpu_readings(e, th)
    )


def check_regates(
    infos: list[Any], load: Callable[[Any], Any], source, emit: Emit, degraded: frozenset[str] = frozenset()
) -> None:
    """`regate-owed` for every live contract's stopping point (whole-ledger checks)."""
    superseded = superseded_of(infos)
    by_contract = points_by_contract(points_of(infos, superseded, degraded))
    for info in infos:
        if info.kind != "contract" or info.id in superseded:
            continue
        points = by_contract.get(info.id, [])
        topologies = sorted({p.topology for p in points if p.topology})
        if not topologies:
            continue
        contract = load(info)
        if not isinstance(contract, Contract):
            continue
        for state in regate_states(points, contract.id, topologies, list(contract.recipe_paths), source):
            if state.state == OWED:
                emit(
                    "regate-owed",
                    info.path,
                    f"stopping point of contract {contract.name}, {state.topology}: {state.reason}",
                    field="recipe_paths",
                )


def check_eligibility(
    measurements: Iterable[Any], environments: dict[str, Environment], th: dict[str, Any], emit: Emit
) -> None:
    """`baseline-eligibility`: measurements recorded healthy on an allocation whose readings say otherwise."""
    on_allocation: dict[str, list[Environment]] = {}
    for env in environments.values():
        if env.allocation is not None and env.allocation.known:
            on_allocation.setdefault(env.allocation.id, []).append(env)
    for m in measurements:
        if m.kind != "measurement" or m.health != "healthy":
            continue
        envs = [environments[m.environment]] if m.environment in environments else []
        envs += [e for e in on_allocation.get(m.allocation or "", []) if e not in envs]
        readings: list[str] = []
        for env in envs:
            readings += [r for r in gpu_readings(env, th) if r not in readings]
        if readings:
            emit(
                "baseline-eligibility",
                m.path,
                "records health healthy, but the readings of its allocation make it baseline-ineligible: "
                + "; ".join(readings[:4])
                + (f" and {len(readings) - 4} more" if len(readings) > 4 else ""),
                field="health",
            )


def load_model(root: Path, rel: str):
    """A record model from a path relative to the records folder, or None."""
    path = root / rel
    if path.is_symlink():
        return None  # never followed; the symlinks rule reports it
    try:
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict):
            return None  # schema-valid reports it
        return validate_record(upgrade(data))
    # What a record on disk can be (unreadable, not JSON, too deep, not valid): schema-valid
    # reports it. Anything else is a bug in ledger and raises.
    except (OSError, ValueError, RecursionError):  # ValidationError and FormatError are ValueErrors
        return None
