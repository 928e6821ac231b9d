"""The campaign's habits in one structure, for `ledger status` and the site: re-gates owed
(ledger.analysis.regate), rejected families and what was tried since
(ledger.analysis.families), and baseline eligibility and pending decisions
(ledger.analysis.eligibility)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..schema.envelope import Envelope
from ..schema.kinds import Contract, Decision
from . import families
from .eligibility import Judge, Pending, pending
from .regate import RegateState, Source, points_by_contract, points_from_records, regate_states


@dataclass
class RejectedFamily:
    decision: Decision
    #: Records of the family written since, each with whether it states a new mechanism.
    tried_since: list[tuple[Envelope, bool]] = field(default_factory=list)


@dataclass
class Guidance:
    judge: Judge
    #: contract id -> re-gate state of each topology of its stopping point.
    regates: dict[str, list[RegateState]] = field(default_factory=dict)
    pending: list[Pending] = field(default_factory=list)
    settled: list[tuple[Decision, Envelope]] = field(default_factory=list)
    rejected: list[RejectedFamily] = field(default_factory=list)
    source: Source | None = None

    def regate(self, contract_id: str, topology: str) -> RegateState | None:
        return next((s for s in self.regates.get(contract_id, []) if s.topology == topology), None)


def build_guidance(
    records: Iterable[Envelope],
    source: Source | None = None,
    thresholds: dict[str, Any] | None = None,
    *,
    closing: Iterable[str] = families.CLOSING_VERDICTS,
) -> Guidance:
    records = list(records)
    judge = Judge(records, thresholds)
    superseded = {s for r in records for s in r.supersedes}
    out = Guidance(judge, source=source)
    if source is not None:
        by_contract = points_by_contract(points_from_records(records, lambda m: judge.measurement(m).eligible))
        for c in records:
            if not isinstance(c, Contract) or c.id in superseded:
                continue
            points = by_contract.get(c.id, [])
            topologies = sorted({p.topology for p in points if p.topology})
            if topologies:
                out.regates[c.id] = regate_states(points, c.id, topologies, list(c.recipe_paths), source)
    out.pending, out.settled = pending(records, judge)
    latest = families.latest_decisions([d for d in records if isinstance(d, Decision)], superseded)
    closing = tuple(closing)
    for d in sorted(latest.values(), key=lambda d: d.family.casefold()):
        if d.verdict in closing:
            out.rejected.append(RejectedFamily(d, families.tried_since(d, records)))
    return out
