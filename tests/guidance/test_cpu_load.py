"""CPU-box load as health for CPU campaigns (issue 23, "no place for it yet"): the decode A/B
ran at "one-minute load average 4.03 to 6.77 ... with one non-agent process holding ~1.07
cores" on a 20-core box. An environment records the load and the cores the work itself kept
busy; `max_load_per_core` judges the rest, and every surface says why."""

from __future__ import annotations

from conftest import cli
from guidance.edit_config import rules


def add_run(campaign, cid: str, allocation: str, load: list[float], work: float) -> tuple[str, str]:
    env, _ = campaign.add(
        "environment",
        {"no_gpu_reason": "CPU campaign", "load_avg": load, "cpu_count": 20, "work_cores": work},
        "--allocation",
        allocation,
        "--topology",
        "cpu 20-core",
    )
    mid, _ = campaign.add(
        "measurement",
        {"contract": cid, "samples": [0.2234], "environment": env},
        "--allocation",
        allocation,
        "--topology",
        "cpu 20-core",
    )
    return env, mid


def test_load_beside_the_work_judges_a_cpu_box_once_a_limit_is_set(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "decode", "model": "LTX-2.5 decode"})
    quiet_env, quiet = add_run(campaign, cid, "quiet", [20.5, 20.9, 21.0], 20)
    busy_env, busy = add_run(campaign, cid, "contended", [4.03, 6.77], 4)

    # Unset, load is recorded, not judged: neither box is called healthy or degraded by it.
    assert "Allocation health: unknown" in cli(campaign.ledger, "show", busy).stdout

    rules(campaign.ledger, "baseline-eligibility: {max_load_per_core: 0.1}")
    rows = campaign.status()["stopping_point"]["rows"]
    degraded = next(r for r in rows if r["status"].startswith("baseline-ineligible"))
    reading = "load average up to 6.77 on 20 cores beside the measured work's 4 cores: 0.14 a core, above 0.1"
    assert degraded["measurement"] == busy and reading in degraded["reasons"], rows
    assert reading in cli(campaign.ledger, "show", busy_env).stdout
    # 21.0 on 20 cores, 20 of them the work's own threads: 0.05 a core of contention.
    assert "Allocation health: healthy by its readings" in cli(campaign.ledger, "show", quiet_env).stdout
    assert "Allocation health: healthy" in cli(campaign.ledger, "show", quiet).stdout


def test_a_load_limit_that_is_no_load_exits_2_naming_the_field(campaign) -> None:
    for value in ("-1", "fast", "0"):
        config = campaign.ledger / "ledger.yaml"
        original = config.read_text(encoding="utf-8")
        rules(campaign.ledger, f"baseline-eligibility: {{max_load_per_core: {value}}}")
        result = cli(campaign.ledger, "status")
        config.write_text(original, encoding="utf-8")
        assert result.returncode == 2 and "rules.baseline-eligibility.max_load_per_core" in result.stderr, (
            value,
            result.stderr,
        )
