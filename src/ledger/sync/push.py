"""`ledger push`: land this clone's records on the remote's branch, however many other
writers push at the same moment.

One run:

1. Undo what a killed `ledger push` left in this clone (a merge begun, its lock files, an
   integration merge never pushed), saying what it did; refuse, with the command, when a
   lock of another dead writer or a rebase in progress blocks git.
2. Commit the record files not committed yet (new files under the records folder only).
3. Fetch the branch and the queue (`refs/ledger/incoming/*`) and merge the branch: records
   are new files at unique paths, so the merge never conflicts, and a merge keeps every
   commit the records are stamped with reachable, where a rebase would rewrite them.
4. Check what the push adds (the remote's branch to the merge), exactly as the pre-push
   hook does, in this process; the hook then skips the lines it finds checked
   (`LEDGER_PUSH_CHECKED`).
5. Attempt 1, one `git push`: the merge to the branch, and the same commit to a queue ref of
   this push's own (`refs/ledger/incoming/<job>-<random>`), which no other writer updates,
   so it always lands; queue refs that the branch already holds are deleted on the way.
6. If another writer moved the branch first, wait (jittered, growing intervals, asking the
   remote with `git ls-remote`) until the branch holds this commit, which happens when some
   writer integrates the queue. When the remote has been quiet for a while and this commit
   is still queued, the waiting writer whose queue ref sorts first integrates (the next one
   takes over only when it has not landed them after twice as long, and so on): fetch,
   merge every queued commit not yet on the branch into one merge, check it as the hook
   would (a queued push that fails alone is left queued and named, the rest go in), push
   the branch and delete the queue refs it now holds in one atomic push. Losing that race
   to another integrator is fine: theirs held this commit too, or the next round does.

So N jobs started at once make about one push each, and one or a few integration pushes
land everyone; a push checks only what it adds. `--no-queue` is the plain loop for a
remote that refuses other refs: fetch, merge, check, push, retry with jittered backoff.
"""

from __future__ import annotations

import os
import random
import re
import resource
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..checks import CheckResult, run_check
from ..checks.hooks import CHECKED_ENV
from ..errors import InputError, Problem
from ..git import ZERO, Git, GitError, clean_env
from ..git import command as git_command
from .locks import PushState, StaleLock, inspect_lock, locks_in, locks_named, repository_of, stale_locks_in

#: The remote's queue: one ref per push, written only by that push.
QUEUE = "refs/ledger/incoming/"
#: Where this clone keeps its copy of a remote's queue.
QUEUE_COPY = "refs/ledger/remotes/{remote}/incoming/"

#: What git's environment may keep besides `clean_env`: who commits, and how to reach the remote.
_KEEP_ENV = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_GLOBAL",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_SSH_VARIANT",
    "GIT_ASKPASS",
)

#: Rejections that mean "another writer moved the branch first", not "wrong".
_RACE = (
    "fetch first",
    "non-fast-forward",
    "stale info",
    "failed to update ref",
    "cannot lock ref",
    "atomic push failed",
)


@dataclass
class PushOptions:
    remote: str = "origin"
    #: The remote's branch; default: the remote's default branch.
    branch: str | None = None
    #: `branch` may be one the remote does not have yet (created by this push); otherwise a
    #: branch the remote lacks is refused, since a mistyped name would land "successfully".
    new_branch: bool = False
    #: A name for this job in its queue ref (default: from SLURM, CI or the host).
    job: str | None = None
    #: Pushes that try to land this commit (attempt 1, integrations, retries), at most.
    attempts: int = 4
    #: Seconds to wait for a queued commit to land before leaving it queued.
    wait: float = 300.0
    #: Push a queue ref beside the branch (off: the plain fetch-merge-push retry loop).
    queue: bool = True
    #: Only integrate the queue (CI, or a job that runs after an array): no commit of its own.
    integrate_only: bool = False
    #: Message of the commit of records not committed yet.
    message: str | None = None
    #: Seconds the remote must stay unchanged before a waiting writer integrates (default:
    #: as long as this push's first attempt took, between 0.5 and 8 s, times 1 to 1.5 at random).
    quiet: float | None = None
    seed: int | None = None


@dataclass
class Attempt:
    number: int
    kind: str  # "push", "integrate" or "retry"
    outcome: str  # "landed", "queued", "lost-race", "refused", "locked", "nothing-queued"
    seconds: float
    check_seconds: float = 0.0
    #: CPU seconds of the check (this process and the git it ran): flat in the number of writers.
    check_cpu_seconds: float = 0.0
    records_checked: int = 0
    #: git's own summary of the branch's update.
    detail: str = ""
    #: Why it did not land, in the words the text says (a held ref lock, another writer first).
    why: str = ""
    #: True when this attempt ran a `git push` (an attempt the check refused made none).
    pushed: bool = False


@dataclass
class PushReport:
    remote: str
    branch: str
    outcome: str = "nothing"  # "landed", "queued", "nothing", "refused", "blocked", "gave-up"
    commit: str | None = None
    #: 0 unless the outcome is "landed". A job's push: this clone's records now on the branch
    #: (`records_new`), whoever's push landed them; `--integrate`: the queued records its
    #: integration landed. So summed over an array's jobs, each record counts once.
    records: int = 0
    #: Records this clone brings that the remote's branch lacked when it fetched.
    records_new: int = 0
    #: Of those, the records waiting in this push's queue ref (outcome "queued", or "blocked"
    #: with the queue ref pushed): on the remote, not on the branch yet.
    records_queued: int = 0
    queue_ref: str | None = None
    attempts: list[Attempt] = field(default_factory=list)
    #: What the run came to, in one sentence (also said last on stderr): what landed, or
    #: what did not and where its records are.
    message: str = ""
    #: What it did on the way, in words (recovery, commits, merges), in order.
    actions: list[str] = field(default_factory=list)
    #: The check that refused the push, when it was refused.
    check: CheckResult | None = None
    #: The last check that passed with warnings (they are shown, not only counted).
    warned: CheckResult | None = None
    #: What the hooks and the remote printed on the way (a chained pre-push hook of the
    #: user's, the remote's own hooks), line by line.
    hook_output: list[str] = field(default_factory=list)
    #: Queued pushes (other writers' and its own) that this run's integration landed.
    integrated: int = 0
    #: Other writers' queue refs the branch lacked when this run ended without integrating:
    #: a plain push lands only its own records (`--integrate` lands these).
    queue_waiting: list[str] = field(default_factory=list)
    #: Queued pushes an integration left queued because they fail the check alone: ref -> rules.
    left_queued: dict[str, list[str]] = field(default_factory=dict)
    #: The check that refused each queued push left queued (its violations say what to fix).
    left_queued_checks: dict[str, CheckResult] = field(default_factory=dict)
    #: `--integrate`: a queued push left queued is this run's failure (the job that lands the
    #: queue is the one that must say so), not only a line on the way.
    integrate_only: bool = False
    locks: list[StaleLock] = field(default_factory=list)
    #: Wall seconds since this process started (Python's start and the imports included: what
    #: a job script waits for), and of that the push itself.
    seconds: float = 0.0
    push_seconds: float = 0.0
    #: CPU seconds of this process since it started and of the git it ran (the remote's
    #: receive-pack too, on a local remote): what bounds many writers on few cores.
    cpu_seconds: float = 0.0

    @property
    def pushes(self) -> int:
        """The `git push`es this run made to land its commit or the queue (the JSON's `pushes`):
        one definition everywhere, so an attempt the check refused before pushing counts in
        `attempts`, not here, and summed over jobs `pushes` is what the remote received."""
        return sum(1 for attempt in self.attempts if attempt.pushed)

    @property
    def exit_code(self) -> int:
        if self.outcome == "refused" or (self.integrate_only and self.left_queued):
            return 1
        return 2 if self.outcome in ("blocked", "gave-up") else 0

    def as_dict(self) -> dict:
        return {
            "outcome": self.outcome,
            "message": self.message,
            "remote": self.remote,
            "branch": self.branch,
            "commit": self.commit,
            "records": self.records,
            "records_new": self.records_new,
            "records_queued": self.records_queued,
            "queue_ref": self.queue_ref,
            "attempts": [a.__dict__ for a in self.attempts],
            "pushes": self.pushes,
            "integrated": self.integrated,
            "queue_waiting": self.queue_waiting,
            "left_queued": self.left_queued,
            "left_queued_violations": {
                ref: [v.as_dict() for v in check.violations] for ref, check in self.left_queued_checks.items()
            },
            "actions": self.actions,
            "locks": [
                {"path": lock.path, "age_seconds": round(lock.age_seconds, 1), "clear": lock.command}
                for lock in self.locks
            ],
            "violations": [v.as_dict() for v in self.check.violations] if self.check else [],
            "warnings": [v.as_dict() for v in self.warned.warnings] if self.warned else [],
            "hook_output": self.hook_output,
            "seconds": round(self.seconds, 3),
            "push_seconds": round(self.push_seconds, 3),
            "cpu_seconds": round(self.cpu_seconds, 3),
        }


