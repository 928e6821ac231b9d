"""Keyed records (issues by number, contracts by name) and their corrections.

A keyed record is corrected by a new record that repeats its key and lists it in
`supersedes` (an issue closed, given an owner, retitled; a contract corrected). The key's
*live* record is the one no other record of that key supersedes; when a chain is broken
(two records of one key, neither superseding the other) the newest is taken and the
checker reports the key (`unique-key`).

    live_by_key(records, kind)        -> {key value: live record}
    issue_owner(records)              -> number -> owner of the live issue record (or None)
    owner_of(owner, issues, lookup)   -> the owner of an owed item: its own, else an issue's
    issue_closed(records)             -> number -> whether the issue's live record is closed
    settled(issues, closed)           -> an owed item whose issues are all closed is owed no more
    live_records(records)             -> every record, a keyed kind's corrections left out
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..schema.envelope import Envelope
from ..schema.registry import KINDS


def key_of(record: Envelope) -> tuple[Any, ...] | None:
    """The record's unique key (the values of its kind's UNIQUE_KEYS), or None for unkeyed kinds."""
    if not record.UNIQUE_KEYS:
        return None
    return tuple(getattr(record, name, None) for name in record.UNIQUE_KEYS)


def key_text(record: Envelope) -> str:
    """How listings show the key: `#1044` for an issue, the name for a contract, `F1` for a finding."""
    if record.kind == "finding":
        finding: Any = record  # a Finding: its number and the review it belongs to
        return f"{finding.finding} ({finding.review})"
    key = key_of(record)
    if key is None:
        return ""
    if record.kind == "issue":
        return f"#{key[0]}"
    return " ".join(str(v) for v in key)


def key_field(kind: str) -> str | None:
    model = KINDS.get(kind)
    return ", ".join(model.UNIQUE_KEYS) if model and model.UNIQUE_KEYS else None


def live_by_key(records: Iterable[Envelope], kind: str) -> dict[Any, Envelope]:
    """key -> the live record of that key among `records` of `kind` (single-field keys by their value)."""
    groups: dict[Any, list[Envelope]] = {}
    for r in records:
        if r.kind != kind:
            continue
        key = key_of(r)
        if key is None:
            continue
        groups.setdefault(key[0] if len(key) == 1 else key, []).append(r)
    out: dict[Any, Envelope] = {}
    for key, group in groups.items():
        superseded = {s for r in group for s in r.supersedes}
        live = [r for r in group if r.id not in superseded] or group
        out[key] = max(live, key=lambda r: (r.created_at, r.id))
    return out


def issue_owner(records: Iterable[Envelope]) -> Callable[[int], str | None]:
    """number -> owner of the issue's live record (None when unowned or unknown)."""
    live = live_by_key(records, "issue")
    return lambda number: getattr(live.get(number), "owner", None)


def owner_of(owner: str | None, issues: Iterable[int], lookup: Callable[[int], str | None]) -> str | None:
    """An owed item's owner: its own (an Owner column, `owner: NAME`, `@handle`), else the
    owner of the first issue it names that has one. The checker and the site both ask here."""
    if owner:
        return owner
    for number in issues:
        found = lookup(number)
        if found:
            return found
    return None


def issue_closed(records: Iterable[Envelope]) -> Callable[[int], bool]:
    """number -> True when the issue's live record is closed (a correction closed it)."""
    live = live_by_key(records, "issue")
    return lambda number: getattr(live.get(number), "status", None) == "closed"


def settled(issues: Iterable[int], closed: Callable[[int], bool]) -> bool:
    """An owed item tied to issues is owed no more once every issue it names is closed; an
    item that names none is owed until its page drops it."""
    numbers = list(issues)
    return bool(numbers) and all(closed(n) for n in numbers)


def live_records(records: Iterable[Envelope], kind: str) -> list[Envelope]:
    """The records of `kind` a listing shows once each: a keyed kind's live record per key
    (an issue corrected twice is one issue, not three), an unkeyed kind's records that no
    record supersedes."""
    records = list(records)
    model = KINDS.get(kind)
    if model is not None and model.UNIQUE_KEYS:
        return list(live_by_key(records, kind).values())
    superseded = {s for r in records for s in r.supersedes}
    return [r for r in records if r.kind == kind and r.id not in superseded]
