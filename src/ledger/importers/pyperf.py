"""pyperf JSON (format 1.0: a suite of benchmarks, or one benchmark), as pyperf, perf and
pyperformance write it, plain or gzip-compressed (`.json.gz`, pyperformance's default).

One measurement per benchmark; the values of every run (warmups and calibration runs
excluded) are the raw samples, in run order. The repeat structure is kept in
`extra.repeat` (runs, values per run, loops, inner loops, warmups) and pyperf's own
summary (mean and standard deviation, what `pyperf show` prints) in `extra.pyperf`.
The suite's and the benchmark's metadata (CPU config, ASLR, tags, ...) go to
`extra.metadata`; host, CPU, Python and the 1-minute load to an environment record.
The host and its boot time name the allocation, as ledger's own stamps do.

pyperf writes dates in the measuring machine's local time without a zone: they are kept
as written in `extra.measured_at` with `zone: unknown`, never as UTC.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
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
    read_json,
    shown,
    source_from_commit,
)

FMT = "pyperf"
_UNITS = {"second": "s", "byte": "bytes", "integer": "count"}
# Run metadata that changes run to run; the rest of the metadata describes the machine or the benchmark.
_PER_RUN = {"date", "duration", "load_avg_1min", "mem_max_rss", "mem_peak_pagefile_usage", "uptime", "cpu_freq"}
_PER_RUN |= {"cpu_temp", "runnable_threads", "calibrate_loops", "recalibrate_loops", "calibrate_warmups"}


#: What pyperf writes as a run's `date`: the measuring machine's local time, without a zone.
_DATE = "the local date and time as text (2016-10-21 03:14:19)"


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    """One environment draft per file (the suite's machine), then one measurement draft per benchmark."""
    drafts: list[Draft] = []
    for n, path in enumerate(paths):
        doc = _as_format_1(path, read_json(path, FMT))
        top = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        benchmarks = need(doc, "benchmarks", list, path, "", FMT)
        if not benchmarks:
            raise fail(
                path, "key benchmarks", "is empty", "pyperf writes one or more benchmarks; give the JSON pyperf wrote"
            )
        run = _suite_run(path, top, f"env{n}")
        first_run_meta: dict[str, Any] = {}
        measurements: list[Draft] = []
        for i, bench in enumerate(benchmarks):
            draft, runs = _benchmark_draft(path, f"benchmarks[{i}]", bench, top, run)
            measurements.append(draft)
            if not first_run_meta:
                first_run_meta = runs.first_metadata
        drafts.append(_suite_environment(path, top, run, first_run_meta))
        drafts.extend(measurements)
    return drafts


#: pyperf's _JSON_MAP_VERSION: the formats pyperf 2.11 still loads besides "1.0".
_OLD_FORMATS = {5: "perf 0.8.3", 6: "perf 0.9.6"}


def _as_format_1(path: Path, doc: Any) -> Any:
    """The document in pyperf's format 1.0 shape, read as pyperf 2.11 reads older ones.

    perf 0.8.3-0.9.5 wrote JSON format version 5: no suite metadata, each benchmark's in
    `common_metadata`, a run's values in `samples`; perf 0.9.6 wrote version 6 (suite metadata,
    `values`). pyperf loads both (`BenchmarkSuite._json_load`) and refuses versions 1-4."""
    version = doc.get("version") if isinstance(doc, dict) else None
    if isinstance(version, int) and not isinstance(version, bool):
        if version not in _OLD_FORMATS:
            raise fail(
                path,
                "key version",
                f"is {version}: JSON format version {version} of perf before 0.8.3, which pyperf does not load "
                "either (it reads format 1.0 and perf's versions 5 and 6)",
                "re-run the benchmark with pyperf (or perf 0.8.3 or later) and import the JSON it writes",
            )
        if version == 5:
            benchmarks = need(doc, "benchmarks", list, path, "", FMT)
            doc = {**doc, "metadata": {}, "benchmarks": [_bench_v5(b) for b in benchmarks]}
        doc = {**doc, "version": "1.0", "format_version": version}
    _check_version(path, need(doc, "version", str, path, "", FMT))
    return doc


def _bench_v5(bench: Any) -> Any:
    """A format 5 benchmark as format 1.0 holds it (pyperf: Benchmark._json_load, Run._json_load)."""
    if not isinstance(bench, dict):
        return bench
    runs = bench.get("runs")
    if isinstance(runs, list):
        runs = [
            {**{k: v for k, v in r.items() if k != "samples"}, "values": r.get("samples")}
            if isinstance(r, dict) and "samples" in r
            else r
            for r in runs
        ]
    out = {k: v for k, v in bench.items() if k != "common_metadata"}
    out.update(metadata=bench.get("common_metadata", {}), runs=runs)
    return out


def _check_version(path: Path, version: str) -> None:
    """Refuse a file of a pyperf format this importer does not read."""
    if not version.startswith("1."):
        raise fail(
            path,
            "key version",
            f"is {version!r}; this importer reads pyperf format 1.x",
            "export with a pyperf that writes format 1.0",
        )


def _host(top: dict[str, Any]) -> str:
    """The host the suite ran on, as its metadata names it."""
    return str(top.get("hostname") or "unknown-host")


def _suite_run(path: Path, top: dict[str, Any], handle: str) -> Run:
    """What every benchmark of a file shares: its commit, and the allocation its host and boot time name."""
    host = _host(top)
    boot = top.get("boot_time")
    source, gaps = source_from_commit(top.get("commit_id"), what="metadata.commit_id")
    allocation = {
        "id": f"local-{host}-{str(boot).replace(' ', 'T')}" if boot else f"pyperf-{host}-{path.name}",
        "scheduler": "local",
        "hosts": [host],
    }
    return Run(handle, allocation, source, gaps)


def _suite_environment(path: Path, top: dict[str, Any], run: Run, first_run_meta: dict[str, Any]) -> Draft:
    """The machine the suite ran on, as an environment draft."""
    host = _host(top)
    # When the suite's metadata holds no load, the first run's stands for the machine's.
    load = top.get("load_avg_1min", first_run_meta.get("load_avg_1min"))
    env: dict[str, Any] = {
        "title": f"pyperf machine {host}",
        "hostname": host,
        "python": top.get("python_version"),
        "cpu_model": top.get("cpu_model_name"),
        "cpu_count": count if isinstance(count := top.get("cpu_count"), int) and count > 0 else None,
        "no_gpu_reason": "pyperf records no GPU",
        "load_avg": [load] if isinstance(load, (int, float)) and not isinstance(load, bool) and load >= 0 else None,
        "allocation": run.allocation,
    }
    if run.source:
        env["source"] = run.source
    return environment_draft(path, env, run.handle)


@dataclass
class _Runs:
    """What a benchmark's runs hold, in run order (warmups and calibration runs' values left out)."""

    values: list[float] = field(default_factory=list)
    per_run: list[int] = field(default_factory=list)  # values of each run that has values
    warmups: list[int] = field(default_factory=list)  # warmups of each run that has values
    loads: list[float] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    first_metadata: dict[str, Any] = field(default_factory=dict)  # the first run's that has any


def _read_runs(path: Path, where: str, name: str, runs: list[Any]) -> _Runs:
    """Every run's values, checked, with the per-run metadata the measurement keeps."""
    read = _Runs()
    for j, run in enumerate(runs):
        if not isinstance(run, dict):
            raise fail(
                path,
                f"key {where}.runs[{j}]",
                f"benchmark {name}: is {type(run).__name__}, expected an object",
                "give the JSON pyperf wrote",
            )
        given_meta = run.get("metadata")
        run_meta: dict[str, Any] = given_meta if isinstance(given_meta, dict) else {}
        if not read.first_metadata:
            read.first_metadata = run_meta
        run_values = _run_values(path, f"{where}.runs[{j}]", name, run)
        warmups = _run_warmups(path, f"{where}.runs[{j}]", name, run)
        read.values.extend(run_values)
        if run_values:
            read.per_run.append(len(run_values))
            read.warmups.append(warmups)
        if _number(run_meta.get("load_avg_1min")):
            read.loads.append(run_meta["load_avg_1min"])
        if isinstance(run_meta.get("date"), str):
            read.dates.append(run_meta["date"])
    return read


def _run_values(path: Path, where: str, name: str, run: dict[str, Any]) -> list[Any]:
    """One run's values, refused unless a list of non-negative numbers."""
    run_values = run.get("values") or []
    if not isinstance(run_values, list):
        raise fail(
            path,
            f"key {where}.values",
            f"benchmark {name}: is {type(run_values).__name__}, expected a list of numbers",
            "give the JSON pyperf wrote",
        )
    for k, v in enumerate(run_values):
        if not _number(v) or v < 0:
            raise fail(
                path,
                f"key {where}.values[{k}]",
                f"benchmark {name}: is {shown(v)}, expected a number",
                "pyperf writes each value as a non-negative number; give the JSON pyperf wrote",
            )
    return run_values


def _run_warmups(path: Path, where: str, name: str, run: dict[str, Any]) -> int:
    """How many warmups a run made: pyperf writes them as a list of [loops, value] pairs
    (loops a whole number of at least 1, value a non-negative number), or leaves the key out."""
    warmups = run.get("warmups")
    if warmups is None:
        return 0
    fix = "pyperf writes a run's warmups as a list of [loops, value] pairs; give the JSON pyperf wrote"
    if not isinstance(warmups, list):
        raise fail(path, f"key {where}.warmups", f"benchmark {name}: is {type(warmups).__name__}, expected a list", fix)
    for k, pair in enumerate(warmups):
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and isinstance(pair[0], int)
            and not isinstance(pair[0], bool)
            and pair[0] >= 1
            and _number(pair[1])
            and pair[1] >= 0
        ):
            raise fail(
                path, f"key {where}.warmups[{k}]", f"benchmark {name}: is {pair!r:.60}, expected [loops, value]", fix
            )
    return len(warmups)


