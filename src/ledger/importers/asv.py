"""airspeed velocity (asv) results JSON, format 1 (asv 0.2 to 0.4) and 2 (asv 0.5 on).

Give the files of `results/MACHINE/` (a glob is fine: `machine.json`, asv's description of
the machine, is skipped with a note, its fields being in every results file's `params`),
and optionally `results/benchmarks.json` for units and benchmark types.

One measurement per benchmark, one per parameter combination for parameterised ones.
A `null` result is a benchmark that failed (outcome failed); a NaN result is one asv
skipped, and gets no record. What asv measured is kept: the raw samples when asv
recorded them (`--record-samples`), else asv's result (the median of its repeats) with
its spread in `extra.spread`: the quartiles, the 99% confidence interval, `number`
(iterations per sample) and `repeat`. `ledger compare` uses that interval as asv's own
compare does. The time is `started_at`, when asv ran the benchmark; asv's `date` is the
commit's date and is kept as `extra.commit_date`.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
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
    parse_date,
    read_json,
    read_text,
    record_path,
    shown,
    source_from_commit,
)

FMT = "asv"
_UNITS = {"seconds": "s", "bytes": "bytes"}
#: What asv writes as `date` (the commit's) and `started_at` (when the benchmark ran).
_JS_TIME = "a JavaScript timestamp (milliseconds since 1970)"
_STAT_COLUMNS = ("stats_ci_99_a", "stats_ci_99_b", "stats_q_25", "stats_q_75", "stats_number", "stats_repeat")


def _unit_for(name: str, meta: dict[str, Any]) -> str:
    if name in meta and isinstance(meta[name], dict) and meta[name].get("unit"):
        return _UNITS.get(meta[name]["unit"], meta[name]["unit"])
    short = name.rsplit(".", 1)[-1]
    if short.startswith("time_"):
        return "s"
    if short.startswith(("mem_", "peakmem_")):
        return "bytes"
    return "unit"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _repo_of(results_file: Path) -> str | None:
    """The measured repository, from the asv.conf.json beside `results/` when it is there."""
    for folder in (results_file.parent.parent.parent, results_file.parent.parent):
        conf = folder / "asv.conf.json"
        if conf.is_file():
            try:
                # asv.conf.json allows // comments; drop whole-line ones.
                text = "\n".join(line for line in read_text(conf).splitlines() if not line.strip().startswith("//"))
                repo = json.loads(text).get("repo")
            except (ValueError, AttributeError, RecursionError):
                return None
            return repo if isinstance(repo, str) and repo else None
    return None


def _stats_of(entry: Any, k: int) -> dict[str, Any] | None:
    """Format 1: `stats` is a list with one dict per parameter combination."""
    stats = entry.get("stats") if isinstance(entry, dict) else None
    if isinstance(stats, list) and k < len(stats) and isinstance(stats[k], dict):
        s = stats[k]
        ci = s.get("ci_99")
        return {
            "ci_99": ci if isinstance(ci, list) and len(ci) == 2 else None,
            "q_25": s.get("q_25"),
            "q_75": s.get("q_75"),
            "number": s.get("number"),
            "repeat": s.get("repeat"),
        }
    return None


def _stats_of_row(row: dict[str, Any], k: int) -> dict[str, Any] | None:
    """Format 2: one list per statistic column, one entry per parameter combination."""
    cols = {}
    for col in _STAT_COLUMNS:
        values = row.get(col)
        cols[col] = values[k] if isinstance(values, list) and k < len(values) else None
    if all(v is None for v in cols.values()):
        return None
    a, b = cols["stats_ci_99_a"], cols["stats_ci_99_b"]
    return {
        "ci_99": [a, b] if _number(a) and _number(b) else None,
        "q_25": cols["stats_q_25"],
        "q_75": cols["stats_q_75"],
        "number": cols["stats_number"],
        "repeat": cols["stats_repeat"],
    }


def _no_stats(k: int) -> None:
    """A bare number (format 1) carries no statistics."""
    return None


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    """Per results file, its machine as an environment draft, then one measurement draft per
    benchmark and parameter combination."""
    meta, results_files = _sort_files(paths, options)
    drafts: list[Draft] = []
    for n, path in enumerate(results_files):
        drafts.extend(_results_file_drafts(path, f"env{n}", meta, options))
    return drafts


def _sort_files(paths: list[Path], options: ImportOptions) -> tuple[dict[str, Any], list[Path]]:
    """benchmarks.json's description of each benchmark (by name), and the results files;
    machine.json is skipped with a note."""
    meta: dict[str, Any] = {}
    results_files = []
    for path in paths:
        if path.name == "benchmarks.json":
            # asv writes NaN into its files; it means "skipped", so it is read, not refused.
            doc = read_json(path, "asv benchmarks.json", allow_nan=True)
            if not isinstance(doc, dict):
                raise fail(path, "key (top level)", "is not an object", "give asv's benchmarks.json")
            meta = {k: v for k, v in doc.items() if isinstance(v, dict)}
            for name, entry in meta.items():
                if "unit" in entry and not isinstance(entry["unit"], (str, type(None))):
                    raise fail(
                        path,
                        f"key {name}.unit",
                        f"is {type(entry['unit']).__name__}, expected text",
                        "asv writes a benchmark's unit as text (seconds, bytes, or a track_ benchmark's own unit); "
                        "give the benchmarks.json asv wrote",
                    )
        elif path.name == "machine.json":
            options.notes.append(
                f"skipped {record_path(path)}: asv's machine description, not results "
                "(its fields are in each results file's params)"
            )
        else:
            results_files.append(path)
    if not results_files:
        raise fail(
            paths[0],
            "",
            "no results file given",
            "give asv results files (results/MACHINE/COMMIT-ENV.json); benchmarks.json and machine.json hold no results",
        )
    return meta, results_files


@dataclass
class _ResultsFile:
    """One results file, read: what every benchmark in it shares."""

    path: Path
    doc: dict[str, Any]
    version: int
    results: dict[str, Any]
    params: dict[str, Any]  # the machine and environment asv ran on
    meta: dict[str, Any]  # benchmarks.json, by benchmark name
    commit_date: str | None
    started: dict[str, Any]  # format 1: when each benchmark started, by name
    run: Run


@dataclass
class _Result:
    """One benchmark's entry in a results file, in the same terms for both formats."""

    name: str
    where: str
    value: Any  # one per parameter combination: a number, null (failed) or NaN (skipped)
    params: Any  # the values of each parameter
    samples: Any
    started_ms: Any
    started_key: str  # where started_at is, for an error
    stats: Callable[[int], dict[str, Any] | None]  # asv's statistics of the k-th combination


