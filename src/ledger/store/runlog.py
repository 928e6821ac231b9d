"""Read measurements from a run's output: structured lines among the noise.

Two families are understood:

* ``LEDGER {json}``: one measurement's fields (as `ledger add measurement` takes them),
  printed by the collectors or by any harness;
* the campaign's ``BF16_*`` family, one JSON object after the tag:
  ``BF16_SOURCE {git_sha, tracked_dirty}`` stamps the runs that follow;
  ``BF16_STEP {step, step_time_sec}`` one per step, warmup included;
  ``BF16_TIMING {internal_slowest_rank_sec[], true_wall_slowest_rank_sec[], ...}`` the
  measured steps' slowest-rank times; ``BF16_RESULT {...}`` closes a run.

Every other line is noise and skipped (a tag may follow a timestamp or a `[rank0]:`
prefix). A truncated log (a run with steps but no BF16_RESULT, a JSON object cut off) or a
contradictory one (steps != warmup + measured, a median the samples do not give) raises
InputError naming the file, the line and the reason: the CLI exits 2 and writes nothing.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from .decode import NESTED, OutOfRange, json_float, json_int
from .inputs import Item

_TAG_RE = re.compile(r"(?<![A-Za-z0-9_])(?P<tag>LEDGER|BF16_[A-Z][A-Z0-9_]*)[ \t]+(?P<body>\{.*)$")
#: Printed numbers are rounded; a median within this relative distance of the samples' agrees.
_REL_TOL = 1e-6

_FIX_TRUNCATED = "the run did not finish or its output was cut; rerun it, or trim the log to the finished runs"
_FIX_CONTRADICTORY = "the log contradicts itself; check the harness that printed it"


@dataclass(frozen=True)
class LogLine:
    tag: str
    data: dict[str, Any]
    line: int
    text: str


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a number a measurement can have")


def _show(text: str) -> str:
    text = text.strip()
    return repr(text if len(text) <= 160 else text[:157] + "...")


def structured_lines(text: str, name: str) -> list[LogLine]:
    """Every structured line of `text`, parsed; noise skipped. A tagged line that does not parse raises."""
    out: list[LogLine] = []
    decoder = json.JSONDecoder(parse_constant=_reject_constant, parse_int=json_int, parse_float=json_float)
    lines = text.splitlines()
    last_nonblank = max((i for i, s in enumerate(lines) if s.strip()), default=-1)
    for index, raw in enumerate(lines):
        found = _TAG_RE.search(raw)
        if not found:
            continue
        tag, body = found["tag"], found["body"].rstrip()
        lineno = index + 1
        try:
            data, _end = decoder.raw_decode(body)
        except (ValueError, RecursionError) as exc:
            truncated = index == last_nonblank or isinstance(exc, json.JSONDecodeError) and exc.pos >= len(body)
            reason = "is cut off (truncated JSON)" if truncated else f"does not parse ({exc})"
            if isinstance(exc, (RecursionError, OutOfRange)):
                what = NESTED if isinstance(exc, RecursionError) else f"holds {exc}"
                truncated, reason = False, f"does not parse (it {what})"
            raise InputError(
                f"{name}: a {tag} line {reason}",
                [
                    Problem(
                        name,
                        f"line {lineno}",
                        f"{tag} line {reason}: {_show(raw)}",
                        _FIX_TRUNCATED if truncated else "each tag is followed by one JSON object on the same line",
                    )
                ],
            ) from None
        if not isinstance(data, dict):
            raise InputError(
                f"{name}: {tag} is not an object",
                [
                    Problem(
                        name,
                        f"line {lineno}",
                        f"{tag} is followed by {type(data).__name__}, not a JSON object: {_show(raw)}",
                        "print one JSON object after the tag",
                    )
                ],
            )
        out.append(LogLine(tag, data, lineno, raw))
    return out


def _number(value: Any, name: str, field: str, line: LogLine) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise InputError(
            f"{name}: {line.tag}.{field} is not a number",
            [
                Problem(
                    name,
                    f"line {line.line}, field {field}",
                    f"{line.tag}.{field} = {value!r} is not a finite number: {_show(line.text)}",
                    "print numbers as JSON numbers",
                )
            ],
        )
    return float(value)


def _series(data: dict[str, Any], key: str, name: str, line: LogLine) -> list[float] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not value:
        raise InputError(
            f"{name}: {line.tag}.{key} is not a list",
            [
                Problem(
                    name,
                    f"line {line.line}, field {key}",
                    f"{line.tag}.{key} must be a non-empty list of seconds",
                    _FIX_CONTRADICTORY,
                )
            ],
        )
    return [_number(v, name, f"{key}[{i}]", line) for i, v in enumerate(value)]


def _agrees(given: float, derived: float) -> bool:
    return abs(given - derived) <= max(1e-9, _REL_TOL * abs(derived))


def _contradiction(name: str, line: LogLine, message: str) -> InputError:
    return InputError(
        f"{name}: {message}", [Problem(name, f"line {line.line}", f"{message}: {_show(line.text)}", _FIX_CONTRADICTORY)]
    )


class _Bf16Run:
    """The BF16_* lines of one run, from its first step to its BF16_RESULT."""

    def __init__(self) -> None:
        self.steps: list[LogLine] = []
        self.timing: LogLine | None = None

    @property
    def pending(self) -> bool:
        return bool(self.steps) or self.timing is not None

    def result(self, result: LogLine, source: dict[str, Any] | None, name: str, warmup: int | None) -> dict[str, Any]:
        """The measurement of this run: its measured step times (BF16_TIMING's true-wall, else its
        internal, else the BF16_STEP lines after warmup), checked against what BF16_RESULT says."""
        r = result.data
        outcome = "oom" if r.get("oom") is True else r.get("outcome", "ok")
        record: dict[str, Any] = {"metric": "step_time", "unit": "s", "statistic": "median"}
        extra: dict[str, Any] = {"log_line": result.line}
        for key, target in _INT_FIELDS.items():
            if r.get(key) is not None:
                record[target] = int(_number(r[key], name, key, result))
        if outcome != "ok":
            record["outcome"] = outcome if outcome in ("oom", "failed") else "failed"
            if source:
                record["source"] = source
            record["extra"] = extra
            return record

        internal, true_wall = self._timing_series(name)
        warm, measured = self._declared_steps(result, name, warmup, len(true_wall or internal or []))
        step_samples: list[float] = []
        if self.steps:
            step_samples, warm = self._step_samples(result, name, warm, measured)
        samples = true_wall or internal or step_samples
        if not samples:
            raise InputError(
                f"{name}: BF16_RESULT without step times",
                [
                    Problem(
                        name,
                        f"line {result.line}",
                        f"BF16_RESULT has no BF16_TIMING and no BF16_STEP lines before it: {_show(result.text)}",
                        _FIX_TRUNCATED,
                    )
                ],
            )
        _check_medians(result, name, internal, true_wall, step_samples)

        record["samples"] = samples
        if warm is not None:
            record["warmup_steps"] = warm
        for key in ("true_wall_model_mfu_percent", "internal_model_mfu_percent"):
            if key in r:
                record["mfu_percent"] = _number(r[key], name, key, result)
                break
        if all(record.get(k) for k in ("world_size", "local_batch", "grad_accum")):
            record["global_batch"] = record["world_size"] * record["local_batch"] * record["grad_accum"]
            record["throughput"] = record["global_batch"] / statistics.median(samples)
        extra.update(_kept_in_extra(r, internal, true_wall))
        if "mfu_percent" in record:
            # MFU is reportable only beside the FLOP audit of its numerator (rule mfu-audit); a
            # log names none, so the harness's figure is kept, marked unaudited. The stopping
            # point recomputes MFU from the contract's audit once one is recorded.
            extra["mfu_percent_unaudited"] = record.pop("mfu_percent")
        record["extra"] = extra
        if source:
            record["source"] = source
        return record

    def _timing_series(self, name: str) -> tuple[list[float] | None, list[float] | None]:
        """BF16_TIMING's internal and true-wall step times (slowest rank), which must be as many."""
        if self.timing is None:
            return None, None
        internal = _series(self.timing.data, "internal_slowest_rank_sec", name, self.timing)
        true_wall = _series(self.timing.data, "true_wall_slowest_rank_sec", name, self.timing)
        if internal and true_wall and len(internal) != len(true_wall):
            raise _contradiction(
                name, self.timing, f"BF16_TIMING has {len(internal)} internal but {len(true_wall)} true-wall step times"
            )
        return internal, true_wall

    def _declared_steps(
        self, result: LogLine, name: str, warmup: int | None, from_timing: int
    ) -> tuple[int | None, int | None]:
        """(warmup, measured) steps as BF16_RESULT or BF16_TIMING declare them (--warmup when neither)."""

        def declared(key: str) -> int | None:
            for src in (result.data, self.timing.data if self.timing else {}):
                if src.get(key) is not None:
                    return int(_number(src[key], name, key, result))
            return None

        warm = declared("warmup_steps")
        measured = declared("measured_steps")
        if measured is not None and from_timing and measured != from_timing:
            raise _contradiction(
                name, result, f"measured_steps = {measured} but BF16_TIMING holds {from_timing} step times"
            )
        return (warmup if warm is None else warm), (measured or from_timing or None)

    def _step_samples(
        self, result: LogLine, name: str, warm: int | None, measured: int | None
    ) -> tuple[list[float], int]:
        """The step times of the BF16_STEP lines after warmup, and the warmup; the steps must be
        consecutive and as many as warmup + measured."""
        numbers = []
        for s in self.steps:
            if "step" not in s.data or "step_time_sec" not in s.data:
                raise _contradiction(name, s, "BF16_STEP lacks step or step_time_sec")
            numbers.append(int(_number(s.data["step"], name, "step", s)))
        seen: set[int] = set()
        for s, number in zip(self.steps, numbers):
            if number in seen:
                raise _contradiction(name, s, f"step {number} appears twice")
            seen.add(number)
        expected = list(range(numbers[0], numbers[0] + len(numbers)))
        if numbers != expected:
            missing = sorted(set(range(min(numbers), max(numbers) + 1)) - seen)
            bad = next(s for s, n, e in zip(self.steps, numbers, expected) if n != e)
            detail = f"step(s) {missing[:5]} missing" if missing else "steps out of order"
            raise _contradiction(name, bad, f"BF16_STEP lines are not consecutive: {detail}")
        n = len(self.steps)
        if warm is not None and measured is not None and n != warm + measured:
            raise _contradiction(
                name, result, f"{n} BF16_STEP lines but warmup {warm} + measured {measured} = {warm + measured}"
            )
        if warm is None and measured is not None:
            warm = n - measured
            if warm < 0:
                raise _contradiction(
                    name, result, f"{n} BF16_STEP lines but BF16_TIMING holds {measured} measured steps"
                )
        if warm is None:
            raise InputError(
                f"{name}: cannot tell warmup from measured steps",
                [
                    Problem(
                        name,
                        f"line {result.line}",
                        f"BF16_RESULT names no warmup_steps and no BF16_TIMING precedes it: {_show(result.text)}",
                        "print warmup_steps in BF16_RESULT, or pass --warmup N",
                    )
                ],
            )
        if warm > n:
            raise _contradiction(name, result, f"{n} BF16_STEP lines but warmup is {warm}")
        return [_number(s.data["step_time_sec"], name, "step_time_sec", s) for s in self.steps[warm:]], warm