def _benchmark_draft(path: Path, where: str, bench: Any, top: dict[str, Any], run: Run) -> tuple[Draft, _Runs]:
    """One benchmark's measurement, its values the samples; and what its runs hold."""
    runs = need(bench, "runs", list, path, where, FMT)
    bench_meta = bench.get("metadata") if isinstance(bench.get("metadata"), dict) else {}
    meta = {**top, **bench_meta}
    name = meta.get("name")
    if not isinstance(name, str):
        raise fail(path, f"key {where}.metadata.name", "is missing", "every pyperf benchmark has a name")
    read = _read_runs(path, where, name, runs)
    unit = _UNITS.get(str(meta.get("unit", "second")), str(meta.get("unit", "second")))
    data: dict[str, Any] = {
        "metric": name,
        "unit": unit,
        "lower_is_better": True,
        "allocation": run.allocation,
        "title": f"pyperf {name}",
    }
    extra: dict[str, Any] = {
        "format": FMT,
        "repeat": _repeat(read, len(runs), meta),
        "metadata": {k: v for k, v in meta.items() if k not in _PER_RUN and k != "name"},
        # pyperf's metadata describes the measuring machine (python_executable under its /home):
        # the tool's own, kept as written, not ledger's stamp (rule local-path leaves it).
        "foreign": ["extra.metadata"],
    }
    if read.loads:
        extra["load_avg_1min"] = read.loads
    if read.values:
        data["samples"] = read.values
        pyperf_summary: dict[str, Any] = {"mean": statistics.fmean(read.values)}
        if len(read.values) > 1:
            pyperf_summary["stdev"] = statistics.stdev(read.values)
        extra["pyperf"] = pyperf_summary
        # pyperf compares two results with Student's t-test on these values (`pyperf compare_to`).
        extra["spread"] = {"method": "pyperf", "values": len(read.values), **pyperf_summary}
    else:
        data["outcome"] = "failed"
        data["notes"] = "no run holds values (only warmups or calibration)"
    if read.dates:
        _place_dates(data, extra, read.dates, path, where)
    draft = measurement_draft(path, data, extra, run.gaps, None, run.source, run.handle)
    draft.label = f"benchmark {name}"
    draft.keys = {"samples": f"{where}.runs[].values"}
    return draft, read


