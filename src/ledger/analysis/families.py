"""Rejected families: "do not repeat without a new mechanism", kept for the user.

A measurement, sandwich or hypothesis may name the decision family it belongs to
(`family`) and the mechanism it tries (`mechanism`). When the family's latest decision is
rejected, a record written after that decision repeats it unless its mechanism is one the
decision did not try: not the decision's `mechanism`, not one of its `tried`, and not one
of the comma-separated parts of its family ("raw velocity, max-autotune, ..." tried each).

The functions take any objects with the attributes used (records, or the checker's
compact `Info`), so the checker, `ledger add`, `ledger status` and the site agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: Decision verdicts that close a family until a new mechanism comes.
CLOSING_VERDICTS = ("rejected",)
#: Kinds that can belong to a family.
FAMILY_KINDS = ("measurement", "sandwich", "hypothesis")

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def norm(text: str | None) -> str:
    """A family or mechanism as compared: case, punctuation and spacing do not matter."""
    return _NON_WORD.sub(" ", (text or "").casefold()).strip()


def tried_by(decision: Any) -> set[str]:
    """The mechanisms a decision tried (normalised)."""
    out = {norm(decision.mechanism)} | {norm(t) for t in (decision.tried or ())}
    out |= {norm(part) for part in str(decision.family).split(",")}
    out.discard("")
    return out


@dataclass(frozen=True)
class FamilyFinding:
    """A record in a family whose latest decision closed it."""

    record_id: str
    decision_id: str
    family: str
    verdict: str
    mechanism: str | None
    #: True when the record states a mechanism the decision did not try (allowed).
    new_mechanism: bool

    def message(self) -> str:
        if self.new_mechanism:
            return f"tries {self.mechanism!r} in family {self.family!r}, a mechanism its {self.verdict} decision did not try"
        if self.mechanism:
            return (
                f"is in family {self.family!r}, whose latest decision {self.decision_id} is {self.verdict}, "
                f"and its mechanism {self.mechanism!r} is one that decision already tried"
            )
        return (
            f"is in family {self.family!r}, whose latest decision {self.decision_id} is {self.verdict}, "
            "and it states no mechanism that decision did not try"
        )


def latest_decisions(decisions: Iterable[Any], superseded: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """Normalised family -> the family's latest decision (by write order) that nothing supersedes."""
    latest: dict[str, Any] = {}
    for d in decisions:
        if d.id in superseded:
            continue
        key = norm(d.family)
        if key not in latest or d.id > latest[key].id:
            latest[key] = d
    return latest


def judge(record: Any, latest: dict[str, Any], verdicts: Iterable[str] = CLOSING_VERDICTS) -> FamilyFinding | None:
    """The finding for one record, or None when its family is open (or it names none).

    Only records written after the decision count (record ids sort by write time): the
    evidence that led to the decision is not a repeat of it.
    """
    family = getattr(record, "family", None)
    if not family:
        return None
    decision = latest.get(norm(family))
    if decision is None or decision.verdict not in tuple(verdicts):
        return None
    if record.id <= decision.id or record.id in set(decision.evidence or ()):
        return None
    mechanism = getattr(record, "mechanism", None)
    new = bool(norm(mechanism)) and norm(mechanism) not in tried_by(decision)
    return FamilyFinding(record.id, decision.id, decision.family, decision.verdict, mechanism, new)


def tried_since(decision: Any, records: Iterable[Any]) -> list[tuple[Any, bool]]:
    """Records of the decision's family written after it, each with whether it states a new mechanism."""
    key = norm(decision.family)
    tried = tried_by(decision)
    out = []
    for r in records:
        if getattr(r, "kind", None) not in FAMILY_KINDS or norm(getattr(r, "family", None)) != key:
            continue
        if r.id <= decision.id or r.id in set(decision.evidence or ()):
            continue
        mechanism = norm(getattr(r, "mechanism", None))
        out.append((r, bool(mechanism) and mechanism not in tried))
    out.sort(key=lambda pair: pair[0].id)
    return out