#: BF16_RESULT's integer fields -> the measurement's fields.
_INT_FIELDS = {
    "world_size": "world_size",
    "local_batch_size": "local_batch",
    "gradient_accumulation_steps": "grad_accum",
    "peak_allocated_max_rank_bytes": "peak_allocated_bytes",
    "peak_reserved_max_rank_bytes": "peak_reserved_bytes",
}
#: BF16_RESULT keys read into the measurement; any other key is kept in `extra`.
_KNOWN_RESULT_KEYS = {
    "local_batch_size",
    "gradient_accumulation_steps",
    "world_size",
    "internal_median_step_sec",
    "internal_model_mfu_percent",
    "true_wall_median_step_sec",
    "true_wall_model_mfu_percent",
    "peak_allocated_max_rank_bytes",
    "peak_reserved_max_rank_bytes",
    "warmup_steps",
    "measured_steps",
    "outcome",
    "oom",
}


def _kept_in_extra(r: dict[str, Any], internal: list[float] | None, true_wall: list[float] | None) -> dict[str, Any]:
    """What the measurement keeps in `extra`: the series and figures its samples are not, where
    the samples came from, and every BF16_RESULT key it does not read."""
    extra: dict[str, Any] = {}
    if true_wall and internal:
        extra["internal_slowest_rank_sec"] = internal
    for key in ("internal_median_step_sec", "internal_model_mfu_percent"):
        if key in r and true_wall:
            extra[key] = r[key]
    extra["samples_from"] = (
        "true_wall_slowest_rank_sec" if true_wall else "internal_slowest_rank_sec" if internal else "BF16_STEP"
    )
    extra.update((key, value) for key, value in r.items() if key not in _KNOWN_RESULT_KEYS)
    return extra


