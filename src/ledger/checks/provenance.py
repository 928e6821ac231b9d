"""Provenance rules: a record names what was measured, never where a checkout lived.

A local folder in a record (`source.repo` written as a path by older versions, a home
directory inside a command line or an importer's field) puts a user's home onto the
published site and makes two machines that measured the same commit look like two sources.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..store.stamps import is_local_path
from .result import WARNING
from .rule import Rule

#: The rules of this family, as data (ledger.checks.registry lists the families).
RULES: tuple[Rule, ...] = (
    Rule(
        "local-path",
        "provenance",
        WARNING,
        "A record carries an absolute local path: `source.repo` naming a folder instead of a "
        "repository, or a home directory (`/home/NAME/`, `/Users/NAME/`, `/root/`, `C:\\Users\\`) "
        "inside a field. It names one machine's folder, not what was measured.",
        "Records are append-only: leave this one, and stamp new ones with this version of ledger "
        "(`source.repo` is the remote URL or `git-root:<sha>`); write paths relative to the "
        "measured repository. The site never prints such paths.",
    ),
)

#: Home folders of Linux, macOS and Windows; system paths (/usr/bin/python) name no user.
_HOME = re.compile(r"(?:^|[\s='\"(:,])(/home/[^/\s]+|/Users/[^/\s]+|/root(?=/|$|\s)|[A-Za-z]:\\Users\\[^\\\s]+)")
_HOME_BYTES = (b"/home/", b"/Users/", b"/root", b":\\\\Users")


def _strings(node: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from _strings(value, f"{where}.{key}" if where else str(key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _strings(value, f"{where}[{i}]")


def _foreign(data: dict[str, Any]) -> tuple[str, ...]:
    """Prefixes of the fields an importer marked (`extra.foreign`) as the measuring tool's own metadata, kept
    as the tool wrote it (pyperf's python_executable on the measuring machine): not ledger's stamp,
    so not this rule's; the site's publication rule still hides the home folders in them. Only
    fields under `extra.` can be marked."""
    extra = data.get("extra")
    marked = extra.get("foreign") if isinstance(extra, dict) else None
    if not isinstance(marked, list):
        return ()
    fields = [f for f in marked if isinstance(f, str) and f.startswith("extra.") and f != "extra."]
    return tuple(p for f in fields for p in (f + ".", f + "["))


def local_paths(data: dict[str, Any], raw: bytes) -> list[tuple[str, str]]:
    """(field, text) for every absolute local path in a parsed record; `raw` is its bytes,
    used to skip the walk for the records (nearly all) that hold no home folder."""
    found: list[tuple[str, str]] = []
    source = data.get("source")
    repo = source.get("repo") if isinstance(source, dict) else None
    if isinstance(repo, str) and is_local_path(repo):
        found.append(("source.repo", repo))
    if any(marker in raw for marker in _HOME_BYTES):
        foreign = _foreign(data)
        for where, text in _strings(data, ""):
            if where == "source.repo" or (foreign and where.startswith(foreign)):
                continue
            match = _HOME.search(text)
            if match:
                found.append((where, match.group(1)))
    return found