def _results_file_drafts(path: Path, handle: str, meta: dict[str, Any], options: ImportOptions) -> list[Draft]:
    """One results file: its machine as an environment draft, then its benchmarks' measurements."""
    f = _read_results_file(path, handle, meta, options)
    drafts = [_machine_environment(f)]
    columns = f.doc.get("result_columns") if f.version == 2 else None
    if f.version == 2 and not isinstance(columns, list):
        raise fail(path, "key result_columns", "is missing", "asv format 2 names its columns; give the file asv wrote")
    for i, column in enumerate(columns or []):
        if not isinstance(column, str):
            raise fail(
                path,
                f"key result_columns[{i}]",
                f"is {type(column).__name__}, expected a column name",
                "asv format 2 names its columns (result, params, samples, ...) as text; give the file asv wrote",
            )
    for name, entry in f.results.items():
        drafts.extend(_benchmark_drafts(f, _read_result(f, columns, name, entry)))
    return drafts


def _read_results_file(path: Path, handle: str, meta: dict[str, Any], options: ImportOptions) -> _ResultsFile:
    """Read and check a results file's top level: version, results, params, commit and dates."""
    doc = read_json(path, FMT, allow_nan=True)
    version = need(doc, "version", int, path, "", FMT)
    if version not in (1, 2):
        raise fail(
            path,
            "key version",
            f"is {version}; this importer reads asv results format 1 and 2",
            "give results written by asv 0.2 to 0.6",
        )
    results = need(doc, "results", dict, path, "", FMT)
    params = need(doc, "params", dict, path, "", FMT)
    if options.found_repo is None:
        options.found_repo = _repo_of(path)
    source, gaps = source_from_commit(doc.get("commit_hash"), what="commit_hash")
    commit_date = parse_date(doc.get("date"), path, "key date", tool=FMT, writes=_JS_TIME)
    started = doc.get("started_at") if isinstance(doc.get("started_at"), dict) else {}
    machine = str(params.get("machine") or "unknown-machine")
    allocation = {
        "id": f"asv-{machine}-{str(doc.get('commit_hash') or '')[:8]}-{doc.get('env_name') or doc.get('date')}",
        "scheduler": "local",
        "hosts": [machine],
    }
    run = Run(handle, allocation, source, gaps)
    return _ResultsFile(path, doc, version, results, params, meta, commit_date, started, run)


