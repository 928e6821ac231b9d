"""Append-only rows in documentation tables.

A published table whose rows are keyed (a benchmark per model, a feature per name, an issue
per number) grows by appending rows; an existing row is never rewritten or deleted behind
the reader's back. Against the base of a push, every keyed row of a declared file must be
byte-identical, except rows whose key the change declares (a `Row-Changed:` trailer in a
commit message of the range), and a removed row is always a violation. Violations are
reported key by key, with the count of unrelated keys proven unchanged.

Files declare keyed tables in ledger.yaml (any Markdown file of the repository) or in a spec
page's front matter:

    rules:
      keyed-rows:
        files:
          - docs/BENCHMARKS.md                   # every table, keyed by its first column
          - {path: docs/FEATURES.md, key: Feature}   # tables with a `Feature` column

    ---                                          # a spec page
    keyed_tables: {key: Threads}                 # or `keyed_tables: true`
    ---

A change that means to rewrite a row says so in a commit message of the push:

    Row-Changed: docs/BENCHMARKS.md#LTX-2.5 axes
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from .. import pages
from .result import ERROR
from .rule import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        "keyed-rows",
        "keyedrows",
        ERROR,
        "Rows of declared keyed tables only grow: against the base, every keyed row is "
        "byte-identical unless the change declares its key (`Row-Changed: FILE#KEY` in a commit "
        "message), and no keyed row is removed. Files are declared here (`files`) or by a spec "
        "page's `keyed_tables` front matter.",
        "Restore the row as it was published and append a new row instead (a correction is a new "
        "row); when the row must change, declare it with a `Row-Changed: FILE#KEY` trailer in the "
        "commit message. A removed row is restored: published rows are never deleted.",
        {"files": []},
        {
            "files": "Markdown files (paths from the ledger root) whose tables are keyed: a path, or "
            "{path, key} where key is the key column's header (default: the first column)."
        },
    ),
)

RULES += (
    Rule(
        "keyed-unique",
        "keyedrows",
        ERROR,
        "A keyed table holds each key once. A second row with a key the table already has is what "
        "two branches appending the same row produce under `merge=union`; checked on the tree, the "
        "same at push and in `--all`.",
        "Keep the row the remote already has and delete the one this branch added (after a "
        "`merge=union` it may sit above or below the other: `git diff origin/main -- FILE` shows "
        "which is new); a correction is a row with its own key, or a declared rewrite of the row "
        "(`Row-Changed: FILE#KEY`).",
    ),
)

_TRAILER = re.compile(r"^Row-Changed:\s*(.+?)\s*$", re.MULTILINE | re.IGNORECASE)


@dataclass(frozen=True)
class Declared:
    path: str
    key: str | int | None = None


def declared_files(params: dict[str, Any]) -> list[Declared]:
    """The files the config declares (malformed entries are skipped; `ledger rules` shows the shape)."""
    out = []
    for entry in params.get("files") or []:
        if isinstance(entry, str):
            out.append(Declared(entry.strip("/")))
        elif isinstance(entry, dict) and isinstance(entry.get("path"), str):
            out.append(Declared(entry["path"].strip("/"), entry.get("key")))
    return out


def page_declaration(text: str) -> tuple[bool, str | int | None]:
    """(keyed, key column) from a spec page's `keyed_tables` front matter."""
    try:
        front = dict(pages.front_matter(text).data)
    except ValueError:
        return False, None
    value = front.get("keyed_tables")
    if value is True:
        return True, None
    if isinstance(value, dict):
        return True, value.get("key")
    return False, None


def declared_changes(messages: str) -> dict[str | None, set[str]]:
    """path (None: any file) -> keys the range's commit messages declare changed."""
    out: dict[str | None, set[str]] = {}
    for m in _TRAILER.finditer(messages):
        value = m.group(1)
        path, sep, key = value.partition("#")
        if sep and path.strip().lower().endswith((".md", ".markdown")):
            out.setdefault(path.strip().strip("/"), set()).add(key.strip())
        else:
            out.setdefault(None, set()).add(value.strip())
    return out


@dataclass
class Comparison:
    unchanged: int  # keys whose rows are byte-identical
    changed: list[tuple[str, str, int]]  # (table, key, line in head)
    removed: list[tuple[str, str, int]]  # (table, key, line in base)
    added: int


def compare(base_text: str, head_text: str, key: str | int | None) -> Comparison:
    """Keyed rows of the base against the head, key by key (a key's rows as a multiset)."""
    before: dict[tuple[str, str], list[pages.KeyedRow]] = {}
    after: dict[tuple[str, str], list[pages.KeyedRow]] = {}
    for row in pages.keyed_rows(base_text, key):
        before.setdefault((row.table, row.key), []).append(row)
    for row in pages.keyed_rows(head_text, key):
        after.setdefault((row.table, row.key), []).append(row)
    unchanged = 0
    changed: list[tuple[str, str, int]] = []
    removed: list[tuple[str, str, int]] = []
    for k, rows in before.items():
        now = after.get(k)
        if not now:
            removed.append((k[0], k[1], rows[0].line))
            continue
        old_raw, new_raw = Counter(r.raw for r in rows), Counter(r.raw for r in now)
        if not (old_raw - new_raw):
            unchanged += 1  # every published row is still there, byte for byte (rows may be appended)
            continue
        gone = old_raw - new_raw
        if len(now) < len(rows):
            removed.append((k[0], k[1], next(r.line for r in rows if r.raw in gone)))
        else:
            fresh = new_raw - old_raw
            changed.append((k[0], k[1], next((r.line for r in now if r.raw in fresh), now[0].line)))
    added = sum(1 for k in after if k not in before)
    return Comparison(unchanged, changed, removed, added)


def check_file(path: str, base_text: str, head_text: str, key, allowed: set[str], emit) -> None:
    result = compare(base_text, head_text, key)
    for table, k, line in result.changed:
        if k in allowed:
            continue
        emit(
            "keyed-rows",
            path,
            f"row {k!r} of table [{_short(table)}] was rewritten ({result.unchanged} unrelated keys are "
            "byte-identical); published rows only grow",
            line=line,
            fix=f"restore the row and append a new one, or declare it: `Row-Changed: {path}#{k}` in the commit message",
        )
    for table, k, line in result.removed:
        emit(
            "keyed-rows",
            path,
            f"row {k!r} of table [{_short(table)}] was removed (base line {line}); published rows are never deleted",
            line=None,
            fix="restore the row; a row that no longer holds is corrected by a new row or a note beside it",
        )


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_unique_keys(path: str, text: str, key: str | int | None, emit) -> None:
    """keyed-unique: each key once per keyed table of the page (an empty key cell is no key)."""
    first: dict[tuple[str, str], int] = {}
    for row in pages.keyed_rows(text, key):
        if not row.key:
            continue
        where = (row.table, row.key)
        if where in first:
            emit(
                "keyed-unique",
                path,
                f"key {row.key!r} of table [{_short(row.table)}] is already the key of line {first[where]} "
                f"(lines {first[where]} and {row.line} share it)",
                line=row.line,
            )
        else:
            first[where] = row.line


def keyed_key(
    path: str, text: str, declared: dict[str, str | int | None], specs_rel: str
) -> tuple[bool, str | int | None]:
    """(keyed, key column) of a page: declared in ledger.yaml, or by a spec page's front matter."""
    if path in declared:
        return True, declared[path]
    if path.startswith(specs_rel + "/"):
        return page_declaration(text)
    return False, None
