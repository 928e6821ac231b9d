"""Canonical JSON: the one serialisation of a record, and the content hash.

A record file's bytes are exactly `canonical_bytes` of its parsed content (the checker's
`canonical-bytes` rule), so what any JSON reader sees is what was hashed and scanned:

- UTF-8; object keys sorted by code point; two-space indent, `": "` between a key and its
  value, one member or element per line, a newline at the end (orjson's OPT_INDENT_2 |
  OPT_SORT_KEYS | OPT_APPEND_NEWLINE);
- strings escape only `"`, `\\` and control characters (U+0000-U+001F); everything else,
  non-ASCII included, is written as itself; no lone surrogates;
- integers in decimal, from -2^63 to 2^64-1 (64 bits); larger ones are refused (write a
  float or a string); floats as the shortest decimal that reads back to the same double
  (`0.1`, `1.0`, `1e-7`, `1e+23`); NaN and infinities are refused;
- no duplicate keys; nesting at most `limits.MAX_DEPTH` levels deep (configurable).

docs/reference/format.md states the same for implementers of other verifiers.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

import orjson

_PRETTY = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
#: The integer range of the canonical form (what orjson, Go, Rust and Java read exactly).
INT_MIN, INT_MAX = -(2**63), 2**64 - 1


class NotCanonical(ValueError):
    """A value that has no canonical serialisation: `field` says where, `message` what."""

    def __init__(self, message: str, field: str = "", fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.fix = fix or "write finite numbers, integers within 64 bits and valid Unicode text"


def canonical_bytes(record: dict[str, Any]) -> bytes:
    """The bytes a record file holds. Deterministic, so two writers of one record agree.

    Raises NotCanonical for what the canonical form cannot hold (an integer beyond 64 bits,
    NaN or an infinity, a lone surrogate, nesting beyond 254 levels).
    """
    try:
        out = orjson.dumps(record, option=_PRETTY)
    except orjson.JSONEncodeError as exc:
        raise _why(record, str(exc)) from None
    # orjson writes NaN and infinities as null: the (C-speed) substring test keeps the
    # walk that tells them from a real null off the common path.
    if b"null" in out:
        bad = _find(record, lambda v: isinstance(v, float) and not math.isfinite(v))
        if bad is not None:
            raise NotCanonical(
                f"{bad[1]} is not a finite number", bad[0], "measurements are finite numbers; omit the field or fix it"
            )
    return out


def content_hash(record: dict[str, Any]) -> str:
    """sha256 of the canonical bytes of the record without its `sha256` field.

    Anyone can verify a file: since its bytes are canonical, delete the line
    `  "sha256": "<hex>",` and hash the remaining bytes (`hash_of_file` does exactly that).
    """
    return hashlib.sha256(canonical_bytes({k: v for k, v in record.items() if k != "sha256"})).hexdigest()


def seal(record: dict[str, Any]) -> dict[str, Any]:
    """Return the record with its `sha256` set."""
    return {**record, "sha256": content_hash(record)}


def sha_line(given: str) -> bytes:
    return b'\n  "sha256": "' + given.encode("ascii") + b'",\n'


def with_hash(record: dict[str, Any], raw: bytes, digest: str) -> bytes:
    """The file bytes of `record` sealed with `digest`, from `raw` (its canonical bytes
    without `sha256`): the inverse of `hash_of_file`, the `sha256` line put where sorting the
    keys puts it, so the record is encoded once. Falls back to encoding the sealed record
    when no top-level key sorts after `sha256`."""
    after = sorted(k for k in record if k > "sha256")
    if not after or "sha256" in record:
        return canonical_bytes({**record, "sha256": digest})
    # Top-level members are the only lines indented by exactly two spaces (a string holds
    # no raw newline), so the first member after `sha256` is found by its line.
    at = raw.find(b'\n  "' + after[0].encode("utf-8") + b'": ')
    if at < 0:
        return canonical_bytes({**record, "sha256": digest})
    return raw[:at] + sha_line(digest) + raw[at + 1 :]


def hash_of_file(raw: bytes, given: Any) -> str | None:
    """The content hash of canonical record bytes, without re-serialising: the bytes with
    their top-level `sha256` line removed. None when that line is not where canonical bytes
    put it (then hash the parsed record with `content_hash`)."""
    if not isinstance(given, str) or len(given) != 64 or not given.isascii():
        return None
    needle = sha_line(given)
    at = raw.find(needle)
    if at < 0:
        return None
    # Top-level members are the only lines indented by exactly two spaces, and `sha256` is
    # never the last of them (`tool` sorts after it), so the line ends with a comma.
    return hashlib.sha256(raw[: at + 1] + raw[at + len(needle) :]).hexdigest()


def _path(parent: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def _find(value: Any, bad) -> tuple[str, Any] | None:
    """(field path, value) of the first value (or key) `bad` accepts; iterative."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if bad(k):
                    return _path(where, k) or "record", k
                stack.append((_path(where, k), v))
        elif isinstance(node, (list, tuple)):
            stack.extend((_path(where, i), v) for i, v in enumerate(node))
        elif bad(node):
            return where or "record", node
    return None


def _depth(value: Any) -> tuple[int, str]:
    deepest, at = 0, ""
    stack: list[tuple[str, Any, int]] = [("", value, 1)]
    while stack:
        where, node, d = stack.pop()
        items: Any
        if isinstance(node, dict):
            items = node.items()
        elif isinstance(node, (list, tuple)):
            items = enumerate(node)
        else:
            continue
        if d > deepest:
            deepest, at = d, where
        stack.extend((_path(where, k), v, d + 1) for k, v in items)
    return deepest, at


def _why(record: Any, error: str) -> NotCanonical:
    """Turn orjson's refusal into the field and the reason (a walk, on the failure path only)."""
    big = _find(record, lambda v: isinstance(v, int) and not isinstance(v, bool) and not INT_MIN <= v <= INT_MAX)
    if big is not None:
        return NotCanonical(
            f"the integer {big[1]} is beyond 64 bits, so not every JSON reader can read it exactly",
            big[0],
            "write it as a float (e.g. 1.2e+21) or as a string",
        )

    def lone_surrogate(v: Any) -> bool:
        if not isinstance(v, str):
            return False
        try:
            v.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False

    text = _find(record, lone_surrogate)
    if text is not None:
        return NotCanonical(
            "holds a lone UTF-16 surrogate (\\ud800-\\udfff), which is not Unicode text", text[0], "remove the escape"
        )
    depth, at = _depth(record)
    if depth > 200 or "ecursion" in error:
        return NotCanonical(
            f"nests {depth} levels deep", at or "record", "flatten the record; records are a few levels deep"
        )
    return NotCanonical(f"cannot be written as JSON: {error}", "", "give JSON values only")
