"""airspeed velocity (asv) results JSON, format 1 and 2, optionally with benchmarks.json.

One measurement per benchmark (one per parameter combination for parameterized ones).
A `null` result is a benchmark that failed (outcome failed); a NaN result is one asv
skipped, and gets no record. Raw samples are imported when asv recorded them
(`--record-samples`, format 2). `benchmarks.json` given beside the results supplies
units; without it the unit follows asv's name prefixes (time_, mem_, peakmem_, track_).
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

from .base import Draft, ImportOptions, fail, measurement_draft, need, parse_date, read_json, source_from_commit

FMT = "asv"
_UNITS = {"seconds": "s", "bytes": "bytes"}


def _unit_for(name: str, meta: dict[str, Any]) -> str:
    if name in meta and isinstance(meta[name], dict) and meta[name].get("unit"):
        return _UNITS.get(meta[name]["unit"], meta[name]["unit"])
    short = name.rsplit(".", 1)[-1]
    if short.startswith("time_"):
        return "s"
    if short.startswith(("mem_", "peakmem_")):
        return "bytes"
    return "unit"


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    meta: dict[str, Any] = {}
    results_files = []
    for path in paths:
        if path.name == "benchmarks.json":
            # asv writes NaN into its files; it means "skipped", so it is read, not refused.
            doc = read_json(path, "asv benchmarks.json", allow_nan=True)
            if not isinstance(doc, dict):
                raise fail(path, "key (top level)", "is not an object", "give asv's benchmarks.json")
            meta = {k: v for k, v in doc.items() if isinstance(v, dict)}
        else:
            results_files.append(path)
    if not results_files:
        raise fail(
            paths[0],
            "",
            "no results file given",
            "give asv results files (MACHINE/COMMIT-ENV.json); benchmarks.json alone holds no results",
        )
    drafts: list[Draft] = []
    for n, path in enumerate(results_files):
        doc = read_json(path, FMT, allow_nan=True)
        version = need(doc, "version", int, path, "", FMT)
        if version not in (1, 2):
            raise fail(
                path,
                "key version",
                f"is {version}; this importer reads asv results format 1 and 2",
                "export with asv 0.4 to 0.6",
            )
        results = need(doc, "results", dict, path, "", FMT)
        params = need(doc, "params", dict, path, "", FMT)
        source, gaps = source_from_commit(doc.get("commit_hash"), what="commit_hash")
        observed = parse_date(doc.get("date"), path, "key date")
        machine = str(params.get("machine") or "unknown-machine")
        allocation = {
            "id": f"asv-{machine}-{str(doc.get('commit_hash') or '')[:8]}-{doc.get('date')}",
            "scheduler": "local",
            "hosts": [machine],
        }
        handle = f"env{n}"
        env: dict[str, Any] = {
            "title": f"asv machine {machine}",
            "hostname": machine,
            "cpu_model": params.get("cpu"),
            "python": params.get("python") or doc.get("python"),
            "no_gpu_reason": "asv records no GPU",
            "allocation": allocation,
        }
        if observed:
            env["observed_at"] = observed
        if source:
            env["source"] = source
        drafts.append(
            Draft("environment", {k: v for k, v in env.items() if v is not None}, str(path), None, handle=handle)
        )
        columns = doc.get("result_columns") if version == 2 else None
        for name, entry in results.items():
            where = f"results.{name}"
            if version == 2:
                if not isinstance(entry, list) or not isinstance(columns, list):
                    raise fail(
                        path, f"key {where}", "is not a row of result_columns", "give the results file asv wrote"
                    )
                row = dict(zip(columns, entry))
                value, bparams, samples = row.get("result"), row.get("params") or [], row.get("samples")
            elif isinstance(entry, dict):
                value, bparams, samples = entry.get("result"), entry.get("params") or [], entry.get("samples")
            else:
                value, bparams, samples = entry, [], None
            combos = [list(c) for c in itertools.product(*bparams)] if bparams else [[]]
            values = value if bparams else [value]
            if not isinstance(values, list) or len(values) != len(combos):
                raise fail(
                    path,
                    f"key {where}.result",
                    f"has {len(values) if isinstance(values, list) else 'no'} values for {len(combos)} parameter combinations",
                    "give the results file asv wrote",
                )
            sample_lists = samples if bparams and isinstance(samples, list) else [samples]
            for k, (combo, v) in enumerate(zip(combos, values)):
                if isinstance(v, float) and math.isnan(v):
                    continue  # skipped by asv: no measurement was taken
                metric = f"{name}({', '.join(map(str, combo))})" if combo else name
                data: dict[str, Any] = {
                    "metric": metric,
                    "unit": _unit_for(name, meta),
                    "lower_is_better": True,
                    "allocation": allocation,
                    "title": f"asv {metric}",
                }
                raw = sample_lists[k] if k < len(sample_lists) else None
                if v is None:
                    data["outcome"] = "failed"
                    data["notes"] = "asv recorded no result: the benchmark failed"
                elif not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise fail(
                        path,
                        f"key {where}.result",
                        f"is {v!r}, expected a number, null or NaN",
                        "give the results file asv wrote",
                    )
                elif isinstance(raw, list) and raw:
                    data["samples"] = raw
                    data["extra"] = {"asv_result": v}
                else:
                    data["median"] = v  # asv's result is the median of its repeats
                extra = {
                    **data.get("extra", {}),
                    "format": FMT,
                    "benchmark": name,
                    "params": combo or None,
                    "requirements": doc.get("requirements"),
                    "env_name": doc.get("env_name"),
                }
                if name in meta:
                    extra["type"] = meta[name].get("type")
                drafts.append(measurement_draft(path, data, extra, gaps, observed, source, handle))
    return drafts
