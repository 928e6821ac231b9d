"""A check that remembers: records never change, so a record file whose git blob was verified
under the same ledger code and the same file rules need not be parsed again.

The cache maps each path in the records folder to the git blob id it had and what
`inspect_file` found in that blob: its violations and the small `Info` the cross-record
rules read. It lives in the repository's git directory (`.git/ledger/check-cache`), outside
the work tree and outside history; it is safe to delete at any time, and a damaged or
foreign file is ignored (a cache can only skip work, never change a verdict).

What makes a hit trustworthy:
- the blob id is the one git computed from the file's bytes (content-addressed), taken from
  the index for files `git diff-files` reports as unmodified; a modified, untracked,
  conflicted or symlinked file is never looked up: it is inspected in full;
- the cache file carries a fingerprint of every source file of the `ledger` package, the
  file rules' severities and parameters and the records folder; any change empties it;
- entries are plain tuples loaded with `marshal` (data only: nothing in it is executed) and
  checked for shape before use.

Cross-record rules (unique ids and keys, references, SHAs, comparability) always run on
the full set of `Info`s: a cached file is only spared its parse and validation.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from dataclasses import astuple
from pathlib import Path

from ..git import Git, GitError
from .info import Info
from .records import FileRules
from .result import Violation

CACHE_FORMAT = 4  # 4: Info carries an issue's status; 3: Info carries n; 2: entries keyed by path, the blob id inside (1: keyed by 'blob path')
_INFO_FIELDS = len(Info._fields)
_make_info = Info._make
_PACKAGE = Path(__file__).resolve().parents[1]
_code_fingerprint: str | None = None


def read_entries(file: Path, fmt: int, fingerprint: str) -> dict[str, tuple]:
    """The entries of a marshal cache file written in format `fmt` under `fingerprint`; none
    when it is absent, a symlink (never followed), damaged, or another code's or setting's."""
    try:
        if file.is_file() and not file.is_symlink():
            loaded = marshal.loads(file.read_bytes())
            if (
                isinstance(loaded, tuple)
                and len(loaded) == 3
                and loaded[0] == fmt
                and loaded[1] == fingerprint
                and isinstance(loaded[2], dict)
            ):
                return loaded[2]
    except (OSError, ValueError, EOFError, TypeError):
        pass
    return {}


def write_entries(file: Path, fmt: int, fingerprint: str, entries: dict[str, tuple]) -> None:
    """Write a cache file atomically; one that cannot be written is simply not written (the
    next run verifies everything again)."""
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        tmp = file.with_name(f".{file.name}.{os.getpid()}.tmp")
        tmp.write_bytes(marshal.dumps((fmt, fingerprint, entries)))
        os.replace(tmp, file)
    except (OSError, ValueError):
        return


def code_fingerprint() -> str:
    """sha256 over the bytes of every module of the installed `ledger` package (about 100
    small files, a few milliseconds): a changed rule, schema or parser empties the cache
    even when the version number did not move (editable installs, development)."""
    global _code_fingerprint
    if _code_fingerprint is None:
        digest = hashlib.sha256()
        for path in sorted(_PACKAGE.rglob("*.py")):
            digest.update(path.relative_to(_PACKAGE).as_posix().encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
        _code_fingerprint = digest.hexdigest()
    return _code_fingerprint


def rules_fingerprint(rules: FileRules) -> str:
    text = repr((CACHE_FORMAT, sorted(rules.severity.items()), sorted((k, repr(v)) for k, v in rules.params.items())))
    return hashlib.sha256(f"{code_fingerprint()}\0{text}\0{rules.prefix}".encode()).hexdigest()


#: How git decides a file is unmodified, pinned for the cache's reads: a repository's own
#: config must not make an edited file read as clean (ctime not trusted, stat checks
#: relaxed or skipped, an fsmonitor hook answering "nothing changed").
HONEST_STAT = (
    "-c",
    "core.trustctime=true",
    "-c",
    "core.checkStat=default",
    "-c",
    "core.ignoreStat=false",
    "-c",
    "core.fsmonitor=false",
)


def clean_blobs(records_dir: Path) -> dict[str, str]:
    """Path (relative to the records folder) -> blob id, for regular files whose work-tree
    bytes git reports as equal to the index. Empty when the folder is not in a git work tree."""
    git = Git(records_dir)
    try:
        staged = git.run(*HONEST_STAT, "ls-files", "-s", "-v", "-z", "--", ".")
        modified = git.run(*HONEST_STAT, "diff-files", "--name-only", "--relative", "-z", "--", ".")
    except (GitError, OSError):
        return {}
    dirty = set(modified.decode("utf-8", "surrogateescape").split("\0"))
    blobs: dict[str, str] = {}
    for entry in staged.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        meta, _, path = entry.partition("\t")
        tag, mode, blob, stage = meta.split(" ")
        # Tag "H" only: a file marked assume-unchanged ("h") or skip-worktree ("S") is one
        # whose edits git stops looking at, so its work-tree bytes are unknown to the index.
        # Regular files at stage 0 only: a symlink (120000), a submodule or a conflict is
        # never answered from the cache.
        if tag == "H" and stage == "0" and mode in ("100644", "100755") and path not in dirty:
            blobs[path] = blob
    return blobs


def _shared(fields: tuple, memo: dict) -> tuple:
    """`fields` with each string or tuple field replaced by the memo's equal object. One level
    deep: an equal tuple (the same references, keys, tags) is shared whole, and hashing a tuple
    is done in C, where walking every nested value in Python cost 45 us a record."""
    return tuple(memo.setdefault(f, f) if f.__class__ is str or f.__class__ is tuple else f for f in fields)


def _unpack(entry: tuple) -> tuple[list[Violation], Info | None] | None:
    """An entry's (violations, info), or None when it has not the shape this version writes."""
    try:
        _, raw_violations, raw_info = entry
        violations = [Violation(*v) for v in raw_violations] if raw_violations else []
        if raw_info is None:
            return violations, None
        if len(raw_info) != _INFO_FIELDS:
            return None
        return violations, _make_info(raw_info)
    except (TypeError, ValueError):
        return None


