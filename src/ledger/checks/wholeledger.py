"""`ledger check --all`: every record file and page in the work tree, read from disk."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..config import CONFIG_NAME
from ..git import Git
from ..store.ledger import Ledger, lstat_chain, walk_nofollow
from ..store.sources import source_view
from . import guidance
from .cache import VerificationCache, clean_blobs
from .crossrecord import (
    check_attachments,
    check_forks,
    check_unique,
    cross_checks,
    issue_owner_or_settled,
    live_issue_owners,
    supersedes_of,
)
from .findings import Findings
from .guarded import Guarded, guarded_of, is_page
from .info import Info
from .perfile import check_pages, inspect_remembering
from .records import inspect_artifact
from .sweepevidence import SweepEvidence, sweep_evidence
from .trees import DiskTree


def walk(f: Findings, folder: Path, shown: str) -> list[str]:
    """Files under `folder` (relative paths), from the directory entries' own types: a
    symlink or other non-regular entry is a `symlinks` violation, never followed."""
    out: list[str] = []
    stack = [""]
    while stack:
        rel = stack.pop()
        try:
            entries = sorted(os.scandir(folder / rel if rel else folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = f"{rel}/{entry.name}" if rel else entry.name
            if entry.is_symlink():
                try:
                    target = os.readlink(entry.path)
                except OSError:
                    target = "?"
                f.emit("symlinks", f"{shown}/{path}", f"is a symbolic link (to {target}); it is not followed")
            elif entry.is_dir(follow_symlinks=False):
                stack.append(path)
            elif entry.is_file(follow_symlinks=False):
                out.append(path)
            else:
                f.emit("symlinks", f"{shown}/{path}", "is not a regular file or folder")
    return sorted(out)


def linked_folder(f: Findings, root: Path, folder: Path) -> bool:
    """True (and a violation) when `folder` is reached through a symlink below the ledger `root`."""
    link = lstat_chain(root, folder)
    if link is None:
        return False
    rel = os.path.relpath(link, root)
    f.emit("symlinks", rel, f"is a symbolic link (to {os.readlink(link)}); nothing under it is read")
    return True


def check_whole_ledger(f: Findings, ledger: Ledger, git: Git, use_cache: bool) -> dict[str, Info]:
    """Every rule but the history's over the work tree; returns the records read, by id."""
    root = ledger.records_dir
    paths = []
    rules = f.file_rules()
    cache, blobs = None, {}
    # git lists the index's blob ids (for the verification cache) on another core while
    # this one walks the folder and loads the cache: 0.2 s of a warm check at 100k records.
    # The thread ends before the inspection may fork its worker processes.
    with ThreadPoolExecutor(max_workers=1) as background:
        blobs_later = background.submit(clean_blobs, root) if use_cache and root.is_dir() else None
        if not linked_folder(f, ledger.root, root) and root.is_dir():
            paths = [
                p
                for p in walk(f, root, f.records_rel)
                if not p.rsplit("/", 1)[-1].startswith(".tmp-") and p.rsplit("/", 1)[-1] != ".gitignore"
            ]
        if use_cache:
            cache = VerificationCache.open(git, rules)
            if cache.file is not None and blobs_later is not None:
                blobs = blobs_later.result()
    infos = inspect_remembering(f, root, paths, rules, cache, blobs)
    f.result.records_checked = sum(1 for p in paths if p.endswith(".json"))
    by_id: dict[str, Info] = {}
    for info in infos:
        if info.id in by_id:
            f.emit("unique-id", info.path, f"id {info.id} is also the id of {by_id[info.id].path}", field="id")
        by_id.setdefault(info.id, info)
    check_unique(f, infos)
    cross_checks(f, infos, by_id.get, lambda ref: ref in by_id, ledger.root)
    check_forks(f, infos, {})
    check_attachments(f, infos, DiskTree(ledger))
    _guidance(f, ledger, infos, root)
    issues = live_issue_owners(
        [
            (i.id, i.number, issue_owner_or_settled(i.owner, i.status), supersedes_of(i))
            for i in infos
            if i.kind == "issue"
        ]
    )
    pages_text = {}
    spec_dir = ledger.specs_dir
    if not linked_folder(f, ledger.root, spec_dir) and spec_dir.is_dir():
        for rel in walk(f, spec_dir, f.specs_rel):
            if is_page(rel):
                with open(os.path.join(spec_dir, rel), "rb") as fh:
                    pages_text[f"{f.specs_rel}/{rel}"] = fh.read().decode("utf-8", errors="replace")
    pages_text.update(guarded_pages(f, ledger, git, set(pages_text)))
    contracts = [i for i in infos if i.kind == "contract"]

    def sweep_of(ref: str, column: str | None) -> SweepEvidence | None:
        return sweep_evidence(ref, contracts, (i for i in infos if i.kind == "measurement"), column)

    check_pages(f, pages_text, list(pages_text), issues.get, by_id.get, guard_of(f).covers, sweep_of=sweep_of)
    config = ledger.root / CONFIG_NAME
    if config.is_file():
        f.extend(inspect_artifact(CONFIG_NAME, config.read_bytes(), rules, text_page=True))
    return by_id


