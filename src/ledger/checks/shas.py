"""sha-resolves, sha-abbreviated, sha-foreign, sha-unverified: the source commits records name,
looked up in the clone of the repository they measured (the ledger's `source`, or `sources:`).

A commit is verified or refused, never trusted because of its label: one of an undeclared
repository that the source checkout lacks is an error (sha-foreign); one of a declared
repository is looked up in its clone, and when that clone is absent from this checkout it is
an error too (sha-unverified), unless the ledger's config lowered that rule with a note."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..config import CONFIG_NAME
from ..git import Git, GitError
from .findings import Findings
from .info import Info


@dataclass(frozen=True)
class Pushing:
    """A pre-push check: the ledger's repository, the remote pushed to and the commits the push sends."""

    git: Git
    remote: str | None = None
    pushed: list[str] = field(default_factory=list)


def same_repo(repo: str, source: Git) -> bool:
    """True when `repo` (a record's source.repo) names the checkout `source` (its origin or its path)."""

    def norm(text: str) -> str:
        text = text.strip().rstrip("/").removesuffix(".git").lower()
        text = text.split("://", 1)[-1].split("@", 1)[-1]  # scheme and credentials
        return text.replace(":", "/")

    origin = source.text("config", "--get", "remote.origin.url", check=False)
    if origin and norm(origin) == norm(repo):
        return True
    if repo.startswith("git-root:"):
        # A checkout without a remote is named by its root commit (ledger.store.stamps.repository_identity).
        roots = source.text("rev-list", "--max-parents=0", "HEAD", check=False).split()
        return repo.removeprefix("git-root:") in roots
    try:
        return Path(repo).resolve() == source.toplevel.resolve()
    except (OSError, GitError):
        return False


def check_shas(f: Findings, infos: list[Info], root: Path, pushing: Pushing | None = None) -> None:
    """The source commits of `infos`, per repository; `root` is the ledger's folder (the
    config's `source` paths are relative to it)."""
    if not any(f.on(r) for r in ("sha-resolves", "sha-abbreviated", "sha-foreign", "sha-unverified")):
        return
    by_repo: dict[str | None, dict[str, list[Info]]] = defaultdict(lambda: defaultdict(list))
    for info in infos:
        if info.sha:
            by_repo[info.repo][info.sha].append(info)
    for repo, by_sha in by_repo.items():
        _check_repo_shas(f, root, pushing, repo, by_sha)


def _check_repo_shas(
    f: Findings, root: Path, pushing: Pushing | None, repo: str | None, by_sha: dict[str, list[Info]]
) -> None:
    """The commits of one repository (source.repo; None for the ledger's source checkout).

    A repository declared by `sources:` in ledger.yaml is verified in that clone; when the
    clone is absent here, its commits are reported once as unverifiable (sha-unverified, an
    error by default). Any other commit is looked up in the source checkout; one that is not there and
    whose record names another repository (an imported result, a checkout stamped with
    --source, or a made-up SHA labelled as another repository's) is reported once per
    repository (sha-foreign, an error): no clone could verify it.
    """
    config = f.config
    declared = repo is not None and repo in config.sources
    where = config.sources[repo] if declared and repo is not None else config.source
    source = Git((root / where).resolve())
    if declared and not (root / where).exists():
        infos = [i for group in by_sha.values() for i in group]
        f.emit(
            "sha-unverified",
            infos[0].path,
            f"{len(infos)} record(s) name {len(by_sha)} commit(s) of {repo}, whose clone `sources:` declares "
            f"at {where!r}, which is not here: unverifiable in this checkout",
            field="source.repo",
        )
        return
    if not source.is_repo():
        first = next(iter(by_sha.values()))[0]
        f.emit(
            "sha-resolves",
            CONFIG_NAME,
            f"the source checkout {where!r}"
            + (f" of {repo}" if repo else "")
            + f" is not a git repository, so {len(by_sha)} SHA(s) cannot be checked (first in {first.path})",
            field=f"sources.{repo}" if repo in config.sources else "source",
            fix="point `source` (or `sources:` for another repository) in ledger.yaml at a clone of the measured repository",
        )
        return
    resolved = source.resolve_commits(list(by_sha))
    if repo is not None and not declared and not same_repo(repo, source):
        missing = {sha: infos for sha, infos in by_sha.items() if not resolved.get(sha)}
        if missing:
            infos = [i for group in missing.values() for i in group]
            f.emit(
                "sha-foreign",
                infos[0].path,
                f"{len(infos)} record(s) name {len(missing)} commit(s) of {repo}, a repository ledger.yaml "
                f"does not declare, and the source checkout lacks them (first: {next(iter(missing))}): "
                "no clone can verify them",
                field="source.repo",
                fix=f"declare it in ledger.yaml, `sources: {{{repo!r}: PATH-OF-A-CLONE}}`; `ledger check` then "
                "verifies the commits there (or stamp the records with a commit that exists)",
            )
            by_sha = {sha: infos for sha, infos in by_sha.items() if sha not in missing}
    full_shas = [c for c in resolved.values() if c]
    reachable = source.reachable(full_shas)
    lost = unkept(source, full_shas, pushing) if pushing is not None else set()
    if pushing is not None:
        # A commit this push or the remote keeps (a `ledger-keep` tag pushed to the remote and
        # never fetched here, a branch of the remote) is in every fresh clone: not historical.
        reachable |= set(full_shas) - lost
    _report_shas(f, by_sha, resolved, reachable, repo, where, lost, pushing.remote if pushing else None)


