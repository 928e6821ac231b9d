"""A tree of records: the records folder on disk, or as a git commit holds it.

The cross-record rules read what they need (the records holding a key, a referenced record,
an attachment, the index of a kind's keys) through `RecordTree`, so a rule never asks
whether it runs over the work tree (`--all`, `ledger add`) or over a pushed commit.
Paths are relative to the records folder ("issue/01/01J....json").
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Protocol

from ..git import EMPTY_TREE, Git, GitError
from ..schema.registry import KINDS
from ..store.ledger import Ledger, lstat_chain, shard_of, symlink_error
from .cache import HONEST_STAT
from .keyindex import key_index, key_values


class RecordTree(Protocol):
    def read(self, paths: list[str]) -> list[bytes | None]:
        """The bytes of each file, None where there is none."""
        ...

    def attachment(self, rel: str) -> tuple[str | None, bytes]:
        """(why it cannot be read, or None; its bytes) of an attachment."""
        ...

    def find(self, ids: set[str]) -> dict[str, tuple[str, bytes]]:
        """id -> (path, bytes) of the record files of these ids, whatever their kind."""
        ...

    def keys(self, kind: str, fields: tuple[str, ...], index: str | None = None) -> dict[str, list[str]]:
        """key ("number=1044") -> paths (relative to the kind's folder) of the `kind` records
        holding it, for the record fields `fields`; `index` names a cached index (a kind's own
        by default)."""
        ...


def read_fs(root: Path, rel: str) -> tuple[str | None, bytes]:
    """(why it cannot be read, or None; its bytes) of `rel` under `root`: never through a link."""
    path = root / rel
    if path.is_symlink():
        return "is a symlink", b""
    if not path.exists():
        return "is missing", b""
    if not path.is_file():
        return "is not a regular file", b""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return "resolves outside the records folder", b""
    return None, path.read_bytes()


class DiskTree:
    """The records folder of a ledger on disk, as it stands."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self.root = ledger.records_dir

    def read(self, paths: list[str]) -> list[bytes | None]:
        out: list[bytes | None] = []
        for p in paths:
            try:
                out.append((self.root / p).read_bytes())
            except OSError:
                out.append(None)
        return out

    def attachment(self, rel: str) -> tuple[str | None, bytes]:
        return read_fs(self.root, rel)

    def find(self, ids: set[str]) -> dict[str, tuple[str, bytes]]:
        out = {}
        for rid in ids:
            path = self.ledger.find(rid)
            if path is not None:
                out[rid] = (path.relative_to(self.root).as_posix(), path.read_bytes())
        return out

    def keys(self, kind: str, fields: tuple[str, ...], index: str | None = None) -> dict[str, list[str]]:
        """From the key index of the records committed at HEAD (checks/keyindex.py), brought
        to the work tree by reading only the files git reports as differing from HEAD,
        untracked (ignored ones included) or not trusted by the index (assume-unchanged,
        skip-worktree); every record file read when the folder is not in a git work tree."""
        folder = self.root / kind
        found = None
        if folder.is_dir() and not folder.is_symlink() and lstat_chain(self.ledger.root, folder) is None:
            found = self._indexed(folder, kind, fields, index)
        return found if found is not None else self._scanned(kind, fields)

    def _indexed(
        self, folder: Path, kind: str, fields: tuple[str, ...], index: str | None
    ) -> dict[str, list[str]] | None:
        git = Git(folder)
        try:
            if not git.ok("rev-parse", "--verify", "--quiet", "HEAD^{commit}"):
                return None
            top = git.toplevel
            rel = folder.resolve().relative_to(top.resolve()).as_posix()
            # Its own cache file: the range checks index the same folder at other commits.
            committed = key_index(Git(top), "HEAD", rel, f"worktree-{index or kind}", fields)
            changed = git.run(
                *HONEST_STAT, "diff-index", "--name-only", "--no-renames", "-z", "--relative", "HEAD", "--", "."
            )
            tagged = git.run("ls-files", "-v", "-z", "--", ".")
            others = git.run("ls-files", "--others", "-z", "--", ".")
        except (GitError, OSError, ValueError):
            return None
        stale = {p for p in _names(changed) + _names(others) if p}
        stale.update(e[2:] for e in _names(tagged) if e and not e.startswith("H "))
        keys: dict[str, list[str]] = {}
        for key, paths in committed.items():
            kept = [p for p in paths if p not in stale and _RECORD_FILE.fullmatch(p)]
            if kept:
                keys[key] = kept
        for p in sorted(stale):
            path = folder / p
            if not _RECORD_FILE.fullmatch(p) or not os.path.lexists(path):
                continue
            if path.is_symlink() or path.parent.is_symlink():
                raise symlink_error(self.ledger.shown(path))
            try:
                raw = path.read_bytes()
            except OSError:
                continue
            for key in key_values(raw, fields):
                keys.setdefault(key, []).append(p)
        return keys

    def _scanned(self, kind: str, fields: tuple[str, ...]) -> dict[str, list[str]]:
        keys: dict[str, list[str]] = {}
        base = self.root / kind
        for path in self.ledger.iter_paths(kind):
            try:
                data = json.loads(path.read_bytes())
            except (OSError, ValueError):
                continue  # schema-valid reports it at check
            if not isinstance(data, dict):
                continue
            for name in fields:
                if name in data:
                    key = f"{name}={json.dumps(data[name], sort_keys=True)}"
                    keys.setdefault(key, []).append(path.relative_to(base).as_posix())
        return keys


class CommitTree:
    """The records folder as a commit holds it (`folder`: its path in the repository, with a
    trailing "/"); read in batches through `git cat-file`."""

    def __init__(self, git: Git, commit: str, folder: str):
        self.git = git
        self.commit = commit
        self.folder = folder

    def spec(self, rel: str) -> str:
        return f"{self.commit}:{self.folder}{rel}"

    def read(self, paths: list[str]) -> list[bytes | None]:
        blobs = self.git.read_blobs([self.spec(p) for p in paths])
        return [blobs.get(self.spec(p)) for p in paths]

    def attachment(self, rel: str) -> tuple[str | None, bytes]:
        full = f"{self.folder}{rel}"
        mode = self.git.text("ls-tree", self.commit, "--", full, check=False).split(" ")[0]
        if not mode:
            return "is missing", b""
        if mode == "120000":
            return "is a symlink", b""
        if mode != "100644" and mode != "100755":
            return "is not a regular file", b""
        return None, self.git.read_blobs([self.spec(rel)])[self.spec(rel)] or b""

    def find(self, ids: set[str]) -> dict[str, tuple[str, bytes]]:
        found = self.git.read_blobs([self.spec(record_path(k, rid)) for rid in ids for k in KINDS])
        out = {}
        for rid in ids:
            for k in KINDS:
                raw = found.get(self.spec(record_path(k, rid)))
                if raw is not None:
                    out[rid] = (record_path(k, rid), raw)
                    break
        return out

    def has(self, ids: set[str]) -> dict[str, set[str]]:
        """id -> the kinds under whose folders a file of that id exists."""
        found = self.git.read_blobs([self.spec(record_path(k, rid)) for rid in ids for k in KINDS])
        return {rid: {k for k in KINDS if found.get(self.spec(record_path(k, rid))) is not None} for rid in ids}

    def keys(self, kind: str, fields: tuple[str, ...], index: str | None = None) -> dict[str, list[str]]:
        if self.commit == EMPTY_TREE:
            return {}
        return key_index(self.git, self.commit, f"{self.folder}{kind}", index or kind, fields)


#: A record file's path inside its kind's folder, as `Ledger.iter_paths` finds them.
_RECORD_FILE = re.compile(r"[^/]+/[^/.][^/]*\.json")


def _names(out: bytes) -> list[str]:
    return out.decode("utf-8", "surrogateescape").split("\0")


def record_path(kind: str, rid: str) -> str:
    """Where the record `rid` of `kind` lives, relative to the records folder."""
    return f"{kind}/{shard_of(rid)}/{rid}.json"