def guard_of(f: Findings) -> Guarded:
    return guarded_of(f.config, f.params("keyed-rows") if f.on("keyed-rows") else None)


def guarded_pages(f: Findings, ledger: Ledger, git: Git, have: set[str]) -> dict[str, str]:
    """The guarded documents outside the specs folder (checks/guarded.py), as the work tree
    holds them: the files git tracks or would add (not ignored ones), else every file on disk
    when the ledger is in no git work tree. A guarded document that is a link is `symlinks`."""
    guard = guard_of(f)
    roots = [r for r in guard.roots() if r != guard.specs]
    if not roots:
        return {}
    root = ledger.root
    if git.is_repo():
        out = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *(r or "." for r in roots))
        candidates = sorted({p for p in out.decode("utf-8", "surrogateescape").split("\0") if p})
    else:
        candidates = []
        for r in roots:
            folder = root / r if r else root
            if folder.is_dir() and not folder.is_symlink():
                files, others = walk_nofollow(folder)
                candidates += [p.relative_to(root).as_posix() for p in (*files, *others)]
            elif r:
                candidates.append(r)
    found: dict[str, str] = {}
    for rel in candidates:
        if rel in have or not guard.reads(rel):
            continue
        path = root / rel
        link = lstat_chain(root, path)
        if link is not None or path.is_symlink():
            f.emit(
                "symlinks", rel, "is a symbolic link (or under one); a guarded document is never read through a link"
            )
            continue
        if not path.is_file():
            continue
        with open(path, "rb") as fh:
            found[rel] = fh.read().decode("utf-8", errors="replace")
    return found


def _guidance(f: Findings, ledger: Ledger, infos: list[Info], root: Path) -> None:
    """Whole-ledger guidance: re-gates owed, rejected families, eligibility readings."""
    superseded = guidance.superseded_of(infos)
    if f.on("rejected-family"):
        decisions = [i for i in infos if i.kind == "decision"]
        guidance.check_families(infos, decisions, f.emit, f.params("rejected-family")["verdicts"], superseded)
    prefix = f.records_rel + "/"

    def load(info: Info):
        return guidance.load_model(root, info.path[len(prefix) :] if info.path.startswith(prefix) else info.path)

    environments: dict = {}
    if f.on("baseline-eligibility") or f.on("regate-owed"):
        envs = {i.id: load(i) for i in infos if i.kind == "environment" and i.id not in superseded}
        environments = {k: v for k, v in envs.items() if v is not None}
    if f.on("baseline-eligibility"):
        guidance.check_eligibility(infos, environments, f.params("baseline-eligibility"), f.emit)
    if f.on("regate-owed") and any(i.kind == "contract" for i in infos):
        th = f.params("baseline-eligibility") if f.on("baseline-eligibility") else {}
        degraded = guidance.degraded_allocations(environments, th)
        guidance.check_regates(infos, load, source_view(ledger), f.emit, degraded)