def _report_shas(
    f: Findings,
    by_sha: dict[str, list[Info]],
    resolved: dict[str, str | None],
    reachable: set[str],
    repo: str | None,
    where: str,
    lost: set[str],
    remote: str | None,
) -> None:
    for sha, infos_at in by_sha.items():
        full = resolved.get(sha)
        for info in infos_at:
            if len(sha) < 40:
                # Abbreviated SHAs are declared historical evidence (source.abbreviated):
                # a warning, resolvable or not; full SHAs must resolve.
                how = f"it resolves to {full}" if full else "it does not resolve in the source checkout"
                f.emit("sha-abbreviated", info.path, f"source commit {sha} is abbreviated ({how})", field="source.sha")
            elif full is None:
                f.emit(
                    "sha-resolves",
                    info.path,
                    f"source commit {sha} does not resolve in the source checkout"
                    + (f" of {repo} ({where})" if repo else ""),
                    field="source.sha",
                )
            elif full in lost:
                f.emit(
                    "sha-resolves",
                    info.path,
                    f"source commit {sha} resolves here, but no branch or tag the remote has or "
                    "this push sends contains it (a rebase or amend left it behind), so it will "
                    "not resolve in a fresh clone",
                    field="source.sha",
                    fix=f"keep the commit reachable: `git push {remote or 'origin'} {full}:refs/tags/ledger-keep/{full[:12]}` "
                    "(in the source repository when it is another one), then push again; or re-measure "
                    "at a commit on a pushed branch and add the record afresh",
                )
            elif full not in reachable:
                f.emit(
                    "sha-abbreviated",
                    info.path,
                    f"source commit {sha} is historical: no branch or tag contains it, so a fresh clone will not have it",
                    field="source.sha",
                )


def unkept(source: Git, commits: list[str], pushing: Pushing) -> set[str]:
    """Of `commits`, those that no tag, no branch of the remote and no commit this push
    sends contains: a fresh clone of the remote will not have them. One `git rev-list`
    that walks only the commits the remote lacks."""
    if not commits:
        return set()
    same = source.common_dir == pushing.git.common_dir
    if not same:
        out = source.text("rev-list", *commits, "--not", "--remotes", "--tags", check=False)
        return {c for c in commits if c in set(out.split())}
    remote = pushing.remote
    tracked = f"--remotes={remote}" if remote and "/" not in remote and ":" not in remote else "--remotes"
    out = source.text("rev-list", *commits, "--not", tracked, *pushing.pushed, check=False)
    lost = {c for c in commits if c in set(out.split())}
    if lost and remote:
        # Tags the remote has (a `refs/tags/ledger-keep/...` pushed earlier), asked only now.
        tags = [
            line.split()[0]
            for line in source.text("ls-remote", "--tags", remote, check=False).splitlines()
            if line.strip()
        ]
        tips = [t for t in tags if source.has_commit(t)]
        if tips:
            out = source.text("rev-list", *lost, "--not", *tips, check=False)
            lost = {c for c in lost if c in set(out.split())}
    return lost
