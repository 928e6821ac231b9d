"""Canonical JSON: sorted keys, UTF-8, two-space indent, newline at end; and the content hash."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson

_PRETTY = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE


def canonical_bytes(record: dict[str, Any]) -> bytes:
    """The bytes a record file holds. Deterministic, so two writers of one record agree.

    orjson, because the standard library's encoder falls back to pure Python whenever it
    indents, which made serialising the slowest step of a bulk add.
    """
    try:
        return orjson.dumps(record, option=_PRETTY)
    except orjson.JSONEncodeError:
        # Integers beyond 64 bits (whole-run FLOP totals) are outside orjson's range.
        return (json.dumps(record, sort_keys=True, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode(
            "utf-8"
        )


def content_hash(record: dict[str, Any]) -> str:
    """sha256 of the canonical bytes of the record without its `sha256` field.

    Anyone can verify a file: parse it, drop `sha256`, serialise with sorted keys and a
    two-space indent (orjson's format), and hash the UTF-8 bytes.
    """
    return hashlib.sha256(canonical_bytes({k: v for k, v in record.items() if k != "sha256"})).hexdigest()


def seal(record: dict[str, Any]) -> dict[str, Any]:
    """Return the record with its `sha256` set."""
    return {**record, "sha256": content_hash(record)}