class VerificationCache:
    def __init__(self, file: Path | None, fingerprint: str, entries: dict[str, tuple]):
        self.file = file
        self.fingerprint = fingerprint
        self.entries = entries
        self.fresh: dict[str, tuple] = {}
        self.hits = 0
        self.pruned = False
        #: One object per distinct value: marshal writes a repeated object once and loads
        #: it once (the same commit, contract and allocation recur in most records).
        self.memo: dict = {}

    @classmethod
    def open(cls, git: Git, rules: FileRules) -> VerificationCache:
        fingerprint = rules_fingerprint(rules)
        try:
            git_dir = Path(git.text("rev-parse", "--absolute-git-dir"))
        except (GitError, OSError):
            return cls(None, fingerprint, {})
        file = git_dir / "ledger" / "check-cache"
        return cls(file, fingerprint, read_entries(file, CACHE_FORMAT, fingerprint))

    def answer(
        self, paths: list[str], blobs: dict[str, str]
    ) -> tuple[dict[str, tuple[list[Violation], Info | None]], list[str]]:
        """What the cache knows of `paths` (path -> (violations, info)) and the paths it cannot
        answer; forgets entries of files gone from the ledger or changed. Runs once per record
        on every check: the common entry (a clean record) is unpacked inline."""
        entries = self.entries
        make = _make_info
        width = _INFO_FIELDS
        found: dict[str, tuple[list[Violation], Info | None]] = {}
        misses: list[str] = []
        for path in paths:
            blob = blobs.get(path)
            entry = entries.get(path) if blob is not None else None
            if entry.__class__ is not tuple or len(entry) != 3 or entry[0] != blob:
                misses.append(path)
                continue
            info = entry[2]
            if not entry[1] and info.__class__ is tuple and len(info) == width:
                found[path] = ([], make(info))
                continue
            hit = _unpack(entry)
            if hit is None:
                misses.append(path)
            else:
                found[path] = hit
        self.hits += len(found)
        if len(found) != len(entries):
            # Entries of removed files, of changed blobs and of shapes not ours are dropped.
            self.entries = {p: entries[p] for p in found}
            self.pruned = True
        return found, misses

    def put(self, path: str, blob: str, violations: list[Violation], info: Info | None) -> None:
        self.fresh[path] = (
            blob,
            tuple(_shared(astuple(v), self.memo) for v in violations),
            _shared(tuple(info), self.memo) if info is not None else None,
        )

    def save(self) -> None:
        """Write what this run verified (entries of files gone from the ledger are dropped),
        atomically; a cache that cannot be written is simply not written."""
        if self.file is None or not (self.fresh or self.pruned):
            return
        write_entries(self.file, CACHE_FORMAT, self.fingerprint, {**self.entries, **self.fresh})
