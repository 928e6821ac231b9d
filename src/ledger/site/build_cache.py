"""What a site build remembers between builds: results that depend only on what they were
computed from, keyed by a digest of exactly that.

Records are immutable, so a push of ten records leaves almost every generated page as it
was. A page whose text, settings and evidence are the ones a build verified before need not
be verified again: the page rules' verdict on it is looked up by the sha256 of everything
that verdict reads (`key`).

The cache lives beside the build lock, in the repository's git folder (`.git/ledger/`,
else the user's cache folder): outside the work tree and outside history, one file per
generated-docs folder. It is safe to delete at any time; a damaged or foreign file, or one
written by other ledger code (`code_fingerprint`), is ignored, so a cache can only spare
work, never change what a build reports.

The file is an SQLite database of entries, each one row, read when a build asks for it and
written when a build makes it: a build holds in memory only the keys it used, never every
page's HTML (a 100,000-record site has tens of thousands of pages). Each row's key folds in
the code's fingerprint and the settings, so another code's or setting's entries simply never
match. Values are plain tuples of strings stored with `marshal` (data only; nothing in it
runs) and checked for shape before use. A build's writes are one transaction, committed when
the build's step succeeded (`save`), which also drops the rows that build did not use, so
the file stays the size of one site; an interrupted build leaves the previous cache as it
was (SQLite rolls the transaction back).
"""

from __future__ import annotations

import hashlib
import marshal
import sqlite3
from pathlib import Path

from ..checks.cache import code_fingerprint

CACHE_FORMAT = 2  # 2: SQLite, one row an entry (1: one marshal dict)


def key(*parts: str) -> str:
    """The sha256 of `parts` (separated, so ("ab", "c") and ("a", "bc") differ)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


def _connect(file: Path) -> sqlite3.Connection | None:
    """The cache database in `file`, made when absent; None when it is a symlink (never
    followed) or cannot be opened. A damaged or foreign file is replaced by an empty one:
    it is ledger's own cache, outside the work tree, and only spares work."""
    if file.is_symlink():
        return None
    for attempt in range(2):
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(file, timeout=60, isolation_level=None, check_same_thread=False)
            db.execute("CREATE TABLE IF NOT EXISTS entries (k TEXT PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
            db.execute("SELECT k, v FROM entries LIMIT 1").fetchall()
            return db
        except sqlite3.DatabaseError:
            if attempt == 0:
                try:
                    file.unlink()
                except OSError:
                    return None
        except OSError:
            return None
    return None


class BuildCache:
    """One generated-docs folder's remembered results: key -> tuple of strings."""

    def __init__(self, file: Path | None, fingerprint: str):
        self.file = file
        self.fingerprint = fingerprint
        self.db = _connect(file) if file is not None else None
        #: The keys this build used or made (only the keys: the values stay on disk).
        self.used: set[str] = set()
        self.writing = False
        self.hits = 0
        self.misses = 0

    @classmethod
    def open(cls, file: Path | None, settings: str = "") -> BuildCache:
        """The cache in `file`, answering only what this code remembered under these
        `settings`; None for `file`: a build that remembers nothing."""
        return cls(file, key(str(CACHE_FORMAT), code_fingerprint(), settings))

    def _row(self, digest: str) -> str:
        return key(self.fingerprint, digest)

    def get(self, digest: str) -> tuple | None:
        value = None
        row_key = self._row(digest)
        if self.db is not None:
            try:
                row = self.db.execute("SELECT v FROM entries WHERE k = ?", (row_key,)).fetchone()
                value = marshal.loads(row[0]) if row is not None else None
            except (sqlite3.Error, ValueError, EOFError, TypeError):
                value = None
        if value.__class__ is not tuple:
            self.misses += 1
            return None
        self.hits += 1
        self.used.add(row_key)
        return value

    def put(self, digest: str, value: tuple) -> None:
        if self.db is None:
            return
        row_key = self._row(digest)
        try:
            if not self.writing:
                self.db.execute("BEGIN IMMEDIATE")
                self.writing = True
            self.db.execute("INSERT OR REPLACE INTO entries (k, v) VALUES (?, ?)", (row_key, marshal.dumps(value)))
            self.used.add(row_key)
        except (sqlite3.Error, ValueError):
            self.close()

    def save(self) -> None:
        """Commit the entries this build made and drop those it did not use; a cache that
        cannot be written is simply not written (the next build verifies everything again)."""
        if self.db is None:
            return
        try:
            if not self.writing:
                self.db.execute("BEGIN IMMEDIATE")
                self.writing = True
            self.db.execute("CREATE TEMP TABLE IF NOT EXISTS kept (k TEXT PRIMARY KEY) WITHOUT ROWID")
            self.db.execute("DELETE FROM kept")
            self.db.executemany("INSERT OR IGNORE INTO kept (k) VALUES (?)", ((k,) for k in self.used))
            self.db.execute("DELETE FROM entries WHERE k NOT IN (SELECT k FROM kept)")
            self.db.execute("COMMIT")
            self.writing = False
        except sqlite3.Error:
            pass
        self.close()

    def close(self) -> None:
        """Let go of the file; what was not saved is rolled back."""
        if self.db is not None:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
            self.db = None
            self.writing = False
