"""Environment record: no GPU said plainly, secrets never captured, health rules; `ledger collect`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import run_ledger

from ledger.collectors.environment import (
    allowlisted_env,
    assess_health,
    collect_environment,
    decode_clock_event_reasons,
)

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
