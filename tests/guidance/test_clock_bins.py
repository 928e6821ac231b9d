"""GB200 health as the LTX-2 campaign judged it (issue 28 item 12): a healthy tray reads "about
1.4-1.8 GHz SM, 0.91-1.17 kW against the 1.2 kW cap, no throttle reasons" at a 2,062 MHz
maximum; the degraded class is the 1,965 MHz maximum-clock bin. Ranges are recorded as the
report states them, bins under `rules: baseline-eligibility: max_clock_bins`, and every
surface (status, `ledger show`, record pages) judges alike. Through the real CLI."""

from __future__ import annotations

import json

from conftest import cli
from guidance.edit_config import rules

BINS = "baseline-eligibility: {max_clock_bins: [{gpu: GB200, healthy: [2062], degraded: [1965]}]}"


def tray(max_mhz: int) -> list[dict]:
    """Four GB200s as the report states them: ranges over the run, not one sample."""
    return [
        {
            "index": i,
            "name": "NVIDIA GB200",
            "sm_clock_mhz": "1.4-1.8 GHz",
            "sm_clock_max_mhz": max_mhz,
            "power_draw_w": "0.91-1.17 kW",
            "power_limit_w": 1200,
            "power_default_limit_w": 1200,
            "clock_event_reasons": [],
        }
        for i in range(4)
    ]


def add_run(campaign, cid: str, allocation: str, max_mhz: int, median: float) -> tuple[str, str]:
    env, _ = campaign.add(
        "environment",
        {"gpus": tray(max_mhz), "under_load": True},
        "--allocation",
        allocation,
        "--topology",
        "4x GB200",
    )
    mid, _ = campaign.add(
        "measurement",
        {"contract": cid, "samples": [median], "environment": env},
        "--allocation",
        allocation,
        "--topology",
        "4x GB200",
    )
    return env, mid


def test_a_healthy_gb200_tray_is_eligible_and_the_1965_mhz_bin_is_not(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "ltx2", "model": "LTX-2"})
    healthy_env, healthy = add_run(campaign, cid, "1627918", 2062, 0.721)
    slow_env, slow = add_run(campaign, cid, "1632324", 1965, 0.978)

    # The range is stored in the field's unit, exactly (1.4 GHz is 1400 MHz, not 1399.99...).
    shown = json.loads(cli(campaign.ledger, "show", healthy_env, "--format", "json").stdout)
    assert shown["gpus"][0]["sm_clock_mhz"] == [1400, 1800] and shown["gpus"][0]["power_draw_w"] == [910, 1170]

    # Without bins both trays are healthy: clocks set by the cap at full budget (1,170 of 1,200 W).
    rows = campaign.status()["stopping_point"]["rows"]
    assert [r["measurement"] for r in rows if r["topology"] == "4x GB200" and "ineligible" not in r["status"]] == [
        healthy
    ]
    text = cli(campaign.ledger, "show", healthy).stdout
    assert "Allocation health: healthy" in text

    # With the campaign's bins, the 1,965 MHz tray is the degraded class, named by its reading.
    rules(campaign.ledger, BINS)
    rows = campaign.status()["stopping_point"]["rows"]
    best = next(r for r in rows if r["topology"] == "4x GB200" and not r["status"].startswith("baseline-ineligible"))
    assert best["measurement"] == healthy
    degraded = next(r for r in rows if r["status"].startswith("baseline-ineligible"))
    assert degraded["measurement"] == slow
    reading = "GPU 0: 1965 MHz maximum SM clock, the degraded max-clock bin of GB200 (healthy: 2062 MHz)"
    assert reading in degraded["reasons"]
    assert reading in cli(campaign.ledger, "show", slow).stdout
    env_text = cli(campaign.ledger, "show", slow_env).stdout
    assert "Allocation health: degraded by its readings" in env_text and reading in env_text
    assert "Allocation health: healthy by its readings" in cli(campaign.ledger, "show", healthy_env).stdout

    built = cli(campaign.ledger, "site", "build")
    assert built.returncode == 0, built.stderr
    site = campaign.ledger / "site"
    page = next(site.rglob(f"{slow}.html")).read_text(encoding="utf-8")
    assert "baseline-ineligible: degraded allocation" in page and "degraded max-clock bin of GB200" in page
    page = next(site.rglob(f"{healthy}.html")).read_text(encoding="utf-8")
    assert "healthy allocation" in page and "1400-1800 MHz" in page and "910-1170 W" in page
    page = next(site.rglob(f"{healthy_env}.html")).read_text(encoding="utf-8")
    assert "healthy by its readings" in page


def test_a_range_below_budget_is_judged_by_its_lowest_clock(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "ltx2", "model": "LTX-2"})
    gpus = tray(2062)
    gpus[1]["power_draw_w"] = [700, 900]  # never near its 1,200 W budget: the clocks were held back
    campaign.add("environment", {"gpus": gpus, "under_load": True}, "--allocation", "j1", "--topology", "4x GB200")
    campaign.add("measurement", {"contract": cid, "samples": [0.7]}, "--allocation", "j1", "--topology", "4x GB200")
    [row] = campaign.status()["stopping_point"]["rows"]
    assert "GPU 1: SM clock 1400-1800 MHz under load, 67.9% of its 2062 MHz maximum (below 97%)" in row["reasons"]


def test_a_backwards_range_or_a_wrong_unit_is_refused_naming_the_field(campaign) -> None:
    for value, said in (([1800, 1400], "runs backwards"), ("1.4-1.8 kW", "unit 'kW' is not one of MHz")):
        gpus = tray(2062)
        gpus[2]["sm_clock_mhz"] = value
        result = campaign.add("environment", {"gpus": gpus}, ok=False)
        assert result.returncode == 2 and "field gpus[2].sm_clock_mhz" in result.stderr and said in result.stderr
    assert not list((campaign.ledger / "ledger" / "records").rglob("*.json"))


def test_malformed_bins_exit_2_naming_the_field(campaign) -> None:
    config = campaign.ledger / "ledger.yaml"
    original = config.read_text(encoding="utf-8")
    for bins, field in (
        ("[{gpu: GB200, healthy: [2062], degraded: [2062]}]", "max_clock_bins[0].degraded"),
        ("[{gpu: GB200, healthy: fast}]", "max_clock_bins[0].healthy"),
        ("[{healthy: [2062]}]", "max_clock_bins[0].gpu"),
        ("[{gpu: GB200, healthy: [2062], bin: 3}]", "max_clock_bins[0].bin"),
        ("[{gpu: GB200, healthy: [2062]}, {gpu: gb200, healthy: [1965]}]", "max_clock_bins[1].gpu"),
    ):
        config.write_text(original, encoding="utf-8")
        rules(campaign.ledger, f"baseline-eligibility: {{max_clock_bins: {bins}}}")
        result = cli(campaign.ledger, "status")
        assert result.returncode == 2, (bins, result.stdout)
        assert f"rules.baseline-eligibility.{field}" in result.stderr, (bins, result.stderr)
