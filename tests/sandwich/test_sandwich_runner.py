"""`ledger sandwich` running real commands, and the API with Python callables."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from conftest import cli

BENCH = """\
import json, os, sys
# A deterministic harness: the candidate (FAST=1) is 2 % faster; B drifts by 0.1 %.
arm, rnd = os.environ["LEDGER_SANDWICH_ARM"], int(os.environ["LEDGER_SANDWICH_ROUND"])
base = 0.7 * (1.002 if arm == "b" else 1.0)
if os.environ.get("FAST") == "1":
    base *= 0.98
extra = json.loads(os.environ.get("EXTRA", "{}"))
print("warming up...")
print("LEDGER " + json.dumps({"metric": "step_time", "unit": "s", "samples": [base, base * 1.001, base * 0.999], "mfu_percent": 40.0 / base * 0.7, **extra}))
print("done", file=sys.stderr)
"""


def records(repo: Path, kind: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((repo / "ledger" / "records").glob(f"{kind}/*/*.json"))]


@pytest.fixture
def bench(repo: Path) -> str:
    (repo / "bench.py").write_text(BENCH)
    return f"{sys.executable} bench.py"


def test_sandwich_of_two_real_commands(repo: Path, bench: str) -> None:
    result = cli(
        repo,
        "sandwich",
        "--a",
        bench,
        "--candidate",
        f"FAST=1 {bench}",
        "--rounds",
        "2",
        "--label",
        "FAST=1",
        "--format",
        "json",
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["verdict"] == "faster"
    assert out["delta_percent"] == pytest.approx(100 * (0.7 * 0.98 - 0.7007) / 0.7007, rel=1e-6)
    assert out["drift_percent"] == pytest.approx(100 * 0.0014 / 0.7007, rel=1e-6)
    [sandwich] = records(repo, "sandwich")
    measurements = {m["id"]: m for m in records(repo, "measurement")}
    assert len(measurements) == 3
    assert sandwich["verdict"] == "faster" and sandwich["rounds"] == 2 and sandwich["candidate_label"] == "FAST=1"
    arm_a = measurements[sandwich["control_a"]]
    assert arm_a["samples"] == [0.7, 0.7] and arm_a["n"] == 2
    assert measurements[sandwich["candidate"]]["command"] == f"FAST=1 {bench}"
    # one allocation for every record of the sandwich
    assert len({json.dumps(r["allocation"], sort_keys=True) for r in [sandwich, *measurements.values()]}) == 1
    assert sandwich["extra_deltas"]["mfu_points"] > 0


def test_memory_and_throughput_deltas_come_from_the_arms_lines(repo: Path, bench: str) -> None:
    """A harness that prints its peak memory and throughput gets their deltas too (issue 28)."""
    a = f'EXTRA=\'{{"peak_allocated_bytes": 1048576, "throughput": 11.5}}\' {bench}'
    x = f'EXTRA=\'{{"peak_allocated_bytes": 3145728, "throughput": 11.75}}\' FAST=1 {bench}'
    result = cli(repo, "sandwich", "--a", a, "--candidate", x, "--rounds", "2")
    assert result.returncode == 0, result.stderr
    assert "peak_allocated_bytes +2 MiB (+2,097,152 B)" in result.stdout and "throughput +0.25" in result.stdout
    [sandwich] = records(repo, "sandwich")
    assert sandwich["extra_deltas"]["peak_allocated_bytes"] == 2 * 2**20
    assert sandwich["extra_deltas"]["throughput"] == 0.25


def test_neutral_text_output_and_wall_time_commands(repo: Path) -> None:
    cmd = f"{sys.executable} -c pass"
    result = cli(repo, "sandwich", "--a", cmd, "--candidate", cmd, "--rounds", "2", "--floor", "1000")
    assert result.returncode == 0, result.stderr
    assert "verdict: neutral" in result.stdout
    [sandwich] = records(repo, "sandwich")
    assert sandwich["metric"] == "wall_time" and sandwich["floor_percent"] == 1000
    assert all(m["n"] == 2 for m in records(repo, "measurement"))


def test_arms_reporting_different_allocations_are_refused(repo: Path, bench: str) -> None:
    result = cli(
        repo,
        "sandwich",
        "--a",
        f'EXTRA=\'{{"allocation": {{"id": "1627918"}}}}\' {bench}',
        "--candidate",
        f'EXTRA=\'{{"allocation": {{"id": "1629519"}}}}\' {bench}',
    )
    assert result.returncode == 2
    assert "different allocations" in result.stderr
    assert records(repo, "measurement") == [] and records(repo, "sandwich") == []


def test_a_failing_arm_writes_nothing(repo: Path, bench: str) -> None:
    result = cli(repo, "sandwich", "--a", bench, "--candidate", f"{sys.executable} -c 'raise SystemExit(3)'")
    assert result.returncode == 2
    assert "arm candidate, round 1" in result.stderr and "exited 3" in result.stderr
    assert records(repo, "measurement") == []


def test_records_from_different_allocations_are_refused(repo: Path) -> None:
    ids = []
    for alloc, median in (("1627918", 0.70), ("1627918", 0.69), ("1629519", 0.70)):
        r = cli(repo, "add", "measurement", "--allocation", alloc, input=json.dumps({"samples": [median]}))
        assert r.returncode == 0, r.stderr
        ids.append(r.stdout.strip())
    result = cli(repo, "sandwich", "--records", *ids)
    assert result.returncode == 2
    assert "cross-allocation" in result.stderr
    assert records(repo, "sandwich") == []
    again = cli(repo, "add", "measurement", "--allocation", "1627918", input=json.dumps({"samples": [0.70]}))
    assert again.returncode == 0, again.stderr
    ok = cli(repo, "sandwich", "--records", ids[0], ids[1], again.stdout.strip(), "--format", "json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["verdict"] == "faster"
    [sandwich] = records(repo, "sandwich")
    assert sandwich["allocation"]["id"] == "1627918"


def test_python_callables_through_the_api(book) -> None:
    from ledger.collectors.sandwich_runner import Arm, run_sandwich
    from ledger.errors import InputError

    seen: list[tuple[str, int]] = []
    a_values = iter([1.0, 1.01, 1.0, 1.01])
    outcome = run_sandwich(
        book,
        Arm(func=lambda: next(a_values)),
        Arm(func=lambda: 1.05),
        rounds=2,
        on_progress=lambda done, total, label, rnd: seen.append((label, rnd)),
    )
    assert seen[:-1] == [("a", 1), ("candidate", 1), ("b", 1), ("a", 2), ("candidate", 2), ("b", 2)]
    # A and B are one arm: its runs alternate A, B, A, B
    assert outcome.result.a == 1.0 and outcome.result.b == 1.01
    assert outcome.result.verdict == "slower"
    assert book.get(outcome.sandwich.id).verdict == "slower"
    assert book.get(outcome.measurements["candidate"].id).samples == [1.05, 1.05]

    # a bare number from A and a measurement dict from the candidate are not one metric: refused
    before = len(list(book.iter_paths()))
    with pytest.raises(InputError, match="measured differently"):
        run_sandwich(book, Arm(func=lambda: 1.0), Arm(func=lambda: {"metric": "step_time", "samples": [0.5]}))
    assert len(list(book.iter_paths())) == before