def _check_medians(
    result: LogLine,
    name: str,
    internal: list[float] | None,
    true_wall: list[float] | None,
    step_samples: list[float],
) -> None:
    """The medians BF16_RESULT states agree with the step times they summarise."""
    r = result.data
    checks = [("true_wall_median_step_sec", true_wall), ("internal_median_step_sec", internal)]
    if not internal and not true_wall:
        first = "true_wall_median_step_sec" if "true_wall_median_step_sec" in r else "internal_median_step_sec"
        checks = [(first, step_samples)]
    for key, series in checks:
        if series and r.get(key) is not None:
            given = _number(r[key], name, key, result)
            derived = statistics.median(series)
            if not _agrees(given, derived):
                raise _contradiction(
                    name, result, f"{key} = {given:g} but the median of the {len(series)} measured steps is {derived:g}"
                )


def parse_log(text: str, name: str, *, warmup: int | None = None) -> list[Item]:
    """Measurement items from a log's structured lines; [] when it has none. Raises on a bad log."""
    items: list[Item] = []
    source: dict[str, Any] | None = None
    run = _Bf16Run()
    last: LogLine | None = None
    for line in structured_lines(text, name):
        last = line
        if line.tag == "LEDGER":
            data = dict(line.data)
            if source and "source" not in data:
                data["source"] = source
            items.append(Item(data, name, line.line))
        elif line.tag == "BF16_SOURCE":
            sha = line.data.get("git_sha")
            if not isinstance(sha, str) or not sha.strip():
                raise _contradiction(name, line, "BF16_SOURCE has no git_sha")
            source = {"sha": sha.strip(), "dirty": bool(line.data.get("tracked_dirty", False))}
        elif line.tag == "BF16_STEP":
            if run.timing is not None:
                raise _contradiction(name, line, "a BF16_STEP after BF16_TIMING and before BF16_RESULT")
            run.steps.append(line)
        elif line.tag == "BF16_TIMING":
            if run.timing is not None:
                raise _contradiction(
                    name, line, f"a second BF16_TIMING (the first is at line {run.timing.line}) before BF16_RESULT"
                )
            run.timing = line
        elif line.tag == "BF16_RESULT":
            record = run.result(line, source, name, warmup)
            items.append(Item(record, name, line.line))
            run = _Bf16Run()
        # Other BF16_* tags (configuration echoes and the like) carry no measurement.
    if run.pending:
        assert last is not None
        pending = run.timing or run.steps[-1]
        raise InputError(
            f"{name}: truncated log: a run has no BF16_RESULT",
            [
                Problem(
                    name,
                    f"line {last.line}",
                    f"{len(run.steps)} BF16_STEP line(s){' and a BF16_TIMING' if run.timing else ''} after the last BF16_RESULT, and no BF16_RESULT; the last structured line is {_show(last.text if last else pending.text)}",
                    _FIX_TRUNCATED,
                )
            ],
        )
    return items


def read_log(path: str | Path, *, warmup: int | None = None) -> list[Item]:
    """Measurement items from a log file (`-` for standard input). A log with none is an error."""

    if str(path) == "-":
        name, text = "<stdin>", sys.stdin.read()
    else:
        name = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            raise InputError("no such file", [Problem(name, "", "no such file", "check the path of the log")]) from None
        except IsADirectoryError:
            raise InputError(
                "a folder", [Problem(name, "", "is a folder, not a log file", "give the run's output file")]
            ) from None
    items = parse_log(text, name, warmup=warmup)
    if not items:
        raise InputError(
            f"{name}: no measurement in the log",
            [
                Problem(
                    name,
                    "",
                    "no `LEDGER {json}` line and no BF16_RESULT line",
                    "print structured lines from the harness (see docs/guide/sandwich.md)",
                )
            ],
        )
    return items


def value_of(data: dict[str, Any]) -> float | None:
    """The headline value of a measurement dict: its median, else the median of its samples."""
    if isinstance(data.get("median"), (int, float)) and not isinstance(data.get("median"), bool):
        return float(data["median"])
    samples = data.get("samples")
    if (
        isinstance(samples, list)
        and samples
        and all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in samples)
    ):
        return float(statistics.median(samples))
    return None
