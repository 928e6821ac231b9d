"""What only a push has: the remote's branches (a new branch's base), a deleted branch, and
.gitignore lines that would hide records from it."""

from __future__ import annotations

from pathlib import PurePosixPath

from ..config import CONFIG_NAME
from ..git import EMPTY_TREE, Git
from ..schema.registry import KINDS
from ..store.ledger import Ledger
from .commits import ledger_prefix
from .findings import Findings
from .history import ignore_problems
from .policy import config_at, judge_config


def remote_heads(git: Git, remote: str | None) -> dict[str, str]:
    """refs/heads/NAME -> sha on the remote pushed to, and "HEAD" -> its default branch's
    ref name when known: the local tracking refs, else one `git ls-remote` (asked only
    for a new or deleted branch)."""
    heads: dict[str, str] = {}
    if remote and "/" not in remote and ":" not in remote:
        out = git.text("for-each-ref", "--format=%(refname) %(objectname)", f"refs/remotes/{remote}/", check=False)
        for line in out.splitlines():
            ref, _, sha = line.partition(" ")
            name = ref[len(f"refs/remotes/{remote}/") :]
            if name != "HEAD":
                heads[f"refs/heads/{name}"] = sha
        default = git.text("symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD", check=False)
        if default:
            heads["HEAD"] = "refs/heads/" + default[len(f"refs/remotes/{remote}/") :]
    if remote and (not heads or "HEAD" not in heads):
        out = git.text("ls-remote", "--symref", remote, "HEAD", "refs/heads/*", check=False)
        for line in out.splitlines():
            left, _, name = line.partition("\t")
            if left.startswith("ref: ") and name == "HEAD":
                heads["HEAD"] = left[5:]
            elif name.startswith("refs/heads/"):
                heads.setdefault(name, left)
    if "HEAD" not in heads:
        for name in ("refs/heads/main", "refs/heads/master"):
            if name in heads:
                heads["HEAD"] = name
                break
    return heads


def new_ref_base(git: Git, remote: str | None, local: str) -> str:
    """For a ref the remote does not have yet: the merge base with the remote's default
    branch when they share history, else the closest commit any remote branch has
    (a new branch is judged against what the remote already holds, never against
    nothing while the remote has something)."""
    heads = remote_heads(git, remote)
    tips = [sha for name, sha in heads.items() if name != "HEAD" and git.has_commit(sha)]
    if not remote:
        tips += git.text("for-each-ref", "--format=%(objectname)", "refs/remotes", check=False).split()
    default = heads.get(heads.get("HEAD", ""), "")
    if default and git.has_commit(default):
        mb = git.text("merge-base", local, default, check=False)
        if mb:
            return mb
    best, best_count = EMPTY_TREE, None
    for sha in dict.fromkeys(tips):
        mb = git.text("merge-base", local, sha, check=False)
        if not mb:
            continue
        count = int(git.text("rev-list", "--count", f"{mb}..{local}"))
        if best_count is None or count < best_count:
            best, best_count = mb, count
    return best


def check_ignored(f: Findings, ledger: Ledger, git: Git) -> None:
    """records-ignored: a .gitignore line must not hide records from git (pre-push)."""
    top = git.toplevel
    changed_ignores = any(git.diff(base, head, [":(glob)**/.gitignore"]) for base, head in f.result.ranges)
    folder = ledger_prefix(ledger, git) + f.records_rel
    for source, line, message in ignore_problems(Git(top), folder, sorted(KINDS), walk=changed_ignores):
        f.emit("records-ignored", source, message, line=line)


def check_deletion(f: Findings, ledger: Ledger, git: Git, remote: str | None, remote_ref: str, remote_sha: str) -> None:
    """A push that deletes a remote branch drops the records only it holds: refused when
    the branch is the remote's default one and holds records, or holds records the
    default branch lacks."""
    if not f.on("append-only"):
        return
    if not git.has_commit(remote_sha):
        f.emit(
            "behind-remote",
            remote_ref,
            f"the push deletes {remote_ref}, which moved on to {remote_sha[:12]} on the remote and which this "
            "clone has not fetched, so what the deletion drops cannot be checked",
            fix=f"`git fetch` first, then look at what {remote_ref} holds; to drop a branch that holds records, "
            "ask whoever protects the remote",
        )
        return
    prefix = ledger_prefix(ledger, git)
    policy = judge_config(config_at(git, remote_sha, prefix + CONFIG_NAME), None, ledger.config)
    folder = prefix + PurePosixPath(policy.config.records).as_posix().strip("/")
    heads = remote_heads(git, remote)
    default_ref = heads.get("HEAD")
    default = heads.get(default_ref or "")
    if default_ref == remote_ref or not default or not git.has_commit(default):
        dropped = [p for p in git.ls_tree(remote_sha, folder + "/") if not p.endswith("/.gitignore")]
        against = "the remote's default branch" if default_ref == remote_ref else "no default branch known"
    else:
        dropped = [p for st, p in git.diff(default, remote_sha, [folder + "/"]) if st in "AMT"]
        against = f"the default branch {default_ref}"
    if dropped:
        f.emit(
            "append-only",
            remote_ref,
            f"the push deletes {remote_ref}, dropping {len(dropped)} record file(s) that {against} does not hold "
            f"(first: {dropped[0]})",
            fix="Do not delete a branch that holds records; merge it into the default branch first. "
            "The remote should refuse deletions too (receive.denyDeletes, or a branch ruleset).",
        )
