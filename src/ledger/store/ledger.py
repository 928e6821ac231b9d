"""The ledger on disk: one canonical JSON file per record under records/KIND/SHARD/ID.json.

Writes are atomic (temporary file, flush, a rename into place that refuses to replace
anything, so nothing is ever overwritten) and coordination-free (ids are ULIDs), so many
processes can append at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..config import CONFIG_NAME, Config, find_root, load_config
from ..errors import NotFound, WriteError
from ..schema.envelope import Envelope
from ..schema.migrate import upgrade
from ..schema.registry import KINDS, model_for
from .add import Batch, Stamping
from .canonical import canonical_bytes
from .ids import is_id

TMP_PREFIX = ".tmp-"
#: Folder inside the records folder holding compact attachments (never a kind).
ATTACHMENTS = "attachments"
#: Batches larger than this are made durable by one syncfs() of the ledger's file system
#: rather than one fsync() per file.
BULK_SYNC_THRESHOLD = 32


def shard_of(record_id: str) -> str:
    # The last two characters are random, so records spread evenly over 1,024 folders
    # and no git tree object grows with the ledger.
    return record_id[-2:].lower()


@dataclass
class Ledger:
    """A ledger rooted at the folder holding `ledger.yaml`."""

    root: Path
    config: Config = field(default_factory=Config)

    @classmethod
    def open(cls, start: Path | str | None = None) -> Ledger:
        start_path = Path(start) if start is not None else Path.cwd()
        root = find_root(start_path)
        if root is None:
            raise NotFound(
                f"no {CONFIG_NAME} at or above {start_path.resolve()}; run `ledger init` or pass --ledger DIR"
            )
        return cls(root=root, config=load_config(root))

    @property
    def records_dir(self) -> Path:
        return self.root / self.config.records

    @property
    def specs_dir(self) -> Path:
        return self.root / self.config.specs

    # -- paths -----------------------------------------------------------------------------

    def path_for(self, kind: str, record_id: str) -> Path:
        return Path(self.path_str(kind, record_id))

    def path_str(self, kind: str, record_id: str) -> str:
        # Plain strings on the write path: pathlib's parsing cost more than the write itself.
        return f"{self._records_str}/{kind}/{shard_of(record_id)}/{record_id}.json"

    @property
    def _records_str(self) -> str:
        return str(self.records_dir)

    def find(self, record_id: str) -> Path | None:
        """The file of a record id, whatever its kind (one stat per kind)."""
        if not is_id(record_id):
            return None
        for kind in KINDS:
            path = self.path_for(kind, record_id)
            if path.is_file():
                return path
        return None

    def exists(self, record_id: str) -> bool:
        return self.find(record_id) is not None

    def resolve_id(self, text: str) -> str:
        """A full id from a full id or a unique prefix (like git's abbreviated SHAs)."""
        text = text.strip().upper()
        if is_id(text) and self.exists(text):
            return text
        matches = [p.stem for p in self.iter_paths() if p.stem.startswith(text)] if len(text) >= 4 else []
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise NotFound(f"id prefix {text!r} is ambiguous: {len(matches)} records match; give more characters")
        raise NotFound(f"no record {text!r} in {self.records_dir}; `ledger list` shows the ids")

    def iter_paths(self, kind: str | None = None) -> Iterator[Path]:
        # Only folders named after kinds hold records (attachments/ lives beside them).
        kinds = [kind] if kind else sorted(KINDS)
        for k in kinds:
            base = self.records_dir / k
            if not base.is_dir():
                continue
            for shard in sorted(os.scandir(base), key=lambda e: e.name):
                if not shard.is_dir():
                    continue
                for entry in os.scandir(shard.path):
                    if entry.name.endswith(".json") and not entry.name.startswith("."):
                        yield Path(entry.path)

    # -- reading ---------------------------------------------------------------------------

    def read_raw(self, path: Path) -> dict[str, Any]:
        return json.loads(path.read_bytes())

    def load(self, path: Path) -> Envelope:
        data = upgrade(self.read_raw(path))
        return model_for(data["kind"]).model_validate(data)

    def get(self, record_id: str) -> Envelope:
        path = self.find(self.resolve_id(record_id))
        if path is None:
            raise NotFound(f"no record {record_id!r}")
        return self.load(path)

    def records(self, kind: str | None = None) -> list[Envelope]:
        """Every record (of one kind), oldest first by when the evidence was taken."""
        out = [self.load(p) for p in self.iter_paths(kind)]
        out.sort(key=lambda r: (r.when, r.id))
        return out

    # -- writing ---------------------------------------------------------------------------

    @contextmanager
    def batch(
        self,
        stamping: Stamping | None = None,
        *,
        now: datetime | None = None,
        durable: bool = True,
        dry_run: bool = False,
    ) -> Iterator[Batch]:
        """Records added together, written all or none: the one way records get into a ledger.

            with ledger.batch(stamping) as batch:
                arms = batch.add("measurement", items)           # validated, ids assigned
                batch.add("sandwich", [Item({..., "control_a": arms[0].id, ...}, "<run>", None)])
            batch.records, batch.paths                           # sealed and written on leaving

        Records may point at records of the same batch. On leaving the block every reference
        is checked, every record sealed, and all are written by one atomic `write`; an
        exception inside the block (or an InputError from `add`) leaves nothing behind.
        With dry_run, everything is checked and sealed but nothing is written.
        """
        batch = Batch(self, stamping, now=now)
        yield batch
        batch.commit(durable=durable, dry_run=dry_run)

    def write(self, records: Iterable[dict[str, Any]], *, durable: bool = True) -> list[Path]:
        """Write sealed, validated record dicts. All or nothing: on failure, written files are removed.

        Every record is first written and flushed to a temporary file beside its final
        path; only then are all of them linked into place. A kill at any point leaves
        either nothing or whole records.
        """
        staged: list[tuple[str, str]] = []
        linked: list[str] = []
        pid = os.getpid()
        try:
            jobs = [(self.path_str(r["kind"], r["id"]), canonical_bytes(r)) for r in records]
            _make_folders({os.path.dirname(path) for path, _ in jobs})
            staged = [(path, f"{os.path.dirname(path)}/{TMP_PREFIX}{os.path.basename(path)}.{pid}") for path, _ in jobs]
            # A large batch is flushed by one syncfs() of the records' file system instead of
            # one fsync per file: the disk then commits the whole batch in one journal
            # transaction. Never os.sync(), which flushes every file system of the machine
            # (a node writing checkpoints would stall the add). Without syncfs: per-file fsync.
            bulk = len(jobs) > BULK_SYNC_THRESHOLD and _SYNCFS is not None
            for (_, data), (_, tmp) in zip(jobs, staged):
                _write_tmp(tmp, data, durable and not bulk)
            if durable and bulk:
                _syncfs(self._records_str)
            for path, tmp in staged:
                # Never replaces an existing file: a record is never overwritten.
                _place(tmp, path)
                linked.append(path)
            folders = {os.path.dirname(path) for path in linked}
            if durable:
                for folder in folders:
                    _fsync_dir(folder)
            for folder in folders:
                _sweep_stale_tmp(folder)
        except OSError as exc:
            for path in linked:
                _unlink(path)
            raise WriteError(
                f"could not write to {self.records_dir}: {_reason(exc)}; nothing was written. "
                "Free space or fix the folder's permissions, then add again."
            ) from None
        finally:
            # Only what was not moved into place is left to remove.
            for _, tmp in staged[len(linked) :]:
                _unlink(tmp)
        return [Path(p) for p in linked]


@dataclass(frozen=True)
class Attachment:
    path: str  # relative to the records folder, as records name it in `attachments`
    sha256: str
    created: bool


def write_attachment(ledger: Ledger, data: bytes, folder: str, suffix: str) -> Attachment:
    """Store `data` content-addressed under records/attachments/FOLDER, atomically, never overwriting."""
    digest = hashlib.sha256(data).hexdigest()
    rel = f"{ATTACHMENTS}/{folder}/{digest[:32]}{suffix}"
    path = os.path.join(ledger._records_str, rel)
    if os.path.exists(path):
        return Attachment(rel, digest, False)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{TMP_PREFIX}{os.getpid()}"
    try:
        _write_tmp(tmp, data, durable=True)
        try:
            os.link(tmp, path)
        except FileExistsError:
            return Attachment(rel, digest, False)  # another writer stored the same bytes
    except OSError as exc:
        raise WriteError(f"could not write attachment {rel}: {_reason(exc)}; nothing was written") from None
    finally:
        _unlink(tmp)
    return Attachment(rel, digest, True)


def _reason(exc: OSError) -> str:
    return {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is exhausted",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "permission denied",
        errno.EFBIG: "the file size limit was reached",
        errno.EEXIST: "a record with this id already exists",
    }.get(exc.errno or 0, exc.strerror or str(exc))


def _make_folders(folders: set[str]) -> None:
    """Create missing shard folders. A new ledger's first bulk add creates up to 1,024 of
    them and each mkdir waits on the file system's journal, so many are made from threads
    (the calls release the GIL)."""
    missing = [f for f in folders if not os.path.isdir(f)]
    if len(missing) <= 16:
        for folder in missing:
            os.makedirs(folder, exist_ok=True)
        return
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda f: os.makedirs(f, exist_ok=True), missing))


