"""MLPerf Training result logs and system descriptions, and MLPerf Inference summaries.

Training logs of every round: `:::MLLOG {json}` lines (v0.7 on) and the older
`:::MLL <seconds> key: {json}` lines (v0.6). One measurement per result log: time to
train from `run_start` to `run_stop` (minutes, as MLPerf reports it), throughput from
`tracked_stats`, submission metadata, and the system description (inline `:::SYSJSON`,
a `.json` given beside the logs, or the submission tree's `systems/SYSTEM.json`) as an
environment record. The metric names the benchmark (`ssd/time_to_train`), so results of
different benchmarks never compare. Logs of one benchmark on one system imported
together also get a result-set record whose `score` is MLPerf's, by the benchmark's rule
(mlperf_rules: mlcommons/logging's result_summarizer): the olympic average dropping 4+4
runs for unet3d and 1+1 otherwise, times the review committee's scaling.json factor; an
HPC weak-scaling set's models per minute. Its samples are the runs kept; the dropped are
named. Its time is the first run's `run_start`.

An inference `mlperf_log_summary.txt` (LoadGen) gives one measurement: the result field
MLCommons' submission checker reads for the scenario and version (tokens per second for
LLMs, completed samples per second for Server from v4.1, the early-stopping estimate for
SingleStream and MultiStream), its latency percentiles, and VALID/INVALID.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from . import mlperf_rules as rules
from .base import (
    NESTED,
    Draft,
    ImportOptions,
    OutOfRange,
    fail,
    json_float,
    json_int,
    parse_date,
    read_json,
    read_text,
    record_path,
    source_from_commit,
)

FMT = "MLPerf"
# A tag at the start of a line, after an optional SLURM `srun -l` rank prefix ("0: ").
# A bash trace such as `+ echo ':::SYSJSON ...'` does not start with the tag and is skipped.
# `srun -l` pads the rank to the width of the largest one ("  0: :::MLLOG" among 512 ranks).
_TAG_RE = re.compile(r"^(?:[ \t]*\d+:[ \t]*)?:::(MLLOG|SYSJSON|GITCOMMITID)(?:[ \t](.*))?$")
# MLPerf v0.6 (mlperf_compliance 0.6): `:::MLL 1558570838.588 run_start: {"value": null, "metadata": {...}}`.
_MLL_RE = re.compile(r"^(?:[ \t]*\d+:[ \t]*)?:::MLL\s+(?P<time>\S+)\s+(?P<key>[A-Za-z0-9_.]+):\s?(?P<payload>.*)$")
#: Most accelerators one node of a system description may hold: each becomes an entry of the
#: environment's gpus (a whole TPU v5p pod is 8,960 chips).
_MOST_PER_NODE = 65536
_AS_WRITTEN = "give the result log as the benchmark wrote it"
_PLACEHOLDER_RE = re.compile(r"PLACEHOLDER|UNKNOWN_MLPERF", re.IGNORECASE)
_SUBMISSION_KEYS = (
    "submission_benchmark",
    "submission_org",
    "submission_division",
    "submission_status",
    "submission_platform",
)
_HYPERPARAMS = (
    "global_batch_size",
    "gradient_accumulation_steps",
    "seed",
    "opt_base_learning_rate",
    "train_samples",
    "eval_samples",
)


class Log:
    def __init__(self, path: Path):
        self.path = path
        self.events: dict[str, tuple[int, dict[str, Any]]] = {}  # first occurrence of each key
        self.tracked: list[tuple[int, dict[str, Any]]] = []
        self.sysjson: tuple[int, dict[str, Any]] | None = None
        self.commit_line: tuple[int, str] | None = None
        self.mllog_lines = 0
        self.old_format = False  # v0.6 `:::MLL` lines


def read_log(path: Path) -> Log:
    """A training result log's events, system description and commit line; refused unless it
    holds MLPerf log lines and a run_start."""
    log = Log(path)
    for lineno, raw in enumerate(read_text(path).splitlines(), start=1):
        line = raw.rstrip("\r")
        old = _MLL_RE.match(line)
        if old is not None:
            _read_mll(log, path, lineno, old)
            continue
        match = _TAG_RE.match(line)
        if match:
            _read_tagged(log, path, lineno, match.group(1), (match.group(2) or "").strip())
    _check_complete(log, path)
    return log


def _read_tagged(log: Log, path: Path, lineno: int, tag: str, rest: str) -> None:
    """One `:::TAG payload` line: the commit id, the inline system description (the first of each
    is kept), or an MLLOG event."""
    if tag == "GITCOMMITID":
        if log.commit_line is None:
            log.commit_line = (lineno, rest)
        return
    payload = _json_payload(path, lineno, tag, rest)
    if tag == "SYSJSON":
        if log.sysjson is None:
            log.sysjson = (lineno, payload)
        return
    _read_mllog_event(log, path, lineno, payload)


def _json_payload(path: Path, lineno: int, tag: str, rest: str) -> dict[str, Any]:
    """A tagged line's JSON object, refused when it is not one."""
    try:
        payload = json.loads(rest, parse_int=json_int, parse_float=json_float)
    except OutOfRange as exc:
        raise fail(path, f"line {lineno}", f":::{tag} payload holds {exc}", _AS_WRITTEN) from None
    except json.JSONDecodeError as exc:
        raise fail(
            path,
            f"line {lineno}",
            f":::{tag} payload does not parse as JSON: {exc.msg}",
            "give the result log as the benchmark wrote it",
        ) from None
    except RecursionError:
        raise fail(path, f"line {lineno}", f":::{tag} payload {NESTED}", _AS_WRITTEN) from None
    if not isinstance(payload, dict):
        raise fail(
            path,
            f"line {lineno}",
            f":::{tag} payload is {type(payload).__name__}, expected an object",
            "give the result log as the benchmark wrote it",
        )
    return payload


