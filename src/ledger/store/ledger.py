"""The ledger on disk: one canonical JSON file per record under records/KIND/SHARD/ID.json.

Writes are atomic (temporary file, flush, a rename into place that refuses to replace
anything, so nothing is ever overwritten) and coordination-free (ids are ULIDs), so many
processes can append at once.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import gc
import hashlib
import os
import stat
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from ..config import CONFIG_NAME, Config, find_root, load_config
from ..errors import InputError, NotFound, Problem, WriteError
from ..schema.envelope import Envelope
from ..schema.migrate import upgrade
from ..schema.registry import KINDS, model_for
from .add import Batch, Stamping
from .canonical import NotCanonical, canonical_bytes
from .ids import is_id
from .limits import Limits, canonical_too_deep
from .staged import Admission, Staged

TMP_PREFIX = ".tmp-"
#: Open flags of the no-follow readers (0 where the platform has none).
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
#: Folder inside the records folder holding compact attachments (never a kind).
ATTACHMENTS = "attachments"
#: Batches larger than this are made durable by one syncfs() of the ledger's file system
#: rather than one fsync() per file.
BULK_SYNC_THRESHOLD = 32


class UnreadableRecord(InputError):
    """A file under the records folder that no reader trusts: a symlink, not a regular file,
    over the size cap, not canonical JSON, or not a valid record. `ledger check` names the rule."""


_CHECK_FIX = "run `ledger check --all` for the rule and the fix; records are written by `ledger add` only"


def unreadable(path: str, rule: str, message: str, fix: str = _CHECK_FIX) -> UnreadableRecord:
    return UnreadableRecord(f"{path}: {message}", [Problem(path, f"rule {rule}", message, fix)])


def symlink_error(path: str) -> UnreadableRecord:
    return unreadable(
        path,
        "symlinks",
        "is a symbolic link; ledger never follows one in the records or specs folders",
        "replace the link with the file it points at (or remove it); a link can point outside the repository",
    )


def lstat_chain(root: Path, target: Path) -> str | None:
    """The first component from `root` (exclusive) to `target` (inclusive) that is a symlink, or None."""
    try:
        rel = target.relative_to(root)
    except ValueError:
        return None
    here = root
    for part in rel.parts:
        here = here / part
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return str(here)
        except OSError:
            return None
    return None


def walk_nofollow(folder: Path) -> tuple[list[Path], list[Path]]:
    """(regular files, symlinks and other non-regular entries) under `folder`, judged by the
    directory entries' own types: a symlinked folder is reported, never descended."""
    files: list[Path] = []
    links: list[Path] = []
    stack = [str(folder)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                links.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                files.append(Path(entry.path))
            else:
                links.append(Path(entry.path))
    return sorted(files), sorted(links)


def open_nofollow(root: str, rel: str) -> int:
    """Open `root/rel` for reading one component at a time, each with O_NOFOLLOW (O_NOFOLLOW
    alone checks only the last component). Raises OSError ELOOP/ENOTDIR on a symlink."""
    parts = [p for p in rel.split("/") if p]
    fd = os.open(root, os.O_RDONLY | _DIRECTORY)
    try:
        for part in parts[:-1]:
            if part == "..":
                raise OSError(errno.EACCES, "`..` in a record path", rel)
            nxt = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=fd)
    finally:
        os.close(fd)