def job_label(env: dict[str, str] | None = None) -> str:
    """This job's name in its queue ref and commit message: the SLURM array task, the SLURM job,
    the CI job, the torchrun run, else the host."""
    env = dict(os.environ if env is None else env)
    if env.get("SLURM_ARRAY_JOB_ID") and env.get("SLURM_ARRAY_TASK_ID"):
        label = f"slurm-{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"
    elif env.get("SLURM_JOB_ID"):
        label = f"slurm-{env['SLURM_JOB_ID']}"
    elif env.get("GITHUB_RUN_ID"):
        label = f"gh-{env['GITHUB_RUN_ID']}-{env.get('GITHUB_JOB', 'job')}"
    elif env.get("CI_JOB_ID"):
        label = f"ci-{env['CI_JOB_ID']}"
    elif env.get("TORCHELASTIC_RUN_ID"):
        # torchrun's run id, as the record's allocation names it (`torchrun-<id>`).
        label = f"torchrun-{env['TORCHELASTIC_RUN_ID']}"
    else:
        label = socket.gethostname()
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip(".-")[:80] or "job"


class _Run:
    def __init__(self, ledger, options: PushOptions, say: Callable[[str], None]):
        self.ledger = ledger
        self.o = options
        self.say = say
        self.git = Git(ledger.root)
        self.rng = random.Random(options.seed if options.seed is not None else (os.getpid() << 20) ^ time.time_ns())
        self.state: PushState | None = None
        self.remote = options.remote
        self.report = PushReport(self.remote, options.branch or "", integrate_only=options.integrate_only)
        self.check_cpu = 0.0
        #: Why the last push of the branch did not land, in words (`_lost_why`).
        self.lost_why = ""

    # -- git -----------------------------------------------------------------------------

    def run_git(self, *args: str, check: bool = True, env: dict[str, str] | None = None, stdin: str | None = None):
        full = clean_env()
        for name in _KEEP_ENV:
            if name in os.environ:
                full[name] = os.environ[name]
        full.update(env or {})
        proc = subprocess.run(
            git_command(*args, hooks=True), cwd=self.ledger.root, capture_output=True, text=True, env=full, input=stdin
        )
        if check and proc.returncode != 0:
            raise _lock_error(proc.stderr) or GitError(f"git {' '.join(args[:3])}: {proc.stderr.strip()}")
        return proc

    def rev(self, ref: str) -> str | None:
        return self.git.maybe("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") or None

    def contains(self, ancestor: str, descendant: str | None) -> bool:
        return bool(descendant) and self.git.ok("merge-base", "--is-ancestor", ancestor, descendant or "")

    def act(self, text: str) -> None:
        self.report.actions.append(text)
        self.say(text)

    # -- before anything -----------------------------------------------------------------

    def prepare(self) -> None:
        git = self.git
        if not git.is_repo():
            raise InputError(
                "not a git repository",
                [Problem(str(self.ledger.root), "", "the ledger is not in a git repository", "run `git init` first")],
            )
        if not git.maybe("remote", "get-url", self.remote):
            # REMOTE is `ledger push`'s argument (default origin), not an option.
            names = (git.maybe("remote") or "").split()
            fix = (
                f"name one of this clone's remotes ({', '.join(names)}) as REMOTE, or add it: "
                if names
                else "this clone has no remote at all; add one: "
            )
            raise InputError(
                f"no remote {self.remote!r}",
                [
                    Problem(
                        "<command line>",
                        "REMOTE",
                        f"this clone has no remote named {self.remote!r}",
                        f"{fix}git remote add {self.remote} URL",
                    )
                ],
            )
        self.git_dir = git.common_dir
        self.recover()
        self.report.branch = self.branch = self.o.branch or self.default_branch()
        self.branch_ref = f"refs/heads/{self.branch}"
        #: What `records_new` counts from when the branch is not on the remote yet.
        self.count_base: str | None = None
        if self.o.branch:
            self.named_branch()
        self.tracking = f"refs/remotes/{self.remote}/{self.branch}"
        self.queue_copy = QUEUE_COPY.format(remote=self.remote)
        self.state = PushState.begin(self.git_dir, remote=self.remote, branch=self.branch, head_before=self.rev("HEAD"))

    def named_branch(self) -> None:
        """`--branch NAME` must be a branch the remote has (`--new-branch`: or will have). A
        mistyped `--branch mian` otherwise created a branch, exited 0 "landed", and left the
        records off the default branch. A remote with no branch at all takes its first."""
        proc = self.run_git("ls-remote", "--heads", self.remote, check=False)
        if proc.returncode != 0:
            return  # unreachable: the fetch says so, with its own fix
        heads = sorted(
            line.partition("\t")[2][len("refs/heads/") :]
            for line in proc.stdout.splitlines()
            if line.partition("\t")[2].startswith("refs/heads/")
        )
        if not heads or self.branch in heads:
            return
        default = self.default_branch_of_remote() or heads[0]
        if self.o.new_branch:
            # A new branch starts from the default branch for the count too (the hook judges it
            # against the default branch): a record already there is not "new" here.
            tracking = f"refs/remotes/{self.remote}/{default}"
            self.run_git("fetch", "--quiet", "--no-tags", self.remote, f"+refs/heads/{default}:{tracking}", check=False)
            self.count_base = self.rev(tracking)
            return
        shown = ", ".join(heads[:20]) + (f" and {len(heads) - 20} more" if len(heads) > 20 else "")
        raise InputError(
            f"{self.remote} has no branch {self.branch!r}",
            [
                Problem(
                    "<command line>",
                    "--branch",
                    f"{self.remote} has no branch {self.branch!r}; its branches: {shown}",
                    f"name one of them (`--branch {default}`), or create {self.branch!r} on purpose: "
                    f"`ledger push --branch {self.branch} --new-branch`",
                )
            ],
        )

    def default_branch_of_remote(self) -> str | None:
        out = self.git.maybe("ls-remote", "--symref", self.remote, "HEAD") or ""
        for line in out.splitlines():
            if line.startswith("ref: refs/heads/") and line.endswith("\tHEAD"):
                return line[len("ref: refs/heads/") : -len("\tHEAD")]
        return None

    def default_branch(self) -> str:
        known = self.git.maybe("symbolic-ref", "--quiet", f"refs/remotes/{self.remote}/HEAD")
        if known:
            return known.rpartition(f"refs/remotes/{self.remote}/")[2]
        remote_default = self.default_branch_of_remote()
        if remote_default:
            return remote_default
        current = self.git.maybe("symbolic-ref", "--quiet", "--short", "HEAD")
        return current or "main"

    def recover(self) -> None:
        """Undo what a killed `ledger push` left here; refuse what another writer left."""
        git_dir = self.git_dir
        left = PushState.left_behind(git_dir)
        if left is not None:
            if left.running_elsewhere():
                raise InputError(
                    "another ledger push is running here",
                    [
                        Problem(
                            str(left.path),
                            "",
                            f"`ledger push` (pid {left.data.get('pid')}) is running in this clone",
                            "wait for it to finish; two pushes of one clone would merge over each other",
                        )
                    ],
                )
            age = time.time() - float(left.data.get("started") or time.time())
            stage = left.data.get("stage", "?")
            self.act(
                f"recovering: a `ledger push` (pid {left.data.get('pid')}) was interrupted {age:.0f} s ago "
                f"while at '{stage}'"
            )
            started = float(left.data.get("started") or 0) - 1
            # A lock taken since the interrupted push began, that no live process of this host
            # works under, is its own dead git's: cleared now, however young (a kill at 'merge'
            # leaves index.lock; waiting for it to look stale only made the merge fail "Unable
            # to write index" and leave MERGE_HEAD). A git still running (only the push's own
            # process was killed) holds it: left alone, and named below once it is stale.
            for lock in locks_in(git_dir):
                try:
                    mtime = os.stat(lock.path).st_mtime
                except OSError:
                    continue
                if not lock.holders and mtime >= started:
                    os.unlink(lock.path)
                    self.act(f"recovering: removed {lock.path}, a lock the interrupted push's git left")
            if (git_dir / "MERGE_HEAD").exists():
                self.run_git("merge", "--abort", check=False)
                self.act("recovering: aborted the merge it had begun (git merge --abort)")
            head = self.rev("HEAD")
            self.undo_staged_merge(left.data, head)
            before = left.data.get("integrating")
            if isinstance(before, str) and head and head != before:
                tracking = f"refs/remotes/{left.data.get('remote', self.remote)}/{left.data.get('branch', '')}"
                if not self.contains(head, self.rev(tracking)):
                    self.run_git("reset", "--quiet", "--keep", before)
                    self.act(f"recovering: undid its integration merge {head[:12]}, which was never pushed")
            left.end()
        foreign = stale_locks_in(git_dir)
        if foreign:
            self.report.locks.extend(foreign)
            raise InputError(
                "a stale git lock blocks this clone",
                [Problem(lock.path, "", lock.describe(), f"clear it: {lock.command}") for lock in foreign],
            )
        for folder, what in (("rebase-merge", "a rebase"), ("rebase-apply", "a rebase or `git am`")):
            if (git_dir / folder).exists():
                raise InputError(
                    f"{what} is in progress",
                    [
                        Problem(
                            str(git_dir / folder),
                            "",
                            f"{what} is in progress in this clone (a killed script may have left it)",
                            "finish it (git rebase --continue) or undo it (git rebase --abort), then push again",
                        )
                    ],
                )
        if (git_dir / "MERGE_HEAD").exists():
            raise InputError(
                "a merge is in progress",
                [
                    Problem(
                        str(git_dir / "MERGE_HEAD"),
                        "",
                        "a merge is in progress in this clone",
                        "finish it (git commit) or undo it (git merge --abort), then push again",
                    )
                ],
            )

    def undo_staged_merge(self, data: dict, head: str | None) -> None:
        """A merge killed before its commit leaves the other side's files staged and in the work
        tree: switch the index and work tree back to the index it started from (files changed
        since are kept, as `git checkout` keeps them)."""
        index_before = data.get("index_before")
        if data.get("stage") != "merge" or head != data.get("head_before") or not isinstance(index_before, str):
            return
        now = self.git.maybe("write-tree")
        if not now or now == index_before:
            return
        count = len(self.git.diff_trees(index_before, now))
        if self.run_git("read-tree", "-m", "-u", now, index_before, check=False).returncode == 0:
            self.act(f"recovering: took back the {count} file(s) its merge had staged but not committed")

    # -- the commit ----------------------------------------------------------------------

    def commit_pending(self) -> None:
        """Commit the record files git does not track yet (and new ones already staged)."""
        folder = self.records_folder()
        out = self.run_git("ls-files", "-z", "--others", "--exclude-standard", "--", folder).stdout
        staged = self.run_git("diff", "--cached", "--name-only", "-z", "--diff-filter=A", "--", folder).stdout
        paths = [
            p
            for p in dict.fromkeys(out.split("\0") + staged.split("\0"))
            if p and not PurePosixPath(p).name.startswith(".tmp-")
        ]
        self.say_left_out(folder)
        if not paths:
            return
        records = sum(1 for p in paths if p.endswith(".json"))
        self.state_stage("commit")
        listing = "\0".join(paths) + "\0"
        self.run_git("add", "--pathspec-from-file=-", "--pathspec-file-nul", "--", stdin=listing)
        message = self.o.message or f"ledger: {records} record(s) from {self.label()}"
        proc = self.run_git(
            "commit",
            "--quiet",
            "-m",
            message,
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin=listing,
            check=False,
        )
        if proc.returncode != 0:
            raise InputError(
                "git commit failed",
                [
                    Problem(
                        str(self.ledger.root),
                        "git commit",
                        _commit_failure(proc.stderr) or proc.stdout.strip(),
                        _identity_fix(proc.stderr),
                    )
                ],
            )
        sha = self.rev("HEAD") or ""
        self.act(f"committed {records} record(s) as {sha[:12]} ({message})")

    def say_left_out(self, folder: str) -> None:
        """Committed record files changed or deleted in the work tree or index are never
        committed (records are append-only): say so, rather than leave them out silently."""
        changed = self.run_git("diff", "HEAD", "--name-only", "-z", "--diff-filter=MDT", "--", folder, check=False)
        names = [p for p in changed.stdout.split("\0") if p]
        if names:
            self.act(
                f"left out: {len(names)} committed record file(s) changed or deleted here, which a push never "
                f"commits (records are append-only), e.g. {names[0]}; undo it: git checkout HEAD -- {folder}"
            )

    def records_folder(self) -> str:
        top = self.git.toplevel.resolve()
        rel = self.ledger.records_dir.resolve().relative_to(top).as_posix()
        return rel

    def label(self) -> str:
        return self.o.job or job_label()

    def state_stage(self, stage: str, **fields: object) -> None:
        if self.state is not None:
            self.state.stage(stage, **fields)

    # -- the remote ----------------------------------------------------------------------

    def fetch(self) -> tuple[str | None, dict[str, str]]:
        """Fetch the branch and the queue: (the branch's commit or None, queue ref -> commit)."""
        specs = [f"+{self.branch_ref}:{self.tracking}", f"+{QUEUE}*:{self.queue_copy}*"]
        args = ["fetch", "--quiet", "--prune", "--no-tags", "--no-write-fetch-head", self.remote]
        proc = self.run_git(*args, *specs, check=False)
        if proc.returncode != 0 and "couldn't find remote ref" in proc.stderr:
            self.run_git("update-ref", "-d", self.tracking, check=False)
            proc = self.run_git(*args, specs[1], check=False)
        if proc.returncode != 0:
            raise InputError(
                "git fetch failed",
                [
                    Problem(
                        self.remote, "git fetch", proc.stderr.strip(), "check the remote's URL and your access to it"
                    )
                ],
            )
        return self.rev(self.tracking), self.queue()

    def queue(self) -> dict[str, str]:
        out = self.git.text("for-each-ref", "--format=%(refname) %(objectname)", self.queue_copy, check=False)
        found = {}
        for line in out.splitlines():
            ref, _, sha = line.partition(" ")
            found[QUEUE + ref[len(self.queue_copy) :]] = sha
        return found

    def held_by(self, commit: str | None, *, held: bool = True) -> dict[str, str]:
        """The queue refs whose commit `commit` holds (held=False: does not hold), in one git call."""
        queue = self.queue()
        if not commit:
            return {} if held else queue
        flag = "--merged" if held else "--no-merged"
        out = self.git.text("for-each-ref", flag, commit, "--format=%(refname)", self.queue_copy, check=False)
        names = {QUEUE + ref[len(self.queue_copy) :] for ref in out.split()}
        return {ref: sha for ref, sha in queue.items() if ref in names}

    def ls_remote(self) -> tuple[str | None, dict[str, str]] | None:
        """(the branch's commit, queue ref -> commit) as the remote has them now; None when unreachable."""
        proc = self.run_git("ls-remote", self.remote, self.branch_ref, f"{QUEUE}*", check=False)
        if proc.returncode != 0:
            return None
        branch, queue = None, {}
        for line in proc.stdout.splitlines():
            sha, _, ref = line.partition("\t")
            if ref == self.branch_ref:
                branch = sha
            elif ref.startswith(QUEUE):
                queue[ref] = sha
        return branch, queue

    def merge(self, tips: list[str], message: str) -> None:
        tips = [t for t in tips if t and not self.contains(t, "HEAD")]
        if not tips:
            return
        head_before = self.rev("HEAD")
        self.state_stage("merge", head_before=head_before, index_before=self.git.maybe("write-tree"))
        proc = self.run_git("merge", "--quiet", "--no-edit", "-m", message, *tips, check=False)
        if proc.returncode != 0:
            locked = _lock_error(proc.stderr)
            if locked is not None:
                raise locked
            conflicted = self.git.text("diff", "--name-only", "--diff-filter=U", check=False).split()
            self.run_git("merge", "--abort", check=False)
            raise InputError(
                "the merge conflicts",
                [
                    Problem(
                        path,
                        "",
                        "both this clone and the remote changed it (records never conflict: they are new files)",
                        f"merge by hand: git fetch {self.remote} && git merge {self.tracking}; then ledger push",
                    )
                    for path in conflicted
                ]
                or [Problem(str(self.ledger.root), "git merge", proc.stderr.strip(), _identity_fix(proc.stderr))],
            )

    def check(self, head: str, base_ref: str, base: str | None) -> CheckResult:
        """The pre-push check of `head` against the remote's `base_ref` at `base` (None: a new ref)."""
        line = f"{head} {head} {base_ref} {base or ZERO}\n"
        self.state_stage("check")
        cpu = time.process_time() + _children_cpu()
        result = run_check(self.ledger, mode="pre-push", pre_push_input=line, remote=self.remote)
        self.check_cpu = time.process_time() + _children_cpu() - cpu
        if result.warnings and not result.errors:
            self.report.warned = result
        return result

    def push_refs(
        self, updates: list[tuple[str | None, str, str | None]], *, atomic: bool
    ) -> tuple[dict[str, tuple[str, str]], str, int]:
        """One `git push`: (source commit or None to delete, remote ref, expected remote value
        or None). Returns (remote ref -> (porcelain flag, summary), stderr, exit status)."""
        args = ["push", "--porcelain", "--no-follow-tags"]
        if atomic:
            args.append("--atomic")
        for _src, ref, lease in updates:
            if lease:
                args.append(f"--force-with-lease={ref}:{lease}")
        args.append(self.remote)
        args += [f"{src}:{ref}" if src else f":{ref}" for src, ref, _ in updates]
        checked = " ".join(f"{src or ZERO}:{ref}" for src, ref, _ in updates)
        self.state_stage("push")
        proc = self.run_git(*args, check=False, env={CHECKED_ENV: checked})
        for text in _hook_lines(proc.stderr):
            if text not in self.report.hook_output:
                self.report.hook_output.append(text)
                self.say(f"git push said: {text}")
        status: dict[str, tuple[str, str]] = {}
        for line in proc.stdout.splitlines():
            parts = line.split("\t")
            if len(parts) >= 3 and ":" in parts[1]:
                status[parts[1].rsplit(":", 1)[1]] = (parts[0], parts[2])
        return status, proc.stderr, proc.returncode

    def lock_trouble(self, stderr: str) -> list[StaleLock]:
        """The stale locks behind a failed push: those git names, and their siblings in the same
        repository (git names one lock at a time; a killed ref update leaves the ref's and HEAD's)."""
        found: dict[str, StaleLock] = {}
        for named in locks_named(stderr):
            path = os.path.normpath(named)
            lock = inspect_lock(path)
            if lock is None or not lock.stale:
                continue
            found[path] = lock
            if lock.local:
                for sibling in stale_locks_in(repository_of(Path(path))):
                    found.setdefault(sibling.path, sibling)
        for lock in found.values():
            if lock.path not in {known.path for known in self.report.locks}:
                self.report.locks.append(lock)
        return list(found.values())

    # -- the run -------------------------------------------------------------------------

    def run(self) -> PushReport:
        start = time.monotonic()
        try:
            self.prepare()
            if self.o.integrate_only:
                self.integrate_only()
            else:
                self.push_own()
        finally:
            if self.state is not None:
                self.state.end()
            self.report.push_seconds = time.monotonic() - start
            self.report.seconds = max(self.report.push_seconds, since_process_start())
            self.report.cpu_seconds = time.process_time() + _children_cpu()
        return self.report

    def push_own(self) -> None:
        self.commit_pending()
        head = self.rev("HEAD")
        if head is None:
            raise InputError(
                "nothing committed",
                [Problem(str(self.ledger.root), "HEAD", "this clone has no commit yet", "commit, then ledger push")],
            )
        remote_head, queue = self.fetch()
        if remote_head and self.contains(head, remote_head):
            self.report.outcome, self.report.commit = "nothing", remote_head
            self.fast_forward(remote_head)
            self.report.message = f"nothing to push: {self.remote}/{self.branch} already holds {head[:12]}{self.waiting_note(remote_head)}"
            self.say(self.report.message)
            return
        self.report.records_new = self.records_between(remote_head or self.count_base, head)
        own = f"{QUEUE}{self.label()}-{self.rng.getrandbits(32):08x}" if self.o.queue else None
        for number in range(1, self.o.attempts + 1):
            began = time.monotonic()
            if number > 1:
                remote_head, queue = self.fetch()
            if remote_head and self.contains(head, remote_head):
                self.landed(remote_head)
                return
            if remote_head:
                self.merge([remote_head], f"Merge {self.remote}/{self.branch} (ledger push)")
            head = self.rev("HEAD") or head
            self.report.commit = head
            result = self.check(head, self.branch_ref, remote_head)
            if not result.errors:
                # A refusal's summary comes with its violations (report.check), once.
                self.say(_check_line(result))
            attempt = Attempt(
                number,
                "push" if number == 1 else "retry",
                "lost-race",
                0.0,
                result.seconds,
                self.check_cpu,
                result.records_checked,
            )
            if result.errors:
                attempt.outcome, attempt.seconds = "refused", time.monotonic() - began
                self.refused(result, attempt)
                return
            verdict = self.attempt_push(attempt, head, remote_head, queue, own if number == 1 else None, began)
            if verdict == "queued":
                self.wait_for_landing(head, attempt.seconds)
            if verdict != "retry":
                return
            if number < self.o.attempts:
                self.say(f"attempt {number}: {self.lost_why}; retrying")
                self.sleep(min(8.0, 0.25 * 2**number))
            else:
                self.say(f"attempt {number}: {self.lost_why}; that was the last of --attempts {self.o.attempts}")
        self.gave_up(head)

    def gave_up(self, head: str) -> None:
        """`--no-queue` lost every attempt: the records are in this clone's commit only. Say
        so, with the commit and the command that lands them, since a job's scratch clone is
        often deleted when the job ends. Not "blocked": no lock stopped it."""
        self.report.outcome = "gave-up"
        self.report.records = 0
        where = self.git.maybe("symbolic-ref", "--quiet", "--short", "HEAD")
        self.report.message = (
            f"gave up after {self.o.attempts} attempt(s): {self.remote}/{self.branch} kept moving, so nothing "
            f"landed: the {self.report.records_new} record(s) are committed only in this clone "
            f"({self.ledger.root}), at {head[:12]} on {f'branch {where}' if where else 'a detached HEAD'}, and are "
            f"NOT on {self.remote}. Keep this clone and land them: `ledger push` (without --no-queue: a push that "
            f"loses the race waits in a queue ref on {self.remote}), or `ledger push --no-queue --attempts "
            f"{max(8, 2 * self.o.attempts)}`"
        )
        self.say(self.report.message)

    def attempt_push(
        self, attempt: Attempt, head: str, remote_head: str | None, queue: dict[str, str], own: str | None, began: float
    ) -> str:
        """One push of `head` to the branch (and to the queue ref `own`), deleting queue refs
        the branch holds. Returns "done" (landed, or blocked), "queued" or "retry"."""
        updates: list[tuple[str | None, str, str | None]] = [(head, self.branch_ref, None)]
        if own:
            updates.append((head, own, None))
        updates += [(None, ref, sha) for ref, sha in sorted(self.held_by(remote_head).items())][:50]
        status, stderr, code = self.push_refs(updates, atomic=False)
        attempt.pushed = True
        flag, summary = status.get(self.branch_ref, ("!", stderr.strip().splitlines()[-1] if stderr.strip() else "?"))
        queued = own is not None and status.get(own, ("!", ""))[0] != "!"
        if queued:
            self.report.queue_ref = own
        attempt.seconds, attempt.detail = time.monotonic() - began, summary
        self.report.attempts.append(attempt)
        if flag != "!":
            attempt.outcome = "landed"
            # Its own queue ref, and any an earlier refused push of this clone left that the
            # branch now holds (a fix that descends from it), go: nothing stays queued.
            gone = {ref for src, ref, _ in updates if src is None}
            drop = {r: sha for r, sha in self.held_by(head).items() if r not in gone}
            drop.update({own: head} if queued and own else {})
            if drop:
                self.drop_queue_refs(drop)
            self.landed(head)
            if note := self.waiting_note(head):
                self.act(note.removeprefix("; "))
            return "done"
        if not status and code != 0:
            # No ref was tried: a hook of the user's own refused the push, or the remote is unreachable.
            attempt.outcome = "refused"
            raise InputError(
                "git push failed",
                [Problem(self.remote, "git push", stderr.strip() or "no output", "see git's message")],
            )
        if self.lock_trouble(stderr):
            attempt.outcome = "locked"
            self.blocked(queued)
            return "done"
        if not any(word in summary for word in _RACE):
            attempt.outcome = "refused"
            raise InputError(
                "the remote refused the push",
                [Problem(self.remote, self.branch_ref, summary, "see the remote's message above")],
            )
        self.lost_why = attempt.why = _lost_why(self.remote, self.branch, summary, stderr)
        if queued:
            attempt.outcome = "queued"
            self.say(f"attempt {attempt.number}: {self.lost_why}; queued as {own}")
            return "queued"
        return "retry"

    def waiting_note(self, branch_head: str) -> str:
        """Other writers' queued pushes the branch lacks, said with what lands them ("" when none).

        A plain push lands its own commit and does not integrate the queue, by design: it checks
        only what it adds, so the hook's time per push stays flat however long the queue is,
        and it does not race the waiting writers, whose integration lands their queue refs
        after the remote goes quiet (writers.md, step 6). A queue ref nobody waits for (`--wait
        0`, a job killed or timed out while it waited) is landed by `ledger push --integrate`
        (the job after the array, CI) or by its own clone's next `ledger push`. So a run that
        sees such refs names them and that command, rather than leave them unmentioned."""
        waiting = sorted(r for r in self.held_by(branch_head, held=False) if r != self.report.queue_ref)
        self.report.queue_waiting = waiting
        if not waiting:
            return ""
        shown = ", ".join(waiting[:3]) + (f" and {len(waiting) - 3} more" if len(waiting) > 3 else "")
        return (
            f"; {len(waiting)} queued push(es) of other writers wait on {self.remote} ({shown}): a plain "
            f"`ledger push` lands only its own records; `ledger push --integrate` lands them"
        )

    def drop_queue_refs(self, refs: dict[str, str]) -> None:
        """The branch took the commits of these queue refs in this push: delete them (each only
        if it still names its commit), so a push that landed leaves nothing queued. Not an
        attempt: it lands nothing; when it fails, the next writer's push deletes the refs."""
        status, _stderr, _code = self.push_refs([(None, ref, sha) for ref, sha in sorted(refs.items())], atomic=False)
        for ref in sorted(refs):
            if status.get(ref, ("!", ""))[0] != "!":
                own = ref == self.report.queue_ref
                if own:
                    self.report.queue_ref = None
                whose = "its queue ref" if own else "the queue ref an earlier push left,"
                self.act(f"removed {whose} {ref}: the branch holds its commit")

    def records_between(self, base: str | None, head: str) -> int:
        folder = self.records_folder()
        span = [head] if not base else [f"{base}..{head}"]
        try:
            out = self.git.run(
                "log", "--format=", "--name-only", "--diff-filter=A", "--no-renames", *span, "--", folder
            )
        except GitError:
            return 0
        return sum(1 for p in out.decode("utf-8", "surrogateescape").splitlines() if p.endswith(".json"))

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds * self.rng.uniform(0.5, 1.5))

    def wait_for_landing(self, head: str, first_attempt: float) -> None:
        """Queued: wait until the branch holds `head`; integrate when the remote stays quiet."""
        quiet = self.o.quiet if self.o.quiet is not None else min(8.0, max(0.5, first_attempt))
        quiet *= self.rng.uniform(1.0, 1.5)
        deadline = time.monotonic() + self.o.wait
        seen: tuple | None = None
        changed = time.monotonic()
        interval = 0.3
        known_branch = self.rev(self.tracking)
        landed_for: str | None = None
        landed_refs: set[str] = set()
        while time.monotonic() < deadline:
            self.sleep(interval)
            interval = min(interval * 1.5, 3.0)
            now = self.ls_remote()
            if now is None:
                continue
            branch, queue = now
            key = (branch, tuple(sorted(queue.items())))
            if key != seen:
                seen, changed = key, time.monotonic()
            if branch and branch != known_branch:
                known_branch = self.fetch()[0]
                if known_branch and self.contains(head, known_branch):
                    self.landed(known_branch)
                    return
            # One integrator at a time: the writers waiting see the same queue, and the one whose
            # ref sorts first among those the branch lacks integrates after `quiet`, the next
            # one only 2 x `quiet` later (the first was killed, or is refused), and so on. (With
            # the turns capped, 63 jobs under load all merged the same 63 heads at once.)
            if landed_for != known_branch:
                landed_for, landed_refs = known_branch, set(self.held_by(known_branch))
            waiting = {ref: sha for ref, sha in queue.items() if sha != branch and ref not in landed_refs}
            turn = quiet * (1 + 2 * _rank(self.report.queue_ref, waiting))
            if time.monotonic() - changed >= turn and len(self.report.attempts) < self.o.attempts:
                if self.integrate(head):
                    return
                known_branch = self.rev(self.tracking)
                changed = time.monotonic()
        self.report.outcome = "queued"
        self.report.records_queued = self.report.records_new
        self.report.message = (
            f"still queued after {self.o.wait:.0f} s: {self.report.queue_ref} is on {self.remote}, safe; "
            f"`ledger push --integrate` from any clone (the job after the array, CI) lands it on {self.branch}, "
            "as does `ledger push` again in this clone (another writer's plain push lands only its own)"
        )
        self.say(self.report.message)

    def integrate_only(self) -> None:
        remote_head, _ = self.fetch()
        head = self.rev("HEAD")
        if remote_head and head and self.contains(head, remote_head):
            self.fast_forward(remote_head)
        while len(self.report.attempts) < self.o.attempts:
            if self.integrate(None):
                return
            self.sleep(1.0)

    def integrate(self, head: str | None) -> bool:
        """One integration: merge every queued commit the branch lacks into one merge, check
        it as the hook would, push it and delete the queue refs it holds in one atomic push.
        `head` is this run's own commit (None: integrate only). True when the run is over."""
        began = time.monotonic()
        number = len(self.report.attempts) + 1
        remote_head, _queue = self.fetch()
        if head and remote_head and self.contains(head, remote_head):
            self.landed(remote_head)
            return True
        waiting = self.held_by(remote_head, held=False)
        if head is None and not waiting:
            self.report.outcome = "nothing"
            self.report.message = f"nothing queued: every queued push is on {self.remote}/{self.branch}"
            self.say(self.report.message)
            return True
        before = self.rev("HEAD")
        tips = self.independent([sha for sha in waiting.values() if sha != head])
        self.state_stage("integrate", integrating=before)
        attempt = Attempt(number, "integrate", "lost-race", 0.0)
        result = self.merge_and_check([*([remote_head] if remote_head else []), *tips], len(waiting), remote_head)
        refused: dict[str, CheckResult] = {}
        if result.errors:
            self.reset(before)
            result, refused, own_refused = self.merge_what_passes(tips, waiting, remote_head, head)
            if own_refused is not None:
                attempt.outcome, attempt.seconds = "refused", time.monotonic() - began
                self.reset(before)
                self.refused(own_refused, attempt)
                return True
        attempt.check_seconds, attempt.records_checked, attempt.check_cpu_seconds = (
            result.seconds,
            result.records_checked,
            self.check_cpu,
        )
        self.say(_check_line(result))
        held = self.held_by(merged := self.rev("HEAD") or "")
        landing = [ref for ref in held if ref in waiting]
        if head is None and not landing and refused:
            self.all_refused(refused, before)
            return True
        updates: list[tuple[str | None, str, str | None]] = [(merged, self.branch_ref, None)]
        updates += [(None, ref, sha) for ref, sha in sorted(held.items())]
        status, stderr, _code = self.push_refs(updates, atomic=True)
        flag, summary = status.get(self.branch_ref, ("!", stderr.strip()))
        attempt.seconds, attempt.detail, attempt.pushed = time.monotonic() - began, summary, True
        self.report.attempts.append(attempt)
        self.state_stage("integrated", integrating=None)
        if flag != "!":
            attempt.outcome = "landed"
            self.report.integrated += len(landing)
            if self.o.integrate_only:
                # This run brings no records of its own: what it landed is what it integrated.
                self.report.records = self.records_between(remote_head, merged)
            self.act(f"attempt {number}: integrated {len(landing)} queued push(es) into {self.branch}")
            self.leave_queued(refused)
            self.landed(merged)
            return True
        self.reset(before)
        if self.lock_trouble(stderr):
            attempt.outcome = "locked"
            self.blocked(True)
            return True
        self.say(
            f"attempt {number}: {_why(attempt, self.remote, self.branch, summary, stderr)}; waiting, then retrying"
        )
        return False

    def all_refused(self, refused: dict[str, CheckResult], before: str | None) -> None:
        """`--integrate` and every queued push failed the check: nothing goes to the branch,
        so no push is made and nothing is said to have landed (a CI step reads `outcome`)."""
        self.reset(before)
        self.state_stage("integrated", integrating=None)
        self.report.outcome = "refused"
        self.report.records = 0
        self.leave_queued(refused)
        why = "; ".join(f"{ref} fails {', '.join(self.report.left_queued[ref])}" for ref in sorted(refused))
        self.report.message = (
            f"nothing landed: the check refused all {len(refused)} queued push(es) ({why}); "
            f"they stay queued on {self.remote}, and {self.remote}/{self.branch} is unchanged"
        )
        self.say(self.report.message)

    def leave_queued(self, refused: dict[str, CheckResult]) -> None:
        """Name each queued push the integration could not take, and how to recover it."""
        for ref, bad in refused.items():
            rules = sorted({v.rule for v in bad.errors})
            self.report.left_queued[ref] = rules
            self.report.left_queued_checks[ref] = bad
            self.act(
                f"left queued: {ref} fails {', '.join(rules)}; its writer's next `ledger push` says how to "
                f"correct it, or from any clone: `git fetch {self.remote} {ref} && git merge --no-edit "
                f"FETCH_HEAD`, add the record the check's fix names, `ledger push` (the push that lands them "
                f"deletes {ref})"
            )
        self.one_fix_per_fork(refused)

    def one_fix_per_fork(self, refused: dict[str, CheckResult]) -> None:
        """Several queued pushes correcting one record are each refused naming one pair (the
        landed correction and theirs), and following those fixes in turn is refused again: say
        the one fix that ends the fork, a record that supersedes every live correction."""
        ids_of: dict[str, set[str]] = {}
        refs_of: dict[str, list[str]] = {}
        for ref, bad in sorted(refused.items()):
            for v in bad.errors:
                found = _FORK.match(v.message) if v.rule == "correction-fork" else None
                if found is None:
                    continue
                target, others = found.group(1), found.group(2).split(" and ")
                ids_of.setdefault(target, set()).update(PurePosixPath(p).stem for p in [v.file, *others])
                refs_of.setdefault(target, []).append(ref)
        queue = self.queue()
        for target, refs in refs_of.items():
            if len(refs) < 2:
                continue
            ids = ", ".join(f'"{i}"' for i in sorted(ids_of[target]))
            shas = " ".join(queue.get(ref, ref) for ref in refs)
            self.act(
                f"one fix for the {len(refs)} queued corrections of {target}: from any clone, "
                f"`git fetch {self.remote} {' '.join(refs)} && git merge --no-edit {shas}`, write one record "
                f'with the figures that stand and `"supersedes": [{ids}]`, then `ledger push` (it lands them all '
                "and deletes their queue refs)"
            )

    def independent(self, shas: list[str]) -> list[str]:
        """The commits of `shas` that none of the others contains (each queue entry once)."""
        shas = list(dict.fromkeys(shas))
        if len(shas) < 2:
            return shas
        out = set(self.git.text("merge-base", "--independent", *shas, check=False).split())
        return [s for s in shas if s in out] or shas

    def merge_and_check(self, tips: list[str], count: int, remote_head: str | None) -> CheckResult:
        self.merge(tips, f"Integrate {count} queued ledger push(es) into {self.branch} (ledger push)")
        return self.check(self.rev("HEAD") or "", self.branch_ref, remote_head)

    def merge_what_passes(
        self, tips: list[str], waiting: dict[str, str], remote_head: str | None, head: str | None
    ) -> tuple[CheckResult, dict[str, CheckResult], CheckResult | None]:
        """The combined merge failed the check: check each queued commit alone (as the hook
        checks a new ref), then add those that pass one at a time, so of two that clash (two
        corrections of one record) only the first goes in. Returns (the check of what goes
        in, queue ref -> the check that refused it, the check that refused `head` or None)."""
        refs_of: dict[str, list[str]] = {}
        for ref, sha in waiting.items():
            refs_of.setdefault(sha, []).append(ref)
        refused: dict[str, CheckResult] = {}
        for sha in ([head] if head else []) + tips:
            alone = self.check(sha, f"{QUEUE}check", None)
            if alone.errors:
                if sha == head:
                    return alone, refused, alone
                for ref in refs_of.get(sha, []):
                    refused[ref] = alone
        base = self.rev("HEAD")
        accepted = [remote_head] if remote_head else []
        for sha in tips:
            if any(ref in refused for ref in refs_of.get(sha, [])):
                continue
            self.merge([*accepted, sha], f"Integrate queued ledger pushes into {self.branch} (ledger push)")
            trial = self.check(self.rev("HEAD") or "", self.branch_ref, remote_head)
            self.reset(base)
            if not trial.errors:
                accepted.append(sha)
            elif sha != head:
                for ref in refs_of.get(sha, []):
                    refused[ref] = trial
        if head is not None:
            # This run's own commit clashes with what the others bring: it is the one refused.
            self.merge(accepted, f"Integrate queued ledger pushes into {self.branch} (ledger push)")
            own = self.check(self.rev("HEAD") or "", self.branch_ref, remote_head)
            if own.errors:
                self.reset(base)
                return own, refused, own
            return own, refused, None
        self.merge(accepted, f"Integrate {len(accepted)} queued ledger push(es) into {self.branch} (ledger push)")
        return self.check(self.rev("HEAD") or "", self.branch_ref, remote_head), refused, None

    def reset(self, commit: str | None) -> None:
        if commit and self.rev("HEAD") != commit:
            self.run_git("reset", "--quiet", "--keep", commit)

    # -- endings -------------------------------------------------------------------------

    def landed(self, commit: str) -> None:
        self.report.outcome = "landed"
        self.report.commit = commit
        self.report.records_queued = 0
        # The branch holds the commit: nothing of this run waits in a queue ref any more, whoever
        # landed it (this push, or another writer's integration, whose atomic push deleted the
        # ref). A deletion that failed leaves a ref the next push deletes; it holds nothing new.
        self.report.queue_ref = None
        if not self.o.integrate_only:
            self.report.records = self.report.records_new
        self.fast_forward(self.rev(self.tracking) or commit)
        self.report.message = (
            f"landed: {self.report.records} record(s) on {self.remote}/{self.branch} at {commit[:12]} "
            f"after {self.report.pushes} push(es)"
        )
        self.say(self.report.message)

    def fast_forward(self, commit: str) -> None:
        head = self.rev("HEAD")
        if head and head != commit and self.contains(head, commit):
            self.run_git("merge", "--quiet", "--ff-only", commit, check=False)

    def refused(self, result: CheckResult, attempt: Attempt) -> None:
        self.report.outcome = "refused"
        self.report.check = result
        self.report.attempts.append(attempt)
        # The check's fix names records of the remote's branch (the other correction of a
        # forked record): merge the branch, as `git pull --no-rebase` would, so that fix can be
        # followed in this clone as printed (records never conflict: they are new files).
        tracking = self.rev(self.tracking)
        if tracking:
            self.merge([tracking], f"Merge {self.remote}/{self.branch} (ledger push)")
        names = sorted({v.rule for v in result.errors})
        rules = ", ".join(names)
        queued = ""
        if self.report.queue_ref:
            self.report.records_queued = self.report.records_new
            queued = (
                f"; its queue ref {self.report.queue_ref} stays on {self.remote} (never integrated: it fails the "
                "check), and the push that lands the fix deletes it"
            )
        self.report.message = (
            f"refused by the check ({rules}): nothing landed; this clone holds {self.remote}/{self.branch} merged, "
            f"so the fix below works here: {_lead(names)}, then `ledger push`{queued}"
        )
        self.say(self.report.message)

    def blocked(self, queued: bool) -> None:
        self.report.outcome = "blocked"
        self.report.records = 0
        self.report.records_queued = self.report.records_new if queued and self.report.queue_ref else 0
        where = f"; its records are safe in {self.report.queue_ref}" if queued and self.report.queue_ref else ""
        lines = [f"blocked: {lock.describe()}{where}. Clear it: {lock.command}" for lock in self.report.locks]
        for line in lines:
            self.say(line)
        # The message is the last line said, as for every other outcome; with several locks, the
        # one command that clears them all, said last so the two agree.
        if len(lines) > 1:
            lines.append(
                f"blocked by {len(lines)} stale locks{where}. Clear them: "
                + " && ".join(lock.command for lock in self.report.locks)
            )
            self.say(lines[-1])
        self.report.message = lines[-1] if lines else f"blocked: a stale lock on {self.remote}{where}"