def _machine_environment(f: _ResultsFile) -> Draft:
    """The machine asv ran on, from the results file's params, as an environment draft."""
    machine = str(f.params.get("machine") or "unknown-machine")
    env: dict[str, Any] = {
        "title": f"asv machine {machine}",
        "hostname": machine,
        "cpu_model": f.params.get("cpu"),
        "cpu_count": int(f.params["num_cpu"]) if str(f.params.get("num_cpu", "")).isdigit() else None,
        "python": f.params.get("python") or f.doc.get("python"),
        "no_gpu_reason": "asv records no GPU",
        "allocation": f.run.allocation,
    }
    if f.run.source:
        env["source"] = f.run.source
    return environment_draft(f.path, env, f.run.handle)


def _read_result(f: _ResultsFile, columns: list[Any] | None, name: str, entry: Any) -> _Result:
    """A benchmark's entry: a row of result_columns (format 2), an object, or a bare number (format 1)."""
    where = f"results.{name}"
    if f.version == 2:
        if not isinstance(entry, list):
            raise fail(
                f.path,
                f"key {where}",
                f"benchmark {name}: is {type(entry).__name__}, not a row of result_columns",
                "give the results file asv wrote",
            )
        row = dict(zip(columns or [], entry))
        stats = functools.partial(_stats_of_row, row)
        at = {c: f"{where}[{i}]" for i, c in enumerate(columns or [])}
        result = _Result(
            name,
            where,
            row.get("result"),
            _params(f, at.get("params", where), name, row.get("params")),
            row.get("samples"),
            row.get("started_at"),
            at.get("started_at", where),
            stats,
        )
    elif isinstance(entry, dict):
        stats = functools.partial(_stats_of, entry)
        params = _params(f, f"{where}.params", name, entry.get("params"))
        result = _Result(name, where, entry.get("result"), params, entry.get("samples"), None, "", stats)
    else:
        result = _Result(name, where, entry, [], None, None, "", _no_stats)
    if result.started_ms is None:
        result.started_ms = f.started.get(name)
        result.started_key = f"started_at.{name}"
    return result


def _params(f: _ResultsFile, key: str, name: str, params: Any) -> list[list[Any]]:
    """A benchmark's parameters: one list of values per parameter (asv runs every combination)."""
    if params is None:
        return []
    if not isinstance(params, list) or not all(isinstance(values, list) for values in params):
        raise fail(
            f.path,
            f"key {key}",
            f"benchmark {name}: is {params!r:.60}, expected a list of lists",
            "asv writes a benchmark's params as one list of values per parameter, [] when it has none; "
            "give the results file asv wrote",
        )
    return params