def read_nofollow(path: str, cap: int, fd: int | None = None, shown: str | None = None) -> bytes:
    """A regular file's bytes, never through a symlink (last component) and never more than
    `cap` bytes (UnreadableRecord for either; OSError when missing)."""
    name = shown or path
    if fd is None:
        try:
            fd = os.open(path, os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise symlink_error(name) from None
            raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise unreadable(name, "symlinks", "is not a regular file", "records are regular files written by ledger")
        if st.st_size > cap:
            raise unreadable(name, "record-size", f"is {st.st_size:,} bytes, over the {cap:,}-byte cap")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(cap + 1)
        if len(data) > cap:
            raise unreadable(name, "record-size", f"is over the {cap:,}-byte cap")
        return data
    finally:
        os.close(fd)


def parse_record(path: str, raw: bytes, limits: Limits) -> dict:
    """A record file's bytes to its dict, only when the bytes are the canonical serialisation
    of what they parse to (so no reader sees other content than the one hashed and checked)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise unreadable(path, "schema-valid", f"is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise unreadable(path, "schema-valid", "is not a JSON object")
    try:
        canonical = canonical_bytes(data)
    except NotCanonical as exc:
        raise unreadable(path, "canonical-bytes", exc.message) from None
    if canonical != raw:
        raise unreadable(path, "canonical-bytes", "its bytes are not the canonical serialisation of its content")
    if canonical_too_deep(raw, limits.max_depth):
        raise unreadable(path, "parse-limits", f"nests deeper than {limits.max_depth} levels")
    return data


def shard_of(record_id: str) -> str:
    # The last two characters are random, so records spread evenly over 1,024 folders
    # and no git tree object grows with the ledger.
    return record_id[-2:].lower()


@contextmanager
def without_cycle_collection() -> Iterator[None]:
    """Python's cycle collector held off while records load. Loading makes millions of
    objects and no cycles (parsed JSON, validated models), yet every 700 allocations the
    collector walks the young ones and, as the heap grows, the old ones again: at 100,000
    records it was a third of the load's CPU (26.1 s with it, 16.4 s without, measured). It
    is turned back on afterwards only if it was on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class Ledger:
    """A ledger rooted at the folder holding `ledger.yaml`."""

    root: Path
    config: Config = field(default_factory=Config)
    admission: Admission | None = field(default=None, repr=False, compare=False)

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

    @property
    def limits(self) -> Limits:
        return Limits.of(self.config.rules)

    def _records_root(self) -> Path:
        """The records folder, refusing one reached through a symlink below the ledger root."""
        link = lstat_chain(self.root, self.records_dir)
        if link is not None:
            raise symlink_error(self.shown(link))
        return self.records_dir

    def shown(self, path: str | Path) -> str:
        """A path as messages show it: relative to the ledger root."""
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def find(self, record_id: str) -> Path | None:
        """The file of a record id, whatever its kind. A symlink on the way is refused, never followed."""
        if not is_id(record_id):
            return None
        root = self._records_root()
        for kind in KINDS:
            rel = f"{kind}/{shard_of(record_id)}/{record_id}.json"
            try:
                os.close(open_nofollow(str(root), rel))
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise symlink_error(self.shown(f"{root}/{rel}")) from None
                continue
            return root / rel
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
        """Record files, from the directory entries' own types: a symlinked kind or shard
        folder or record file is refused (UnreadableRecord), never followed, so no link
        can shadow a record id with a file from elsewhere."""
        # Only folders named after kinds hold records (attachments/ lives beside them).
        kinds = [kind] if kind else sorted(KINDS)
        root = self._records_root()
        for k in kinds:
            base = root / k
            try:
                st = os.lstat(base)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                raise symlink_error(self.shown(base))
            if not stat.S_ISDIR(st.st_mode):
                continue
            for shard in sorted(os.scandir(base), key=lambda e: e.name):
                if shard.is_symlink():
                    raise symlink_error(self.shown(shard.path))
                if not shard.is_dir(follow_symlinks=False):
                    continue
                # Closed when the caller stops early or a record raises (a generator left
                # mid-folder would hold the directory open until collected).
                with os.scandir(shard.path) as entries:
                    for entry in entries:
                        if entry.name.endswith(".json") and not entry.name.startswith("."):
                            if entry.is_symlink():
                                raise symlink_error(self.shown(entry.path))
                            yield Path(entry.path)

    # -- reading ---------------------------------------------------------------------------

    def read_raw(self, path: Path) -> dict[str, Any]:
        """A record file's content: never through a symlink, within the size and depth caps,
        and only when its bytes are canonical. Raises UnreadableRecord naming the rule."""
        limits = self.limits
        shown = self.shown(path)
        return parse_record(shown, read_nofollow(str(path), limits.max_record_bytes, shown=shown), limits)

    def load(self, path: Path) -> Envelope:
        raw = self.read_raw(path)
        try:
            data = upgrade(raw)
            return model_for(str(data.get("kind"))).model_validate(data)
        except (ValueError, KeyError) as exc:  # pydantic's ValidationError is a ValueError
            first = exc.errors()[0] if hasattr(exc, "errors") else {"msg": str(exc), "loc": ()}
            where = ".".join(str(p) for p in first.get("loc", ()))
            raise unreadable(
                self.shown(path),
                "schema-valid",
                f"is not a valid record: {where + ': ' if where else ''}{first['msg']}",
            ) from None

    def get(self, record_id: str) -> Envelope:
        path = self.find(self.resolve_id(record_id))
        if path is None:
            raise NotFound(f"no record {record_id!r}")
        return self.load(path)

    def records(self, kind: str | None = None) -> list[Envelope]:
        """Every record (of one kind), oldest first by when the evidence was taken."""
        with without_cycle_collection():
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

    def write(
        self,
        records: Iterable[dict[str, Any]],
        *,
        durable: bool = True,
        models: list[Envelope] | None = None,
        origins: list[tuple[str, str]] | None = None,
    ) -> list[Path]:
        """Write sealed, validated record dicts. All or nothing: on failure, written files are removed.

        With an `admission` installed, it judges the batch first (`models`, the validated
        records, spare it validating again; `origins`, (file, place) of each input, name where
        a refused record came from) and nothing is written when it refuses.
        """
        records = list(records)
        staged = [
            Staged(
                r,
                canonical_bytes(r),
                models[n] if models is not None and n < len(models) else None,
                origins[n] if origins is not None and n < len(origins) else None,
            )
            for n, r in enumerate(records)
        ]
        return self.write_staged(staged, durable=durable)

    def write_staged(
        self, staged: Sequence[Staged], *, durable: bool = True, references_checked: bool = False
    ) -> list[Path]:
        """Write records whose file bytes are already encoded (`Staged.raw`): `Batch.commit`
        encodes each record once, for its hash, its checks and its file.

        Every record is first written and flushed to a temporary file beside its final
        path; only then are all of them linked into place. A kill at any point leaves
        either nothing or whole records.
        """
        if self.admission is not None:
            self.admission.admit(self, staged, references_checked=references_checked)
        jobs = [(self.path_str(s.data["kind"], s.data["id"]), s.raw) for s in staged]
        temps: list[tuple[str, str]] = []
        linked: list[str] = []
        pid = os.getpid()
        try:
            _make_folders({os.path.dirname(path) for path, _ in jobs})
            temps = [(path, f"{os.path.dirname(path)}/{TMP_PREFIX}{os.path.basename(path)}.{pid}") for path, _ in jobs]
            # A large batch is flushed by one syncfs() of the records' file system instead of
            # one fsync per file: the disk then commits the whole batch in one journal
            # transaction. Never os.sync(), which flushes every file system of the machine
            # (a node writing checkpoints would stall the add). Without syncfs: per-file fsync.
            bulk = len(jobs) > BULK_SYNC_THRESHOLD and _SYNCFS is not None
            for (_, data), (_, tmp) in zip(jobs, temps):
                _write_tmp(tmp, data, durable and not bulk)
            if durable and bulk:
                _syncfs(self._records_str)
            for path, tmp in temps:
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
            for _, tmp in temps[len(linked) :]:
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
    # Plain threads over one shared iterator: concurrent.futures would add ~30 ms of imports
    # (logging among them) to every command that opens a ledger.
    todo = iter(missing)
    lock = threading.Lock()
    failures: list[OSError] = []

    def work() -> None:
        while True:
            with lock:
                folder = next(todo, None)
            if folder is None:
                return
            try:
                os.makedirs(folder, exist_ok=True)
            except OSError as exc:
                failures.append(exc)
                return

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


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
