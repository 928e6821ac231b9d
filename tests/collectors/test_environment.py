"""Environment record: no GPU said plainly, secrets never captured, health rules; `ledger collect`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import run_ledger

from ledger.collectors.environment import (
    LoadSampler,
    allowlisted_env,
    assess_health,
    collect_environment,
    decode_clock_event_reasons,
    judge_series,
    series_readings,
)
from ledger.schema import Environment

SECRETS = {
    "HF_TOKEN": "hf_plantedsecretvalue111",
    "WANDB_API_KEY": "plantedsecretvalue222",
    "NCCL_IB_AUTH_TOKEN": "plantedsecretvalue333",
    "CUDA_LICENSE_KEY": "plantedsecretvalue444",
    "AWS_SECRET_ACCESS_KEY": "plantedsecretvalue555",
    "PYTORCH_PASSWORD": "plantedsecretvalue666",
}
FLAGS = {
    "TORCHINDUCTOR_COORDINATE_DESCENT_TUNING": "1",
    "CUBLASLT_WORKSPACE_SIZE": "76800",
    "NCCL_DEBUG": "WARN",
    "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True",
    "CUDA_DEVICE_MAX_CONNECTIONS": "1",
}


def test_allowlist_keeps_performance_flags_and_drops_secrets_and_everything_else():
    env = {**SECRETS, **FLAGS, "HOME": "/root", "PATH": "/usr/bin", "NCCL_SOCKET_URL": "https://user:pw@host/x"}
    got = allowlisted_env(env)
    assert {k: got[k] for k in FLAGS} == FLAGS
    assert not set(SECRETS) & set(got) and "HOME" not in got and "PATH" not in got
    assert got["NCCL_SOCKET_URL"] == "https://host/x"


def test_a_machine_without_a_gpu_says_so_plainly():
    body = collect_environment(import_torch=False)
    if body["gpus"]:
        pytest.skip("this machine has an NVIDIA GPU")
    assert body["no_gpu_reason"].startswith(("no NVIDIA GPU", "nvidia-ml-py"))
    assert body["health"]["verdict"] == "unknown" and "no GPU" in body["health"]["reasons"][0]
    assert "no GPU" in body["title"]


def test_health_rules():
    ok = {
        "index": 0,
        "name": "H200",
        "sm_clock_mhz": 1980,
        "sm_clock_max_mhz": 1980,
        "power_limit_w": 700,
        "power_default_limit_w": 700,
        "clock_event_reasons": [],
    }
    assert assess_health([ok], under_load=True) == {"verdict": "healthy", "reasons": []}
    idle = {**ok, "sm_clock_mhz": 345, "clock_event_reasons": ["gpu_idle"]}
    assert assess_health([idle], under_load=False)["verdict"] == "healthy"
    # Under load, a GPU the load did not use is not judged (seen on a 2x H200 host: GPU 1 idle).
    assert assess_health([ok, {**idle, "index": 1}], under_load=True) == {
        "verdict": "healthy",
        "reasons": ["GPU 1: idle during the load sample, so its clocks were not judged"],
    }
    slow = {**ok, "sm_clock_mhz": 1500, "utilization_percent": 100}
    assert assess_health([slow], under_load=True)["verdict"] == "degraded"
    capped = {**ok, "power_limit_w": 500, "clock_event_reasons": decode_clock_event_reasons(0x4 | 0x40)}
    verdict = assess_health([capped], under_load=True)
    assert verdict["verdict"] == "degraded"
    assert any("sw_power_cap, hw_thermal_slowdown" in r for r in verdict["reasons"])
    assert any("500 W, below the default 700 W" in r for r in verdict["reasons"])
    assert decode_clock_event_reasons(0x1 | 0x10000) == ["gpu_idle", "unknown_0x10000"]
    # A dense load at the default limit: power-capped clocks at the full budget are normal.
    at_budget = {**ok, "sm_clock_mhz": 1620, "power_draw_w": 694, "clock_event_reasons": ["sw_power_cap"]}
    verdict = assess_health([at_budget], under_load=True)
    assert verdict["verdict"] == "healthy" and "full default power budget" in verdict["reasons"][0]
    # The same clocks while drawing far less than the budget are degraded.
    starved = {**at_budget, "power_draw_w": 420}
    assert assess_health([starved], under_load=True)["verdict"] == "degraded"


def _h200(t: float, sm: int, watts: float, util: int = 100, reasons=("sw_power_cap",)) -> dict:
    """One NVML reading of an H200 as read_gpus returns it (the campaign's readings)."""
    return {
        "index": 0,
        "name": "NVIDIA H200",
        "sm_clock_mhz": sm,
        "sm_clock_max_mhz": 1980,
        "power_draw_w": watts,
        "power_limit_w": 700.0,
        "power_default_limit_w": 700.0,
        "temperature_c": 51,
        "clock_event_reasons": list(reasons),
        "ecc_errors_uncorrected": 0,
        "utilization_percent": util,
        "t": t,
    }


def test_one_odd_sample_neither_makes_nor_hides_the_verdict():
    # The fourth round's "degraded" came from one reading at 399 W and 1,575 MHz; the board
    # held ~690 W through the steps. Judged from the series, that run is healthy.
    steady = [[_h200(0.25 * i, 1410 + 10 * (i % 3), 688.0 + (i % 4))] for i in range(20)]
    odd = steady[:7] + [[_h200(1.75, 1575, 399.0)]] + steady[8:]
    assert assess_health(odd[7], under_load=True)["verdict"] == "degraded"
    verdict = judge_series(odd)
    assert verdict["verdict"] == "healthy"
    assert any("1 sample(s) degraded on their own" in r for r in verdict["reasons"])
    assert any("full default power budget" in r for r in verdict["reasons"])
    readings, summary = series_readings(odd)
    assert readings[0]["power_draw_w"] == 689.0 and readings[0]["clock_event_reasons"] == ["sw_power_cap"]
    assert summary["samples"] == 20 and summary["seconds"] == 4.75
    gpu = summary["gpus"][0]
    assert (gpu["power_min_w"], gpu["power_median_w"], gpu["power_max_w"]) == (399.0, 689.0, 691.0)
    # A board that stays starved (far under its budget, clocks held) is degraded from the series too.
    starved = [[_h200(0.25 * i, 1575, 420.0 + i)] for i in range(10)]
    verdict = judge_series(starved)
    assert verdict["verdict"] == "degraded" and any("10 sample(s) degraded" in r for r in verdict["reasons"])
    # Gaps between kernels (idle readings) are left out of the medians while busy ones exist.
    gappy = steady[:10] + [[_h200(9.0, 345, 90.0, util=0, reasons=("gpu_idle",))]] * 12
    readings, summary = series_readings(gappy)
    assert summary["gpus"][0]["busy_samples"] == 10 and readings[0]["sm_clock_mhz"] >= 1410
    assert judge_series(gappy)["verdict"] == "healthy"
    # Errors only grow: the largest count stands for the series.
    ecc = steady[:5] + [[{**_h200(2.0, 1410, 688.0), "ecc_errors_uncorrected": 2}]]
    assert judge_series(ecc)["verdict"] == "degraded"
    assert judge_series([])["verdict"] == "unknown"
    # Two arms' samplers pool into one series: readings carry Unix times, so its seconds run
    # from the first arm's first reading to the second arm's last.
    arm1 = [[_h200(1_700_000_000.0 + 0.5 * i, 1485, 692.0)] for i in range(10)]
    arm2 = [[_h200(1_700_000_030.0 + 0.5 * i, 1500, 692.5)] for i in range(10)]
    assert series_readings(arm1 + arm2)[1]["seconds"] == 34.5


def test_an_environment_from_a_series_is_added_as_a_record(repo, tmp_path):
    series = [[_h200(0.25 * i, 1410, 688.0)] for i in range(8)]
    body = collect_environment(under_load=True, import_torch=False, series=series)
    assert body["gpus"][0]["sm_clock_mhz"] == 1410 and "t" not in body["gpus"][0]
    assert body["health"]["verdict"] == "healthy" and body["load_series"]["samples"] == 8
    (tmp_path / "env.json").write_text(json.dumps(body))
    out = run_ledger(repo, "add", "environment", str(tmp_path / "env.json"), "--format", "json")
    assert out.returncode == 0, out.stderr
    [added] = json.loads(out.stdout)
    env = Environment.model_validate_json((repo / added["path"]).read_text())
    assert env.load_series is not None and env.load_series.gpus[0].degraded_samples == 0
    assert env.load_series.gpus[0].sm_clock_median_mhz == 1410 and env.load_series.gpus[0].power_median_w == 688


def test_the_load_sampler_on_a_machine_without_a_gpu_takes_no_samples():
    sampler = LoadSampler(interval_s=0.01).start()
    samples = sampler.stop()
    if samples:
        pytest.skip("this machine has an NVIDIA GPU")
    assert sampler.no_gpu and collect_environment(import_torch=False, series=samples)["health"]["verdict"] == "unknown"


@pytest.mark.slow
def test_collect_env_writes_a_record_without_secrets(repo):
    env = {**SECRETS, **FLAGS}
    out = run_ledger(repo, "collect", "env", "--format", "json", env=env)
    assert out.returncode == 0, out.stderr
    [added] = json.loads(out.stdout)
    text = (repo / added["path"]).read_text()
    record = json.loads(text)
    assert record["kind"] == "environment" and record["env_flags"]["CUBLASLT_WORKSPACE_SIZE"] == "76800"
    for name, value in SECRETS.items():
        assert value not in text and name not in text
    shown = run_ledger(repo, "show", added["id"])
    assert shown.returncode == 0 and "environment" in shown.stdout


@pytest.mark.slow
def test_collect_ceiling_and_attention_on_cpu(repo, tmp_path):
    out = run_ledger(
        repo,
        "collect",
        "ceiling",
        "--device",
        "cpu",
        "--matmul-size",
        "64",
        "--copy-mib",
        "1",
        "--dtype",
        "fp32",
        "--repeats",
        "3",
        "--out",
        str(tmp_path / "ceiling.json"),
    )
    assert out.returncode == 0, out.stderr
    body = json.loads((tmp_path / "ceiling.json").read_text())
    assert body["matmul_shape"] == [64, 64, 64] and body["copy_tbps"] > 0 and len(body["samples"]["matmul_tflops"]) == 3
    assert run_ledger(repo, "add", "ceiling", str(tmp_path / "ceiling.json")).returncode == 0
    out = run_ledger(
        repo,
        "collect",
        "attention",
        "--seq",
        "32",
        "--heads",
        "2",
        "--head-dim",
        "16",
        "--dtype",
        "fp32",
        "--backend",
        "math",
        "--backend",
        "cudnn",
        "--repeats",
        "2",
        "--causal",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    added = json.loads(out.stdout)
    records = [json.loads((repo / a["path"]).read_text()) for a in added]
    by = {(r["extra"]["implementation"], r["metric"]): r for r in records}
    math_fwd = by[("torch-sdpa-math", "attention_fwd_tflops")]
    assert math_fwd["outcome"] == "ok" and math_fwd["extra"]["flop"] == 4 * 32 * 32 * 2 * 16 / 2
    assert by[("torch-sdpa-math", "attention_bwd_tflops")]["extra"]["flop"] == 2.5 * math_fwd["extra"]["flop"]
    # A backend that cannot run on CPU is recorded as such, named, not dropped.
    assert by[("torch-sdpa-cudnn", "attention_fwd_tflops")]["outcome"] == "failed"


def test_importing_collectors_and_adding_records_never_imports_torch():
    code = (
        "import sys, ledger.collectors, ledger.cli.add, ledger.cli.main, ledger.cli.collect; "
        "from ledger.collectors import allowlisted_env; assert 'torch' not in sys.modules, 'torch imported'"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
