"""What the cross-record rules need of one record, read once per record by the records family."""

from __future__ import annotations

from typing import Any, NamedTuple


class Info(NamedTuple):
    """What cross-record rules need of one record."""

    path: str
    id: str
    kind: str
    keys: tuple[tuple[str, str], ...]  # (field, json value) of UNIQUE_KEYS
    refs: tuple[tuple[str, str], ...]  # (field path, record id)
    sha: str | None
    allocation: str | None
    contract: str | None
    flop_audit: str | None
    mfu: bool
    arms: tuple[tuple[str, str], ...]  # sandwich: (arm field, measurement id)
    attachments: tuple[tuple[str, str], ...]
    owner: str | None  # issue owner
    number: int | None  # issue number
    spread_percent: float | None  # measurement: figures.uncertainty_percent
    repo: str | None = None  # source.repo: another repository's commit (imported records)
    # What the campaign-guidance rules (ledger.checks.guidance) read:
    family: str | None = None  # decision, measurement, sandwich, hypothesis
    mechanism: str | None = None
    verdict: str | None = None  # decision or sandwich verdict
    tried: tuple[str, ...] = ()  # decision
    evidence: tuple[str, ...] = ()  # decision
    topology: str | None = None
    comparable: bool = True  # measurement
    regate: bool = False  # sandwich
    health: str | None = None  # measurement
    environment: str | None = None  # measurement: environment record id
    when: str | None = None  # observed_at or created_at, ISO
    created: float | None = None  # created_at, seconds since the epoch
    tags: tuple[str, ...] = ()
    #: What the derived-figures rules read (ledger.checks.derived.figures_of): (name, value) pairs.
    figures: tuple[tuple[str, Any], ...] = ()
    #: measurement: how many runs its figures summarise (`n`, else its samples), None when unknown.
    n: int | None = None
    #: issue: its status (open, owned, closed).
    status: str | None = None
    #: measurement: its swept parameters' values, (name, value); contract: the parameters it
    #: sweeps, (name, base value or None), then ("unit:NAME", unit) for those with a unit.
    parameters: tuple[tuple[str, Any], ...] = ()
    #: contract: its name.
    name: str | None = None
