"""The importers read a file as the tool that wrote it does (issue 25): MLPerf's per-benchmark
scoring (mlcommons/logging result_summarizer), the field the inference submission checker
reads, asv's whole-benchmark null, pyperf's perf formats 5 and 4, ctest's retries, Playwright's
epoch-millisecond timestamps, JUnit without a suite time, and the measuring tool's metadata kept
as its own. The inputs are written here in each tool's layout; the real files they come from
are in ../shared/data/real-files-3 (its run.sh checks all 207 against the native tools)."""

from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

import pytest

from ledger.analysis.figures import result_line
from ledger.importers.base import import_files
from ledger.store.ledger import Ledger
from tests.conftest import cli

DATA = Path(__file__).resolve().parent / "data"
T0 = 1_700_000_000_000  # ms


def mllog(key: str, time_ms: float, value: object = None, metadata: dict | None = None, prefix: str = "") -> str:
    event = {"namespace": "", "time_ms": time_ms, "event_type": "POINT_IN_TIME", "key": key, "value": value}
    event["metadata"] = metadata or {}
    return f"{prefix}:::MLLOG {json.dumps(event)}\n"


def result_log(path: Path, benchmark: str, minutes: float | None, start: float = T0, prefix: str = "") -> Path:
    """A result_N.txt as mlperf_logging writes it: submission keys, run_start, run_stop (status
    success; `minutes` None: aborted)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        mllog("submission_benchmark", start - 10, benchmark, prefix=prefix),
        mllog("submission_org", start - 9, "Org", prefix=prefix),
        mllog("submission_division", start - 8, "closed", prefix=prefix),
        mllog("run_start", start, prefix=prefix),
    ]
    stop = start + (minutes if minutes is not None else 5.0) * 60000.0
    status = "success" if minutes is not None else "aborted"
    lines.append(mllog("run_stop", stop, metadata={"status": status}, prefix=prefix))
    path.write_text("".join(lines))
    return path


def drafts_of(repo: Path, fmt: str, paths: list[Path]) -> list:
    return import_files(Ledger.open(repo), fmt, paths, dry_run=True).records


def result_set(records: list):
    (found,) = [r for r in records if r.kind == "measurement" and r.extra.get("result_set")]
    return found


def test_unet3d_drops_four_and_four_and_a_short_set_is_flagged(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "Org/results/sys/unet3d"
    times = [20.0 + 0.37 * ((i * 7) % 40) for i in range(40)]  # 40 distinct times, out of order
    logs = [result_log(folder / f"result_{i}.txt", "unet3d", t, T0 + i * 3_600_000) for i, t in enumerate(times)]
    full = result_set(drafts_of(repo, "mlperf", logs))
    # result_summarizer: max_dropped_scores = 4 for unet3d; sorted(scores)[4:len - 4].
    assert full.score == pytest.approx(statistics.fmean(sorted(times)[4:-4]))
    assert full.extra["olympic_average"] == full.score and full.headline == full.score
    assert len(full.samples) == 32 and full.extra["max_dropped"] == 4
    assert sorted(d["why"] for d in full.extra["dropped"]) == ["fastest"] * 4 + ["slowest"] * 4
    assert "too_few_runs" not in full.extra and full.extra["runs_required"] == 40

    # 22 result files, one that never converged: it is one of the 4 slowest dropped; 14 kept.
    short = [*logs[:21], result_log(folder / "result_21.txt", "unet3d", None, T0 + 99 * 3_600_000)]
    partial = result_set(drafts_of(repo, "mlperf", short))
    converged = sorted(times[:21])
    assert partial.score == pytest.approx(statistics.fmean(converged[4 : 21 - 3]))
    assert len(partial.samples) == 14 and partial.extra["too_few_runs"] is True
    assert "22 runs of the 40 MLPerf requires" in (partial.title or "") and "Too few runs" in (partial.notes or "")


def test_bert_with_more_non_converged_runs_than_allowed_has_no_score(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "Org/results/sys/bert"
    logs = [result_log(folder / f"result_{i}.txt", "bert", 10.0 + i, T0 + i * 3_600_000) for i in range(8)]
    logs += [result_log(folder / f"result_{i}.txt", "bert", None, T0 + i * 3_600_000) for i in (8, 9)]
    found = result_set(drafts_of(repo, "mlperf", logs))
    assert found.outcome == "failed" and found.score is None and "MLPerf allows 1" in (found.notes or "")


def test_scaling_json_is_applied_given_or_found_beside_the_logs(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "Org/results/sys/llama31_405b"
    times = [209.659, 209.652, 209.445]
    logs = [result_log(folder / f"result_{i}.txt", "llama31_405b", t, T0 + i * 10**8) for i, t in enumerate(times)]
    (folder / "scaling.json").write_text(json.dumps({"scaling_factor": 1.1666666666666667}))
    middle = sorted(times)[1]
    for given in (logs, [*logs, folder / "scaling.json"]):  # a glob of the folder picks scaling.json up
        found = result_set(drafts_of(repo, "mlperf", given))
        assert found.score == pytest.approx(middle * 1.1666666666666667)
        assert found.extra["olympic_average_unscaled"] == pytest.approx(middle)
        assert found.extra["scaling_factor"] == 1.1666666666666667
        assert found.samples == [middle]  # the runs kept; the score is the field, not their mean
    (folder / "scaling.json").write_text(json.dumps({"scaling_factor": "1.2"}))
    result = cli(repo, "import", "mlperf", *map(str, logs))
    assert result.returncode == 2 and "scaling.json" in result.stderr and "scaling_factor" in result.stderr


def test_hpc_weak_scaling_is_models_per_minute(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "HelmholtzAI/results/booster/weak/deepcam"
    spans = [(0, 7.1), (1, 6.1), (0.5, 5.8), (2, 5.2), (0, 7.9), (3, 6.3)]  # (start min, minutes)
    logs = [
        result_log(folder / f"result_{i + 1}.txt", "deepcam", m, T0 + s * 60000, prefix=f"{i}: ")
        for i, (s, m) in enumerate(spans)
    ]
    records = drafts_of(repo, "mlperf", logs)
    found = result_set(records)
    whole = max(s + m for s, m in spans) - min(s for s, _ in spans)
    assert found.metric == "deepcam/models_per_minute" and found.unit == "models/min"
    assert found.score == pytest.approx(6 / whole) and found.median == found.score and not found.lower_is_better
    assert found.extra["number_of_models"] == 6 and found.extra["scaling"] == "weak"
    # One instance too few for deepcam (MLPerf HPC needs 5 models): no score.
    few = result_set(drafts_of(repo, "mlperf", logs[:4]))
    assert few.outcome == "failed" and "needs 5" in (few.notes or "")


def test_space_padded_slurm_rank_prefixes(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "Nebius/results/sys/bert"
    logs = [result_log(folder / f"result_{i}.txt", "bert", 10.0 + i, T0 + i * 10**8, prefix="  0: ") for i in range(3)]
    records = drafts_of(repo, "mlperf", logs)
    assert sorted(r.median for r in records if not r.extra.get("result_set")) == [10.0, 11.0, 12.0]


def test_the_score_is_the_headline_everywhere(repo: Path, tmp_path: Path) -> None:
    """JSON, `ledger show`, `ledger list` and the record page's result line give MLPerf's score,
    at the three decimals MLPerf publishes."""
    folder = tmp_path / "Dell/results/sys/resnet"
    times = [26.7991, 26.8123, 26.8215, 26.7504, 26.9011]
    logs = [result_log(folder / f"result_{i}.txt", "resnet", t, T0 + i * 10**7) for i, t in enumerate(times)]
    (folder / "scaling.json").write_text(json.dumps({"scaling_factor": 1.01}))
    out = cli(repo, "import", "mlperf", *map(str, logs), "--format", "json")
    assert out.returncode == 0, out.stderr
    paths = [repo / r["path"] for r in json.loads(out.stdout)["records"]]
    (doc,) = [d for d in map(json.loads, (p.read_text() for p in paths)) if d["extra"].get("result_set")]
    score = statistics.fmean(sorted(times)[1:-1]) * 1.01
    assert doc["score"] == pytest.approx(score) and doc["extra"]["decimals"]["score"] == 3
    published = f"{score:.3f} min"
    shown = cli(repo, "show", doc["id"])
    assert f"{published} olympic-average resnet/time to train" in shown.stdout
    listed = cli(repo, "list", "--format", "json")
    assert listed.returncode == 0
    rows = json.loads(listed.stdout)
    row = next(r for r in (rows if isinstance(rows, list) else rows["records"]) if r.get("id") == doc["id"])
    assert published in json.dumps(row)
    (rec,) = [r for r in drafts_of(repo, "mlperf", logs) if r.extra.get("result_set")]
    assert result_line(rec).startswith(f"{published} olympic-average")


def summary(path: Path, scenario: str, results: list[str], stats: list[str] = ()) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    bar = "=" * 48
    text = [
        bar,
        "MLPerf Results Summary",
        bar,
        "SUT name : SUT",
        f"Scenario : {scenario}",
        "Mode     : PerformanceOnly",
    ]
    text += [*results, "", bar, "Additional Stats", bar, *stats, ""]
    path.write_text("\n".join(text))
    return path


@pytest.mark.parametrize(
    ("folders", "scenario", "results", "stats", "metric", "value"),
    [
        # v4.1 LLM Server: completed tokens/s (RESULT_FIELD_BENCHMARK_OVERWRITE), not the scheduled rate.
        (
            "llama2-70b-99/Server",
            "Server",
            ["Completed samples per second    : 71.74", "Completed tokens per second: 21028.23", "Result is : VALID"],
            ["Scheduled samples per second : 73.66"],
            "llama2-70b-99/Server/completed_tokens_per_second",
            21028.23,
        ),
        # v4.1 non-LLM Server: completed samples/s (RESULT_FIELD_NEW).
        (
            "resnet50/Server",
            "Server",
            ["Completed samples per second    : 5012.5", "Result is : VALID"],
            ["Scheduled samples per second : 5020.1"],
            "resnet50/Server/completed_samples_per_second",
            5012.5,
        ),
        # Up to v4.0: the scheduled rate is the result.
        (
            "resnet/Server",
            "Server",
            ["Scheduled samples per second : 45169.48", "Result is : VALID"],
            [],
            "resnet/Server/scheduled_samples_per_second",
            45169.48,
        ),
        # MultiStream from v1.1: LoadGen's early-stopping estimate of the p99, not the raw p99.
        (
            "retinanet/MultiStream",
            "MultiStream",
            [
                "99th percentile latency (ns) : 41984475",
                "Result is : VALID",
                "Early Stopping Result:",
                " * Early stopping 99th percentile estimate: 42019927",
            ],
            ["99.00 percentile latency (ns)   : 41984475"],
            "retinanet/MultiStream/early_stopping_p99_latency",
            42019927.0,
        ),
        # v0.5 spells the scenario "Single Stream"; the benchmark stays in the metric.
        (
            "resnet/SingleStream",
            "Single Stream",
            ["90th percentile latency (ns) : 171874", "Result is : VALID"],
            [],
            "resnet/SingleStream/p90_latency",
            171874.0,
        ),
    ],
)
def test_inference_reads_the_field_the_submission_checker_reads(
    repo: Path,
    tmp_path: Path,
    folders: str,
    scenario: str,
    results: list[str],
    stats: list[str],
    metric: str,
    value: float,
) -> None:
    path = summary(
        tmp_path / "Org/results/sys" / folders / "performance/run_1/mlperf_log_summary.txt", scenario, results, stats
    )
    (rec,) = drafts_of(repo, "mlperf", [path])
    assert rec.metric == metric and rec.median == value and rec.extra["system"] == "sys"


#: Real asv results files of format 1 and 2 (tests/importers/data/SOURCES.md), each with a parameterized benchmark.
ASV = {
    1: DATA / "asv/empymod-bench/results/dtr-laptop/9cffb752-conda-py3.8.json",
    2: DATA / "asv/django-asv/results/ubuntu-22.04/4488a25c-conda-py3.10.json",
}


@pytest.mark.parametrize("version", [1, 2])
def test_asv_null_for_a_whole_parameterized_benchmark_is_failed_combinations(
    repo: Path, tmp_path: Path, version: int
) -> None:
    source = ASV[version]
    doc = json.loads(source.read_text())
    columns = doc.get("result_columns")
    if columns:
        # Format 2 row of a parameterized benchmark whose every combination failed, as asv 0.6
        # wrote it for versioned-hdf5's delete_versions.TimeDeleting.time_delete.
        name, params = next(iter(doc["results"])), [["10", "30", "50"], ["'a'", "'b'"]]
        doc["results"][name] = [None, params] + [None] * (len(columns) - 2)
    else:
        name, entry = next((n, e) for n, e in doc["results"].items() if isinstance(e, dict) and e.get("params"))
        params = entry["params"]
        doc["results"][name] = {"result": None, "params": params}
    machine = tmp_path / "results" / source.parent.name
    machine.mkdir(parents=True)
    path = machine / source.name
    path.write_text(json.dumps(doc))
    records = drafts_of(repo, "asv", [path])
    combos = 1
    for values in params:
        combos *= len(values)
    failed = [r for r in records if r.kind == "measurement" and r.metric.startswith(name + "(")]
    assert len(failed) == combos > 1 and {r.outcome for r in failed} == {"failed"}


def test_a_refusal_quotes_a_few_hundred_characters(repo: Path, tmp_path: Path) -> None:
    source = DATA / "asv/empymod-bench/results/dtr-laptop/9cffb752-conda-py3.8.json"
    doc = json.loads(source.read_text())
    name = next(iter(doc["results"]))
    doc["results"][name] = {"result": [{"k": "v" * 100_000}], "params": []}
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / source.name
    path.write_text(json.dumps(doc))
    result = cli(repo, "import", "asv", str(path))
    assert result.returncode == 2 and str(path) in result.stderr and "characters)" in result.stderr
    assert len(result.stderr) < 2000


def perf_v5(path: Path) -> Path:
    """pyperf's telco.json (format 1.0) written as perf 0.8.3-0.9.5 wrote JSON format version 5:
    no suite metadata, the benchmark's in common_metadata, values as `samples`."""
    doc = json.loads((DATA / "pyperf/telco.json").read_text())
    bench = doc["benchmarks"][0]
    runs = [
        {**{k: v for k, v in r.items() if k != "values"}, "samples": r["values"]}
        for r in bench["runs"]
        if "values" in r
    ]
    v5 = {
        "version": 5,
        "benchmarks": [{"common_metadata": {**doc["metadata"], **bench.get("metadata", {})}, "runs": runs}],
    }
    with gzip.open(path, "wt") as f:
        json.dump(v5, f)
    return path


