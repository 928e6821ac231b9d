"""MLPerf Training result logs and system descriptions, and MLPerf Inference summaries.

Training logs of every round: `:::MLLOG {json}` lines (v0.7 on) and the older
`:::MLL <seconds> key: {json}` lines (v0.6). One measurement per result log: time to
train from `run_start` to `run_stop` (minutes, as MLPerf reports it), throughput from
`tracked_stats`, submission metadata, and the system description (inline `:::SYSJSON`,
a `.json` given beside the logs, or the submission tree's `systems/SYSTEM.json`) as an
environment record. The metric names the benchmark (`ssd/time_to_train`), so results of
different benchmarks never compare. Logs of one benchmark on one system imported
together also get a result-set record whose headline is MLPerf's score, the olympic
average (`statistic: olympic-average`): its samples are the runs kept, the fastest and
the slowest are dropped and named. Its time is the first run's `run_start`.

An inference `mlperf_log_summary.txt` (LoadGen) gives one measurement: the scenario's
result (samples per second for Offline and Server, the latency percentile for
SingleStream and MultiStream), its latency percentiles, and VALID/INVALID.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..errors import InputError
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
_TAG_RE = re.compile(r"^(?:\d+:\s?)?:::(MLLOG|SYSJSON|GITCOMMITID)(?:[ \t](.*))?$")
# MLPerf v0.6 (mlperf_compliance 0.6): `:::MLL 1558570838.588 run_start: {"value": null, "metadata": {...}}`.
_MLL_RE = re.compile(r"^(?:\d+:\s?)?:::MLL\s+(?P<time>\S+)\s+(?P<key>[A-Za-z0-9_.]+):\s?(?P<payload>.*)$")
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
    try:
        system = log_path.parent.parent.name
        candidate = log_path.parents[3] / "systems" / f"{system}.json"
    except IndexError:
        return None
    return candidate if candidate.is_file() else None


def olympic_average(values: list[float], failed: int = 0) -> tuple[float, list[int]]:
    """MLPerf's olympic average: drop the fastest and the slowest run, average the rest.

    A run that did not converge counts as the slowest (MLPerf allows one). Returns the
    average and the indices (into `values`) that were dropped.
    """
    if failed > 1:
        raise ValueError(f"{failed} runs did not converge; MLPerf allows one")
    order = sorted(range(len(values)), key=lambda i: values[i])
    dropped = [order[0]] + ([] if failed else [order[-1]])
    kept = [values[i] for i in range(len(values)) if i not in dropped]
    if not kept:
        raise ValueError("too few runs for an olympic average (at least 3)")
    return statistics.fmean(kept), dropped


def parse(paths: list[Path], options: ImportOptions) -> list[Draft]:
    """Drafts for MLPerf training result logs (one measurement per run, its environment, and a
    result set per benchmark and system) and inference LoadGen summaries."""
    logs = [p for p in paths if p.suffix.lower() != ".json"]
    given_system = _given_system([p for p in paths if p.suffix.lower() == ".json"])
    summaries = [p for p in logs if p.name.startswith("mlperf_log_summary") or _is_summary(p)]
    logs = [p for p in logs if p not in summaries]
    if not logs and not summaries:
        raise fail(
            paths[0], "", "no result log given", "give result_N.txt files (and optionally the system description JSON)"
        )

    drafts: list[Draft] = [inference_draft(p) for p in summaries]
    env_handles: dict[str, str] = {}
    groups: dict[tuple, list[tuple[str, float | None, str, str | None]]] = defaultdict(list)
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
        system_name = (system or {}).get("system_name") or submission.get("platform") or path.parent.parent.name
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
        groups[(benchmark, submission.get("org"), system_name, submission.get("division"))].append(
            (handle, ttt, str(path), observed_at)
        )

    for (benchmark, org, system_name, division), runs in groups.items():
        if len(runs) < 3:
            continue  # a set needs one run left after dropping the fastest and the slowest
        drafts.append(_set_draft(benchmark, org, system_name, division, runs))
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
    gbs = _value(log, "global_batch_size")
    if isinstance(gbs, int) and gbs > 0:
        data["global_batch"] = gbs
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


def _set_draft(
    benchmark: str, org: Any, system_name: str, division: Any, runs: list[tuple[str, float | None, str, str | None]]
) -> Draft:
    ok = [(h, v, f) for h, v, f, _ in runs if v is not None]
    failed = [(h, f) for h, v, f, _ in runs if v is None]
    values = [v for _, v, _ in ok]
    starts = sorted(t for *_, t in runs if t)
    extra: dict[str, Any] = {
        "format": "mlperf",
        "result_set": True,
        "benchmark": benchmark,
        "runs_total": len(runs),
        "runs_failed": len(failed),
        "org": org,
        "division": division,
        "system": system_name,
    }
    data: dict[str, Any] = {
        "metric": f"{benchmark}/time_to_train",
        "unit": "min",
        "lower_is_better": True,
        "allocation": None,
        "extra": extra,
    }
    if starts:
        data["observed_at"] = starts[0]  # the first run's run_start, from the logs
    refs: dict[str, str | list[str]] = {"extra.runs": [h for h, *_ in runs]}
    try:
        avg, dropped = olympic_average(values, len(failed))
    except ValueError as exc:
        data["outcome"] = "failed"
        data["notes"] = f"no olympic average: {exc}"
        data["title"] = f"MLPerf {benchmark} on {system_name}: result set of {len(runs)} runs, {exc}"
    else:
        order = sorted(range(len(values)), key=lambda i: values[i])
        kept = [i for i in range(len(ok)) if i not in dropped]
        data["statistic"] = "olympic-average"
        data["samples"] = [values[i] for i in kept]
        extra["olympic_average"] = avg
        extra["dropped"] = [
            {
                "file": Path(ok[i][2]).name,
                "time_to_train_min": values[i],
                "why": "fastest" if i == order[0] else "slowest",
            }
            for i in dropped
        ] + [{"file": Path(f).name, "why": "did not converge (counts as the slowest)"} for _, f in failed]
        refs["extra.kept_runs"] = [ok[i][0] for i in kept]
        refs["extra.dropped_runs"] = [ok[i][0] for i in dropped] + [h for h, _ in failed]
        names = ", ".join(d["file"] + " (" + d["why"] + ")" for d in extra["dropped"])
        data["title"] = (
            f"MLPerf {benchmark} on {system_name}: olympic average {avg:.3f} min "
            f"({len(kept)} of {len(runs)} runs; dropped {names})"
        )
        data["notes"] = (
            "Result set: the headline is MLPerf's olympic average, the mean of the samples (the runs kept); "
            "the fastest and the slowest runs are dropped (a run that did not converge counts as the slowest). "
            "Runs are separate allocations."
        )
    return Draft(
        "measurement",
        data,
        runs[0][2],
        None,
        handle=f"set-{benchmark}-{system_name}",
        refs=refs,
        label=f"{benchmark} result set on {system_name}",
    )


# -- inference ---------------------------------------------------------------------------------

_SUMMARY_LINE = re.compile(r"^(?P<key>[^:=]+?)\s*:\s*(?P<value>.*)$")
#: Scenario -> (summary key of its result, metric suffix, unit, lower is better).
_SCENARIO_RESULT = {
    "offline": ("samples per second", "samples_per_second", "samples/s", False),
    "server": ("scheduled samples per second", "scheduled_samples_per_second", "samples/s", False),
    "singlestream": ("90th percentile latency (ns)", "p90_latency", "ns", True),
    "multistream": ("samples per query", "samples_per_query", "samples", False),
}


def _is_summary(path: Path) -> bool:
    try:
        head = read_text(path)[:400]
    except InputError:
        return False
    return "MLPerf Results Summary" in head


def inference_draft(path: Path) -> Draft:
    """One measurement from LoadGen's `mlperf_log_summary.txt`."""
    fields: dict[str, tuple[int, str]] = {}
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        m = _SUMMARY_LINE.match(line.strip())
        if m and not line.startswith("="):
            fields.setdefault(m.group("key").strip().lower(), (lineno, m.group("value").strip()))
    if "scenario" not in fields:
        raise fail(path, "line 1", "no `Scenario :` line", "give LoadGen's mlperf_log_summary.txt, unchanged")
    scenario = fields["scenario"][1]
    spec = _SCENARIO_RESULT.get(scenario.replace(" ", "").lower())
    if spec is None:
        raise fail(
            path,
            f"line {fields['scenario'][0]}",
            f"scenario {scenario!r} is not Offline, Server, SingleStream or MultiStream",
            "give LoadGen's mlperf_log_summary.txt of one of those scenarios",
        )
    key, suffix, unit, lower = spec
    if scenario.lower() == "multistream" and key not in fields:
        key, suffix, unit, lower = "99th percentile latency (ns)", "p99_latency", "ns", True
    if key not in fields:
        raise fail(
            path,
            "",
            f"no `{key}` line for scenario {scenario}",
            "LoadGen writes it in the summary's first section; give the summary unchanged",
        )
    result_line, text = fields[key]
    try:
        value = float(text)
    except ValueError:
        raise fail(
            path, f"line {result_line}", f"{key} is {text!r}, expected a number", "give the summary unchanged"
        ) from None
    # .../BENCHMARK/SCENARIO/performance/run_1/mlperf_log_summary.txt in a submission tree.
    parts = path.parts
    benchmark = parts[-5] if len(parts) >= 5 and parts[-4].lower() == scenario.lower() else "inference"
    system = parts[-6] if len(parts) >= 6 and benchmark != "inference" else None
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
    data: dict[str, Any] = {
        "metric": f"{benchmark}/{scenario}/{suffix}",
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
