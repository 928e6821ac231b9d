"""Re-gates owed: "the table remains valid at current head; re-gate again after any future source change".

A stopping-point row holds at the commit of the measured source it was measured on. When
the measured source (config `source:`, a git checkout) has moved past that commit, and the
change touches the paths that define the contract's recipe (`recipe_paths`, files or globs;
without any, every change of the source counts), the row is *re-gate owed* until a record
on a newer source covers it:

- a measurement that re-establishes the row, on a newer commit: under the same contract on
  the same topology, of the current recipe (an accepted decision cites it, or it is no
  sandwich's arm; never tagged `scratch`), on an eligible allocation (`establishing`), or
- a re-gate sandwich (`regate: true`) under the contract on that topology, on a newer commit,
  that came out neutral: it carries that topology's row forward to its commit, as the
  campaign's 4x/B2 re-gate of 52f1114dd carried its 4x row. It says nothing of a 1x row.

A re-gate that came out faster or slower carries nothing: the row no longer holds there.
When the commits do not resolve in the measured checkout (abbreviated historical SHAs),
the newest covering record by time is shown and whether the source moved is unknown.

The functions take `Point`s, built from records (`points_from_records`) or from the
checker's compact records, so `check`, `status` and the site agree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple, Protocol

from ..schema.envelope import Envelope
from ..schema.kinds import Decision, Measurement, Sandwich

#: A measurement tagged so is an experiment's scratch run: it never re-establishes a row.
SCRATCH_TAG = "scratch"
CURRENT = "current"
OWED = "re-gate owed"
UNKNOWN = "unknown"
#: Changed paths listed in a reason before "and N more".
SHOWN_PATHS = 3


class Point(NamedTuple):
    """A record that can anchor a row: a measurement (one topology) or a re-gate sandwich (all).
    A named tuple: a whole-ledger check builds one per measurement (100,000 frozen dataclasses
    cost 0.15 s of a warm `check --all`)."""

    id: str
    kind: str  # "measurement" or "sandwich"
    contract: str
    topology: str | None  # None for a sandwich: it covers every topology of its contract
    sha: str | None
    when: datetime | None = None
    verdict: str | None = None  # sandwich verdict
    #: A measurement that re-establishes its topology's row (see `establishing`); a sandwich: True.
    establishes: bool = True


@dataclass
class RegateState:
    contract: str
    topology: str
    state: str  # CURRENT, OWED or UNKNOWN
    reason: str
    valid_at: str | None = None  # the commit the row holds at (as recorded)
    anchor: str | None = None  # the record that makes it hold there
    carried_by: str | None = None  # the neutral re-gate sandwich, when it carried the row
    head: str | None = None
    changed: list[str] = field(default_factory=list)
    #: Re-gate sandwiches newer than the anchor that came out faster or slower.
    failed_regates: list[str] = field(default_factory=list)

    @property
    def owed(self) -> bool:
        return self.state == OWED

    def as_dict(self) -> dict:
        return {
            "contract": self.contract,
            "topology": self.topology,
            "state": self.state,
            "reason": self.reason,
            "valid_at": self.valid_at,
            "anchor": self.anchor,
            "carried_by": self.carried_by,
            "head": self.head,
            "changed": self.changed,
            "failed_regates": self.failed_regates,
        }


class Run(NamedTuple):
    """What deciding whether a measurement re-establishes its row needs of it."""

    id: str
    topology: str
    ok: bool
    eligible: bool
    scratch: bool


def establishing(runs: Iterable[Run], arms: set[str], accepted: set[str], rejected: set[str]) -> set[str]:
    """The measurements that re-establish their topology's row, and so move where it holds:
    runs of the current recipe (an accepted decision cites it, directly or as a sandwich's
    candidate; or it is no sandwich's arm), not tagged `scratch`, not rejected, on an eligible
    allocation (a run that found no valid step re-establishes a no-valid-step row). Another
    experiment's control or candidate arm, or a scratch run on a degraded tray, never does.
    A topology with no eligible run of the recipe is held by its degraded recipe runs."""
    recipe = [r for r in runs if not r.scratch and r.id not in rejected and (r.id in accepted or r.id not in arms)]
    out = {r.id for r in recipe if r.eligible or not r.ok}
    held = {r.topology for r in recipe if r.id in out}
    out |= {r.id for r in recipe if r.topology not in held}
    return out


def _topology_of(record: Envelope, by_id: dict[str, Envelope]) -> str | None:
    """A record's topology; a sandwich without one takes its candidate arm's."""
    if record.allocation is not None and record.allocation.topology:
        return record.allocation.topology
    arm = by_id.get(getattr(record, "candidate", None) or "")
    if arm is not None and arm.allocation is not None and arm.allocation.topology:
        return arm.allocation.topology
    return None


def points_from_records(
    records: Iterable[Envelope], eligible: Callable[[Measurement], bool] | None = None
) -> list[Point]:
    """Re-gate points of the records; `eligible(measurement)` judges its allocation's health
    (ledger.analysis.eligibility.Judge; without it, the recorded `health`)."""
    records = list(records)
    superseded = {s for r in records for s in r.supersedes}
    by_id = {r.id: r for r in records}
    arms: set[str] = set()
    accepted: set[str] = set()
    rejected: set[str] = set()
    for r in records:
        if r.id in superseded:
            continue
        if isinstance(r, Sandwich):
            arms.update(a for a in (r.control_a, r.candidate, r.control_b) if a)
        elif isinstance(r, Decision) and r.verdict in ("accepted", "rejected"):
            cited = set(r.evidence)
            for ref in r.evidence:
                s = by_id.get(ref)
                if isinstance(s, Sandwich) and s.candidate:
                    cited.add(s.candidate)
            (accepted if r.verdict == "accepted" else rejected).update(cited)
    judge = eligible or (lambda m: m.health != "degraded")
    measurements = [
        r for r in records if isinstance(r, Measurement) and r.contract and r.comparable and r.id not in superseded
    ]
    runs = [
        Run(
            m.id,
            m.allocation.topology if m.allocation and m.allocation.topology else "unknown topology",
            m.outcome == "ok",
            judge(m),
            SCRATCH_TAG in m.tags,
        )
        for m in measurements
    ]
    anchors = establishing(runs, arms, accepted, rejected)
    out: list[Point] = []
    for m, run in zip(measurements, runs, strict=True):
        sha = m.source.sha if m.source is not None else None
        out.append(Point(m.id, "measurement", m.contract or "", run.topology, sha, m.when, None, m.id in anchors))
    for r in records:
        if isinstance(r, Sandwich) and r.contract and r.regate and r.id not in superseded:
            sha = r.source.sha if r.source is not None else None
            out.append(Point(r.id, "sandwich", r.contract, _topology_of(r, by_id), sha, r.when, r.verdict))
    return out


class Source(Protocol):
    """The measured source checkout as the re-gate judgement reads it (ledger.store.sources
    reads it from git): its head, which commits resolve and precede it, what changed."""

    ok: bool
    head: str | None
    problem: str | None

    def resolve(self, shas: Iterable[str]) -> dict[str, str | None]: ...

    def full(self, sha: str) -> str | None: ...

    def distance(self, full: str) -> int | None: ...

    def changed(self, base: str, recipe_paths: list[str]) -> list[str]:
        """Paths changed since `base`; raises RuntimeError (ledger.git.GitError) when git cannot tell."""
        ...


def _short(sha: str | None) -> str:
    return sha[:9] if sha else "?"


def regate_states(
    points: list[Point],
    contract: str,
    topologies: Iterable[str],
    recipe_paths: list[str],
    source: Source,
) -> list[RegateState]:
    """The re-gate state of each topology of one contract's stopping point (`points` may hold
    other contracts' points; callers with many contracts pass `points_by_contract(...)[id]`)."""
    mine = [p for p in points if p.contract == contract]
    source.resolve([p.sha for p in mine if p.sha])
    # A re-gate sandwich covers the topology it ran on, not the whole table: a 4x re-gate says
    # nothing about a 1x row measured twelve recipe commits earlier.
    regates: dict[str | None, list[Point]] = {}
    by_topology: dict[str | None, list[Point]] = {}
    for p in mine:
        if p.kind == "sandwich":
            regates.setdefault(p.topology, []).append(p)
        elif p.establishes:
            by_topology.setdefault(p.topology, []).append(p)
    out = []
    for topo in dict.fromkeys(topologies):
        here = regates.get(topo, [])
        neutral = [p for p in here if p.verdict == "neutral"]
        out.append(_state(contract, topo, by_topology.get(topo, []) + neutral, here, recipe_paths, source))
    return out


def points_by_contract(points: Iterable[Point]) -> dict[str, list[Point]]:
    """Points grouped by contract: one pass, where filtering per contract was one pass each."""
    out: dict[str, list[Point]] = {}
    for p in points:
        out.setdefault(p.contract, []).append(p)
    return out


def _state(
    contract: str, topo: str, anchors: list[Point], regates: list[Point], paths: list[str], source: Source
) -> RegateState:
    state = RegateState(contract, topo, UNKNOWN, "", head=source.head)
    with_sha = [p for p in anchors if p.sha]
    if not with_sha:
        state.reason = "no record of this row names its source commit, so whether the source moved is unknown"
        return state
    # One lookup per commit, not per record: a campaign stamps thousands of records at a few commits.
    by_sha: dict[str, list[Point]] = {}
    for p in with_sha:
        by_sha.setdefault(p.sha or "", []).append(p)
    on_line: list[tuple[int, Point, str]] = []
    off_line: list[Point] = []
    for sha, at_sha in by_sha.items():
        full = source.full(sha)
        if full is None:
            continue
        d = source.distance(full)
        if d is None:
            off_line.extend(at_sha)
        else:
            on_line.append((d, max(at_sha, key=lambda p: p.id), full))
    if not on_line:
        newest = max(with_sha, key=lambda p: (p.when or datetime.min, p.id))
        _describe_anchor(state, newest)
        if source.ok and off_line and len(off_line) == len(with_sha):
            state.state = OWED
            state.reason = (
                f"measured at {_short(newest.sha)}, which is not in the history of the measured source's head "
                f"{_short(source.head)}: re-gate at head"
            )
        else:
            why = source.problem or f"the measured source does not hold {_short(newest.sha)}"
            state.reason = f"{_held(state)}; {why}, so whether it moved since is unknown"
        return state
    distance = min(t[0] for t in on_line)
    _, anchor, full = max((t for t in on_line if t[0] == distance), key=lambda t: t[1].id)
    _describe_anchor(state, anchor)
    state.failed_regates = [
        p.id for p in regates if p.verdict != "neutral" and p.sha and _newer(source, p.sha, distance)
    ]
    failed = (
        f"; re-gate {', '.join(state.failed_regates)} came out {_verdicts(regates, state.failed_regates)}, "
        "so the row does not hold past it"
        if state.failed_regates
        else ""
    )
    if distance == 0:
        state.state = CURRENT
        state.reason = f"{_held(state)}, the measured source's head{failed}"
        return state
    try:
        changed = source.changed(full, paths)
    except RuntimeError as exc:  # ledger.git's GitError: the source could not be read
        state.reason = f"{_held(state)}; git could not compare it with head: {exc}"
        return state
    state.changed = changed
    what = "the recipe paths" if paths else "the source"
    if changed:
        listed = ", ".join(changed[:SHOWN_PATHS]) + (
            f" and {len(changed) - SHOWN_PATHS} more" if len(changed) > SHOWN_PATHS else ""
        )
        state.state = OWED
        state.reason = (
            f"{_held(state)}; the source moved {distance} commit(s) to {_short(source.head)}, "
            f"changing {what}: {listed}{failed}"
        )
    else:
        state.state = CURRENT
        state.reason = (
            f"{_held(state)}; the {distance} commit(s) since, to {_short(source.head)}, leave {what} unchanged{failed}"
        )
    return state


def _newer(source: Source, sha: str, than: int) -> bool:
    full = source.full(sha)
    d = source.distance(full) if full else None
    return d is not None and d < than


def _verdicts(regates: list[Point], ids: list[str]) -> str:
    return " and ".join(sorted({p.verdict or "?" for p in regates if p.id in ids}))


def _describe_anchor(state: RegateState, anchor: Point) -> None:
    state.valid_at = anchor.sha
    state.anchor = anchor.id
    state.carried_by = anchor.id if anchor.kind == "sandwich" else None


def _held(state: RegateState) -> str:
    if state.carried_by:
        return f"re-gated at {_short(state.valid_at)} by a neutral re-gate sandwich"
    return f"measured at {_short(state.valid_at)}"