#: What a refusal's fix asks, by rule, for the lead-in of the message (the violations below
#: hold the exact fix): a `sha-resolves` fix is a tag push, not a record.
_LEADS = {
    "correction-fork": "write the record it names",
    "sha-resolves": "push the `ledger-keep` tag each fix names (it keeps the rewritten commit reachable)",
}


def _lead(rules: list[str]) -> str:
    """The lead-in of a refusal: each rule's own fix, or "follow the fix" for one without a lead."""
    leads = list(dict.fromkeys(_LEADS.get(rule, f"follow the {rule} fix") for rule in rules))
    return "; ".join(leads) if leads else "follow the fix"


def _lock_error(stderr: str) -> InputError | None:
    """A git command of this clone refused by a lock another git holds (`Unable to create
    '.../index.lock': File exists`): the lock, its age and what clears it, in one place for
    every git this push runs, rather than an internal error or "see git's message". (Its own
    killed git's locks are cleared by recovery before any of them runs.)"""
    held = [lock for lock in map(inspect_lock, locks_named(stderr)) if lock is not None]
    if not held:
        return None
    return InputError(
        "a git lock blocks this clone",
        [
            Problem(
                lock.path,
                "",
                lock.describe(),
                f"clear it: {lock.command}" if lock.stale else "wait for that git to finish, then push again",
            )
            for lock in held
        ],
    )


