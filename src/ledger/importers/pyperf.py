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
from pathlib import Path
from typing import Any

from .base import Draft, ImportOptions, fail, need, parse_time, read_json, source_from_commit

FMT = "pyperf"
_UNITS = {"second": "s", "byte": "bytes", "integer": "count"}
# Run metadata that changes run to run; the rest of the metadata describes the machine or the benchmark.
_PER_RUN = {"date", "duration", "load_avg_1min", "mem_max_rss", "mem_peak_pagefile_usage", "uptime", "cpu_freq"}
_PER_RUN |= {"cpu_temp", "runnable_threads", "calibrate_loops", "recalibrate_loops", "calibrate_warmups"}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:  # noqa: C901, PLR0915
    drafts: list[Draft] = []
    for n, path in enumerate(paths):
        doc = read_json(path, FMT)
        version = need(doc, "version", str, path, "", FMT)
        if not version.startswith("1."):
            raise fail(
                path,
                "key version",
                f"is {version!r}; this importer reads pyperf format 1.x",
                "export with a pyperf that writes format 1.0",
            )
        top = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        benchmarks = need(doc, "benchmarks", list, path, "", FMT)
        host = str(top.get("hostname") or "unknown-host")
        boot = top.get("boot_time")
        source, gaps = source_from_commit(top.get("commit_id"), what="metadata.commit_id")
        allocation = {
            "id": f"local-{host}-{str(boot).replace(' ', 'T')}" if boot else f"pyperf-{host}-{path.name}",
            "scheduler": "local",
            "hosts": [host],
        }
        handle = f"env{n}"
        first_run_meta: dict[str, Any] = {}
        drafts_here: list[Draft] = []
        for i, bench in enumerate(benchmarks):
            where = f"benchmarks[{i}]"
            runs = need(bench, "runs", list, path, where, FMT)
            bench_meta = bench.get("metadata") if isinstance(bench.get("metadata"), dict) else {}
            meta = {**top, **bench_meta}
            name = meta.get("name")
            if not isinstance(name, str):
                raise fail(path, f"key {where}.metadata.name", "is missing", "every pyperf benchmark has a name")
            values: list[float] = []
            per_run: list[int] = []
            warmups: list[int] = []
            loads: list[float] = []
            dates: list[str] = []
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
                if not first_run_meta:
                    first_run_meta = run_meta
                run_values = run.get("values") or []
                if not isinstance(run_values, list):
                    raise fail(
                        path,
                        f"key {where}.runs[{j}].values",
                        f"benchmark {name}: is {type(run_values).__name__}, expected a list of numbers",
                        "give the JSON pyperf wrote",
                    )
                for k, v in enumerate(run_values):
                    if not _number(v) or v < 0:
                        raise fail(
                            path,
                            f"key {where}.runs[{j}].values[{k}]",
                            f"benchmark {name}: is {v!r}, expected a number",
                            "pyperf writes each value as a non-negative number; give the JSON pyperf wrote",
                        )
                values.extend(run_values)
                if run_values:
                    per_run.append(len(run_values))
                    warmups.append(len(run.get("warmups") or []))
                if _number(run_meta.get("load_avg_1min")):
                    loads.append(run_meta["load_avg_1min"])
                if isinstance(run_meta.get("date"), str):
                    dates.append(run_meta["date"])
            unit = _UNITS.get(str(meta.get("unit", "second")), str(meta.get("unit", "second")))
            data: dict[str, Any] = {
                "metric": name,
                "unit": unit,
                "lower_is_better": True,
                "allocation": allocation,
                "title": f"pyperf {name}",
            }
            repeat = {
                "runs": len(per_run),
                "calibration_runs": len(runs) - len(per_run),
                "values_per_run": sorted(set(per_run))[0] if len(set(per_run)) == 1 else per_run,
                "warmups_per_run": sorted(set(warmups))[0] if len(set(warmups)) == 1 else warmups,
                "loops": meta.get("loops"),
                "inner_loops": meta.get("inner_loops"),
            }
            extra: dict[str, Any] = {
                "format": FMT,
                "repeat": {k: v for k, v in repeat.items() if v is not None},
                "metadata": {k: v for k, v in meta.items() if k not in _PER_RUN and k != "name"},
            }
            if loads:
                extra["load_avg_1min"] = loads
            if values:
                data["samples"] = values
                pyperf_summary: dict[str, Any] = {"mean": statistics.fmean(values)}
                if len(values) > 1:
                    pyperf_summary["stdev"] = statistics.stdev(values)
                extra["pyperf"] = pyperf_summary
                # pyperf compares two results with Student's t-test on these values (`pyperf compare_to`).
                extra["spread"] = {"method": "pyperf", "values": len(values), **pyperf_summary}
            else:
                data["outcome"] = "failed"
                data["notes"] = "no run holds values (only warmups or calibration)"
            if dates:
                first = parse_time(min(dates), path, f"key {where}.runs[].metadata.date", naive="local", tool="pyperf")
                last = parse_time(max(dates), path, f"key {where}.runs[].metadata.date", naive="local", tool="pyperf")
                if first.observed_at:
                    data["observed_at"] = first.observed_at
                elif first.measured_at:
                    extra["measured_at"] = {**first.measured_at, "last": (last.measured_at or {}).get("local")}
            if gaps:
                extra["provenance_gaps"] = gaps
            data["extra"] = {k: v for k, v in extra.items() if v is not None}
            if source:
                data["source"] = source
            drafts_here.append(
                Draft(
                    "measurement",
                    data,
                    str(path),
                    None,
                    refs={"environment": handle},
                    label=f"benchmark {name}",
                    keys={"samples": f"{where}.runs[].values"},
                )
            )
        load = top.get("load_avg_1min", first_run_meta.get("load_avg_1min"))
        env: dict[str, Any] = {
            "title": f"pyperf machine {host}",
            "hostname": host,
            "python": top.get("python_version"),
            "cpu_model": top.get("cpu_model_name"),
            "cpu_count": count if isinstance(count := top.get("cpu_count"), int) and count > 0 else None,
            "no_gpu_reason": "pyperf records no GPU",
            "load_avg": [load] if isinstance(load, (int, float)) and not isinstance(load, bool) and load >= 0 else None,
            "allocation": allocation,
        }
        if source:
            env["source"] = source
        drafts.append(
            Draft("environment", {k: v for k, v in env.items() if v is not None}, str(path), None, handle=handle)
        )
        drafts.extend(drafts_here)
    return drafts