def _repeat(read: _Runs, all_runs: int, meta: dict[str, Any]) -> dict[str, Any]:
    """How pyperf repeated the benchmark: runs, values and warmups per run, loops, inner loops."""
    repeat = {
        "runs": len(read.per_run),
        "calibration_runs": all_runs - len(read.per_run),
        "values_per_run": sorted(set(read.per_run))[0] if len(set(read.per_run)) == 1 else read.per_run,
        "warmups_per_run": sorted(set(read.warmups))[0] if len(set(read.warmups)) == 1 else read.warmups,
        "loops": meta.get("loops"),
        "inner_loops": meta.get("inner_loops"),
    }
    return {k: v for k, v in repeat.items() if v is not None}


def _place_dates(data: dict[str, Any], extra: dict[str, Any], dates: list[str], path: Path, where: str) -> None:
    """When the runs happened: the first run's instant, or the first and last wall clock as written."""
    first = parse_time(
        min(dates), path, f"key {where}.runs[].metadata.date", naive="local", tool="pyperf", writes=_DATE
    )
    last = parse_time(max(dates), path, f"key {where}.runs[].metadata.date", naive="local", tool="pyperf", writes=_DATE)
    if first.observed_at:
        data["observed_at"] = first.observed_at
    elif first.measured_at:
        extra["measured_at"] = {**first.measured_at, "last": (last.measured_at or {}).get("local")}
