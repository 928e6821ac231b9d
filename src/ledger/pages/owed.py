"""Owed items of spec pages: rows and items under an Owed section, and `owed:` in front matter.

spec_owed(name, body, front) -> [SpecOwed]   one page already read
read_spec_owed(specs_dir)    -> ([SpecOwed], [unreadable page paths])
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..store.ledger import UnreadableRecord, read_nofollow, walk_nofollow
from .frontmatter import front_matter
from .markdown import owed_items


@dataclass(frozen=True)
class SpecOwed:
    text: str
    owner: str | None
    issues: tuple[int, ...]
    spec: str  # the page's name under the specs folder, without .md


def spec_owed(name: str, body: str, front: Any) -> list[SpecOwed]:
    out = [SpecOwed(item.text, item.owner, tuple(item.issues), name) for item in owed_items(body, body=True)]
    entries = (front or {}).get("owed") or [] if isinstance(front, dict) else []
    for entry in entries if isinstance(entries, list) else [entries]:
        entry = entry if isinstance(entry, dict) else {"item": entry}
        issue = entry.get("issue")
        issues = (int(issue),) if isinstance(issue, int) or (isinstance(issue, str) and issue.isdigit()) else ()
        text = entry.get("item") or entry.get("text") or ""
        out.append(SpecOwed(str(text), entry.get("owner") or None, issues, name))
    return out


def read_spec_owed(specs_dir: Path) -> tuple[list[SpecOwed], list[str]]:
    """Owed items of every `*.md` under `specs_dir`; pages whose front matter does not parse
    are returned apart (`ledger check` reports them), not raised."""
    found: list[SpecOwed] = []
    unreadable: list[str] = []
    if not specs_dir.is_dir():
        return found, unreadable

    files, links = walk_nofollow(specs_dir)
    # A symlinked page is never followed (`ledger check` reports it, rule symlinks).
    unreadable.extend(str(p) for p in links if p.suffix == ".md")
    for path in (p for p in files if p.suffix == ".md"):
        name = path.relative_to(specs_dir).with_suffix("").as_posix()
        try:
            fm = front_matter(read_nofollow(str(path), 1 << 24).decode("utf-8"))
        except (ValueError, UnicodeDecodeError, UnreadableRecord, OSError):
            unreadable.append(str(path))
            continue
        found.extend(spec_owed(name, fm.body, fm.data))
    return found, unreadable
