"""Which documents the page rules guard: the spec pages (config `specs`), every document
`guard:` names in ledger.yaml (a file, a folder, or a glob such as `docs/*.md` or
`docs/**/*.md`), and the files `keyed-rows` declares. One answer for every mode: `check
--all` reads these paths from disk, a range (`--base`, `--pre-push`, `--pushed`) from its
commits, so a push the hook passes is never refused by CI's check of the same tree.

Paths are relative to the ledger's root (the folder holding ledger.yaml), with "/".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from ..config import guard_entry_problem
from .keyedrows import declared_files

#: A page is a Markdown file.
PAGE_SUFFIXES = (".md", ".markdown")
_GLOB = re.compile(r"[*?\[]")


def is_page(path: str) -> bool:
    return path.lower().endswith(PAGE_SUFFIXES)


def _norm(entry: str) -> str:
    parts = [p for p in PurePosixPath(entry.strip()).parts if p != "."]
    return "/".join(parts)


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """`*` and `?` within one path part, `[...]` a class, `**` any number of parts."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out))


@dataclass(frozen=True)
class Guarded:
    """The documents a check reads: the page rules' (the specs folder and the `guard:` entries:
    files, folders, globs) and the keyed tables' (`keyed`, the files keyed-rows declares)."""

    specs: str
    entries: tuple[str, ...] = ()
    keyed: tuple[str, ...] = ()

    @classmethod
    def of(cls, specs: str, guard: Iterable[str], keyed: Iterable[str] = ()) -> Guarded:
        def clean(items: Iterable[str]) -> tuple[str, ...]:
            kept = [_norm(e) for e in items if isinstance(e, str) and guard_entry_problem(e) is None]
            return tuple(dict.fromkeys(e for e in kept if e))

        return cls(_norm(specs), clean(guard), clean(keyed))

    def covers(self, path: str) -> bool:
        """Whether the page rules (cell width, prose, owed items, figures) judge `path`."""
        if not is_page(path):
            return False
        if self.specs and path.startswith(self.specs + "/"):
            return True
        for entry in self.entries:
            if _GLOB.search(entry):
                if _glob_regex(entry).fullmatch(path):
                    return True
            elif path == entry or path.startswith(entry + "/"):
                return True
        return False

    def reads(self, path: str) -> bool:
        """Whether a check reads `path`: a guarded document or a declared keyed table."""
        return self.covers(path) or path in self.keyed

    def roots(self) -> list[str]:
        """The folders and files to list to find every guarded document: the specs folder and
        each entry's part before its first wildcard ("" for the whole repository)."""
        out = [self.specs, *self.keyed]
        for entry in self.entries:
            m = _GLOB.search(entry)
            if m is None:
                out.append(entry)
                continue
            head = entry[: m.start()]
            out.append(head.rsplit("/", 1)[0] if "/" in head else "")
        # A root under another root is listed by it.
        roots = sorted(set(out), key=len)
        kept: list[str] = []
        for r in roots:
            if any(k == "" or r == k or r.startswith(k + "/") for k in kept):
                continue
            kept.append(r)
        return kept


def guarded_of(config, keyed_params: dict | None, head=None) -> Guarded:
    """The documents a check with `config` (and keyed-rows' params, None when it is off)
    guards; with `head` (a range's head config), also the specs folder and `guard:` entries
    the head names, which CI's `--all` of the head reads."""
    keyed = [d.path for d in declared_files(keyed_params)] if keyed_params is not None else []
    specs = PurePosixPath(config.specs).as_posix().strip("/")
    extra: list[str] = []
    if head is not None:
        extra = [PurePosixPath(head.specs).as_posix().strip("/"), *head.guard]
    return Guarded.of(specs, [*(getattr(config, "guard", None) or []), *extra], keyed)


def base_guarded(config) -> Guarded | None:
    """What the base side's committed config guarded (its specs folder, `guard:` entries and
    keyed-rows files as written), or None when the base has no config."""
    if config is None:
        return None
    keyed = config.rules.get("keyed-rows")
    on = isinstance(keyed, dict) and keyed.get("severity") != "off"
    return guarded_of(config, keyed if on else None)