#: A temporary file this old whose writer is gone was left by a killed write.
STALE_TMP_SECONDS = 600


def _sweep_stale_tmp(folder: str) -> None:
    """Remove temporary files that killed writers left in `folder` (never a live writer's:
    its pid still runs, or its file is younger than STALE_TMP_SECONDS)."""
    now, own = time.time(), os.getpid()
    try:
        entries = [e for e in os.scandir(folder) if e.name.startswith(TMP_PREFIX)]
    except OSError:
        return
    for entry in entries:
        pid_text = entry.name.rsplit(".", 1)[-1]
        try:
            pid = int(pid_text)
            if pid == own or now - entry.stat().st_mtime < STALE_TMP_SECONDS:
                continue
            os.kill(pid, 0)
        except ProcessLookupError:
            _unlink(entry.path)
        except (ValueError, OSError):
            continue


def _renameat2_noreplace():
    """libc's renameat2(RENAME_NOREPLACE), or None. Python's os module has no no-clobber
    rename; this one call replaces link() + unlink(), a third of a bulk add's metadata
    writes, and is atomic all the same."""
    fn = _libc_function("renameat2")
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
    return fn


def _libc_function(name: str) -> Any:
    """A function of Linux's libc, or None (another system, or a libc without it)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return getattr(libc, name)
    except (OSError, AttributeError):
        return None


def _syncfs_function() -> Any:
    """libc's syncfs(fd): flush the one file system that holds fd (Linux 2.6.39+), or None."""
    fn = _libc_function("syncfs")
    if fn is not None:
        fn.argtypes = [ctypes.c_int]
        fn.restype = ctypes.c_int
    return fn


_AT_FDCWD, _RENAME_NOREPLACE = -100, 1
_RENAMEAT2 = _renameat2_noreplace()
_SYNCFS = _syncfs_function()


def _syncfs(folder: str) -> None:
    """Flush the file system holding `folder`: every file staged in it reaches the disk."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        if _SYNCFS(fd) != 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err), folder)
    finally:
        os.close(fd)


def _place(tmp: str, path: str) -> None:
    """Move the finished temporary file to its final name, refusing to replace anything."""
    global _RENAMEAT2
    if _RENAMEAT2 is not None:
        if _RENAMEAT2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(path), _RENAME_NOREPLACE) == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS):
            raise OSError(err, os.strerror(err), path)
        _RENAMEAT2 = None  # this file system cannot: fall back for good
    os.link(tmp, path)
    os.unlink(tmp)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _write_tmp(tmp: str, data: bytes, durable: bool) -> None:
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