def _why(attempt: Attempt, remote: str, branch: str, summary: str, stderr: str) -> str:
    """`_lost_why`, kept on the attempt too, so the JSON says what the text says."""
    attempt.why = _lost_why(remote, branch, summary, stderr)
    return attempt.why


def _lost_why(remote: str, branch: str, summary: str, stderr: str) -> str:
    """What a lost race was, from git's words: the remote's ref locked by another writer's
    push at that moment (a lock git holds for milliseconds; a stale one is `blocked`), or the
    branch moved on because another writer landed first."""
    text = f"{summary}\n{stderr}"
    named = locks_named(stderr)
    if named or "cannot lock ref" in text or "failed to update ref" in text or "failed to lock" in text:
        where = f" ({named[0]})" if named else ""
        return (
            f"{remote}'s ref {branch} was locked by another writer's push at that moment{where}, "
            "so this update could not take it"
        )
    if "atomic push failed" in text:
        return f"another writer's push changed {remote} at the same moment (this push is atomic: none of it went in)"
    return f"{remote}/{branch} moved on: another writer landed first"


#: A correction-fork violation's message: the record corrected, and the other live corrections.
_FORK = re.compile(r"corrects record (\w+), and so does (.+?): \d+ live corrections")

#: git's own lines on a push's stderr, which the report says in its words (lost races, locks).
_GIT_OWN = (
    "To ",
    "hint:",
    "error: failed to push some refs",
    "Everything up-to-date",
    "error: cannot lock ref",
    "remote: error: cannot lock ref",
    "error: update_ref failed",
    "remote: error: update_ref failed",
    "error: atomic push failed",
    "Done",
)


