"""pyperf JSON (format 1.0: a suite of benchmarks, or one benchmark), as pyperf and perf write it.

One measurement per benchmark; the values of every run (warmups and calibration runs
excluded) are the raw samples. Host, CPU, Python and the 1-minute load go to an
environment record; the host and its boot time name the allocation, as ledger's own
stamps do (one boot of one host is one allocation).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Draft, ImportOptions, fail, need, parse_date, read_json, source_from_commit

FMT = "pyperf"
_UNITS = {"second": "s", "byte": "bytes", "integer": "count"}


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
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
            meta = {**top, **(bench.get("metadata") or {})}
            name = meta.get("name")
            if not isinstance(name, str):
                raise fail(path, f"key {where}.metadata.name", "is missing", "every pyperf benchmark has a name")
            values: list[float] = []
            loads: list[float] = []
            dates: list[str] = []
            for j, run in enumerate(runs):
                if not isinstance(run, dict):
                    raise fail(
                        path,
                        f"key {where}.runs[{j}]",
                        f"is {type(run).__name__}, expected an object",
                        "give the JSON pyperf wrote",
                    )
                run_meta = run.get("metadata") or {}
                if not first_run_meta:
                    first_run_meta = run_meta
                for k, v in enumerate(run.get("values") or []):
                    if not isinstance(v, (int, float)) or isinstance(v, bool):
                        raise fail(
                            path,
                            f"key {where}.runs[{j}].values[{k}]",
                            f"is {v!r}, expected a number",
                            "give the JSON pyperf wrote",
                        )
                    values.append(v)
                if isinstance(run_meta.get("load_avg_1min"), (int, float)):
                    loads.append(run_meta["load_avg_1min"])
                if run_meta.get("date"):
                    dates.append(run_meta["date"])
            unit = _UNITS.get(str(meta.get("unit", "second")), str(meta.get("unit", "second")))
            data: dict[str, Any] = {
                "metric": name,
                "unit": unit,
                "lower_is_better": True,
                "allocation": allocation,
                "title": f"pyperf {name}",
            }
            extra: dict[str, Any] = {
                "format": FMT,
                "loops": meta.get("loops"),
                "inner_loops": meta.get("inner_loops"),
                "runs": len(runs),
                "perf_version": meta.get("perf_version"),
                "date_timezone": "unknown: pyperf writes the machine's local time",
            }
            if loads:
                extra["load_avg_1min"] = loads
            if values:
                data["samples"] = values
            else:
                data["outcome"] = "failed"
                data["notes"] = "no run holds values (only warmups or calibration)"
            if dates:
                data["observed_at"] = parse_date(min(dates), path, f"key {where}.runs[].metadata.date")
            if gaps:
                extra["provenance_gaps"] = gaps
            data["extra"] = {k: v for k, v in extra.items() if v is not None}
            if source:
                data["source"] = source
            drafts_here.append(Draft("measurement", data, str(path), None, refs={"environment": handle}))
        env: dict[str, Any] = {
            "title": f"pyperf machine {host}",
            "hostname": host,
            "python": top.get("python_version"),
            "cpu_model": top.get("cpu_model_name"),
            "cpu_count": top.get("cpu_count")
            if isinstance(top.get("cpu_count"), int) and top["cpu_count"] > 0
            else None,
            "no_gpu_reason": "pyperf records no GPU",
            "load_avg": [top.get("load_avg_1min", first_run_meta.get("load_avg_1min"))]
            if isinstance(top.get("load_avg_1min", first_run_meta.get("load_avg_1min")), (int, float))
            else None,
            "allocation": allocation,
        }
        if first_run_meta.get("date"):
            env["observed_at"] = parse_date(first_run_meta["date"], path, "key runs[0].metadata.date")
        if source:
            env["source"] = source
        drafts.append(
            Draft("environment", {k: v for k, v in env.items() if v is not None}, str(path), None, handle=handle)
        )
        drafts.extend(drafts_here)
    return drafts
