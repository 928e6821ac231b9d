"""Health (issue 28 item 6): a measurement's health is judged from its allocation's environment
records on every surface (record page, chart points, `ledger show`, stopping point), and an
environment's recorded verdict and reasons survive per-GPU readings beside them."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

GPU = {"index": 0, "name": "NVIDIA GB200", "sm_clock_mhz": 1965, "sm_clock_max_mhz": 1965}


def added(repo: Path, kind: str, body: dict, *extra: str) -> str:
    (repo / "in.json").write_text(json.dumps(body))
    result = cli(repo, "add", kind, "in.json", *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def _site(repo: Path):
    from ledger.site.context import SiteData
    from ledger.store import Ledger

    return SiteData.build("t", Ledger.open(repo).records(), [])


def test_arms_on_an_allocation_recorded_healthy_read_healthy(repo: Path) -> None:
    from ledger.site.charts import collect
    from ledger.site.lead import measurement_status

    added(repo, "environment", {"health": {"verdict": "healthy"}}, "--allocation", "1631376", "--topology", "4x GB200")
    arm = added(repo, "measurement", {"median": 0.732045}, "--allocation", "1631376", "--topology", "4x GB200")
    data = _site(repo)
    assert measurement_status(data, data.by_id[arm]) == "healthy allocation"
    (chart,) = collect(data)
    assert [p.status for p in chart.points] == ["healthy"]
    shown = cli(repo, "show", arm, env={"COLUMNS": "200"}).stdout
    assert "Allocation health: healthy" in shown


def test_recorded_reasons_survive_per_gpu_readings(repo: Path) -> None:
    """The 1,965 MHz bin: readings at the bin's own maximum look fine; the recorded verdict says why not."""
    from ledger.site.lead import measurement_status

    env = {
        "gpus": [GPU],
        "under_load": True,
        "health": {"verdict": "degraded", "reasons": ["1,965 MHz maximum-clock bin"]},
    }
    added(repo, "environment", env, "--allocation", "1632122", "--topology", "8x GB200")
    arm = added(repo, "measurement", {"median": 1.444706, "health": "degraded"}, "--allocation", "1632122")
    data = _site(repo)
    status = measurement_status(data, data.by_id[arm])
    assert status == "baseline-ineligible: degraded allocation (recorded degraded: 1,965 MHz maximum-clock bin)"
    assert "no reason given" not in status
    shown = cli(repo, "show", arm, env={"COLUMNS": "200"}).stdout
    assert "Allocation health: degraded (recorded degraded: 1,965 MHz maximum-clock bin)" in shown