def _read_mllog_event(log: Log, path: Path, lineno: int, payload: dict[str, Any]) -> None:
    """One `:::MLLOG` event, checked to have a key and a time; each key's first event is kept,
    and every tracked_stats event."""
    log.mllog_lines += 1
    for key in ("key", "time_ms"):
        if key not in payload:
            raise fail(
                path,
                f"line {lineno}, key {key}",
                "is missing from the :::MLLOG event",
                "every MLLOG event has key, value and time_ms",
            )
    time_ms = payload["time_ms"]
    if not isinstance(time_ms, (int, float)) or isinstance(time_ms, bool) or not math.isfinite(time_ms):
        raise fail(
            path,
            f"line {lineno}, key time_ms",
            f"is {time_ms!r}, expected milliseconds",
            "an MLLOG event's time_ms is the milliseconds since 1970 when it was logged; " + _AS_WRITTEN,
        )
    if not isinstance(payload["key"], str):
        raise fail(
            path,
            f"line {lineno}, key key",
            f"is {type(payload['key']).__name__}, expected the event's name",
            "an MLLOG event's key names the event as text (run_start, run_stop, ...); " + _AS_WRITTEN,
        )
    if payload["key"] == "tracked_stats":
        log.tracked.append((lineno, payload))
    else:
        log.events.setdefault(str(payload["key"]), (lineno, payload))


def _check_complete(log: Log, path: Path) -> None:
    """Refuse a file with no MLPerf log line, or a log without run_start (time to train needs it)."""
    if log.mllog_lines == 0:
        raise fail(
            path,
            "line 1",
            "holds no :::MLLOG or :::MLL line",
            "give an MLPerf training result log (result_N.txt), or an inference mlperf_log_summary.txt",
        )
    if "run_start" not in log.events:
        raise fail(
            path,
            "key run_start",
            "no :::MLLOG run_start event",
            "time to train needs run_start; give a complete result log",
        )


def _read_mll(log: Log, path: Path, lineno: int, match: re.Match) -> None:
    """One v0.6 `:::MLL <seconds> key: {...}` line, as the MLLOG event it became in v0.7."""
    try:
        seconds = float(match.group("time"))
        if not math.isfinite(seconds):
            raise ValueError(f"the time {match.group('time')!r} is not a number of seconds")
        payload = json.loads(match.group("payload"), parse_int=json_int, parse_float=json_float)
    except RecursionError:
        raise fail(path, f"line {lineno}", f":::MLL payload {NESTED}", _AS_WRITTEN) from None
    except ValueError as exc:
        raise fail(
            path,
            f"line {lineno}",
            f":::MLL line does not parse: {exc}",
            "an :::MLL line is `:::MLL <seconds> <key>: {json}`; give the result log as the benchmark wrote it",
        ) from None
    if not isinstance(payload, dict):
        payload = {"value": payload}
    log.mllog_lines += 1
    log.old_format = True
    event = {"key": match.group("key"), "time_ms": seconds * 1000.0, **payload}
    log.events.setdefault(event["key"], (lineno, event))


def _value(log: Log, key: str) -> Any:
    event = log.events.get(key)
    return event[1].get("value") if event else None