def test_perf_format_5_loads_as_pyperf_loads_it_and_4_is_an_old_format(repo: Path, tmp_path: Path) -> None:
    pyperf = pytest.importorskip("pyperf")
    path = perf_v5(tmp_path / "telco_v5.json.gz")
    native = pyperf.BenchmarkSuite.load(str(path)).get_benchmarks()[0]
    (rec,) = [r for r in drafts_of(repo, "pyperf", [path]) if r.kind == "measurement"]
    assert rec.metric == native.get_name() and rec.samples == list(native.get_values())
    assert rec.median == pytest.approx(native.median())
    doc = json.loads(gzip.open(path, "rt").read())
    doc["version"] = 4
    old = tmp_path / "v4.json"
    old.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="version 4 not supported"):
        pyperf.BenchmarkSuite.load(str(old))
    result = cli(repo, "import", "pyperf", str(old))
    assert result.returncode == 2 and "format version 4 of perf before 0.8.3" in result.stderr
    assert "not a pyperf file" not in result.stderr


def test_pyperf_metadata_of_the_measuring_machine_is_not_a_local_path_warning(repo: Path, tmp_path: Path) -> None:
    doc = json.loads((DATA / "pyperf/telco.json").read_text())
    doc["metadata"]["python_executable"] = "/home/ddfun/cpython/python"
    path = tmp_path / "telco.json"
    path.write_text(json.dumps(doc))
    result = cli(repo, "import", "pyperf", str(path))
    assert result.returncode == 0 and "local-path" not in result.stderr + result.stdout
    checked = cli(repo, "check", "--all")
    assert "local-path" not in checked.stdout + checked.stderr
    (rec,) = [r for r in Ledger.open(repo).records("measurement")]
    assert rec.extra["metadata"]["python_executable"] == "/home/ddfun/cpython/python"
    assert rec.extra["foreign"] == ["extra.metadata"]


