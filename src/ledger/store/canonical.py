"""Canonical JSON: sorted keys, UTF-8, two-space indent, newline at end; and the content hash."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_bytes(record: dict[str, Any]) -> bytes:
    """The bytes a record file holds. Deterministic, so two writers of one record agree."""
    return (json.dumps(record, sort_keys=True, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8")


def content_hash(record: dict[str, Any]) -> str:
    """sha256 of the compact canonical JSON of the record without its `sha256` field."""
    body = {k: v for k, v in record.items() if k != "sha256"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def seal(record: dict[str, Any]) -> dict[str, Any]:
    """Return the record with its `sha256` set."""
    return {**record, "sha256": content_hash(record)}
