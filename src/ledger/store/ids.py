"""Record ids: ULIDs (millisecond time prefix + 80 random bits), sortable and coordination-free."""

from __future__ import annotations

import re
from datetime import datetime

from ulid import ULID

ID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")


def new_id(at: datetime | None = None) -> str:
    return str(ULID.from_datetime(at) if at is not None else ULID())


def is_id(text: str) -> bool:
    return bool(ID_RE.match(text))


def id_time(record_id: str) -> datetime:
    return ULID.from_str(record_id).datetime
