"""Locks git leaves behind, and `ledger push`'s own interrupted state.

git takes a ref, the index or `packed-refs` by creating `NAME.lock` next to it and renaming
it over the file (or deleting it) when done: milliseconds. A writer killed in between (a
job's cgroup killed mid-push, on a shared-filesystem remote) leaves the `.lock` behind, and
every later writer is refused `Unable to create '...lock': File exists` until someone
deletes it by hand. Nothing here deletes a lock another program took: a lock is reported
as stale, with the command that clears it, when no process of this host works in that
repository and it is older than any ref update takes; only the locks `ledger push` itself
left (its state file says it was working there, and its process is gone) are cleared.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import time
from dataclasses import dataclass
from pathlib import Path

#: A lock younger than this may belong to a writer still at work (a ref update takes
#: milliseconds, a loaded shared filesystem a few seconds).
FRESH_SECONDS = 5.0
#: A lock older than this is stale even when this host cannot see the processes of the
#: host that holds the repository (another node of the cluster, a server behind ssh).
ANY_HOST_SECONDS = 600.0

_LOCK_MESSAGE = re.compile(r"Unable to create '([^']+\.lock)': File exists")


@dataclass(frozen=True)
class StaleLock:
    path: str
    age_seconds: float
    #: True when this host can see the repository's folder, so the lock could be inspected.
    local: bool
    #: Processes of this host working in that repository (pids), when it could look.
    holders: tuple[int, ...] = ()

    @property
    def stale(self) -> bool:
        if self.holders:
            return False
        return self.age_seconds >= (FRESH_SECONDS if self.local else ANY_HOST_SECONDS)

    @property
    def command(self) -> str:
        return f"rm {shlex.quote(self.path)}"

    def describe(self) -> str:
        age = _age(self.age_seconds)
        if self.holders:
            return f"{self.path} ({age} old) is held by a running process (pid {', '.join(map(str, self.holders))})"
        if self.local:
            return (
                f"{self.path} is {age} old and no process of this host works in that repository: "
                "a writer was killed while git held it"
            )
        return f"{self.path} is on another host; git holds such a lock for milliseconds"


def _age(seconds: float) -> str:
    """An age in words, truncated to the second and never rounded up: 150 s reads "2 min 30 s"
    (a lock "3 min old" after 150 s overstated how long it had been held)."""
    whole = int(seconds)
    if whole < 120:
        return f"{whole} s"
    if whole < 7200:
        minutes, rest = divmod(whole, 60)
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, rest = divmod(whole // 60, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def locks_named(stderr: str) -> list[str]:
    """The lock files a failed git command names (`Unable to create '/x/HEAD.lock': File exists`)."""
    return list(dict.fromkeys(_LOCK_MESSAGE.findall(stderr)))


def repository_of(lock: Path) -> Path:
    """The git folder a lock file belongs to: the nearest parent holding `HEAD` and `objects`."""
    for parent in lock.parents:
        if (parent / "objects").is_dir() and (parent / "HEAD").exists():
            return parent
    return lock.parent


def workers_in(repo: Path, *, exclude: set[int] | None = None) -> tuple[int, ...]:
    """Pids of this host's git processes whose working folder is `repo` or inside it (git
    runs in the repository it changes: receive-pack in the bare remote, commit in the work
    tree), or that hold a file under it open. A shell sitting in the folder is no writer;
    processes this user may not inspect are skipped."""
    exclude = (exclude or set()) | {os.getpid()}
    try:
        target = repo.resolve()
    except OSError:
        return ()
    found: list[int] = []
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return ()
    for pid in pids:
        if pid in exclude:
            continue
        try:
            if not Path(f"/proc/{pid}/comm").read_text().startswith("git"):
                continue
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        if cwd == target or target in cwd.parents:
            found.append(pid)
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                held = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if held.startswith(str(target) + os.sep):
                found.append(pid)
                break
    return tuple(found)


def inspect_lock(path: str, *, workers: tuple[int, ...] | None = None) -> StaleLock | None:
    """What is known of the lock at `path`; None when it is gone already."""
    lock = Path(path)
    local = Path("/proc/self").exists() and lock.parent.is_dir()
    try:
        age = max(0.0, time.time() - lock.stat().st_mtime)
    except FileNotFoundError:
        return None if local else StaleLock(path, 0.0, False)
    except OSError:
        return StaleLock(path, 0.0, False)
    holders = workers if workers is not None else workers_in(repository_of(lock))
    return StaleLock(path, age, local, holders)


def stale_locks_in(git_dir: Path, *, exclude: set[int] | None = None) -> list[StaleLock]:
    """Locks of a repository's own files (index, HEAD, packed-refs, refs/**) that no
    process of this host holds and that are older than a ref update takes."""
    return [lock for lock in locks_in(git_dir, exclude=exclude) if lock.stale]


def locks_in(git_dir: Path, *, exclude: set[int] | None = None) -> list[StaleLock]:
    """Every lock of a repository's own files, whatever its age, with this host's processes
    working there (`holders`): recovery clears one its own killed git left at once, since
    it knows that git is dead, where a stranger's must first grow old."""
    candidates = [git_dir / name for name in ("index.lock", "HEAD.lock", "packed-refs.lock", "config.lock")]
    refs = git_dir / "refs"
    if refs.is_dir():
        candidates += sorted(refs.rglob("*.lock"))
    present = [c for c in candidates if c.exists()]
    if not present:
        return []
    holders = workers_in(git_dir.parent if git_dir.name == ".git" else git_dir, exclude=exclude)
    found = [inspect_lock(str(c), workers=holders) for c in present]
    return [lock for lock in found if lock is not None]


# -- ledger push's own state ------------------------------------------------------------------


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class PushState:
    """`.git/ledger/push-state.json`: what a running `ledger push` is doing, so the next one
    can undo what a killed one left half done."""

    path: Path
    data: dict

    @classmethod
    def begin(cls, git_dir: Path, **fields: object) -> PushState:
        state = cls(git_dir / "ledger" / "push-state.json", {})
        state.data = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "boot": _boot_id(),
            "started": time.time(),
            "stage": "start",
            **fields,
        }
        state.save()
        return state

    @classmethod
    def left_behind(cls, git_dir: Path) -> PushState | None:
        path = git_dir / "ledger" / "push-state.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return cls(path, data if isinstance(data, dict) else {})

    def running_elsewhere(self) -> bool:
        """True when the push that wrote this state still runs (same host and boot, pid alive)."""
        same_boot = self.data.get("host") == socket.gethostname() and self.data.get("boot") == _boot_id()
        pid = self.data.get("pid")
        return bool(same_boot and isinstance(pid, int) and pid != os.getpid() and _alive(pid))

    def stage(self, name: str, **fields: object) -> None:
        self.data.update(stage=name, **fields)
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(self.data), encoding="utf-8")
        os.replace(tmp, self.path)

    def end(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
