"""The per-file rules over many files: record files (in worker processes for a large ledger,
answered from the verification cache when unchanged) and pages."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path

from ..config import CONFIG_NAME
from ..schema.registry import build_all
from .cache import VerificationCache
from .findings import Findings
from .info import Info
from .keyedrows import check_unique_keys, declared_files, keyed_key
from .pages import Evidence, SweepOf, check_high_water, check_page
from .records import FileRules, inspect_artifact, inspect_paths
from .result import Violation

#: Below this many records a whole-ledger check runs in one process (a pool costs ~50 ms).
POOL_THRESHOLD = 4000

Inspected = tuple[str, list[Violation], "Info | None"]


def _inspect_each(root: str, paths: list[str], rules: FileRules) -> list[Inspected]:
    """(path, violations, info) per file: one file at a time, so each result can be remembered."""
    out: list[Inspected] = []
    for path in paths:
        violations, infos = inspect_paths(root, [path], rules)
        out.append((path, violations, infos[0] if infos else None))
    return out


def _inspect_all(root: str, paths: list[str], rules: FileRules) -> list[Inspected]:
    workers = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 8)
    if len(paths) < POOL_THRESHOLD or workers < 2:
        return _inspect_each(root, paths, rules)

    # Fork: the workers inherit the imported schema and its compiled validators.
    ctx = multiprocessing.get_context("fork")
    chunk = max(500, len(paths) // (workers * 4))
    chunks = [paths[i : i + chunk] for i in range(0, len(paths), chunk)]
    out: list[Inspected] = []

    build_all()  # build the validators once, before forking
    with ctx.Pool(workers) as pool:
        for part in pool.starmap(_inspect_each, [(root, c, rules) for c in chunks]):
            out.extend(part)
    return out


def inspect_remembering(
    f: Findings,
    root: Path,
    paths: list[str],
    rules: FileRules,
    cache: VerificationCache | None,
    blobs: dict[str, str],
) -> list[Info]:
    """`inspect_file` on every path (their violations go to `f`), answering unmodified tracked
    files (`blobs`: path -> blob id, from `clean_blobs`) from the verification cache
    (checks/cache.py) and remembering what it inspected."""
    found: dict[str, tuple[list[Violation], Info | None]] = {}
    misses = paths
    if cache is not None:
        found, misses = cache.answer(paths, blobs)
    for path, violations, info in _inspect_all(str(root), misses, rules):
        found[path] = (violations, info)
        blob = blobs.get(path)
        if cache is not None and blob is not None:
            cache.put(path, blob, violations, info)
    if cache is not None:
        f.result.cached = cache.hits
        cache.save()
    infos: list[Info] = []
    for path in paths:
        violations, info = found[path]
        f.extend(violations)
        if info is not None:
            infos.append(info)
    return infos


def check_pages(
    f: Findings,
    pages_text: dict[str, str],
    checked: list[str],
    issue_owner: Callable[[int], str | None],
    lookup: Callable[[str], Info | None],
    guarded: Callable[[str], bool] = lambda path: True,
    raised: tuple[int, int] | None = None,
    named: set[str] = frozenset(),  # type: ignore[assignment]
    sweep_of: SweepOf | None = None,
) -> None:
    """The page rules on the pages `checked` that are `guarded` (checks/guarded.py), keyed-unique
    on the keyed tables among them; the owed high-water mark over the guarded ones of `pages_text`.
    `sweep_of` finds the sweep a page names as its figures' evidence (checks.sweepevidence)."""
    rules = f.file_rules()

    def evidence_of(record_id: str) -> Evidence | None:
        info = lookup(record_id)
        if info is None or info.kind != "measurement":
            return None
        return Evidence(info.spread_percent, info.n)

    declared = {d.path: d.key for d in declared_files(f.params("keyed-rows"))} if f.on("keyed-rows") else {}
    for path in checked:
        text = pages_text[path]
        if guarded(path):
            f.extend(inspect_artifact(path, text.encode("utf-8"), rules, text_page=True))
            check_page(path, text, f.active, f.emit, evidence_of, sweep_of=sweep_of)
        if f.on("keyed-unique"):
            keyed, key = keyed_key(path, text, declared, f.specs_rel)
            if keyed:
                check_unique_keys(path, text, key, f.emit)
    f.result.pages_checked = len(checked)
    owed_pages = {p: t for p, t in pages_text.items() if guarded(p)}
    check_high_water(owed_pages, f.active, f.emit, issue_owner, CONFIG_NAME, raised, named)
