"""Parsing limits: how large, how deep and how self-referencing a record or an input may be.

Every reader of record bytes or record input (`ledger add`, `check`, `list`, `show`, the
site) applies them before it parses or walks anything, so a hostile file is reported, never
a crash (RecursionError) or minutes of work (a YAML alias bomb). The defaults are far above
any honest record; `ledger.yaml` may change them under `rules:`:

    rules:
      record-size: {max_bytes: 262144}
      parse-limits: {max_depth: 64, max_input_bytes: 1073741824, max_yaml_aliases: 100,
                     max_inflated_bytes: 16777216}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: Largest record or attachment file, in bytes (rule `record-size`).
MAX_RECORD_BYTES = 256 * 1024
#: Deepest nesting of objects and arrays in a record (rule `parse-limits`).
MAX_DEPTH = 64
#: Largest input `ledger add` reads (a JSON Lines file of many records), in bytes.
MAX_INPUT_BYTES = 1 << 30
#: Most alias uses YAML input may expand per document (shared data is walked once per use).
MAX_YAML_ALIASES = 100
#: Most bytes a compressed import file (`.json.gz`) may inflate to, the cap of gzip'd
#: attachments too. Parsing JSON takes 10-25 times its size in memory, and deflate packs up to
#: 1,032 bytes into one, so a 155 KB file under the 1 GiB input cap inflated to 160 MB and took
#: 4.2 GB to refuse, and one of 40 MB still takes 1 GB to parse; an honest pyperformance run
#: inflates to a few MB.
MAX_INFLATED_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    max_record_bytes: int = MAX_RECORD_BYTES
    max_depth: int = MAX_DEPTH
    max_input_bytes: int = MAX_INPUT_BYTES
    max_yaml_aliases: int = MAX_YAML_ALIASES
    max_inflated_bytes: int = MAX_INFLATED_BYTES

    @classmethod
    def of(cls, rules: dict[str, Any] | None) -> Limits:
        """The limits a config's `rules:` mapping sets (values of the wrong type are the checker's to report)."""
        rules = rules or {}
        size = rules.get("record-size") or {}
        parse = rules.get("parse-limits") or {}

        def num(table: Any, key: str, default: int) -> int:
            value = table.get(key, default) if isinstance(table, dict) else default
            return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default

        return cls(
            max_record_bytes=num(size, "max_bytes", MAX_RECORD_BYTES),
            max_depth=num(parse, "max_depth", MAX_DEPTH),
            max_input_bytes=num(parse, "max_input_bytes", MAX_INPUT_BYTES),
            max_yaml_aliases=num(parse, "max_yaml_aliases", MAX_YAML_ALIASES),
            max_inflated_bytes=num(parse, "max_inflated_bytes", MAX_INFLATED_BYTES),
        )


_DEEP: dict[int, re.Pattern[bytes]] = {}


def canonical_too_deep(raw: bytes, max_depth: int) -> bool:
    """Whether canonical bytes (two-space indent, one value per line) nest deeper than
    `max_depth`: the indentation says the depth, so one C-speed search answers it."""
    pattern = _DEEP.get(max_depth)
    if pattern is None:
        pattern = _DEEP[max_depth] = re.compile(b"\n" + b" " * (2 * max_depth + 1))
    return pattern.search(raw) is not None