CTEST_REPEAT = """Test project C:/build
    Start 1067: DataObjectsTest
1/3 Test #1067: DataObjectsTest ....................***Failed    2.58 sec
    Test #1067: DataObjectsTest ....................***Failed    0.20 sec
    Start 1464: plotsTest
2/3 Test #1464: plotsTest ..........................***Failed    0.29 sec
    Start 1464: plotsTest
    Test #1464: plotsTest ..........................   Passed    0.28 sec
    Start 1550: LoadTest
3/3 Test #1550: LoadTest ...........................   Passed   15.78 sec

67% tests passed, 1 tests failed out of 3

Total Test time (real) =  19.40 sec
"""


def test_ctest_repeat_until_pass_counts_each_tests_last_attempt(repo: Path, tmp_path: Path) -> None:
    path = tmp_path / "ctest_output.txt"
    path.write_text(CTEST_REPEAT)
    (gate,) = drafts_of(repo, "ctest", [path])
    assert (gate.passed, gate.failed, gate.executed) == (2, 1, 3)
    assert gate.failed_names == ["DataObjectsTest"] and gate.extra["flaky_names"] == ["plotsTest"]


def test_junit_epoch_millisecond_timestamp_and_unknown_duration(repo: Path, tmp_path: Path) -> None:
    playwright = tmp_path / "junit.xml"
    playwright.write_text(
        '<testsuites id="" name="" tests="1" failures="0" time="3.2">'
        '<testsuite name="a.spec.ts" timestamp="1641057782965" hostname="" tests="1" failures="0" time="3.2">'
        '<testcase name="t" classname="a" time="3.2"></testcase></testsuite></testsuites>'
    )
    (gate,) = drafts_of(repo, "junit", [playwright])
    assert gate.observed_at is not None and gate.observed_at.isoformat().startswith("2022-01-01T17:23:02.965")
    k6 = tmp_path / "k6.xml"
    k6.write_text(
        '<testsuites tests="1"><testsuite name="k6" tests="1"><testcase name="p95"/></testsuite></testsuites>'
    )
    (gate,) = drafts_of(repo, "junit", [k6])
    assert gate.duration_s is None and gate.extra["duration"].startswith("unknown")
    mbed = tmp_path / "mbed.xml"
    mbed.write_text(
        '<testsuite name="m" tests="2"><testcase name="a" time="100.5"/><testcase name="b" time="28.6"/></testsuite>'
    )
    (gate,) = drafts_of(repo, "junit", [mbed])
    assert gate.duration_s == pytest.approx(129.1)
