"""Damaged copies of real result files through the real `ledger import`: each is refused with
exit 2, the file and the key (or line) named, never a Python exception, and nothing written."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli

DATA = Path(__file__).resolve().parent / "data"  # real files other tools wrote; SOURCES.md says where from
DJANGO = "asv/django-asv/results/ubuntu-22.04/4488a25c-conda-py3.10.json"  # asv results format 2
EMPYMOD = "asv/empymod-bench/results/dtr-laptop/9cffb752-conda-py3.8.json"  # asv results format 1
EMPYMOD_BENCHMARKS = "asv/empymod-bench/results/benchmarks.json"
DJANGO_BENCH = "data_struct_benchmarks.multi_value_dict.benchmark.MultiValueDictBench.time_multi_value_dict"
FIELDS = "kernel.Kernel.time_fields"  # parameterised: [["'Small'", "'Big'"]]
ASUS = "mlperf/training_results_v4.0/ASUSTeK/results/ESC_N8A-E12/llama2_70b_lora/result_0.txt"
ASUS_SYSTEM = "mlperf/training_results_v4.0/ASUSTeK/systems/ESC_N8A-E12.json"
PYTEST_BENCHMARK = (
    "pytest-benchmark/pytest-benchmark-5.3/0001_6736caa4e4fcb4a03b8a97c5af22dde7c769118f_20261201_140606.json"
)
DEEP = "[" * 5000 + "]" * 5000  # deeper than Python's JSON reader follows


def put(*keys: Any, value: Any) -> Callable[[str], str]:
    """A JSON edit: the value at the key path `keys` becomes `value` (NaN and Infinity written as such)."""

    def apply(text: str) -> str:
        doc = json.loads(text)
        here = doc
        for key in keys[:-1]:
            here = here[key]
        here[keys[-1]] = value
        return json.dumps(doc)

    return apply


def line(n: int, old: str, new: str) -> Callable[[str], str]:
    """A text edit of line `n` (1-based)."""

    def apply(text: str) -> str:
        lines = text.splitlines(keepends=True)
        assert old in lines[n - 1], lines[n - 1]
        lines[n - 1] = lines[n - 1].replace(old, new, 1)
        return "".join(lines)

    return apply


def text(old: str, new: str) -> Callable[[str], str]:
    def apply(t: str) -> str:
        assert old in t
        return t.replace(old, new, 1)

    return apply


# case -> (format, file damaged, its damage, the other real files given with it, what stderr names)
# fmt: off
CASES: dict[str, tuple[str, str, Callable[[str], str], list[str], str]] = {
    # pyperf: a run's warmups are [loops, value] pairs
    "pyperf-warmups-number": ("pyperf", "pyperf/telco.json", put("benchmarks", 0, "runs", 1, "warmups", value=5), [], "key benchmarks[0].runs[1].warmups"),
    "pyperf-warmups-bool": ("pyperf", "pyperf/telco.json", put("benchmarks", 0, "runs", 1, "warmups", value=True), [], "key benchmarks[0].runs[1].warmups"),
    "pyperf-warmups-pair": ("pyperf", "pyperf/telco.json", put("benchmarks", 0, "runs", 1, "warmups", value=[[0, 0.1]]), [], "key benchmarks[0].runs[1].warmups[0]"),
    "pyperf-deep": ("pyperf", "pyperf/telco.json", text('"loops"', f'"x": {DEEP}, "loops"'), [], "line "),
    # asv: params, one list of values per parameter
    "asv1-params-number": ("asv", EMPYMOD, put("results", FIELDS, "params", value=3), [], f"key results.{FIELDS}.params"),
    "asv1-params-flat": ("asv", EMPYMOD, put("results", FIELDS, "params", value=["'Small'", "'Big'"]), [], f"key results.{FIELDS}.params"),
    "asv2-params-bool": ("asv", DJANGO, put("results", DJANGO_BENCH, 1, value=True), [], f"key results.{DJANGO_BENCH}[1]"),
    "asv2-column-list": ("asv", DJANGO, put("result_columns", 0, value=["result"]), [], "key result_columns[0]"),
    # asv: benchmarks.json's unit is text
    "asv-unit-object": ("asv", EMPYMOD_BENCHMARKS, put(FIELDS, "unit", value={"s": 1}), [EMPYMOD], f"key {FIELDS}.unit"),
    # asv: date (the commit's) and started_at are JavaScript timestamps
    "asv-date-nan": ("asv", EMPYMOD, put("date", value=float("nan")), [], "key date"),
    "asv-date-huge": ("asv", EMPYMOD, put("date", value=1e20), [], "key date"),
    "asv1-started-nan": ("asv", EMPYMOD, put("started_at", FIELDS, value=float("nan")), [], f"key started_at.{FIELDS}"),
    "asv2-started-inf": ("asv", DJANGO, put("results", DJANGO_BENCH, 3, value=float("inf")), [], f"key results.{DJANGO_BENCH}[3]"),
    # base.parse_time through pytest-benchmark's datetime
    "pytest-benchmark-datetime-huge": ("pytest-benchmark", PYTEST_BENCHMARK, put("datetime", value=1e308), [], "key datetime"),
    "pytest-benchmark-datetime-9999": ("pytest-benchmark", PYTEST_BENCHMARK, put("datetime", value="9999-12-31T23:00:00-05:00"), [], "key datetime"),
    # hyperfine: exit_codes, one integer per run
    "hyperfine-exit-codes-number": ("hyperfine", "hyperfine_sleep.json", put("results", 0, "exit_codes", value=1), [], "key results[0].exit_codes"),
    "hyperfine-exit-code-list": ("hyperfine", "hyperfine_sleep.json", put("results", 0, "exit_codes", 0, value=[]), [], "key results[0].exit_codes[0]"),
    # MLPerf: event names and submission_* values are text, time_ms a finite number, run_stop's metadata an object
    "mlperf-key-list": ("mlperf", ASUS, line(4, '"key": "submission_org"', '"key": ["submission_org"]'), [], "line 4, key key"),
    "mlperf-submission-list": ("mlperf", ASUS, line(4, '"value": "ASUSTeK"', '"value": ["ASUSTeK"]'), [], "line 4, key value"),
    "mlperf-time-nan": ("mlperf", ASUS, line(21, '"time_ms": 1715848320425', '"time_ms": NaN'), [], "line 21, key time_ms"),
    "mlperf-time-huge": ("mlperf", ASUS, line(21, '"time_ms": 1715848320425', '"time_ms": 9e15'), [], "line 21, key time_ms"),
    "mlperf-stop-metadata": ("mlperf", ASUS, line(52, '"metadata": {', '"metadata": 7, "x": {'), [], "line 52, key metadata"),
    "mlperf-deep": ("mlperf", ASUS, line(4, '"value": "ASUSTeK"', f'"value": {DEEP}'), [], "line 4"),
    "mlperf-accelerators-huge": ("mlperf", ASUS_SYSTEM, put("accelerators_per_node", value="100000000000"), [ASUS], "key accelerators_per_node"),
    "mlperf-time-400-digits": ("mlperf", ASUS, line(21, '"time_ms": 1715848320425', '"time_ms": 1' + "0" * 400), [], "line 21"),
    # numbers beyond a float's range, and results lists that are empty
    "pyperf-value-400-digits": ("pyperf", "pyperf/telco.json", text('"values": [', '"values": [1' + "0" * 400 + ", "), [], "line 46"),
    "asv-date-1e400": ("asv", EMPYMOD, text('"date": 1627975986000', '"date": 1e400'), [], "line 1"),
    "pyperf-benchmarks-empty": ("pyperf", "pyperf/telco.json", put("benchmarks", value=[]), [], "key benchmarks"),
    "asv-results-empty": ("asv", EMPYMOD, put("results", value={}), [], " holds no result"),
    "pytest-benchmark-empty": ("pytest-benchmark", PYTEST_BENCHMARK, put("benchmarks", value=[]), [], " holds no result"),
    "ctest-count-21-digits": ("ctest", "ctest_mixed.txt", line(13, "out of 4", "out of 1" + "0" * 20), [], "line 13"),
    "mlperf-system-name": ("mlperf", ASUS_SYSTEM, put("system_name", value=["ESC_N8A-E12"]), [ASUS], "key system_name"),
}
# fmt: on


def record_count(repo: Path) -> int:
    return sum(1 for _ in (repo / "ledger" / "records").rglob("*.json"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_damaged_file_is_refused_naming_file_and_key(repo: Path, tmp_path: Path, case: str) -> None:
    fmt, name, damage, others, key = CASES[case]
    raw = (DATA / name).read_bytes()
    original = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode()
    bad = tmp_path / "damaged" / Path(name).name
    bad.parent.mkdir()
    bad.write_text(damage(original))
    before = record_count(repo)
    result = cli(repo, "import", fmt, str(bad), *(str(DATA / o) for o in others))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "internal error" not in result.stderr, result.stderr
    assert f"{bad}:{key}" in result.stderr, result.stderr
    assert record_count(repo) == before, "a refused import wrote records"


LOG = 'step 1 done\nLEDGER {"metric": "step_time", "unit": "s", "samples": [0.5, 0.6]}\n'


@pytest.mark.parametrize(
    ("damaged", "said"),
    [
        (LOG.replace("0.6]", "1" + "0" * 400 + "]"), "beyond the range of a float"),
        (LOG.replace("[0.5, 0.6]", DEEP), "nests lists or objects deeper than can be read"),
    ],
)
def test_damaged_log_line_is_refused(repo: Path, tmp_path: Path, damaged: str, said: str) -> None:
    """`ledger add measurement --from-log` (store/runlog.py) on a LEDGER line no harness prints."""
    log = tmp_path / "run.log"
    log.write_text(damaged)
    before = record_count(repo)
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "internal error" not in result.stderr, result.stderr
    assert f"{log}:line 2: LEDGER line does not parse (it " in result.stderr and said in result.stderr, result.stderr
    assert record_count(repo) == before