def _submission(log: Log, path: Path) -> dict[str, Any]:
    """The submission_* events' values (benchmark, org, division, status, platform), each text."""
    submission = {}
    for key in _SUBMISSION_KEYS:
        value = _value(log, key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise fail(
                path,
                f"line {log.events[key][0]}, key value",
                f"{key} is {type(value).__name__}, expected text",
                f"MLPerf logs {key} as text (the benchmark, org, division, status or platform); " + _AS_WRITTEN,
            )
        submission[key.removeprefix("submission_")] = value
    return submission


def _int(text: Any) -> int | None:
    try:
        return int(str(text).strip())
    except (TypeError, ValueError):
        return None


def system_draft(
    system: dict[str, Any], file: str, line: int | None, handle: str, observed_at: str | None, source: dict | None
) -> Draft:
    stack = system.get("other_software_stack")
    stack = stack if isinstance(stack, dict) else {}
    per_node = _int(system.get("accelerators_per_node")) or 0
    cores, sockets = _int(system.get("host_processor_core_count")), _int(system.get("host_processors_per_node"))
    data: dict[str, Any] = {
        "title": f"MLPerf system {system.get('system_name') or '?'} ({system.get('submitter') or '?'})",
        "hostname": system.get("system_name") or None,
        "cpu_model": system.get("host_processor_model_name") or None,
        "cpu_count": cores * sockets if cores and sockets else None,
        "driver": stack.get("cuda_driver_version") or None,
        "cuda": stack.get("cuda_version") or None,
        "nccl": stack.get("nccl_version") or None,
        "cudnn": stack.get("cudnn_version") or None,
        # One node's accelerators: the description is per node, the allocation says how many nodes.
        "gpus": [
            {"index": i, "name": str(system.get("accelerator_model_name") or "accelerator")} for i in range(per_node)
        ],
    }
    if observed_at:
        data["observed_at"] = observed_at
    if source:
        data["source"] = source
    return Draft("environment", {k: v for k, v in data.items() if v is not None}, file, line, handle=handle)


def _system_file_for(log_path: Path) -> Path | None:
    # Submission layout: ORG/results/SYSTEM/BENCHMARK/result_N.txt beside ORG/systems/SYSTEM.json.
    # HPC: ORG/results/SYSTEM/{strong,weak}/BENCHMARK/result_N.txt.
    scale, system = _layout(log_path)
    try:
        candidate = log_path.parents[4 if scale else 3] / "systems" / f"{system}.json"
    except IndexError:
        return None
    return candidate if candidate.is_file() else None


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    """Drafts for MLPerf training result logs (one measurement per run, its environment, and a
    result set per benchmark and system) and inference LoadGen summaries."""
    logs = [p for p in paths if p.suffix.lower() != ".json"]
    jsons = [p for p in paths if p.suffix.lower() == ".json"]
    # The review committee's scaling.json sits in the benchmark's folder, so a glob picks it up.
    given_scaling = _scaling([p for p in jsons if p.name == "scaling.json"])
    given_system = _given_system([p for p in jsons if p.name != "scaling.json"])
    summaries = [p for p in logs if p.name.startswith("mlperf_log_summary") or _is_summary(p)]
    logs = [p for p in logs if p not in summaries]
    if not logs and not summaries:
        raise fail(
            paths[0], "", "no result log given", "give result_N.txt files (and optionally the system description JSON)"
        )

    drafts: list[Draft] = [inference_draft(p) for p in summaries]
    env_handles: dict[str, str] = {}
    groups: dict[tuple, list[_Run]] = defaultdict(list)
    for n, path in enumerate(logs):
        log = read_log(path)
        start_line, start = log.events["run_start"]
        source, gaps = _provenance(log)
        submission = _submission(log, path)
        for key, value in submission.items():
            if isinstance(value, str) and _PLACEHOLDER_RE.search(value):
                gaps.append(f"submission_{key} is the placeholder {value!r}")
        system, sys_file, sys_line = _system_of(log, path, given_system, options, gaps)
        observed_at = parse_date(
            start.get("time_ms"), path, f"line {start_line}, key time_ms", tool=FMT, writes="milliseconds since 1970"
        )
        scale, folder_system = _layout(path)
        system_name = (system or {}).get("system_name") or submission.get("platform") or folder_system
        allocation = _allocation(system, system_name, start)

        env_handle = None
        if system is not None:
            key = json.dumps(system, sort_keys=True) + str(sys_file if sys_line is None else path)
            env_handle = env_handles.get(key)
            if env_handle is None:
                env_handle = env_handles[key] = f"env{len(env_handles)}"
                env = system_draft(system, sys_file, sys_line, env_handle, observed_at, source)
                # An inline SYSJSON describes this run's machine; a systems/ file is shared by many runs.
                env.data["allocation"] = allocation if sys_line is not None else None
                drafts.append(env)

        extra: dict[str, Any] = {"system": system, "system_file": record_path(sys_file)} if system is not None else {}
        data, ttt, benchmark = _run_measurement(log, path, submission, extra, gaps)
        data.update(observed_at=observed_at, allocation=allocation)
        if source:
            data["source"] = source
        data["title"] = f"MLPerf {benchmark} on {system_name}: " + (
            f"time to train {ttt:.3f} min"
            if ttt is not None
            else f"{data['outcome']} ({data['extra']['status'] or 'no run_stop'})"
        )
        handle = f"run{n}"
        draft = Draft("measurement", data, str(path), start_line, handle=handle, label=f"{benchmark} run {path.name}")
        if env_handle:
            draft.refs["environment"] = env_handle
        drafts.append(draft)
        stop = log.events.get("run_stop")
        group = (benchmark, submission.get("org"), system_name, submission.get("division"), scale, path.parent)
        groups[group].append(
            _Run(handle, ttt, str(path), observed_at, start["time_ms"], stop[1]["time_ms"] if stop else None)
        )

    for (benchmark, org, system_name, division, scale, folder), runs in groups.items():
        if len(runs) < (2 if scale == "weak" else 3):
            continue  # a strong-scaling set needs one run left after dropping the fastest and the slowest
        scaling = _scaling_for(folder, given_scaling) if scale != "weak" else None
        drafts.append(_set_draft(benchmark, org, system_name, division, runs, scaling, scale))
    return drafts


def _given_system(system_files: list[Path]) -> tuple[Path, dict[str, Any]] | None:
    """The system description given beside the logs (the last one, when several)."""
    given: tuple[Path, dict[str, Any]] | None = None
    for path in system_files:
        data = read_json(path, "MLPerf system description")
        if not isinstance(data, dict) or "system_name" not in data:
            raise fail(
                path,
                "key system_name",
                "is missing",
                "a .json beside MLPerf logs must be the system description (systems/SYSTEM.json)",
            )
        given = (path, data)
    return given


def _provenance(log: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """The submission's commit, if the harness printed one, and the provenance gaps so far."""
    if log.commit_line is None:
        return None, [":::GITCOMMITID line is absent: the measured commit is unknown"]
    line_no, rest = log.commit_line
    source, gaps = source_from_commit(rest.split()[0] if rest.split() else "", what=f":::GITCOMMITID (line {line_no})")
    return source, list(gaps)


def _system_of(
    log: Any, path: Path, given: tuple[Path, dict[str, Any]] | None, options: ImportOptions, gaps: list[str]
) -> tuple[dict[str, Any] | None, str, int | None]:
    """(system description, its file, its line) of one run: the inline SYSJSON first, then a file
    given or found beside the log. What is missing or a placeholder goes into `gaps`."""
    system, sys_file, sys_line = None, str(path), None
    if log.sysjson is not None:
        sys_line, system = log.sysjson
    elif given is not None:
        sys_file, system = str(given[0]), given[1]
    elif (found := _system_file_for(path)) is not None:
        try:
            data = read_json(found, "MLPerf system description")
        except InputError as exc:
            # Found by the submission layout, not given: a description that is not JSON (NVIDIA's
            # v0.6 systems/*.json hold :::MLL-style lines) is reported, not fatal.
            reason = exc.problems[0].message if exc.problems else str(exc)
            note = f"{record_path(found)} was not used: {reason}"
            if note not in options.notes:
                options.notes.append(note)
            gaps.append(f"system description {record_path(found)} is not JSON ({reason})")
            data = None
        if isinstance(data, dict):
            sys_file, system = str(found), data
    if system is None:
        gaps.append("no system description: neither :::SYSJSON nor systems/SYSTEM.json")
        return None, sys_file, sys_line
    for key in ("submitter", "system_name"):
        value = system.get(key)
        if not isinstance(value, (str, type(None))):
            raise fail(
                sys_file,
                (f"line {sys_line}, " if sys_line else "") + f"key {key}",
                f"is {type(value).__name__}, expected text",
                f"an MLPerf system description names its {key} as text; give the description as submitted",
            )
        if isinstance(value, str) and _PLACEHOLDER_RE.search(value):
            gaps.append(f"system description {key} is the placeholder {value!r}")
    per_node = _int(system.get("accelerators_per_node"))
    if per_node is not None and per_node > _MOST_PER_NODE:
        raise fail(
            sys_file,
            (f"line {sys_line}, " if sys_line else "") + "key accelerators_per_node",
            f"is {per_node:,}; one node holds at most {_MOST_PER_NODE:,} accelerators here",
            "accelerators_per_node counts one node's accelerators (number_of_nodes says how many nodes); "
            "give the description as submitted",
        )
    return system, sys_file, sys_line


def _allocation(system: dict[str, Any] | None, system_name: str, start: dict[str, Any]) -> dict[str, Any]:
    per_node = _int((system or {}).get("accelerators_per_node"))
    nodes = _int((system or {}).get("number_of_nodes"))
    accel = (system or {}).get("accelerator_model_name")
    allocation: dict[str, Any] = {
        # Each result log is its own run; nothing in it says two runs shared a job.
        "id": f"mlperf-{system_name}-{start['time_ms']}",
        "scheduler": "mlperf",
        "topology": f"{nodes * per_node}x {accel}" if nodes and per_node and accel else None,
        "nodes": nodes,
        "gpus_per_node": per_node,
    }
    return {k: v for k, v in allocation.items() if v is not None}


def _run_measurement(
    log: Any, path: Path, submission: dict[str, Any], extra: dict[str, Any], gaps: list[str]
) -> tuple[dict[str, Any], float | None, str]:
    """The run's measurement fields (time to train from run_start to a successful run_stop, or
    the failure), its time to train in minutes, and its benchmark."""
    _, start = log.events["run_start"]
    stop = log.events.get("run_stop")
    status = None
    if stop is not None:
        metadata = stop[1].get("metadata")
        if not isinstance(metadata, (dict, type(None))):
            raise fail(
                path,
                f"line {stop[0]}, key metadata",
                f"run_stop's metadata is {type(metadata).__name__}, expected an object",
                "MLPerf logs run_stop with metadata holding its status (success or aborted); " + _AS_WRITTEN,
            )
        status = (metadata or {}).get("status")
    throughputs = [
        float(p["value"]["throughput"])
        for _, p in log.tracked
        if isinstance(p.get("value"), dict) and isinstance(p["value"].get("throughput"), (int, float))
    ]
    benchmark = submission.get("benchmark") or path.parent.name
    extra = {
        "format": "mlperf",
        "submission": submission,
        "hyperparameters": {k: _value(log, k) for k in _HYPERPARAMS if _value(log, k) is not None},
        "run_start_ms": start["time_ms"],
        "status": status,
        **extra,
    }
    if throughputs:
        extra["tracked_throughput"] = throughputs
    if gaps:
        extra["provenance_gaps"] = gaps
    extra["benchmark"] = benchmark
    extra["log_format"] = ":::MLL (v0.6)" if log.old_format else ":::MLLOG"
    data: dict[str, Any] = {
        # The benchmark is part of the metric: a GPT-3 time never compares with a ResNet one.
        "metric": f"{benchmark}/time_to_train",
        "unit": "min",
        "lower_is_better": True,
        "extra": extra,
    }
    if throughputs:
        # tracked_stats throughput is training samples per second between evaluations.
        data["throughput"] = statistics.median(throughputs)
        data["throughput_unit"] = "samples/s"
    # The global batch stays in extra.hyperparameters: the median is a time to train, not a step
    # time, so global_batch / median is no throughput (rule derived-figures would recompute it).
    if stop is None:
        data.update(outcome="failed", notes="no run_stop event: the run did not finish")
        return data, None, benchmark
    extra["run_stop_ms"] = stop[1]["time_ms"]
    if status != "success":
        data.update(outcome="failed", notes=f"run_stop status is {status!r}: the run did not reach the quality target")
        return data, None, benchmark
    ttt = (stop[1]["time_ms"] - start["time_ms"]) / 60000.0
    if ttt < 0:
        raise fail(
            path,
            f"line {stop[0]}, key time_ms",
            "run_stop is earlier than run_start",
            "give the result log as the benchmark wrote it",
        )
    data["samples"] = [ttt]
    return data, ttt, benchmark


@dataclass
class _Run:
    """What a result set needs of one run."""

    handle: str
    ttt: float | None  # minutes; None when the run did not converge
    file: str
    observed_at: str | None
    start_ms: float
    stop_ms: float | None


def _layout(path: Path) -> tuple[str | None, str]:
    """(`strong`/`weak` for an HPC submission, else None; the system folder's name) of
    .../SYSTEM/[strong|weak/]BENCHMARK/result_N.txt."""
    parents = path.parents
    scale = parents[1].name if len(parents) > 1 and parents[1].name in ("strong", "weak") else None
    system = parents[2].name if scale and len(parents) > 2 else (parents[1].name if len(parents) > 1 else "")
    return scale, system


def _scaling(paths: list[Path]) -> dict[Path, tuple[float, str]]:
    """The review committee's factor of each benchmark folder given: scaling.json's
    `scaling_factor` (result_summarizer multiplies the olympic average by it)."""
    factors: dict[Path, tuple[float, str]] = {}
    for path in paths:
        data = read_json(path, "MLPerf scaling.json")
        factor = data.get("scaling_factor") if isinstance(data, dict) else None
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) or factor <= 0:
            raise fail(
                path,
                "key scaling_factor",
                f"is {factor!r}, expected a positive number",
                "scaling.json is the review committee's {\"scaling_factor\": N} for the benchmark's folder; "
                "give it as published",
            )
        factors[path.parent.resolve()] = (float(factor), str(path))
    return factors


def _scaling_for(folder: Path, given: dict[Path, tuple[float, str]]) -> tuple[float, str] | None:
    """A set's scaling factor: scaling.json given for its folder, else the one in the folder (as
    result_summarizer finds it), else none."""
    key = folder.resolve()
    if key in given:
        return given[key]
    found = folder / "scaling.json"
    if found.is_file():
        return _scaling([found])[key]
    return None


def _set_draft(
    benchmark: str,
    org: Any,
    system_name: str,
    division: Any,
    runs: list[_Run],
    scaling: tuple[float, str] | None,
    scale: str | None,
) -> Draft:
    """The result-set record of one benchmark's runs on one system: MLPerf's score as `score`."""
    starts = sorted(r.observed_at for r in runs if r.observed_at)
    required = rules.RESULT_FILE_COUNTS.get(benchmark)
    extra: dict[str, Any] = {
        "format": "mlperf",
        "result_set": True,
        "benchmark": benchmark,
        "runs_total": len(runs),
        "runs_failed": sum(1 for r in runs if r.ttt is None),
        "runs_required": required,
        "org": org,
        "division": division,
        "system": system_name,
        "scaling": scale or "strong",
        # MLPerf's results tables give the score to three decimals.
        "decimals": {"score": rules.PUBLISHED_DECIMALS},
    }
    notes: list[str] = []
    of_runs = f"{len(runs)} runs"
    if required is not None and len(runs) < required:
        extra["too_few_runs"] = True
        of_runs += f" of the {required} MLPerf requires"
        notes.append(
            f"Too few runs: {len(runs)} result files where MLPerf requires {required} for {benchmark}; "
            "the score is computed as MLPerf's rule would, but the set is not a complete submission."
        )
    data: dict[str, Any] = {
        "metric": f"{benchmark}/time_to_train",
        "unit": "min",
        "lower_is_better": True,
        "allocation": None,
        "extra": extra,
    }
    if starts:
        data["observed_at"] = starts[0]  # the first run's run_start, from the logs
    refs: dict[str, str | list[str]] = {"extra.runs": [r.handle for r in runs]}
    where = f"MLPerf {benchmark} on {system_name}"
    if scale == "weak":
        _weak_score(data, benchmark, runs, where, of_runs, notes)
    else:
        _strong_score(data, benchmark, runs, scaling, refs, where, of_runs, notes)
    return Draft(
        "measurement",
        data,
        runs[0].file,
        None,
        handle=f"set-{benchmark}-{system_name}",
        refs=refs,
        label=f"{benchmark} result set on {system_name}",
    )


def _weak_score(
    data: dict[str, Any], benchmark: str, runs: list[_Run], where: str, of_runs: str, notes: list[str]
) -> None:
    """An HPC weak-scaling set: models that converged per minute of the whole concurrent run."""
    extra = data["extra"]
    spans = [(r.start_ms, r.stop_ms) for r in runs if r.ttt is not None and r.stop_ms is not None]
    score = rules.weak(spans, benchmark)
    data.update(metric=f"{benchmark}/models_per_minute", unit="models/min", lower_is_better=False)
    extra.update(number_of_models=score.models, time_to_train_all_min=score.minutes)
    if score.per_minute is None:
        data.update(outcome="failed", notes=" ".join([f"no weak-scaling score: {score.why_none}", *notes]))
        data["title"] = f"{where}: weak-scaling set of {of_runs}, {score.why_none}"
        return
    data.update(median=score.per_minute, score=score.per_minute)
    extra["score"] = score.per_minute
    data["title"] = (
        f"{where}: weak scaling {score.per_minute:.3f} models/min "
        f"({score.models} models in {score.minutes:.3f} min; {of_runs})"
    )
    data["notes"] = " ".join(
        [
            "Weak-scaling set (MLPerf HPC): the instances trained concurrently; the score (`score`) is the number "
            "of models that converged over the time from the first run_start to the last run_stop.",
            *notes,
        ]
    )


def _strong_score(
    data: dict[str, Any],
    benchmark: str,
    runs: list[_Run],
    scaling: tuple[float, str] | None,
    refs: dict[str, str | list[str]],
    where: str,
    of_runs: str,
    notes: list[str],
) -> None:
    """A strong-scaling set: MLPerf's olympic average of the runs, times the scaling factor."""
    extra = data["extra"]
    ok = [r for r in runs if r.ttt is not None]
    failed = [r for r in runs if r.ttt is None]
    values = [r.ttt for r in ok if r.ttt is not None]
    result = rules.olympic(values, len(failed), benchmark)
    k = extra["max_dropped"] = rules.max_dropped(benchmark)
    if result.average is None:
        data["outcome"] = "failed"
        data["notes"] = " ".join([f"no olympic average: {result.why_none}", *notes])
        data["title"] = f"{where}: result set of {of_runs}, {result.why_none}"
        return
    factor = scaling[0] if scaling else 1.0
    score = result.average * factor
    data.update(statistic="olympic-average", samples=[values[i] for i in sorted(result.kept)], score=score)
    # MLPerf's score for the set, as result_summarizer reports it (times the scaling factor).
    extra["olympic_average"] = extra["score"] = score
    if scaling:
        extra.update(
            scaling_factor=scaling[0], scaling_file=record_path(scaling[1]), olympic_average_unscaled=result.average
        )
    why = {i: "fastest" for i in result.fastest} | {i: "slowest" for i in result.slowest}
    dropped = sorted(why, key=lambda i: values[i])
    extra["dropped"] = [
        {"file": Path(ok[i].file).name, "time_to_train_min": values[i], "why": why[i]} for i in dropped
    ] + [{"file": Path(r.file).name, "why": "did not converge (counts as one of the slowest)"} for r in failed]
    refs["extra.kept_runs"] = [ok[i].handle for i in sorted(result.kept)]
    refs["extra.dropped_runs"] = [ok[i].handle for i in dropped] + [r.handle for r in failed]
    names = ", ".join(d["file"] + " (" + d["why"] + ")" for d in extra["dropped"])
    scaled = f" x scaling factor {factor:g}" if scaling else ""
    data["title"] = (
        f"{where}: olympic average{scaled} {score:.3f} min ({len(result.kept)} of {of_runs}; dropped {names})"
    )
    data["notes"] = " ".join(
        [
            f"Result set: the headline (`score`) is MLPerf's olympic average, the mean of the samples (the runs "
            f"kept) after dropping the {k} fastest and the {k} slowest runs (a run that did not converge counts "
            "as one of the slowest)"
            + (f", times the review committee's scaling factor {factor:g} ({extra['scaling_file']})" if scaling else "")
            + ". Runs are separate allocations.",
            *notes,
        ]
    )


# -- inference ---------------------------------------------------------------------------------

_SUMMARY_LINE = re.compile(r"^(?:\*\s*)?(?P<key>[^:=]+?)\s*:\s*(?P<value>.*)$")
#: Scenario -> (summary key of its result, metric suffix, unit, lower is better), in the order tried:
#: the field MLCommons' submission checker reads (RESULT_FIELD up to v4.0; RESULT_FIELD_NEW and
#: RESULT_FIELD_BENCHMARK_OVERWRITE from v4.1), as LoadGen prints it in the summary's results
#: section. LLMs that LoadGen counts tokens for are scored in tokens per second; a Server run
#: from v4.1 on completed samples per second (LoadGen prints that line in the results section
#: from v4.1; before, the scheduled rate was the result); SingleStream and MultiStream on
#: LoadGen's early-stopping estimate of the percentile where LoadGen gives one (from v1.1);
#: v0.5-v1.x MultiStream on samples per query.
_SCENARIO_RESULTS = {
    "offline": [
        ("tokens per second", "tokens_per_second", "tokens/s", False),
        ("samples per second", "samples_per_second", "samples/s", False),
    ],
    "server": [
        ("completed tokens per second", "completed_tokens_per_second", "tokens/s", False),
        ("completed samples per second", "completed_samples_per_second", "samples/s", False),
        ("scheduled samples per second", "scheduled_samples_per_second", "samples/s", False),
    ],
    "singlestream": [
        ("early stopping 90th percentile estimate", "early_stopping_p90_latency", "ns", True),
        ("90th percentile latency (ns)", "p90_latency", "ns", True),
    ],
    "multistream": [
        ("samples per query", "samples_per_query", "samples", False),
        ("early stopping 99th percentile estimate", "early_stopping_p99_latency", "ns", True),
        ("99th percentile latency (ns)", "p99_latency", "ns", True),
    ],
}


def lines_key(key: str) -> str:
    """The summary line the result was read from, as LoadGen capitalises it."""
    return key[:1].upper() + key[1:]


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def _is_summary(path: Path) -> bool:
    try:
        head = read_text(path)[:400]
    except InputError:
        return False
    return "MLPerf Results Summary" in head


def _read_summary(path: Path) -> tuple[dict[str, tuple[int, str]], set[str]]:
    """A summary's `key : value` lines (lower-case key -> (line, value), the first of each) and
    the keys of its results section (before "Additional Stats")."""
    fields: dict[str, tuple[int, str]] = {}
    results: set[str] = set()
    in_results = True
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        if line.strip().lower() == "additional stats":
            in_results = False
        m = _SUMMARY_LINE.match(line.strip())
        if m and not line.startswith("="):
            key = m.group("key").strip().lower()
            fields.setdefault(key, (lineno, m.group("value").strip()))
            if in_results:
                results.add(key)
    return fields, results


def inference_draft(path: Path) -> Draft:
    """One measurement from LoadGen's `mlperf_log_summary.txt`."""
    fields, results = _read_summary(path)
    if "scenario" not in fields:
        raise fail(path, "line 1", "no `Scenario :` line", "give LoadGen's mlperf_log_summary.txt, unchanged")
    scenario = fields["scenario"][1]
    # v0.5 LoadGen spells the scenarios "Single Stream" and "Multi Stream".
    folder_scenario = scenario.replace(" ", "")
    specs = _SCENARIO_RESULTS.get(folder_scenario.lower())
    if specs is None:
        raise fail(
            path,
            f"line {fields['scenario'][0]}",
            f"scenario {scenario!r} is not Offline, Server, SingleStream or MultiStream",
            "give LoadGen's mlperf_log_summary.txt of one of those scenarios",
        )
    spec = next((s for s in specs if s[0] in results), None)
    if spec is None:
        raise fail(
            path,
            "",
            f"no `{specs[-1][0]}` line for scenario {scenario}",
            "LoadGen writes it in the summary's first section; give the summary unchanged",
        )
    key, suffix, unit, lower = spec
    result_line, text = fields[key]
    try:
        value = float(text)
    except ValueError:
        raise fail(
            path, f"line {result_line}", f"{key} is {text!r}, expected a number", "give the summary unchanged"
        ) from None
    # .../SYSTEM/BENCHMARK/SCENARIO/performance/run_1/mlperf_log_summary.txt in a submission tree
    # (an audit run: .../SCENARIO/TEST/performance/); the folder is "SingleStream" for "Single Stream".
    parts = path.parts
    at = next(
        (i for i in range(len(parts) - 2, max(len(parts) - 6, 0), -1) if parts[i].lower() == folder_scenario.lower()),
        None,
    )
    benchmark = parts[at - 1] if at is not None and at >= 1 else "inference"
    system = parts[at - 2] if at is not None and at >= 2 else None
    validity = fields.get("result is", (None, "unknown"))[1]
    latencies = {
        k.replace(" latency (ns)", "").replace(" ", "_"): float(v)
        for k, (_, v) in fields.items()
        if k.endswith("latency (ns)") and v.replace(".", "", 1).isdigit()
    }
    gaps = [
        "mlperf_log_summary.txt records no commit",
        "mlperf_log_summary.txt records no date (mlperf_log_detail.txt's test_datetime has it)",
    ]
    early = {
        k.removeprefix("early stopping ").replace(" percentile estimate", ""): float(v)
        for k, (_, v) in fields.items()
        if k.startswith("early stopping ") and k.endswith("percentile estimate") and _is_number(v)
    }
    data: dict[str, Any] = {
        "metric": f"{benchmark}/{folder_scenario}/{suffix}",
        "unit": unit,
        "lower_is_better": lower,
        "median": value,
        "allocation": None,
        "title": f"MLPerf inference {benchmark} {scenario}"
        + (f" on {system}" if system else "")
        + f": {text} {unit} ({validity})",
        "extra": {
            "format": "mlperf-inference",
            "benchmark": benchmark,
            "scenario": scenario,
            "system": system,
            "sut_name": fields.get("sut name", (None, None))[1],
            "mode": fields.get("mode", (None, None))[1],
            "validity": validity,
            "latency_ns": latencies,
            "early_stopping_ns": early or None,
            "result_field": lines_key(key),
            "spread": {"method": "mlperf-loadgen", "one_value": True},
            "provenance_gaps": gaps,
        },
    }
    detail = path.with_name("mlperf_log_detail.txt")
    if detail.is_file():
        for raw in read_text(detail).splitlines():
            if '"test_datetime"' in raw:
                try:
                    event = json.loads(raw.split(":::MLLOG", 1)[1])
                    when = parse_date(event.get("value"), detail, "key test_datetime")
                except (ValueError, IndexError, RecursionError, InputError):
                    when = None
                if when:
                    data["observed_at"] = when
                    gaps.pop()
                break
    if validity.upper() != "VALID":
        data["outcome"] = "failed"
        data["notes"] = f"LoadGen judged the run {validity}: its result does not stand"
        data.pop("median")
    data["extra"] = {k: v for k, v in data["extra"].items() if v is not None}
    return Draft("measurement", data, str(path), result_line, label=f"{benchmark} {scenario}")
