"""Record ids: ULIDs (millisecond time prefix + 80 random bits), sortable and coordination-free."""

from __future__ import annotations

import re
from datetime import datetime

ID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def new_id(at: datetime | None = None) -> str:
    # Imported here: python-ulid reads its version from importlib.metadata at import (40 ms),
    # and only a command that writes a record needs a new id.
    from ulid import ULID

    return str(ULID.from_datetime(at) if at is not None else ULID())


def is_id(text: str) -> bool:
    return bool(ID_RE.match(text))


def id_time(record_id: str) -> datetime:
    from ulid import ULID

    return ULID.from_str(record_id).datetime


_CROCKFORD = {c: i for i, c in enumerate("0123456789ABCDEFGHJKMNPQRSTVWXYZ")}


def id_seconds(record_id: str) -> float | None:
    """The time in a ULID's first 10 characters, in seconds since the epoch (None if not a ULID)."""
    if not ID_RE.match(record_id):
        return None
    ms = 0
    for char in record_id[:10]:
        ms = ms * 32 + _CROCKFORD[char]
    return ms / 1000.0
