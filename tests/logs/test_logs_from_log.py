"""`ledger add measurement --from-log`: structured lines among noise, truncated and contradictory logs."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from conftest import cli

SHA = "20c36acef0e60a0e9c3f3f06541a52f1114dd000"
TRUE_WALL = [0.7078 + 0.0001 * (i % 5) for i in range(20)]
INTERNAL = [t - 0.002 for t in TRUE_WALL]


def bf16_log(
    *, steps: int = 30, warmup: int | None = 10, median: float | None = None, result: bool = True, noise: bool = True
) -> str:
    lines = []
    if noise:
        lines += [
            "W0722 12:00:01 torch/_inductor: some warning about BF16_STEP tuning",
            "[rank0]: loading checkpoint shards: 100%|#####| 4/4",
            "",
        ]
    lines.append("[rank0]: BF16_SOURCE " + json.dumps({"git_sha": SHA, "tracked_dirty": False}))
    for step in range(steps):
        lines.append(
            f"2026-07-22T12:00:{step:02d}Z [rank0]: BF16_STEP "
            + json.dumps({"step": step, "step_time_sec": 0.9 if step < 10 else TRUE_WALL[(step - 10) % 20]})
        )
        if noise and step % 7 == 0:
            lines.append(f"step {step}: loss=0.{step:03d} grad_norm=1.0")
    lines.append(
        "BF16_TIMING " + json.dumps({"internal_slowest_rank_sec": INTERNAL, "true_wall_slowest_rank_sec": TRUE_WALL})
    )
    body = {
        "local_batch_size": 2,
        "gradient_accumulation_steps": 1,
        "world_size": 4,
        "internal_median_step_sec": statistics.median(INTERNAL),
        "internal_model_mfu_percent": 41.0,
        "true_wall_median_step_sec": median if median is not None else statistics.median(TRUE_WALL),
        "true_wall_model_mfu_percent": 40.81,
        "peak_allocated_max_rank_bytes": 150_000_000_000,
        "peak_reserved_max_rank_bytes": 160_000_000_000,
    }
    if warmup is not None:
        body["warmup_steps"] = warmup
    if result:
        lines.append("[rank0]: BF16_RESULT " + json.dumps(body))
    if noise:
        lines.append("training finished; destroying process group")
    return "\n".join(lines) + "\n"


def records_of(repo: Path, kind: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((repo / "ledger" / "records").glob(f"{kind}/*/*.json"))]


def test_log_with_noise_becomes_one_measurement_stamped_by_bf16_source(repo: Path) -> None:
    log = repo / "run.log"
    log.write_text(bf16_log())
    result = cli(repo, "add", "measurement", "--from-log", str(log), "--format", "json")
    assert result.returncode == 0, result.stderr
    [rec] = records_of(repo, "measurement")
    assert rec["samples"] == TRUE_WALL
    assert rec["median"] == statistics.median(TRUE_WALL)
    assert rec["n"] == 20 and rec["warmup_steps"] == 10
    assert rec["source"]["sha"] == SHA and rec["source"]["dirty"] is False
    assert rec["world_size"] == 4 and rec["global_batch"] == 8
    assert abs(rec["throughput"] - 8 / statistics.median(TRUE_WALL)) < 1e-9
    assert "mfu_percent" not in rec and rec["extra"]["mfu_percent_unaudited"] == 40.81  # no FLOP audit named
    assert rec["peak_reserved_bytes"] == 160_000_000_000
    assert rec["extra"]["internal_slowest_rank_sec"] == INTERNAL


def test_generic_ledger_lines_among_noise(repo: Path) -> None:
    log = repo / "bench.out"
    log.write_text(
        "compiling...\n"
        'LEDGER {"metric": "decode_time", "unit": "s", "samples": [1.5, 1.25, 1.75], "title": "decode 448x256"}\n'
        "some noise LEDGER without json\n"
        'rank1| LEDGER {"metric": "tokens_per_s", "unit": "tok/s", "lower_is_better": false, "median": 812.5}\n'
    )
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 0, result.stderr
    recs = sorted(records_of(repo, "measurement"), key=lambda r: r["metric"])
    assert [r["metric"] for r in recs] == ["decode_time", "tokens_per_s"]
    assert recs[0]["median"] == 1.5 and recs[1]["median"] == 812.5


def test_truncated_log_exits_2_and_writes_nothing(repo: Path) -> None:
    log = repo / "run.log"
    log.write_text(bf16_log(result=False, noise=False))
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 2
    assert "no BF16_RESULT" in result.stderr and "run.log:line" in result.stderr
    assert records_of(repo, "measurement") == []


def test_log_cut_inside_a_json_line_exits_2(repo: Path) -> None:
    text = bf16_log(noise=False)
    cut = text[: text.index("BF16_RESULT") + 40]
    log = repo / "run.log"
    log.write_text(cut)
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 2
    assert "truncated JSON" in result.stderr
    assert f"line {cut.count(chr(10)) + 1}" in result.stderr


def test_step_count_contradicting_warmup_plus_measured_exits_2(repo: Path) -> None:
    log = repo / "run.log"
    log.write_text(bf16_log(steps=29, warmup=10))
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 2
    assert "29 BF16_STEP lines but warmup 10 + measured 20 = 30" in result.stderr
    assert records_of(repo, "measurement") == []


def test_result_median_contradicting_its_steps_exits_2(repo: Path) -> None:
    log = repo / "run.log"
    log.write_text(bf16_log(median=0.6))
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 2
    assert "true_wall_median_step_sec = 0.6 but the median of the 20 measured steps is" in result.stderr
    assert records_of(repo, "measurement") == []


def test_missing_step_is_named(repo: Path) -> None:
    text = bf16_log(noise=False).splitlines()
    text = [line for line in text if '"step": 17,' not in line]
    log = repo / "run.log"
    log.write_text("\n".join(text) + "\n")
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 2
    assert "[17] missing" in result.stderr


def test_warmup_inferred_from_timing_when_not_printed(repo: Path) -> None:
    log = repo / "run.log"
    log.write_text(bf16_log(warmup=None))
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 0, result.stderr
    [rec] = records_of(repo, "measurement")
    assert rec["warmup_steps"] == 10


def test_log_without_structured_lines_exits_2(repo: Path) -> None:
    log = repo / "run.log"
    log.write_text("just noise\nand more noise\n")
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 2
    assert "no `LEDGER {json}` line and no BF16_RESULT line" in result.stderr


def test_bad_field_in_ledger_line_names_the_line(repo: Path) -> None:
    log = repo / "run.log"
    log.write_text('noise\nLEDGER {"metric": "x", "samples": [1.0], "colour": "red"}\n')
    result = cli(repo, "add", "measurement", "--from-log", str(log))
    assert result.returncode == 2
    assert "line 2, field colour" in result.stderr


def test_from_log_only_for_measurements(repo: Path) -> None:
    log = repo / "run.log"
    log.write_text(bf16_log())
    result = cli(repo, "add", "note", "--from-log", str(log))
    assert result.returncode == 2
    assert "--from-log reads measurements" in result.stderr
    assert records_of(repo, "note") == []


def test_reading_logs_and_sampling_import_no_torch() -> None:
    import subprocess
    import sys

    code = (
        "import sys, ledger.store.runlog, ledger.analysis.sandwich, ledger.collectors.sandwich_runner, ledger.collectors.sampler, "
        "ledger.cli.add, ledger.cli.sandwich, ledger.cli.sampler; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
