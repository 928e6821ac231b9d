"""Every real result file under tests/importers/data (SOURCES.md says where each came from),
through `ledger import` (in this process, tests/conftest.py: cli; the foreign-commit test
runs the installed command and pushes through the hook): it imports, or it is refused with
the file, the key path and what the tool would have written. Figures are checked against the tool's own
reader where it installs lightly (pyperf, asv) and by hand arithmetic otherwise."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import statistics
from pathlib import Path

import pytest

from tests.conftest import cli, git, run_ledger

DATA = Path(__file__).resolve().parent / "data"
ASV_EMPYMOD = DATA / "asv/empymod-bench/results"
ASV_DJANGO = DATA / "asv/django-asv/results"
V06 = DATA / "mlperf/training_results_v0.6"
INFERENCE = (
    DATA
    / "mlperf/inference_results_v1.0/closed/NVIDIA/results/A100-PCIex8_TRT/resnet50/Offline/performance/run_1"
    / "mlperf_log_summary.txt"
)
TESTNG = DATA / "junit/testng/test-output"


def ledger_import(repo: Path, fmt: str, *args: str | Path) -> tuple[dict, list[dict]]:
    result = cli(repo, "import", fmt, *map(str, args), "--format", "json")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    return out, [json.loads((repo / r["path"]).read_text()) for r in out["records"]]


def refused(repo: Path, fmt: str, *args: str | Path) -> str:
    before = sorted((repo / "ledger" / "records").rglob("*.json"))
    result = cli(repo, "import", fmt, *map(str, args))
    assert result.returncode == 2, result.stdout + result.stderr
    assert sorted((repo / "ledger" / "records").rglob("*.json")) == before, "a refused import wrote records"
    return result.stderr


def measurements(records: list[dict]) -> dict[str, dict]:
    return {r["metric"]: r for r in records if r["kind"] == "measurement"}


# -- every file ---------------------------------------------------------------------------------

#: (format, files relative to DATA) that import as they are.
IMPORTS = [
    ("pyperf", ["pyperf/py2.json.gz", "pyperf/py3.json.gz", "pyperf/outliers.json.gz", "pyperf/timeit_strip.json.gz"]),
    ("pyperf", ["pyperf/mult_list_py36_tags.json", "pyperf/mult_list_py38.json", "pyperf/telco.json"]),
    ("pyperf", ["pyperf/track_memory.json", "pyperformance/py36.json", "pyperformance/py38.json"]),
    ("pyperf", ["pyperformance/mem1.json"]),
    ("asv", [str(p.relative_to(DATA)) for p in sorted((ASV_EMPYMOD / "dtr-laptop").glob("*.json"))]),
    ("asv", [str(p.relative_to(DATA)) for p in sorted((ASV_DJANGO / "ubuntu-22.04").glob("*.json"))]),
    ("asv", [str(p.relative_to(DATA)) for p in sorted((DATA / "asv/metpy-benchmark/results").rglob("*.json"))]),
    ("asv", [str(p.relative_to(DATA)) for p in sorted((DATA / "asv/asv-fixtures/example_results").rglob("*.json"))]),
    (
        "mlperf",
        [str(p.relative_to(DATA)) for p in sorted((DATA / "mlperf/training_results_v4.0").rglob("result_*.txt"))],
    ),
    (
        "mlperf",
        [str(p.relative_to(DATA)) for p in sorted((DATA / "mlperf/training_results_v5.1").rglob("result_*.txt"))],
    ),
    ("hyperfine", ["hyperfine/1brc/hyperfine.json", "hyperfine/dandavison-misc/hyperfine.json"]),
    (
        "pytest-benchmark",
        [str(p.relative_to(DATA)) for p in sorted((DATA / "pytest-benchmark").glob("pytest-benchmark-*/*.json"))],
    ),
    ("mlperf", [str(p.relative_to(DATA)) for p in sorted(V06.glob("NVIDIA/results/*/ssd/result_*.txt"))]),
    ("mlperf", [str(p.relative_to(DATA)) for p in sorted(V06.glob("Google/results/tpu-v3-32/resnet/result_*.txt"))]),
    ("mlperf", [str(INFERENCE.relative_to(DATA))]),
    ("junit", [str(p.relative_to(DATA)) for p in sorted((DATA / "junit").rglob("*.xml"))]),
    ("junit", ["junit/go/internal/junitxml/testdata/junitxml-report.golden"]),
    ("ctest", ["ctest/mmapper/ctest.log"]),
]


@pytest.mark.parametrize(("fmt", "files"), IMPORTS, ids=[f"{f}-{i}" for i, (f, _) in enumerate(IMPORTS)])
def test_every_collected_file_imports(repo: Path, fmt: str, files: list[str]) -> None:
    out, records = ledger_import(repo, fmt, *(DATA / f for f in files))
    assert records, "nothing was imported"
    for record in records:
        text = json.dumps(record)
        assert str(DATA) not in text and str(repo) not in text, "an absolute local path is in a record"
        assert os.path.expanduser("~") + "/" not in text or os.path.expanduser("~") == "/"
    check = cli(repo, "check")
    assert check.returncode == 0, check.stdout + check.stderr  # foreign commits warn here (conftest.py)


def test_compressed_pyperf_reads_like_pyperf_itself(repo: Path) -> None:
    pyperf = pytest.importorskip("pyperf")
    files = sorted(DATA.glob("pyperf/*.json*")) + sorted(DATA.glob("pyperformance/py3*.json"))
    _, records = ledger_import(repo, "pyperf", *files)
    ours = [r for r in records if r["kind"] == "measurement"]
    theirs = [b for f in files for b in pyperf.BenchmarkSuite.load(str(f)).get_benchmarks()]
    assert len(ours) == len(theirs) > 10
    for record, bench in zip(ours, theirs):
        assert record["metric"] == bench.get_name()
        assert record["samples"] == list(bench.get_values())  # every value, in run order
        assert record["median"] == bench.median()
        assert record["extra"]["pyperf"]["mean"] == pytest.approx(bench.mean(), rel=1e-12)
        if bench.get_nvalue() > 1:
            assert record["extra"]["pyperf"]["stdev"] == pytest.approx(bench.stdev(), rel=1e-12)
        assert record["extra"]["repeat"]["runs"] == bench.get_nrun() - sum(1 for r in bench.get_runs() if not r.values)
        assert record["extra"]["repeat"]["loops"] == bench.get_metadata().get("loops")
    tagged = next(r for r in ours if r["extra"]["metadata"].get("tags"))
    assert tagged["extra"]["metadata"]["tags"]
    config = next(r for r in ours if r["extra"]["metadata"].get("cpu_config"))
    assert "intel_pstate" in config["extra"]["metadata"]["cpu_config"]


def test_pyperf_local_dates_are_never_stored_as_utc(repo: Path) -> None:
    _, records = ledger_import(repo, "pyperf", DATA / "pyperf/py3.json.gz")
    run = next(r for r in records if r["kind"] == "measurement")
    assert "observed_at" not in run
    first = min(
        r["metadata"]["date"]
        for r in json.loads(gzip.decompress((DATA / "pyperf/py3.json.gz").read_bytes()))["benchmarks"][0]["runs"]
    )
    assert run["extra"]["measured_at"]["local"] == first.replace(" ", "T")
    assert run["extra"]["measured_at"]["zone"] == "unknown"
    shown = cli(repo, "show", run["id"])
    assert "2017-03-17T01:35:44.623135Z" not in shown.stdout and "01:35:44Z" not in shown.stdout


def test_broken_gzip_is_refused_by_name(repo: Path, tmp_path: Path) -> None:
    cut = tmp_path / "py3.json.gz"
    cut.write_bytes((DATA / "pyperf/py3.json.gz").read_bytes()[:600])
    err = refused(repo, "pyperf", cut)
    assert str(cut) in err and "is gzip but does not decompress" in err and "gzip -t" in err
    other = tmp_path / "notes.json.gz"
    other.write_bytes(gzip.compress(b"\xff\xfe not text"))
    assert "decompressed text is not UTF-8" in refused(repo, "pyperf", other)
    # A small gzip that inflates past the input limit is refused before it is inflated further.
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * 8_000_000, 9))
    assert len(bomb.read_bytes()) < 10_000  # 8 MB of spaces in under 10 kB
    config = repo / "ledger.yaml"
    # What a compressed file may inflate to is its own cap (639487d: max_inflated_bytes).
    config.write_text(
        config.read_text().replace("rules:\n", "rules:\n  parse-limits: {max_inflated_bytes: 10000}\n", 1)
    )
    err = refused(repo, "pyperf", bomb)
    assert f"{bomb}: decompresses to more than 10,000 bytes" in err and "max_inflated_bytes" in err
    # pyperf's own py3.json.gz inflates to 10,500 bytes: over this limit too, and said so.
    assert "decompresses to more than 10,000 bytes" in refused(repo, "pyperf", DATA / "pyperf/py3.json.gz")


# -- asv ----------------------------------------------------------------------------------------


def _asv_reader(tmp_path: Path, result_file: Path, machine: str):
    asv_results = pytest.importorskip("asv.results")
    copy = tmp_path / result_file.name
    shutil.copy(result_file, copy)
    if json.loads(result_file.read_text())["version"] == 1:
        asv_results.Results.update(str(copy))  # asv 0.6 reads format 1 only after `asv update`
    return asv_results.Results.load(str(copy), machine)


@pytest.mark.parametrize(
    ("folder", "machine"),
    [
        (ASV_EMPYMOD / "dtr-laptop", "dtr-laptop"),
        (ASV_DJANGO / "ubuntu-22.04", "ubuntu-22.04"),
        (DATA / "asv/metpy-benchmark/results/Docker_Container", "Docker_Container"),
    ],
)
def test_asv_figures_match_asvs_own_reading(repo: Path, tmp_path: Path, folder: Path, machine: str) -> None:
    files = sorted(folder.glob("*.json"))
    extra = [folder.parent / "benchmarks.json"] if (folder.parent / "benchmarks.json").is_file() else []
    out, records = ledger_import(repo, "asv", *files, *extra)
    # The glob picked up machine.json: skipped, and said so.
    assert any("machine.json" in n and "not results" in n for n in out["notes"])
    results = [f for f in files if f.name != "machine.json"]
    theirs = {}
    for f in results:
        r = _asv_reader(tmp_path, f, machine)
        for name in r.get_all_result_keys():
            params = r.get_result_params(name)
            values = r.get_result_value(name, params)
            stats = r.get_result_stats(name, params)
            samples = r.get_result_samples(name, params)
            combos = [[]] if not params else [list(c) for c in __import__("itertools").product(*params)]
            for k, combo in enumerate(combos):
                metric = f"{name}({', '.join(combo)})" if combo else name
                theirs[(r.commit_hash, metric)] = (values[k], stats[k], samples[k], r.started_at[name])
    ours = {(m["source"]["sha"], m["metric"]): m for m in records if m["kind"] == "measurement"}
    assert set(ours) == {k for k, v in theirs.items() if v[0] is not None and v[0] == v[0]} | {
        k for k, v in theirs.items() if v[0] is None
    }
    for key, m in ours.items():
        value, stats, samples, started = theirs[key]
        if value is None:
            assert m["outcome"] == "failed"
            continue
        if samples:
            assert m["samples"] == samples and m["extra"]["asv_result"] == value
        else:
            assert m["median"] == value
        spread = m["extra"]["spread"]
        assert spread["ci_99"] == pytest.approx([stats["ci_99_a"], stats["ci_99_b"]], rel=1e-4)
        assert (spread["q_25"], spread["q_75"]) == pytest.approx((stats["q_25"], stats["q_75"]), rel=1e-4)
        assert (spread["number"], spread["repeat"]) == (stats["number"], stats["repeat"])
        # The time is when asv ran it (started_at), not the commit's date.
        from datetime import UTC, datetime

        assert m["observed_at"].startswith(datetime.fromtimestamp(started / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S"))
        assert m["extra"]["commit_date"] != m["observed_at"]


def test_asv_format_1_one_element_lists(repo: Path) -> None:
    f = ASV_EMPYMOD / "dtr-laptop/d97d818d-conda-py3.8.json"
    raw = json.loads(f.read_text())["results"]["model.Bipole.time_frequency"]
    assert raw.get("params", []) == [] and len(raw["result"]) == 1  # what asv 0.4 writes
    _, records = ledger_import(repo, "asv", f)
    bipole = measurements(records)["model.Bipole.time_frequency"]
    assert bipole["median"] == raw["result"][0]
    assert bipole["iqr"] == pytest.approx(raw["stats"][0]["q_75"] - raw["stats"][0]["q_25"])
    assert bipole["extra"]["format_version"] == 1 and bipole["unit"] == "s"


def test_compare_uses_asvs_interval_and_says_when_a_side_has_none(repo: Path) -> None:
    laptop = ASV_EMPYMOD / "dtr-laptop"
    _, first = ledger_import(repo, "asv", laptop / "d97d818d-conda-py3.8.json")
    _, second = ledger_import(repo, "asv", laptop / "9cffb752-conda-py3.8.json")
    a = measurements(first)["model.Bipole.time_frequency"]
    b = measurements(second)["model.Bipole.time_frequency"]
    result = cli(repo, "compare", a["id"], b["id"], "--allow-cross-allocation", "--format", "json")
    assert result.returncode == 0, result.stderr
    cmp = json.loads(result.stdout)
    change = abs(b["median"] / a["median"] - 1)
    assert change < 0.02
    ia, ib = a["extra"]["spread"]["ci_99"], b["extra"]["spread"]["ci_99"]
    overlap = ia[0] <= ib[1] and ib[0] <= ia[1]
    assert overlap  # by hand: asv compare would say no change
    assert cmp["verdict"] == "no significant difference" and cmp["test"]["method"] == "99% interval overlap"
    assert cmp["cliffs_delta"] is None and cmp["cliffs_magnitude"] is None  # no "large" from one value per side
    table = cli(repo, "compare", a["id"], b["id"], "--allow-cross-allocation")
    assert "99% interval" in table.stdout and "overlap" in table.stdout
    # A side with one value and no spread at all is named.
    _, inference = ledger_import(repo, "mlperf", INFERENCE)
    one = next(r for r in inference if r["kind"] == "measurement")
    _, again = ledger_import(repo, "mlperf", INFERENCE)
    other = next(r for r in again if r["kind"] == "measurement")
    both = json.loads(
        cli(repo, "compare", one["id"], other["id"], "--allow-cross-allocation", "--format", "json").stdout
    )
    assert both["verdict"] == "not testable"
    assert "A and B have one value and no interval" in both["test"]["note"]


# -- pytest-benchmark and hyperfine ---------------------------------------------------------------


def test_pytest_benchmark_new_format_with_data_and_cut_data(repo: Path) -> None:
    (new,) = (DATA / "pytest-benchmark/pytest-benchmark-5.3").glob("*.json")
    doc = json.loads(new.read_text())
    _, records = ledger_import(repo, "pytest-benchmark", new)
    for bench in doc["benchmarks"]:
        m = measurements(records)[bench["fullname"]]
        assert m["samples"] == bench["stats"]["data"] and m["n"] == bench["stats"]["rounds"]
        assert m["median"] == pytest.approx(bench["stats"]["median"], rel=1e-12)  # pytest-benchmark's own median
        assert m["extra"]["spread"]["stddev"] == bench["stats"]["stddev"]
        assert m["observed_at"] == "2026-12-01T14:06:07.197983Z"
    # github-action-benchmark's fixtures: its authors cut each `data` to four rounds and a note.
    cut = DATA / "pytest-benchmark/github-action-benchmark/test/data/extract/pytest_output.json"
    err = refused(repo, "pytest-benchmark", cut)
    assert f"{cut}:key benchmarks[0].stats.data[4]: benchmark bench.py::test_fib_10: " in err
    units = cut.with_name("pytest_several_units.json")
    assert f"{units}:key benchmarks[0].stats.data[4]: benchmark bench.py::test_fib_1: " in refused(
        repo, "pytest-benchmark", units
    )
    assert "is '... omitted to keep this file small'" in err and "non-negative number of seconds" in err
    # The same file with the note taken out: data no longer holds every round, so the summary is kept.
    doc = json.loads(cut.read_text())
    for bench in doc["benchmarks"]:
        bench["stats"]["data"] = [v for v in bench["stats"]["data"] if isinstance(v, float)]
    trimmed = repo.parent / "trimmed.json"
    trimmed.write_text(json.dumps(doc))
    _, records = ledger_import(repo, "pytest-benchmark", trimmed)
    fib = measurements(records)["bench.py::test_fib_10"]
    assert not fib["samples"] and fib["median"] == 2.2300000000363696e-05 and fib["n"] == 38523
    assert "holds 4 values but stats.rounds is 38523" in fib["extra"]["data_note"]
    # Its commit is not this ledger's: the project the file names owns it.
    assert fib["source"]["repo"] == "github-action-benchmark"


def test_pytest_benchmark_bad_value_names_file_key_and_benchmark_once(repo: Path, tmp_path: Path) -> None:
    (new,) = (DATA / "pytest-benchmark/pytest-benchmark-5.3").glob("*.json")
    doc = json.loads(new.read_text())
    doc["benchmarks"][1]["stats"]["data"][4] = "slow"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    err = refused(repo, "pytest-benchmark", bad)
    name = doc["benchmarks"][1]["fullname"]
    assert err.count("\n") == 1, err
    assert f"{bad}:key benchmarks[1].stats.data[4]: benchmark {name}: is 'slow'" in err
    assert "pytest-benchmark writes each round as a non-negative number of seconds" in err


def test_hyperfine_old_and_new_by_hand(repo: Path) -> None:
    _, records = ledger_import(repo, "hyperfine", DATA / "hyperfine/1brc/hyperfine.json")
    doc = json.loads((DATA / "hyperfine/1brc/hyperfine.json").read_text())
    for result, m in zip(doc["results"], [r for r in records if r["kind"] == "measurement"]):
        assert m["samples"] == result["times"] and m["median"] == statistics.median(result["times"])
        assert m["median"] == result["median"]  # hyperfine's own median, figure for figure
        assert m["extra"]["spread"]["stddev"] == result["stddev"]
    _, old = ledger_import(repo, "hyperfine", DATA / "hyperfine/dandavison-misc/hyperfine.json")
    (m,) = [r for r in old if r["kind"] == "measurement"]
    assert m["samples"] == [9.066039999998821e-6, 0.0, 0.0] and "exit_codes" not in json.dumps(m)


# -- MLPerf --------------------------------------------------------------------------------------


def _ttt(path: Path) -> float:
    """Time to train by hand from an :::MLL log: run_stop minus run_start, in minutes."""
    times = {}
    for line in path.read_text().splitlines():
        parts = line.split()
        if line.startswith(":::MLL") and parts[2] in ("run_start:", "run_stop:"):
            times[parts[2][:-1]] = float(parts[1])
    return (times["run_stop"] - times["run_start"]) / 60


def test_mlperf_v06_mll_rounds_by_hand(repo: Path) -> None:
    logs = sorted(V06.glob("NVIDIA/results/dgx1_ngc19.05_pytorch/ssd/result_*.txt"))
    out, records = ledger_import(repo, "mlperf", *logs)
    runs = sorted(
        (r for r in records if r["kind"] == "measurement" and not r.get("extra", {}).get("result_set")),
        key=lambda r: r["extra"]["imported_from"],
    )
    by_hand = [_ttt(p) for p in logs]
    assert [r["median"] for r in runs] == pytest.approx(by_hand, rel=1e-9)
    assert [round(t, 3) for t in by_hand] == [22.459, 22.341, 22.292, 22.326, 22.422]
    assert all(r["metric"] == "ssd/time_to_train" and r["extra"]["log_format"] == ":::MLL (v0.6)" for r in runs)
    assert runs[0]["observed_at"] == "2019-05-23T00:20:38.588000Z"  # run_start, from the log
    (result_set,) = [r for r in records if r.get("extra", {}).get("result_set")]
    kept = sorted(by_hand)[1:-1]
    assert result_set["statistic"] == "olympic-average" and sorted(result_set["samples"]) == pytest.approx(kept)
    assert result_set["extra"]["olympic_average"] == pytest.approx(sum(kept) / 3)
    assert round(result_set["extra"]["olympic_average"], 3) == 22.363
    assert {(d["file"], d["why"]) for d in result_set["extra"]["dropped"]} == {
        ("result_2.txt", "fastest"),
        ("result_0.txt", "slowest"),
    }
    # NVIDIA's v0.6 systems/*.json holds :::MLL-style lines, not JSON: said, not fatal.
    assert any("dgx1_ngc19.05_pytorch.json was not used" in n for n in out["notes"])
    shown = cli(repo, "show", result_set["id"])
    assert "olympic-average" in shown.stdout or "olympic average" in shown.stdout


def test_mlperf_benchmarks_never_compare(repo: Path) -> None:
    _, ssd = ledger_import(repo, "mlperf", *sorted(V06.glob("NVIDIA/results/*/ssd/result_*.txt")))
    _, resnet = ledger_import(repo, "mlperf", *sorted(V06.glob("Google/results/tpu-v3-32/resnet/result_*.txt")))
    a = next(r for r in ssd if r.get("extra", {}).get("result_set"))
    b = next(r for r in resnet if r.get("extra", {}).get("result_set"))
    assert b["title"].startswith("MLPerf resnet on tpu-v3: olympic average")
    result = cli(repo, "compare", a["id"], b["id"], "--allow-cross-allocation")
    assert result.returncode == 2 and "metric" in result.stderr and "ssd/time_to_train" in result.stderr


def test_mlperf_inference_summary(repo: Path) -> None:
    _, records = ledger_import(repo, "mlperf", INFERENCE)
    (m,) = records
    assert m["metric"] == "resnet50/Offline/samples_per_second" and m["median"] == 248179
    assert m["lower_is_better"] is False and m["extra"]["validity"] == "VALID"
    assert m["extra"]["latency_ns"]["99.00_percentile"] == 775110302608
    assert "observed_at" not in m and any("no date" in g for g in m["extra"]["provenance_gaps"])


# -- JUnit and ctest -----------------------------------------------------------------------------


def test_junit_times_keep_their_zone(repo: Path) -> None:
    reports = sorted((TESTNG / "junitreports").glob("*.xml"))
    out, records = ledger_import(repo, "junit", *reports, TESTNG / "testng-results.xml", *TESTNG.glob("*/*.xml"))
    gates = {Path(g["extra"]["imported_from"]).name: g for g in records}
    assert set(gates) == {r.name for r in reports} | {"ChromeTest.xml"}
    assert len(out["notes"]) == 2, out["notes"]
    assert any("testng-results.xml" in n and "TestNG's own results format" in n for n in out["notes"])
    assert any("testng-failed.xml" in n and "not results" in n for n in out["notes"])
    ist = gates["TEST-com.testEvn.TC001.xml"]
    assert "observed_at" not in ist and ist["extra"]["measured_at"]["local"] == "2023-08-13T13:26:48"
    assert ist["extra"]["measured_at"]["zone"].startswith("unknown (IST")
    gmt = gates["TEST-com.testExecution.TS002.xml"]
    assert gmt["observed_at"] == "2023-08-12T07:42:36Z"  # "12 Aug 2023 07:42:36 GMT"
    assert (gmt["errors"], gmt["passed"]) == (1, 1)
    _, go = ledger_import(repo, "junit", DATA / "junit/go/internal/junitxml/testdata/junitxml-report.golden")
    assert "observed_at" not in go[0] and go[0]["extra"]["measured_at"]["zone"] == "none"
    _, go2 = ledger_import(repo, "junit", DATA / "junit/go/testdata/001-report.xml")
    assert go2[0]["observed_at"] == "2022-01-01T00:00:00Z"
    assert (go2[0]["passed"], go2[0]["failed"], go2[0]["skipped"]) == (2, 1, 2)
    _, py = ledger_import(repo, "junit", DATA / "junit/pytest/python/test/files/junit-xml/pytest/junit.fail.xml")
    assert py[0]["extra"]["measured_at"] == {
        "local": "2020-09-04T16:18:04.966371",
        "zone": "unknown",
        "why": "the test runner writes the measuring machine's local time without its zone",
    }


def test_junit_runners_counted_by_hand(repo: Path) -> None:
    cases = {
        "junit/surefire/test_results/tests/email/target/surefire-reports/TEST-action.surefire.report.email.EmailAddressTest.xml": (
            2,
            2,
            5,
            0,
        ),
        "junit/surefire/test_results/maven_surefire_flaky/surefire-report.xml": (1, 0, 0, 0),
        "junit/jest/__tests__/fixtures/jest-junit.xml": (1, 4, 0, 1),
        "junit/pytest/test_results/python/report.xml": (1, 2, 0, 0),
    }
    for path, (passed, failed, errors, skipped) in cases.items():
        _, (gate,) = ledger_import(repo, "junit", DATA / path)
        assert (gate["passed"], gate["failed"], gate["errors"], gate["skipped"]) == (passed, failed, errors, skipped)
    _, (flaky,) = ledger_import(
        repo, "junit", DATA / "junit/surefire/test_results/maven_surefire_flaky/surefire-report.xml"
    )
    assert flaky["outcome"] == "pass" and flaky["extra"]["flaky_names"]
    alone = refused(repo, "junit", TESTNG / "testng-results.xml")
    assert "root element is <testng-results>" in alone and "junitreports/TEST-*.xml" in alone


def test_ctest_output_of_aborted_tests(repo: Path) -> None:
    _, (gate,) = ledger_import(repo, "ctest", DATA / "ctest/mmapper/ctest.log", "--exit-code", "8")
    assert (gate["outcome"], gate["failed"], gate["passed"]) == ("fail", 2, 0)
    assert gate["failed_names"] == ["TestMainWindow", "TestMap"] and gate["duration_s"] == 0.21


# -- foreign provenance --------------------------------------------------------------------------


@pytest.fixture
def pushed(strict_repo: Path, tmp_path: Path) -> Path:
    repo = strict_repo
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    assert run_ledger(repo, "hook", "install").returncode == 0
    git(repo, "push", "-q", "origin", "main")
    return repo


def test_undeclared_foreign_commits_are_refused_until_declared(pushed: Path) -> None:
    """Commits the source checkout lacks, of a repository ledger.yaml does not declare, are an
    error (sha-foreign): a made-up SHA labelled as another repository's would pass otherwise.
    Declared, they are verified where the clone is; where it is absent, a warning once. The
    first import and the pushes run as processes (the installed command, the hook); the rest
    in this process (tests/conftest.py: cli)."""
    files = sorted((ASV_DJANGO / "ubuntu-22.04").glob("*-conda-*.json"))
    refused = run_ledger(pushed, "import", "asv", *map(str, files))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "sha-foreign" in refused.stderr and "unknown:asv" in refused.stderr
    assert "sources: {'unknown:asv': PATH-OF-A-CLONE}" in refused.stderr
    assert not list((pushed / "ledger" / "records").rglob("*.json"))
    # Declaring a repository is a config change its push names (judged by the remote's config,
    # so the records that need it follow in the next push).
    config = pushed / "ledger.yaml"
    config.write_text(config.read_text().replace("sources: {}", "sources:\n  unknown:asv: ../django"))
    body = "sources {'unknown:asv': '../django'}: the django checkout asv measured, beside this one"
    noted = cli(pushed, "add", "note", "-", input=json.dumps({"body": body, "tags": ["ledger-config"]}))
    assert noted.returncode == 0, noted.stderr
    git(pushed, "add", "-A")
    git(pushed, "commit", "-q", "-m", "declare the django checkout")
    declared = git(pushed, "push", "origin", "HEAD:main", check=False)
    assert declared.returncode == 0, declared.stderr
    # Declared at a path where no clone is here: unverifiable, refused like an undeclared one.
    unverified = cli(pushed, "import", "asv", *map(str, files))
    assert unverified.returncode == 2 and "sha-unverified" in unverified.stderr, unverified.stderr
    # Accepting unverified evidence is a recorded choice: a note naming the rule and its value.
    config.write_text(config.read_text().replace("\nrules:\n", "\nrules:\n  sha-unverified: {severity: warning}\n", 1))
    body = "sha-unverified warning: the django clone is not in CI; these asv results are taken as published"
    noted = cli(pushed, "add", "note", "-", input=json.dumps({"body": body, "tags": ["ledger-config"]}))
    assert noted.returncode == 0, noted.stderr
    git(pushed, "add", "-A")
    git(pushed, "commit", "-q", "-m", "accept unverified django commits")
    accepted = git(pushed, "push", "origin", "HEAD:main", check=False)
    assert accepted.returncode == 0, accepted.stderr
    result = cli(pushed, "import", "asv", *map(str, files))
    assert result.returncode == 0, result.stderr
    assert "belong to unknown:asv" in result.stdout
    check = cli(pushed, "check")
    assert check.returncode == 0, check.stdout + check.stderr
    text = check.stdout + check.stderr
    assert text.count("sha-unverified") == 1 and "'../django', which is not here" in text
    assert "sha-foreign" not in text and "sha-resolves" not in text
    git(pushed, "add", "-A")
    git(pushed, "commit", "-q", "-m", "imported django asv results")
    push = git(pushed, "push", "origin", "HEAD:main", check=False)
    assert push.returncode == 0, push.stderr


def test_a_configured_repository_is_verified(strict_repo: Path, tmp_path: Path) -> None:
    repo = strict_repo
    other = tmp_path / "measured"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "x").write_text("x")
    git(other, "add", "x")
    git(other, "commit", "-q", "-m", "measured")
    sha = git(other, "rev-parse", "HEAD").stdout.strip()
    url = "https://example.invalid/measured.git"
    undeclared = refused(
        repo, "hyperfine", DATA / "hyperfine/1brc/hyperfine.json", "--source-sha", sha, "--source-repo", url
    )
    assert "sha-foreign" in undeclared and f"sources: {{{url!r}: PATH-OF-A-CLONE}}" in undeclared
    config = repo / "ledger.yaml"
    assert "sources: {}" in config.read_text()  # ledger init writes the key, empty
    config.write_text(config.read_text().replace("sources: {}", f"sources:\n  {url}: {other}"))
    out, records = ledger_import(
        repo, "hyperfine", DATA / "hyperfine/1brc/hyperfine.json", "--source-sha", sha, "--source-repo", url
    )
    assert all((r["source"]["repo"], r["source"]["sha"]) == (url, sha) for r in records)
    assert out["foreign_commits"] == {url: [sha]}
    verified = cli(repo, "check")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "sha-foreign" not in verified.stdout + verified.stderr
    # The same commit against a clone that lacks it: an error, found in that clone.
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q", "-b", "main")
    git(empty, "commit", "-q", "--allow-empty", "-m", "other")
    config.write_text(config.read_text().replace(str(other), str(empty)))
    failed = cli(repo, "check")
    assert failed.returncode == 1 and "sha-resolves" in failed.stdout + failed.stderr
    assert f"does not resolve in the source checkout of {url}" in failed.stdout + failed.stderr


# -- hostile copies of real files ----------------------------------------------------------------


def test_hostile_copies_are_refused_with_file_key_and_fix(repo: Path, tmp_path: Path) -> None:
    # asv: a parameterised benchmark with one value too few.
    doc = json.loads((ASV_EMPYMOD / "dtr-laptop/d97d818d-conda-py3.8.json").read_text())
    doc["results"]["kernel.Kernel.time_fields"]["result"].pop()
    short = tmp_path / "short.json"
    short.write_text(json.dumps(doc))
    err = refused(repo, "asv", short)
    assert f"{short}:key results.kernel.Kernel.time_fields.result: benchmark kernel.Kernel.time_fields" in err
    assert "has 1 values for 2 parameter combinations" in err and "one value per combination" in err
    # MLPerf v0.6: an :::MLL line whose payload is cut.
    log = (V06 / "NVIDIA/results/dgx1_ngc19.05_pytorch/ssd/result_0.txt").read_text().splitlines()
    at = next(i for i, line in enumerate(log) if " run_stop:" in line)
    log[at] = log[at][:-20]
    cut = tmp_path / "result_0.txt"
    cut.write_text("\n".join(log) + "\n")
    err = refused(repo, "mlperf", cut)
    assert f"{cut}:line {at + 1}: :::MLL line does not parse" in err and "`:::MLL <seconds> <key>: {json}`" in err
    # pyperf: gzip whose JSON is cut.
    text = gzip.decompress((DATA / "pyperf/py2.json.gz").read_bytes())
    broken = tmp_path / "py2.json.gz"
    broken.write_bytes(gzip.compress(text[:5000]))
    err = refused(repo, "pyperf", broken)
    assert f"{broken}:line 1, column " in err and "does not parse as JSON" in err
    # JUnit: a timestamp that is no date.
    xml = (DATA / "junit/go/testdata/001-report.xml").read_text().replace("2022-01-01T00:00:00Z", "yesterday", 1)
    bad_time = tmp_path / "report.xml"
    bad_time.write_text(xml)
    err = refused(repo, "junit", bad_time)
    assert f"{bad_time}:testsuite[0] attribute timestamp: 'yesterday' is not a date" in err
    # MLPerf inference: a scenario LoadGen does not have.
    summary = tmp_path / "mlperf_log_summary.txt"
    summary.write_text(INFERENCE.read_text().replace("Scenario : Offline", "Scenario : Batch"))
    err = refused(repo, "mlperf", summary)
    assert f"{summary}:line 5: scenario 'Batch' is not Offline, Server, SingleStream or MultiStream" in err


@pytest.mark.slow  # several seconds: out of the quick subset
def test_site_lists_a_zone_unknown_time_as_local_never_utc(repo: Path) -> None:
    _, records = ledger_import(repo, "pyperf", DATA / "pyperf/py3.json.gz")
    run = next(r for r in records if r["kind"] == "measurement")
    built = cli(repo, "site", "build")
    assert built.returncode == 0, built.stderr
    listing = "\n".join(p.read_text() for p in (repo / ".ledger-build/docs/records/measurement").glob("*.md"))
    local = run["extra"]["measured_at"]["local"][:16].replace("T", " ")
    assert f"{local} local, zone unknown (imported" in listing
    assert f"{local} UTC" not in listing


def test_a_gzip_of_several_members_imports_whole(repo: Path, tmp_path: Path) -> None:
    """pyperf's py3.json.gz recompressed as two gzip members (`cat a.gz b.gz`) imports the
    same benchmarks as the original: a reader that stopped at the first member saw half a file."""
    text = gzip.decompress((DATA / "pyperf/py3.json.gz").read_bytes())
    half = len(text) // 2
    split = tmp_path / "py3-two-members.json.gz"
    split.write_bytes(gzip.compress(text[:half], mtime=0) + gzip.compress(text[half:], mtime=0))
    _, records = ledger_import(repo, "pyperf", split)
    pyperf = pytest.importorskip("pyperf")
    theirs = pyperf.BenchmarkSuite.load(str(DATA / "pyperf/py3.json.gz")).get_benchmarks()
    ours = [r for r in records if r["kind"] == "measurement"]
    assert [r["samples"] for r in ours] == [list(b.get_values()) for b in theirs] != []
