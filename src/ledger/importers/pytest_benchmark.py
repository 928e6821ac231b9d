"""pytest-benchmark JSON (`--benchmark-json` or `--benchmark-autosave` storage files),
from pytest-benchmark 2.5 (2015) to 5.x, plain or gzip-compressed.

One measurement per benchmark. Raw round times are imported as samples when the file
has them (`--benchmark-save-data`) and they are all the rounds (`len(data) == rounds`);
otherwise the file's own min/median/max/IQR are kept, with the quartiles, standard
deviation, rounds and iterations in `extra.spread`, and `ledger compare` says no
significance test is possible without raw samples. `datetime` without a zone is UTC:
pytest-benchmark writes `utcnow()` there (5.x adds `+00:00`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .base import (
    Draft,
    ImportOptions,
    Run,
    environment_draft,
    fail,
    measurement_draft,
    need,
    parse_time,
    read_bytes,
    read_json,
    shown,
    source_from_commit,
)

FMT = "pytest-benchmark"


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    """One environment draft per saved run (file) and one measurement draft per benchmark in it."""
    drafts: list[Draft] = []
    for n, path in enumerate(paths):
        doc = read_json(path, FMT)
        benchmarks = need(doc, "benchmarks", list, path, "", FMT)
        machine = need(doc, "machine_info", dict, path, "", FMT)
        environment, run = _saved_run(path, doc, machine, f"env{n}", options)
        drafts.append(environment)
        for i, bench in enumerate(benchmarks):
            drafts.append(_benchmark_draft(path, doc, f"benchmarks[{i}]", bench, run))
    return drafts


def _commit_of(doc: Any, options: ImportOptions) -> tuple[dict[str, Any] | None, list[str]]:
    """The measured commit from `commit_info`, or the provenance gaps saying why it is unknown;
    notes the project it names as the files' repository."""
    commit = doc.get("commit_info") if isinstance(doc.get("commit_info"), dict) else {}
    source, gaps = source_from_commit(commit.get("id"), dirty=bool(commit.get("dirty")), what="commit_info.id")
    if source and source.get("dirty"):
        gaps.append("commit_info.dirty is true: the run had uncommitted changes whose diff is unknown")
    if options.found_repo is None and isinstance(commit.get("project"), str) and commit["project"]:
        options.found_repo = commit["project"]
    return source, gaps


def _saved_run(path: Path, doc: Any, machine: Any, handle: str, options: ImportOptions) -> tuple[Draft, Run]:
    """The machine of one saved run as an environment draft, and what its benchmarks share."""
    source, gaps = _commit_of(doc, options)
    observed = parse_time(
        doc.get("datetime"), path, "key datetime", naive="utc", tool=FMT, writes="the UTC date and time in ISO 8601"
    ).observed_at
    if observed is None:
        gaps.append("datetime is missing: when the run happened is unknown")
    node = str(machine.get("node") or "unknown-host")
    stamp = doc.get("datetime") or hashlib.sha256(read_bytes(path)).hexdigest()[:12]
    # One saved run is one allocation: the file does not say which boot of the host it ran on.
    allocation = {"id": f"pytest-benchmark-{node}-{stamp}", "scheduler": "local", "hosts": [node]}
    cpu = machine.get("cpu") if isinstance(machine.get("cpu"), dict) else {}
    env: dict[str, Any] = {
        "title": f"pytest-benchmark machine {node}",
        "hostname": node,
        "python": " ".join(str(machine[k]) for k in ("python_implementation", "python_version") if machine.get(k))
        or None,
        "cpu_model": cpu.get("brand_raw") or cpu.get("brand") or machine.get("processor") or None,
        "cpu_count": count if isinstance(count := cpu.get("count"), int) and count > 0 else None,
        "no_gpu_reason": "pytest-benchmark records no GPU",
        "allocation": allocation,
    }
    if observed:
        env["observed_at"] = observed
    if source:
        env["source"] = source
    return environment_draft(path, env, handle), Run(handle, allocation, source, gaps, observed)


def _benchmark_draft(path: Path, doc: Any, where: str, bench: Any, run: Run) -> Draft:
    """One benchmark's measurement: its rounds as samples when the file holds all of them,
    else the file's own median, min, max and IQR."""
    name = (
        need(bench, "fullname", str, path, where, FMT)
        if "fullname" in (bench if isinstance(bench, dict) else {})
        else need(bench, "name", str, path, where, FMT)
    )
    stats = need(bench, "stats", dict, path, where, FMT)
    data: dict[str, Any] = {
        "metric": name,
        "unit": "s",
        "lower_is_better": True,
        "statistic": "median",
        "allocation": run.allocation,
    }
    rounds, notes = _round_times(path, where, name, stats)
    if rounds:
        data["samples"] = rounds
    else:
        for key in ("median", "min", "max"):
            data[key] = need(stats, key, (int, float), path, f"{where}.stats", FMT)
        if isinstance(stats.get("iqr"), (int, float)):
            data["iqr"] = stats["iqr"]
        if isinstance(stats.get("rounds"), int):
            data["n"] = stats["rounds"]
    extra = _benchmark_extra(doc, bench, stats, notes)
    data["title"] = f"pytest-benchmark {name}"
    draft = measurement_draft(path, data, extra, run.gaps, run.observed, run.source, run.handle)
    draft.label = f"benchmark {name}"
    draft.keys = {
        k: f"{where}.stats.{'data' if k == 'samples' else k}" for k in ("samples", "median", "min", "max", "iqr", "n")
    }
    return draft


def _round_times(path: Path, where: str, name: str, stats: dict[str, Any]) -> tuple[list[Any] | None, list[str]]:
    """The time of every round (`--benchmark-save-data`), checked, or None when the file does not
    hold all of them; and a note when it holds only some."""
    raw = stats.get("data")
    rounds = stats.get("rounds")
    notes: list[str] = []
    if isinstance(raw, list):
        for k, v in enumerate(raw):
            if not isinstance(v, (int, float)) or isinstance(v, bool) or v < 0:
                raise fail(
                    path,
                    f"key {where}.stats.data[{k}]",
                    f"benchmark {name}: is {shown(v)}, expected a round's time in seconds",
                    "pytest-benchmark writes each round as a non-negative number of seconds; give the file it wrote",
                )
    if isinstance(raw, list) and raw and isinstance(rounds, int) and len(raw) != rounds:
        notes.append(
            f"stats.data holds {len(raw)} values but stats.rounds is {rounds}: the data was cut, "
            "so the summary of all rounds is kept and the data is not used as samples"
        )
        raw = None
    return (raw if isinstance(raw, list) and raw else None), notes


def _benchmark_extra(doc: Any, bench: dict[str, Any], stats: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """What the file says about a benchmark beyond its figures: the spread, its group, options and params."""
    spread = {
        k: stats.get(k)
        for k in ("q1", "q3", "iqr", "stddev", "mean", "rounds", "iterations")
        if isinstance(stats.get(k), (int, float))
    }
    extra: dict[str, Any] = {
        "format": FMT,
        "spread": {"method": "pytest-benchmark", **spread} if spread else None,
        "data_note": "; ".join(notes) or None,
        "version": doc.get("version"),
        "group": bench.get("group"),
        "stats": {k: v for k, v in stats.items() if k != "data"},
        "options": bench.get("options"),
    }
    for key in ("params", "extra_info"):
        if bench.get(key):
            extra[key] = bench[key]
    return extra
