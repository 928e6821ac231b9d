"""Importers on real files written by MLPerf, pytest-benchmark, pyperf, asv, hyperfine, pytest and ctest,
and on malformed copies of them: exit 2, the line or key named, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import cli

LOCAL = Path(__file__).resolve().parent / "data"
DATA = LOCAL  # real files other tools wrote; SOURCES.md says where each came from
ASUS = DATA / "mlperf/training_results_v4.0/ASUSTeK/results/ESC_N8A-E12/llama2_70b_lora"
CISCO = DATA / "mlperf/training_results_v5.1/Cisco/results/1xC885A_M8-8xH200-SXM-141GB/llama2_70b_lora/result_0.txt"
NVIDIA = DATA / "mlperf/training_results_v4.0/NVIDIA/results/eos_n128_ngc24.04_nemo/llama2_70b_lora/result_0.txt"


def imported(repo: Path, *args: str) -> list[dict]:
    result = cli(repo, "import", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["written"] is True
    return [json.loads((repo / r["path"]).read_text()) for r in out["records"]]


def record_count(repo: Path) -> int:
    return sum(1 for _ in (repo / "ledger" / "records").rglob("*.json"))


def refused(repo: Path, *args: str) -> str:
    before = record_count(repo)
    result = cli(repo, "import", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert record_count(repo) == before, "a refused import wrote records"
    return result.stderr


def test_mlperf_result_set_time_to_train_and_olympic_average(repo: Path) -> None:
    files = sorted(str(p) for p in ASUS.glob("result_*.txt"))
    records = imported(repo, "mlperf", *files)
    runs = [r for r in records if r["kind"] == "measurement" and not r["extra"].get("result_set")]
    assert len(runs) == 10
    times = sorted(round(r["median"], 3) for r in runs)
    # SOURCES.md's table, computed independently from run_start/run_stop.
    assert times == sorted([29.554, 29.296, 29.404, 33.269, 29.401, 29.440, 29.465, 29.272, 29.408, 29.463])
    first = next(r for r in runs if r["extra"]["run_start_ms"] == 1715848320425)
    assert first["unit"] == "min" and first["observed_at"].startswith("2024-05-16")
    assert first["throughput"] == pytest.approx(1.9571005612640788)  # median of the five tracked_stats
    assert first["extra"]["submission"]["org"] == "ASUSTeK"
    assert "source" not in first and any("GITCOMMITID" in g for g in first["extra"]["provenance_gaps"])
    assert first["allocation"]["topology"] == "8x NVIDIA H100-SXM5-80GB"
    envs = [r for r in records if r["kind"] == "environment"]
    assert len(envs) == 1 and envs[0]["cuda"] == "12.2" and len(envs[0]["gpus"]) == 8
    assert first["environment"] == envs[0]["id"]
    (summary,) = [r for r in records if r.get("extra", {}).get("result_set")]
    middle = sorted(r["median"] for r in runs)[1:-1]
    assert summary["extra"]["olympic_average"] == pytest.approx(sum(middle) / 8)
    assert round(summary["extra"]["olympic_average"], 3) == 29.429
    assert sorted(summary["extra"]["runs"]) == sorted(r["id"] for r in runs)
    # The headline is MLPerf's score: the statistic says so, the samples are the runs kept.
    assert summary["statistic"] == "olympic-average" and sorted(summary["samples"]) == middle
    assert summary["metric"] == "llama2_70b_lora/time_to_train"
    assert {(d["file"], d["why"]) for d in summary["extra"]["dropped"]} == {
        ("result_3.txt", "slowest"),
        ("result_7.txt", "fastest"),
    }
    by_id = {r["id"]: r for r in runs}
    assert {Path(by_id[i]["extra"]["imported_from"]).name for i in summary["extra"]["dropped_runs"]} == {
        "result_3.txt",
        "result_7.txt",
    }
    assert len(summary["extra"]["kept_runs"]) == 8
    assert summary["observed_at"].startswith("2024-05-16T08:32")  # the first run's run_start


def test_mlperf_noisy_log_with_empty_commit_and_placeholders(repo: Path) -> None:
    (run, env) = sorted(imported(repo, "mlperf", str(CISCO)), key=lambda r: r["kind"], reverse=True)
    assert run["kind"] == "measurement" and env["kind"] == "environment"
    assert round(run["median"], 3) == 19.806
    gaps = run["extra"]["provenance_gaps"]
    assert any("GITCOMMITID (line 9)" in g and "empty" in g for g in gaps)
    assert any("SUBMISSION_ORG_PLACEHOLDER" in g for g in gaps)
    assert "source" not in run, "an empty commit id must not be filled with the ledger's own commit"
    assert env["cpu_model"] == "AMD EPYC 9575F 64-Core Processor"


def test_mlperf_inline_sysjson_multi_node(repo: Path) -> None:
    records = imported(repo, "mlperf", str(NVIDIA))
    run = next(r for r in records if r["kind"] == "measurement")
    assert round(run["median"], 3) == 1.487
    assert run["allocation"]["nodes"] == 128 and run["allocation"]["topology"].startswith("1024x ")


def test_mlperf_malformed(repo: Path, tmp_path: Path) -> None:
    lines = (ASUS / "result_0.txt").read_bytes().decode().splitlines(keepends=True)
    broken = tmp_path / "result_0.txt"
    broken.write_text("".join(lines[:4]) + lines[4][:60] + "\n" + "".join(lines[5:]))
    assert "line 5" in refused(repo, "mlperf", str(broken))
    no_start = tmp_path / "no_start.txt"
    no_start.write_text("".join(line for line in lines if '"run_start"' not in line))
    assert "run_start" in refused(repo, "mlperf", str(no_start))
    # A pytest-benchmark file renamed .txt and handed to the MLPerf importer.
    other = tmp_path / "result_9.txt"
    other.write_text(next((DATA / "pytest-benchmark/pytest-benchmark-2.5").glob("0001_*.json")).read_text())
    assert "no :::MLLOG or :::MLL line" in refused(repo, "mlperf", str(other))


def test_mlperf_not_a_log(repo: Path) -> None:
    err = refused(
        repo, "mlperf", str(DATA / "asv/asv-fixtures/example_results/benchmarks.json"), str(ASUS / "result_0.txt")
    )
    assert "system_name" in err


def test_pytest_benchmark(repo: Path) -> None:
    files = sorted(str(p) for p in (DATA / "pytest-benchmark/pytest-benchmark-2.5").glob("*.json"))
    records = imported(repo, "pytest-benchmark", *files)
    runs = [r for r in records if r["kind"] == "measurement"]
    assert len(runs) == 3
    run = next(r for r in runs if "2015-08-15T00:01:46" in r["observed_at"])
    assert run["source"]["sha"] == "5b78858eb718649a31fb93d8dc96ca2cee41a4cd" and run["source"]["dirty"] is True
    assert run["median"] == pytest.approx(2.2016643907464864e-07) and run["n"] == 9987
    assert run["allocation"]["hosts"] == ["minibox"]
    assert any("dirty" in g for g in run["extra"]["provenance_gaps"])


def test_pytest_benchmark_malformed(repo: Path, tmp_path: Path) -> None:
    doc = json.loads(
        (
            DATA
            / "pytest-benchmark/pytest-benchmark-2.5/0030_5b78858eb718649a31fb93d8dc96ca2cee41a4cd_20150815_030419_uncommitted-changes.json"
        ).read_text()
    )
    del doc["benchmarks"][0]["stats"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc, indent=2))
    assert "benchmarks[0].stats" in refused(repo, "pytest-benchmark", str(bad))
    cut = tmp_path / "cut.json"
    cut.write_text(
        (
            DATA
            / "pytest-benchmark/pytest-benchmark-2.5/0030_5b78858eb718649a31fb93d8dc96ca2cee41a4cd_20150815_030419_uncommitted-changes.json"
        ).read_text()[:500]
    )
    assert "line " in refused(repo, "pytest-benchmark", str(cut))
    # A file of another tool is named for what it lacks.
    assert "key benchmarks" in refused(
        repo, "pytest-benchmark", str(DATA / "asv/asv-fixtures/example_results/benchmarks.json")
    )
    assert "line 21: holds the non-number NaN" in refused(
        repo,
        "pytest-benchmark",
        str(DATA / "asv/asv-fixtures/example_results/cheetah/22b920c6-py2.7-Cython-numpy1.8.json"),
    )


def test_pyperf_suite_single_and_memory(repo: Path) -> None:
    records = imported(
        repo,
        "pyperf",
        str(DATA / "pyperf/mult_list_py38.json"),
        str(DATA / "pyperf/telco.json"),
        str(DATA / "pyperf/track_memory.json"),
    )
    runs = {r["metric"]: r for r in records if r["kind"] == "measurement"}
    assert set(runs) == {"[1]*1000", "[1,2]*1000", "[1,2,3]*1000", "telco", "timeit"}
    assert runs["telco"]["n"] == 120 and runs["telco"]["unit"] == "s"
    assert runs["timeit"]["unit"] == "bytes" and runs["timeit"]["samples"] == [7360512, 7364608, 7380992]
    assert runs["telco"]["allocation"]["id"] == "local-selma-2016-10-19T01:10:08"
    env = next(r for r in records if r["kind"] == "environment" and r["hostname"] == "apu" and r["load_avg"] == [0.53])
    assert env["cpu_count"] == 8
    # Three benchmarks of one suite share one boot of one host: one allocation.
    assert len({runs[m]["allocation"]["id"] for m in ("[1]*1000", "[1,2]*1000", "[1,2,3]*1000")}) == 1


def test_pyperf_malformed(repo: Path, tmp_path: Path) -> None:
    doc = json.loads((DATA / "pyperf/telco.json").read_text())
    doc["benchmarks"][0]["runs"][3]["values"][1] = "fast"
    bad = tmp_path / "telco.json"
    bad.write_text(json.dumps(doc))
    assert "benchmarks[0].runs[3].values[1]" in refused(repo, "pyperf", str(bad))
    doc["version"] = "2.0"
    bad.write_text(json.dumps(doc))
    assert "key version" in refused(repo, "pyperf", str(bad))


def test_asv_results_with_nan_null_and_params(repo: Path) -> None:
    records = imported(
        repo,
        "asv",
        str(DATA / "asv/asv-fixtures/example_results/benchmarks.json"),
        str(DATA / "asv/asv-fixtures/example_results/cheetah/fcf8c079-py2.7-Cython-numpy1.8.json"),
    )
    runs = {r["metric"]: r for r in records if r["kind"] == "measurement"}
    assert "time_AAA_skip" not in runs  # NaN: asv skipped it, nothing was measured
    assert runs["time_AAA_failure"]["outcome"] == "failed"
    assert runs["time_other.time_parameterized(2)"]["median"] == 4
    assert runs["time_other.time_parameterized(3)"]["outcome"] == "failed"
    assert (
        runs["time_quantity.time_quantity_array_conversion"]["source"]["sha"]
        == "fcf8c079fae7ebad9f27bd31a819f0e4fdd85b99"
    )
    # asv's `date` is the commit's date, not when it ran; this 2015 fixture has no started_at.
    conversion = runs["time_quantity.time_quantity_array_conversion"]
    assert "observed_at" not in conversion and conversion["extra"]["commit_date"].startswith("2013-04-28")
    assert any("started_at is missing" in g for g in conversion["extra"]["provenance_gaps"])


def test_asv_malformed(repo: Path, tmp_path: Path) -> None:
    text = (DATA / "asv/asv-fixtures/example_results/cheetah/22b920c6-py2.7-Cython-numpy1.8.json").read_text()
    bad = tmp_path / "22b920c6-bad.json"
    bad.write_text(text.replace('"result": [1, 2, 3]', '"result": [1, 2]'))
    assert "results.time_other.time_parameterized.result" in refused(repo, "asv", str(bad))
    bad.write_text(text.replace('"commit_hash"', '"commit"').replace('"version": 1', '"version": 9'))
    assert "key version" in refused(repo, "asv", str(bad))


def test_hyperfine_real_export(repo: Path) -> None:
    records = imported(repo, "hyperfine", str(LOCAL / "hyperfine_sleep.json"))
    assert [r["command"] for r in records] == ["sleep 0.01", "sleep 0.012"]
    assert all(r["n"] == 12 and r["metric"] == "wall_time" for r in records)
    assert records[0]["allocation"]["id"] == records[1]["allocation"]["id"]
    assert "source" not in records[0] and records[0]["extra"]["provenance_gaps"]


def test_hyperfine_malformed_and_source_sha(repo: Path, tmp_path: Path) -> None:
    doc = json.loads((LOCAL / "hyperfine_sleep.json").read_text())
    doc["results"][1]["times"][4] = -1
    bad = tmp_path / "h.json"
    bad.write_text(json.dumps(doc))
    assert "results[1].times[4]" in refused(repo, "hyperfine", str(bad))
    sha = "0123456789abcdef0123456789abcdef01234567"
    records = imported(repo, "hyperfine", str(LOCAL / "hyperfine_sleep.json"), "--source-sha", sha)
    assert records[0]["source"]["sha"] == sha
    assert "filled from --source-sha" in records[0]["extra"]["provenance_gaps"][0]


def test_junit_gates_from_pytest_and_ctest(repo: Path) -> None:
    (mixed,) = imported(
        repo,
        "junit",
        str(LOCAL / "pytest_mixed.xml"),
        "--exit-code",
        "1",
        "--load",
        "0.5,0.7",
        "--command",
        "pytest test_sample.py",
    )
    assert (
        mixed["outcome"],
        mixed["executed"],
        mixed["passed"],
        mixed["failed"],
        mixed["errors"],
        mixed["skipped"],
    ) == ("fail", 3, 1, 1, 1, 1)
    assert (
        mixed["skipped_names"] == ["test_sample::test_skipped"]
        and mixed["exit_code"] == 1
        and mixed["load_avg"] == [0.5, 0.7]
    )
    assert mixed["allocation"]["hosts"] == ["vm"]
    (ctest_junit,) = imported(repo, "junit", str(LOCAL / "ctest_junit.xml"))
    assert (ctest_junit["executed"], ctest_junit["skipped"], ctest_junit["failed"]) == (3, 2, 1)
    assert any("exit code unknown" in g for g in ctest_junit["extra"]["provenance_gaps"])


def test_gate_that_ran_no_test_is_never_a_pass(repo: Path) -> None:
    (none,) = imported(repo, "junit", str(LOCAL / "pytest_none.xml"), "--exit-code", "5")
    assert none["outcome"] == "no-tests" and none["executed"] == 0
    # ctest exits 0 when it finds no tests; the gate still says no-tests.
    (ctest_none,) = imported(repo, "ctest", str(LOCAL / "ctest_none.txt"), "--exit-code", "0")
    assert ctest_none["outcome"] == "no-tests"


def test_ctest_console_output(repo: Path) -> None:
    (gate,) = imported(repo, "ctest", str(LOCAL / "ctest_mixed.txt"), "--exit-code", "8")
    assert (gate["outcome"], gate["passed"], gate["failed"], gate["skipped"]) == ("fail", 2, 1, 2)
    assert gate["skipped_names"] == ["skips", "disabled"] and gate["failed_names"] == ["fails"]
    assert gate["duration_s"] == 0.01


def test_gate_malformed(repo: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.xml"
    cut.write_text((LOCAL / "pytest_mixed.xml").read_text()[:300])
    assert "line 1, column" in refused(repo, "junit", str(cut))
    edited = tmp_path / "edited.txt"
    edited.write_text(
        (LOCAL / "ctest_mixed.txt").read_text().replace("1 tests failed out of 4", "0 tests failed out of 4")
    )
    assert "line 13" in refused(repo, "ctest", str(edited))
    assert "Test project" in refused(repo, "ctest", str(LOCAL / "pytest_mixed.xml"))
    assert "line 1, column 1" in refused(repo, "junit", str(LOCAL / "hyperfine_sleep.json"))


@pytest.mark.skipif(shutil.which("ctest") is None or shutil.which("cmake") is None, reason="cmake/ctest not installed")
def test_ctest_run_now(repo: Path, tmp_path: Path) -> None:
    import subprocess

    project = tmp_path / "proj"
    project.mkdir()
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(p NONE)\nenable_testing()\nadd_test(NAME ok COMMAND true)\n"
    )
    subprocess.run(["cmake", "-S", str(project), "-B", str(project / "b")], check=True, capture_output=True)
    run = subprocess.run(["ctest"], cwd=project / "b", capture_output=True, text=True)
    log = tmp_path / "ctest.txt"
    log.write_text(run.stdout)
    (gate,) = imported(repo, "ctest", str(log), "--exit-code", str(run.returncode))
    assert gate["outcome"] == "pass" and gate["executed"] == 1
