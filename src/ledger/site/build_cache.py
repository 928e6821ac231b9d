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
work, never change what a build reports. Entries are plain tuples of strings, loaded with
`marshal` (data only; nothing in it runs) and checked for shape before use. A build keeps
only the entries it used, so the file stays the size of one site.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..checks.cache import code_fingerprint, read_entries, write_entries

CACHE_FORMAT = 1


def key(*parts: str) -> str:
    """The sha256 of `parts` (separated, so ("ab", "c") and ("a", "bc") differ)."""
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class BuildCache:
    """One generated-docs folder's remembered results: key -> tuple of strings."""

    def __init__(self, file: Path | None, fingerprint: str, entries: dict[str, tuple]):
        self.file = file
        self.fingerprint = fingerprint
        self.entries = entries
        self.used: dict[str, tuple] = {}
        self.hits = 0
        self.misses = 0

    @classmethod
    def open(cls, file: Path | None, settings: str = "") -> BuildCache:
        """The cache in `file` when it was written by this code under these `settings`; an
        empty one otherwise (and when `file` is None: a build that remembers nothing)."""
        fingerprint = key(str(CACHE_FORMAT), code_fingerprint(), settings)
        entries = read_entries(file, CACHE_FORMAT, fingerprint) if file is not None else {}
        return cls(file, fingerprint, entries)

    def get(self, digest: str) -> tuple | None:
        value = self.entries.get(digest)
        if value.__class__ is not tuple:
            self.misses += 1
            return None
        self.hits += 1
        self.used[digest] = value
        return value

    def put(self, digest: str, value: tuple) -> None:
        self.used[digest] = value

    def save(self) -> None:
        """Write the entries this build used or made, atomically; a cache that cannot be
        written is simply not written (the next build verifies everything again)."""
        if self.file is None or self.used == self.entries:
            return
        write_entries(self.file, CACHE_FORMAT, self.fingerprint, self.used)
