"""The stopping-point table, derived from the records and never typed.

For each topology under the current contract: the best accepted measurement, with its
status. A measurement is *accepted* when an accepted decision cites it (directly, or as
the candidate of a sandwich it cites). A degraded allocation's run is shown as
baseline-ineligible, and a topology with no valid step says why (OOM or failure).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ..schema.envelope import Envelope
from ..schema.kinds import Contract, Decision, FlopAudit, Measurement, Sandwich
from ..store.ids import id_seconds
from .eligibility import Judge
from .families import norm
from .metrics import gpu_count, recompute, step_seconds

FINAL = "final"
FASTEST = "fastest accepted"
UNACCEPTED = "eligible, not yet accepted"
#: What an eligible, not yet accepted row says to do next.
ACCEPT_HOW = (
    "next: `ledger add decision` with `verdict: accepted` and this measurement in its `evidence` makes it final"
)
DEGRADED = "baseline-ineligible: degraded allocation"
NO_VALID_STEP = "no valid step"


@dataclass
class Row:
    topology: str
    status: str
    measurement: Measurement | None = None
    flop_audit: FlopAudit | None = None
    reasons: list[str] = field(default_factory=list)
    mfu_recomputed: float | None = None
    throughput_recomputed: float | None = None

    @property
    def gpus(self) -> int | None:
        return gpu_count(self.measurement) if self.measurement else None

    @property
    def batch(self) -> str:
        m = self.measurement
        if m is None or m.global_batch is None:
            return "-"
        local = m.local_batch
        gpus = self.gpus
        if gpus is None and m.allocation and m.allocation.topology:
            found = re.match(r"\s*(\d+)\s*x\b", m.allocation.topology)
            gpus = int(found.group(1)) if found else None
        if local is None and gpus and m.global_batch % gpus == 0:
            # The global batch over the GPUs the topology names (`4x H200`: 8/4 = 2 per GPU).
            local = m.global_batch // gpus
        return f"{local or '?'}/{m.global_batch}"

    @property
    def mfu(self) -> float | None:
        """MFU as ledger recomputes it; the recorded figure when it cannot (no audit)."""
        if self.mfu_recomputed is not None:
            return self.mfu_recomputed
        return self.measurement.mfu_percent if self.measurement else None

    @property
    def throughput(self) -> float | None:
        if self.throughput_recomputed is not None:
            return self.throughput_recomputed
        return self.measurement.throughput if self.measurement else None


#: Why a contract is the current one (`ContractChoice.rule`).
RULE_CONFIGURED = "named in ledger.yaml (contract:)"
RULE_ASKED = "asked for"
RULE_DECIDED = "the contract the newest accepted decision cites (ledger.yaml names none)"
RULE_MOST = "the contract with the most valid measurements (ledger.yaml names none)"
RULE_MEASURED = "the contract of the newest measurement (none is valid; ledger.yaml names none)"
RULE_ONLY = "the newest contract record (no measurement yet, and ledger.yaml names none)"


@dataclass(frozen=True)
class ContractChoice:
    """The current contract and the rule that chose it; `contract` is None when the ledger has none."""

    contract: Contract | None
    rule: str
    asked: str | None = None


def find_contract(records: Iterable[Envelope], name_or_id: str) -> Contract | None:
    """A contract by name (the newest record of that name) or by id or unique id prefix."""
    contracts = [r for r in records if isinstance(r, Contract)]
    named = [c for c in contracts if c.name == name_or_id]
    if named:
        now = datetime.now(UTC)
        return max(named, key=lambda c: (trusted_time(c, now), c.id))
    key = name_or_id.upper()
    by_id = [c for c in contracts if c.id.startswith(key)] if len(key) >= 4 else []
    return by_id[0] if len(by_id) == 1 else None


#: How far after now a record's time may lie before it counts as forged (clock skew between machines).
FUTURE_SLACK = timedelta(days=1)
_NEVER = datetime.min.replace(tzinfo=UTC)


def trusted_time(record: Envelope, now: datetime | None = None, *, written: bool = False) -> datetime:
    """The time a record is ordered by (`when`, or `created_at` when `written`), unless any time
    it claims (`observed_at`, `created_at`, the time in its id) lies in the future: then the
    earliest possible time. A forged 2099 sorts first, not last, so forged times cannot steer
    what is "current" or "newest"; `ledger check` refuses such a record with `record-time`."""
    latest = max(record.when, record.created_at)
    from_id = id_seconds(record.id)
    if from_id is not None:
        latest = max(latest, datetime.fromtimestamp(min(from_id, 253402300799.0), UTC))
    if latest > (now or datetime.now(UTC)) + FUTURE_SLACK:
        return _NEVER
    return record.created_at if written else record.when


def choose_contract(records: Iterable[Envelope], name: str | None = None, *, asked: bool = False) -> ContractChoice:
    """Which contract is current, and why (the rule is one of the `RULE_*` strings).

    Explicit first: `name` (ledger.yaml's `contract:`, or `--contract`). When unset, the
    campaign's evidence chooses, never the order records were added in (a two-run pair added
    last must not take the headline from a 14-run sweep):

    1. the contract the newest accepted decision cites (its measurements, directly or as an
       arm of a sandwich it cites, or the sandwich's or a cited contract itself);
    2. else the contract with the most valid measurements (outcome ok, comparable, not
       superseded), the newest valid measurement breaking a tie;
    3. else, when no measurement is valid, the contract of the most recent measurement;
    4. else the newest contract that nothing supersedes.

    A contract with no valid measurement is never chosen by 1 or 2 while another has one.
    """
    records = list(records)
    if name:
        return ContractChoice(find_contract(records, name), RULE_ASKED if asked else RULE_CONFIGURED, name)
    now = datetime.now(UTC)
    superseded = {s for r in records for s in r.supersedes}
    contracts = {r.id: r for r in records if isinstance(r, Contract) and r.id not in superseded}
    measured = [m for m in records if isinstance(m, Measurement) and m.contract in contracts and m.id not in superseded]
    valid: dict[str, list[Measurement]] = {}
    for m in measured:
        if m.outcome == "ok" and m.comparable:
            valid.setdefault(m.contract or "", []).append(m)

    def weight(cid: str) -> tuple:
        runs = valid.get(cid, [])
        return (len(runs), max((trusted_time(m, now) for m in runs), default=_NEVER), cid)

    if valid:
        by_id = {r.id: r for r in records}
        decisions = [
            d for d in records if isinstance(d, Decision) and d.verdict == "accepted" and d.id not in superseded
        ]
        for d in sorted(decisions, key=lambda d: (trusted_time(d, now), d.created_at, d.id), reverse=True):
            cited = _cited_contracts(d, by_id, valid)
            if cited:
                best = max(cited, key=lambda cid: (cited[cid], *weight(cid)))
                return ContractChoice(contracts[best], RULE_DECIDED)
        return ContractChoice(contracts[max(valid, key=weight)], RULE_MOST)
    if measured:
        newest = max(measured, key=lambda m: (trusted_time(m, now), m.created_at, m.id))
        return ContractChoice(contracts[newest.contract or ""], RULE_MEASURED)
    live = list(contracts.values())
    return ContractChoice(max(live, key=lambda c: (trusted_time(c, now), c.id)) if live else None, RULE_ONLY)


def _cited_contracts(
    decision: Decision, by_id: dict[str, Envelope], valid: dict[str, list[Measurement]]
) -> dict[str, int]:
    """Contract id -> how many of the decision's citations are under it, counting only
    contracts with a valid measurement: a cited measurement, each arm of a cited sandwich
    (and the sandwich's own contract), a cited contract record."""
    counts: dict[str, int] = {}

    def count(cid: str | None) -> None:
        if cid and cid in valid:
            counts[cid] = counts.get(cid, 0) + 1

    for ref in decision.evidence:
        record = by_id.get(ref)
        if isinstance(record, Measurement):
            count(record.contract)
        elif isinstance(record, Contract):
            count(record.id)
        elif isinstance(record, Sandwich):
            arms = [by_id.get(a) for a in (record.control_a, record.candidate, record.control_b) if a]
            arm_contracts = {a.contract for a in arms if isinstance(a, Measurement)}
            for cid in arm_contracts | {record.contract}:
                count(cid)
    return counts


def current_contract(records: Iterable[Envelope], name: str | None = None) -> Contract | None:
    """The current contract: see `choose_contract`."""
    return choose_contract(records, name).contract


def _gpus_of(topology: str) -> int:
    match = re.match(r"\s*(\d+)", topology)
    return int(match.group(1)) if match else 10**6


def _rank(m: Measurement, row_mfu: float | None, row_tp: float | None) -> tuple:
    # Higher MFU, then higher throughput, then the better median (in seconds when it is a time) wins.
    step = step_seconds(m)
    median = step if step is not None else (m.median if m.median is not None else float("inf"))
    return (
        row_mfu if row_mfu is not None else -1.0,
        row_tp if row_tp is not None else -1.0,
        -median if m.lower_is_better else median,
    )


def stopping_point(
    records: Iterable[Envelope],
    contract_name: str | None = None,
    *,
    contract: Contract | None = None,
    thresholds: dict | None = None,
    judge: Judge | None = None,
) -> tuple[Contract | None, list[Row]]:
    """The contract the table is for (`contract`, else the current one), and its rows ordered by GPU count.

    A measurement is baseline-eligible when its outcome is ok, it is comparable, and the
    health of its allocation (its environment records' readings, judged under `thresholds`,
    the `baseline-eligibility` rule's parameters) makes it eligible; an ineligible row
    names the readings that made it so.
    """
    records = list(records)
    judge = judge or Judge(records, thresholds)
    contract = contract or current_contract(records, contract_name)
    if contract is None:
        return None, []
    by_id = {r.id: r for r in records}
    superseded = {s for r in records for s in r.supersedes}
    accepted, rejected = _decided(records, by_id, superseded)
    audits = {a.contract: a for a in records if isinstance(a, FlopAudit) and a.id not in superseded and a.contract}
    audit = audits.get(contract.id)
    groups = _by_topology(records, contract, superseded)
    recipe = RecipeRuns.of(records, by_id, superseded, rejected)

    rows: list[Row] = []
    for topo in sorted(groups, key=lambda t: (_gpus_of(t), t)):
        group = groups[topo]
        best = _best_row(topo, group, accepted, rejected, judge, by_id, audit)
        if best is not None:
            rows.append(best)
        degraded = _degraded_row(topo, group, judge, by_id, audit, recipe)
        if degraded is not None:
            rows.append(degraded)
        # A topology with an eligible step needs no excuse; one without says why it has none.
        failed = _no_valid_step_row(topo, group, audit) if best is None else None
        if failed is not None:
            rows.append(failed)
    _mark_fastest(rows)
    return contract, rows


def _decided(records: list[Envelope], by_id: dict[str, Envelope], superseded: set[str]) -> tuple[set[str], set[str]]:
    """The ids of the measurements that accepted and rejected decisions cite, directly or
    as the candidate of a sandwich they cite (superseded decisions count for nothing)."""
    accepted: set[str] = set()
    rejected: set[str] = set()
    for d in records:
        if not isinstance(d, Decision) or d.id in superseded:
            continue
        cited = cited_by(d, by_id)
        if d.verdict == "accepted":
            accepted |= cited
        elif d.verdict == "rejected":
            rejected |= cited
    return accepted, rejected


def _by_topology(records: list[Envelope], contract: Contract, superseded: set[str]) -> dict[str, list[Measurement]]:
    """The contract's current, comparable measurements grouped by the topology of their allocation."""
    groups: dict[str, list[Measurement]] = {}
    for m in records:
        if isinstance(m, Measurement) and m.contract == contract.id and m.id not in superseded and m.comparable:
            topo = (m.allocation.topology if m.allocation and m.allocation.topology else None) or "unknown topology"
            groups.setdefault(topo, []).append(m)
    return groups


def _audit_for(m: Measurement, by_id: dict[str, Envelope], audit: FlopAudit | None) -> FlopAudit | None:
    """The audit the row's MFU comes from: the measurement's own, else the contract's."""
    own = by_id.get(m.flop_audit) if m.flop_audit else None
    return own if isinstance(own, FlopAudit) else (audit if not m.flop_audit else None)


def _recomputed(
    m: Measurement, by_id: dict[str, Envelope], audit: FlopAudit | None
) -> tuple[float | None, float | None]:
    """MFU and throughput recomputed from the measurement's FLOP audit (its own, else the
    contract's), or (None, None) without one."""
    fa = _audit_for(m, by_id, audit)
    values = recompute(m, fa) if isinstance(fa, FlopAudit) else None
    return (values["mfu_percent"], values["throughput"]) if values else (None, None)


def _best_row(
    topo: str,
    group: list[Measurement],
    accepted: set[str],
    rejected: set[str],
    judge: Judge,
    by_id: dict[str, Envelope],
    audit: FlopAudit | None,
) -> Row | None:
    """The topology's best eligible measurement that no decision rejected: final when a
    decision accepted it, else eligible but not yet accepted. None when none is eligible."""
    eligible = [m for m in group if m.baseline_eligible and judge.measurement(m).eligible and m.id not in rejected]
    pool = [m for m in eligible if m.id in accepted]
    status = FINAL if pool else UNACCEPTED
    pool = pool or eligible
    if not pool:
        return None
    best = max(pool, key=lambda m: _rank(m, *_recomputed(m, by_id, audit)))
    mfu, tp = _recomputed(best, by_id, audit)
    # The next step, where there is one: what turns an eligible row into the accepted one.
    nxt = [ACCEPT_HOW] if status == UNACCEPTED else []
    return Row(topo, status, best, _audit_for(best, by_id, audit), nxt, mfu, tp)


#: A measurement tagged so is an experiment's scratch run, never the recipe's row.
SCRATCH_TAG = "scratch"


def _degraded_row(
    topo: str,
    group: list[Measurement],
    judge: Judge,
    by_id: dict[str, Envelope],
    audit: FlopAudit | None,
    recipe: RecipeRuns | None = None,
) -> Row | None:
    """The current recipe's measurement on the topology's degraded allocation class, with the
    readings that make it baseline-ineligible; None when there is none.

    The recipe's runs, in this order: the latest run an accepted decision cites for this
    topology (directly, or as the candidate of a sandwich it cites; a decision still waiting
    for a healthy-class allocation of this topology does not count here), else the latest
    plain run (an arm of no sandwich, no decision rejected it). Never a sandwich's control
    arm, a candidate no decision accepted, or a run tagged `scratch`: another experiment's
    arms on a degraded tray are not where the recipe stands on it."""
    degraded = [m for m in group if m.outcome == "ok" and not judge.measurement(m).eligible]
    if recipe is not None:
        degraded = recipe.runs(topo, degraded)
    if not degraded:
        return None
    latest = max(degraded, key=lambda m: (m.when, m.id))
    mfu, tp = _recomputed(latest, by_id, audit)
    return Row(
        topo, DEGRADED, latest, _audit_for(latest, by_id, audit), list(judge.measurement(latest).readings), mfu, tp
    )


@dataclass
class RecipeRuns:
    """Which measurements are the recipe's own runs, as the degraded row takes them."""

    accepted: set[str]
    rejected: set[str]
    #: Measurement id -> normalised topologies where the decision that accepted it still waits
    #: for a healthy-class allocation (it is not accepted there yet).
    waiting_on: dict[str, set[str]]
    arms: set[str]

    @classmethod
    def of(
        cls, records: list[Envelope], by_id: dict[str, Envelope], superseded: set[str], rejected: set[str]
    ) -> RecipeRuns:
        accepted: set[str] = set()
        waiting: dict[str, set[str]] = {}
        arms: set[str] = set()
        for r in records:
            if isinstance(r, Sandwich) and r.id not in superseded:
                arms.update(a for a in (r.control_a, r.candidate, r.control_b) if a)
        for d in records:
            if not isinstance(d, Decision) or d.id in superseded or d.verdict != "accepted":
                continue
            cited = cited_by(d, by_id)
            scope = d.pending_on
            for mid in cited:
                if scope is not None and scope.health == "healthy":
                    waiting.setdefault(mid, set()).add(norm(scope.topology))
                else:
                    accepted.add(mid)
        return cls(accepted, rejected, waiting, arms)

    def runs(self, topo: str, group: list[Measurement]) -> list[Measurement]:
        mine = [m for m in group if SCRATCH_TAG not in m.tags and m.id not in self.rejected]
        here = norm(topo)
        accepted = [
            m for m in mine if m.id in self.accepted or (m.id in self.waiting_on and here not in self.waiting_on[m.id])
        ]
        if accepted:
            return accepted
        return [m for m in mine if m.id not in self.arms and m.id not in self.waiting_on]


def _no_valid_step_row(topo: str, group: list[Measurement], audit: FlopAudit | None) -> Row | None:
    """Why the topology has no valid step: its latest run that ran out of memory or failed;
    None when no run did."""
    failed = [m for m in group if m.outcome != "ok"]
    if not failed:
        return None
    latest = max(failed, key=lambda m: (m.when, m.id))
    reason = {"oom": "out of memory", "failed": "the run failed"}[latest.outcome]
    reasons = [reason] + ([latest.notes] if latest.notes else [])
    return Row(
        topo,
        f"{NO_VALID_STEP}: {latest.outcome.upper() if latest.outcome == 'oom' else 'failed'}",
        latest,
        audit,
        reasons,
    )


def _mark_fastest(rows: list[Row]) -> None:
    """With final rows on several topologies, the one with the best MFU (then throughput) is the fastest accepted."""
    finals = [r for r in rows if r.status == FINAL]
    if len(finals) > 1:
        fastest = max(finals, key=lambda r: (r.mfu or -1.0, r.throughput or -1.0))
        fastest.status = FASTEST


def cited_by(decision: Decision, by_id: dict) -> set[str]:
    """The records a decision cites, with the candidate arm of each sandwich it cites."""
    cited = set(decision.evidence)
    for ref in decision.evidence:
        sandwich = by_id.get(ref)
        if isinstance(sandwich, Sandwich) and sandwich.candidate:
            cited.add(sandwich.candidate)
    return cited
