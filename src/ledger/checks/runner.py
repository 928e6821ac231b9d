"""Run the rules over the whole ledger (`--all`) or over what a range of commits adds
(`--base REF`, `--pushed`, `--pre-push`).

`Checker` only orchestrates; each job has its module: `findings` (the rules that are on,
and what they found), `trees` (a tree of records on disk or in a commit, which the rules
read through), `perfile` (per-file rules over many files), `crossrecord` and `shas` (rules
between records), `wholeledger` (`--all`), `commits` (a range of commits and the records
folder's history) and `pushes` (what only a push has: remote branches, deletions).
"""

from __future__ import annotations

import time
from pathlib import Path

from ..config import CONFIG_NAME
from ..errors import InputError, Problem
from ..git import Git, GitError, is_zero
from ..store.ledger import Ledger
from .commits import RangeCheck, check_history
from .findings import Findings
from .info import Info
from .pushes import check_deletion, check_ignored, new_ref_base
from .registry import configure
from .result import CheckResult
from .shas import Pushing
from .wholeledger import check_whole_ledger


class Checker:
    """One check of one ledger: which rules, over what, in which mode."""

    def __init__(self, ledger: Ledger, mode: str):
        self.ledger = ledger
        self.mode = mode
        self.findings = Findings(mode, ledger.config, configure(ledger.config.rules, CONFIG_NAME))
        self.result: CheckResult = self.findings.result
        #: The records read so far, by id (shared by the ranges of one push).
        self.infos: dict[str, Info] = {}
        self._git: Git | None = None
        #: Answer unmodified record files from the verification cache (checks/cache.py).
        self.use_cache = True
        #: pre-push: the remote pushed to and the local commits the push sends.
        self.remote: str | None = None
        self.pushed: list[str] = []

    @property
    def git(self) -> Git:
        if self._git is None:
            # At the top of the repository: every path the checks give git (`rev:path`,
            # pathspecs, `ls-tree` of a tree) is relative to the top, and git reads a
            # pathspec relative to the folder it runs in. Run from a ledger below the top,
            # the ranges saw no record and the key index was empty.
            git = Git(self.ledger.root)
            top = git.maybe("rev-parse", "--show-toplevel")
            self._git = Git(Path(top)) if top else git
        return self._git

    def run_all(self) -> None:
        """--all: every record and page on disk, then the records folder's history at HEAD."""
        self.infos = check_whole_ledger(self.findings, self.ledger, self.git, self.use_cache)
        self.check_history("HEAD")

    def run_range(self, base: str, head: str) -> None:
        """What the commits from BASE to HEAD add, judged by the base side's committed config."""
        pushing = Pushing(self.git, self.remote, self.pushed) if self.mode == "pre-push" else None
        RangeCheck(self.findings, self.ledger, self.git, base, head, self.infos, pushing).run()

    def check_history(self, head: str) -> None:
        check_history(self.findings, self.ledger, self.git, head, self.use_cache)

    def check_deletion(self, remote_ref: str, remote_sha: str) -> None:
        check_deletion(self.findings, self.ledger, self.git, self.remote, remote_ref, remote_sha)

    def check_ignored(self) -> None:
        if self.pushed and self.findings.on("records-ignored"):
            check_ignored(self.findings, self.ledger, self.git)

    def new_ref_base(self, local: str) -> str:
        return new_ref_base(self.git, self.remote, local)


def parse_pre_push(text: str) -> list[tuple[str, str, str, str]]:
    lines = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise InputError(
                "bad pre-push input",
                [
                    Problem(
                        "<stdin>",
                        f"line {n}",
                        f"expected `LOCAL_REF LOCAL_SHA REMOTE_REF REMOTE_SHA`, got {line!r}",
                        "run through git's pre-push hook (`ledger hook install`)",
                    )
                ],
            )
        lines.append((parts[0], parts[1], parts[2], parts[3]))
    return lines


def run_check(
    ledger,
    *,
    mode: str = "all",
    base: str | None = None,
    pre_push_input: str | None = None,
    remote: str | None = None,
    use_cache: bool = True,
) -> CheckResult:
    """Check the ledger. mode: "all" (every record and page), "base" (what HEAD adds since
    `base`, compared with their merge base) or "pre-push" (what git's pre-push input adds).
    Raises LedgerError (exit 2) for bad usage; violations are in the result."""
    start = time.perf_counter()
    checker = Checker(ledger, mode)
    checker.use_cache = use_cache
    try:
        if mode == "all":
            checker.run_all()
        elif mode == "base":
            if not base:
                raise InputError(
                    "--base needs a ref",
                    [Problem("<command line>", "--base", "no ref given", "e.g. `ledger check --base origin/main`")],
                )
            git = checker.git
            head = git.rev("HEAD")
            try:
                ref = git.rev(base)
            except GitError:
                raise InputError(
                    f"no such ref {base!r}",
                    [
                        Problem(
                            "<command line>",
                            "--base",
                            f"{base!r} is not a commit here",
                            "fetch it first, or give a branch, tag or SHA",
                        )
                    ],
                ) from None
            merge_base = git.text("merge-base", ref, head, check=False) or ref
            checker.run_range(merge_base, head)
            checker.check_history(head)
        elif mode == "pre-push":
            checker.remote = remote
            lines = parse_pre_push(pre_push_input or "")
            checker.pushed = [local_sha for _, local_sha, _, _ in lines if not is_zero(local_sha)]
            for _local_ref, local_sha, remote_ref, remote_sha in lines:
                if is_zero(local_sha):
                    checker.check_deletion(remote_ref, remote_sha)
                elif not checker.git.has_commit(local_sha):
                    # A tag at a tree or blob: no history, no records a branch serves (was an
                    # internal error reading its commit time).
                    continue
                elif is_zero(remote_sha):
                    checker.run_range(checker.new_ref_base(local_sha), local_sha)
                elif not checker.git.has_commit(remote_sha):
                    # Another writer pushed since this clone fetched: the push is behind the
                    # remote, which is no rewrite, and git refuses it as `fetch first`.
                    checker.findings.emit(
                        "behind-remote",
                        remote_ref,
                        f"the remote's {remote_ref} moved on to {remote_sha[:12]}, which this clone has not "
                        "fetched: another writer pushed first, so this push is behind the remote "
                        "(nothing in it was judged wrong)",
                    )
                else:
                    checker.run_range(remote_sha, local_sha)
            checker.check_ignored()
        elif mode == "pushed":
            # CI after a push: HEAD replaced `base` (github.event.before); zeros: a new branch.
            git = checker.git
            checker.remote = remote
            head = git.rev("HEAD")
            if not base or is_zero(base):
                checker.run_range(checker.new_ref_base(head), head)
            elif not git.has_commit(base):
                raise InputError(
                    f"no commit {base!r}",
                    [
                        Problem(
                            "<command line>",
                            "--pushed",
                            f"{base!r} is not a commit in this clone",
                            "fetch the whole history (actions/checkout `fetch-depth: 0`)",
                        )
                    ],
                )
            else:
                checker.run_range(git.rev(base), head)
            checker.check_history(head)
        else:
            raise InputError(
                f"unknown mode {mode!r}",
                [Problem("<api>", "mode", f"unknown mode {mode!r}", "use all, base or pre-push")],
            )
    except GitError as exc:
        raise InputError(
            "git failed", [Problem(str(ledger.root), "git", str(exc), "run inside a git checkout of the ledger")]
        ) from None
    checker.result.seconds = time.perf_counter() - start
    return checker.result