def _hook_lines(stderr: str) -> list[str]:
    """The lines of a `git push`'s stderr that git did not write itself: what the user's
    chained pre-push hook and the remote's hooks printed (warnings among them)."""
    out = []
    for line in stderr.splitlines():
        text = line.rstrip()
        if text.strip() and not text.lstrip().startswith(_GIT_OWN) and not text.startswith(" ! "):
            out.append(text)
    return out


def _rank(own: str | None, queue: dict[str, str]) -> int:
    """This writer's place among the queue refs the remote lists (0 when its own is not listed)."""
    refs = sorted(queue)
    return refs.index(own) if own in refs else 0


def since_process_start() -> float:
    """Wall seconds since this process started, read from the kernel (`/proc/self/stat`'s
    start time against the boot clock), so the interpreter's start and the imports count;
    0.0 where that cannot be read."""
    try:
        fields = Path("/proc/self/stat").read_text().rpartition(")")[2].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return 0.0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _check_line(result: CheckResult) -> str:
    verdict = "refused" if result.errors else "ok"
    return (
        f"ledger check (pre-push): {result.records_checked} record(s), {result.pages_checked} page(s): "
        f"{len(result.errors)} error(s), {len(result.warnings)} warning(s) in {result.seconds:.2f} s: {verdict}"
    )


def _commit_failure(stderr: str) -> str:
    """What a failed `git commit` said: for a missing identity, git's one-line reason, not
    its page of advice about `--global` config."""
    if "Author identity unknown" in stderr or "tell me who you are" in stderr:
        fatal = [line for line in stderr.splitlines() if line.startswith("fatal:")]
        return "git has no identity to commit with" + (f" ({fatal[-1]})" if fatal else "")
    return stderr.strip()


def _identity_fix(stderr: str) -> str:
    if "tell me who you are" in stderr or "user.email" in stderr:
        return 'tell git who commits: git config user.name "NAME" && git config user.email ADDRESS'
    return "see git's message"


def push(ledger, options: PushOptions | None = None, say: Callable[[str], None] | None = None) -> PushReport:
    """Land this clone's records on the remote's branch (see the module's docstring).
    `say` hears what it does as it does it; the report holds the same and the figures."""
    return _Run(ledger, options or PushOptions(), say or (lambda _text: None)).run()


__all__ = ["QUEUE", "Attempt", "PushOptions", "PushReport", "job_label", "push"]
