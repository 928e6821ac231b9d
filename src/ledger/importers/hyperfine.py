"""hyperfine JSON (`hyperfine --export-json FILE`), with `exit_codes` (1.12 on) or without.

One measurement per command, its `times` as raw samples. hyperfine records neither the
commit nor the machine nor the date: those are provenance gaps unless given on the
command line. The commands of one file ran in one hyperfine invocation, so they share
one allocation and can be compared attributably.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .base import Draft, ImportOptions, fail, need, read_bytes, read_json, shown

FMT = "hyperfine"


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    drafts: list[Draft] = []
    for path in paths:
        doc = read_json(path, FMT)
        results = need(doc, "results", list, path, "", FMT)
        digest = hashlib.sha256(read_bytes(path)).hexdigest()[:12]
        allocation = {"id": f"hyperfine-{digest}", "scheduler": "local"}
        for i, result in enumerate(results):
            where = f"results[{i}]"
            command = need(result, "command", str, path, where, FMT)
            times = need(result, "times", list, path, where, FMT)
            for j, t in enumerate(times):
                if not isinstance(t, (int, float)) or isinstance(t, bool) or t < 0:
                    raise fail(
                        path,
                        f"key {where}.times[{j}]",
                        f"command {command!r}: is {shown(t)}, expected seconds",
                        "give the JSON hyperfine --export-json wrote",
                    )
            codes = _exit_codes(path, where, command, result.get("exit_codes"))
            failed = [c for c in codes if c not in (0, None)]
            extra: dict[str, Any] = {
                "format": FMT,
                "spread": {
                    "method": "hyperfine",
                    **{
                        k: result[k]
                        for k in ("mean", "stddev", "min", "max")
                        if isinstance(result.get(k), (int, float))
                    },
                },
                "mean": result.get("mean"),
                "stddev": result.get("stddev"),
                "user": result.get("user"),
                "system": result.get("system"),
                "parameters": result.get("parameters") or None,
                "provenance_gaps": ["hyperfine records no commit, machine or date"],
            }
            # The commands of one file are variants of one thing timed: the metric is wall time, the command says which.
            data: dict[str, Any] = {
                "metric": "wall_time",
                "unit": "s",
                "lower_is_better": True,
                "command": command,
                "allocation": allocation,
                "title": f"hyperfine {command}",
            }
            if failed:
                # A run that exited non-zero timed something other than the command's work.
                data["outcome"] = "failed"
                data["notes"] = f"{len(failed)} of {len(codes)} runs exited non-zero (exit codes {sorted(set(failed))})"
                extra["times"] = times
            elif not times:
                raise fail(
                    path, f"key {where}.times", "is empty", "give the JSON of a hyperfine run that measured something"
                )
            else:
                data["samples"] = times
            data["extra"] = {k: v for k, v in extra.items() if v is not None}
            drafts.append(
                Draft(
                    "measurement",
                    data,
                    str(path),
                    None,
                    label=f"command {command!r}",
                    keys={"samples": f"{where}.times"},
                )
            )
    return drafts


def _exit_codes(path: Path, where: str, command: str, codes: Any) -> list[int | None]:
    """Each run's exit code: hyperfine writes a list with one integer per run (null when a
    signal ended the run), or no key."""
    if codes is None:
        return []
    fix = "hyperfine writes exit_codes as a list of integers, one per run; give the JSON hyperfine --export-json wrote"
    if not isinstance(codes, list):
        raise fail(
            path, f"key {where}.exit_codes", f"command {command!r}: is {type(codes).__name__}, expected a list", fix
        )
    for k, code in enumerate(codes):
        if code is not None and (not isinstance(code, int) or isinstance(code, bool)):
            raise fail(
                path, f"key {where}.exit_codes[{k}]", f"command {command!r}: is {code!r:.40}, expected an integer", fix
            )
    return codes