def _benchmark_drafts(f: _ResultsFile, result: _Result) -> list[Draft]:
    """A benchmark's measurements, one per parameter combination asv did not skip."""
    bparams, value = result.params, result.value
    combos = [list(c) for c in itertools.product(*bparams)] if bparams else [[]]
    if bparams and value is None:
        # asv writes one null for a whole parameterized benchmark when every combination failed
        # (asv.results.Results.load reads it as None for each).
        values = [None] * len(combos)
    elif bparams:
        values = value
    elif isinstance(value, list) and len(value) == 1:
        values = value  # asv 0.4 writes a one-element list for a benchmark without parameters
    else:
        values = [value]
    if not isinstance(values, list) or len(values) != len(combos):
        raise fail(
            f.path,
            f"key {result.where}.result",
            f"benchmark {result.name}: has {len(values) if isinstance(values, list) else 'no'} values "
            f"for {len(combos)} parameter combinations",
            "asv writes one value per combination of the benchmark's params; give the results file asv wrote",
        )
    samples = result.samples
    sample_lists = (
        samples if isinstance(samples, list) and (bparams or (samples and isinstance(samples[0], list))) else [samples]
    )
    started_ms = result.started_ms
    observed = (
        parse_date(started_ms, f.path, f"key {result.started_key}", tool=FMT, writes=_JS_TIME) if started_ms else None
    )
    drafts = []
    for k, (combo, v) in enumerate(zip(combos, values)):
        if isinstance(v, float) and math.isnan(v):
            continue  # skipped by asv: no measurement was taken
        raw = sample_lists[k] if k < len(sample_lists) else None
        drafts.append(_combination_draft(f, result, k, combo, v, raw, len(sample_lists) > 1, observed))
    return drafts


def _combination_draft(
    f: _ResultsFile,
    result: _Result,
    k: int,
    combo: list[Any],
    v: Any,
    raw: Any,
    several_sample_lists: bool,
    observed: str | None,
) -> Draft:
    """The measurement of one parameter combination: asv's raw samples when it recorded them,
    else its result as the median, with its spread; or a failed outcome when asv has no result."""
    name, where = result.name, result.where
    metric = f"{name}({', '.join(map(str, combo))})" if combo else name
    data: dict[str, Any] = {
        "metric": metric,
        "unit": _unit_for(name, f.meta),
        "lower_is_better": True,
        "allocation": f.run.allocation,
        "title": f"asv {metric}",
    }
    keys = {}
    stats = result.stats(k)
    extra: dict[str, Any] = {}
    if v is None:
        data["outcome"] = "failed"
        data["notes"] = "asv recorded no result: the benchmark failed"
    elif not _number(v) or v < 0:
        raise fail(
            f.path,
            f"key {where}.result" + (f"[{k}]" if result.params or isinstance(result.value, list) else ""),
            f"benchmark {metric}: is {shown(v)}, expected a number, null or NaN",
            "asv writes a non-negative number, null (failed) or NaN (skipped); give the results file asv wrote",
        )
    elif isinstance(raw, list) and raw:
        data["samples"] = raw
        keys["samples"] = f"{where}.samples" + (f"[{k}]" if several_sample_lists else "")
        extra["asv_result"] = v
    else:
        data["median"] = v  # asv's result is the median of its repeats
        if stats and _number(stats.get("q_25")) and _number(stats.get("q_75")):
            data["iqr"] = max(0.0, stats["q_75"] - stats["q_25"])
    if stats and v is not None:
        extra["spread"] = {"method": "asv", **{s: x for s, x in stats.items() if x is not None}}
    extra.update(_described(f, name, combo))
    if name in f.meta:
        extra["type"] = f.meta[name].get("type")
    when_gaps = (
        [] if observed else ["started_at is missing: when asv ran the benchmark is unknown (date is the commit's date)"]
    )
    draft = measurement_draft(f.path, data, extra, f.run.gaps + when_gaps, observed, f.run.source, f.run.handle)
    draft.label = f"benchmark {metric}"
    draft.keys = keys
    return draft


def _described(f: _ResultsFile, name: str, combo: list[Any]) -> dict[str, Any]:
    """What asv says about the benchmark and where it ran: its parameters, environment and machine."""
    return {
        "format": FMT,
        "format_version": f.version,
        "benchmark": name,
        "params": combo or None,
        "param_names": (f.meta.get(name) or {}).get("param_names") if combo else None,
        "requirements": f.doc.get("requirements") or None,
        "env_name": f.doc.get("env_name"),
        "machine": {k2: v2 for k2, v2 in f.params.items() if k2 in ("arch", "cpu", "machine", "num_cpu", "os", "ram")},
        "commit_date": f.commit_date,
    }
