"""The degraded stopping-point row (issue 28 item 2) is the current recipe's measurement on the
degraded allocation class, never another experiment's control or scratch arm.

Re-entered from the LTX-2 report: the group-2 A/X/B on degraded pair 1629519 measured
1.418004981 / 1.421743279 / 1.421487014 s and was accepted (the row: 1.421743279 s /
30.478319%); the env-stack A/X/B on degraded pair 1632122 measured 1.442031 / 1.443601 /
1.444706 s, accepted for 4x only until a healthy-class 8x pair re-gates it. Before, the row
became its control B (1.444706 s / 29.99%) as "the latest degraded run"."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

AUDIT = {
    "flop_per_sample": 353880819892224,
    "derivation": "strict no-recompute blocks-only model FLOP at 4,290 video / 1,024 text tokens",
    "peak": {"name": "house-2450", "tflops_per_gpu": 2450},
}


def added(repo: Path, kind: str, body: dict, *extra: str) -> str:
    (repo / "in.json").write_text(json.dumps(body))
    result = cli(repo, "add", kind, "in.json", *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def run(repo: Path, contract: str, median: float, alloc: str, when: str, **over) -> str:
    body = {
        "contract": contract,
        "median": median,
        "world_size": 8,
        "local_batch": 3,
        "global_batch": 24,
        "health": "degraded",
        "health_reasons": [f"1,965 MHz maximum-clock bin ({alloc})"],
        "observed_at": when,
        **over,
    }
    return added(repo, "measurement", body, "--allocation", alloc, "--topology", "8x GB200")


def sandwich(repo: Path, arms: list[str]) -> str:
    result = cli(repo, "sandwich", "--records", *arms, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["sandwich"]


def degraded_row(repo: Path) -> dict:
    status = json.loads(cli(repo, "status", "--format", "json").stdout)
    stop = next(s for s in status["sections"] if s["key"] == "stopping_point")
    (row,) = [r for r in stop["rows"] if r["status"].startswith("baseline-ineligible")]
    return row


def test_the_degraded_row_is_the_recipe_not_a_later_control_arm(repo: Path) -> None:
    (repo / "c.yaml").write_text("name: ltx2\nmodel: LTX-2\n")
    contract = cli(repo, "add", "contract", "c.yaml").stdout.strip()
    added(repo, "flop-audit", {**AUDIT, "contract": contract})
    group2 = sandwich(
        repo,
        [
            run(repo, contract, v, "1629519", f"2026-07-21T0{i}:00:00Z")
            for i, v in enumerate((1.418004981, 1.421743279, 1.421487014), 1)
        ],
    )
    added(
        repo,
        "decision",
        {"family": "two-module FSDP groups", "verdict": "accepted", "evidence": [group2]},
    )
    envstack = sandwich(
        repo,
        [
            run(repo, contract, v, "1632122", f"2026-07-22T0{i}:00:00Z")
            for i, v in enumerate((1.442031, 1.443601, 1.444706), 1)
        ],
    )
    added(
        repo,
        "decision",
        {
            "family": "env-only stack",
            "verdict": "accepted",
            "qualifier": "4x only",
            "evidence": [envstack],
            "pending_on": {"topology": "8x GB200", "health": "healthy"},
        },
    )
    row = degraded_row(repo)
    assert (row["median"], row["mfu"], row["throughput"]) == ("1.421743279 s", "30.478319%", "16.880685 samples/s")

    # A later scratch run on a degraded tray, tagged so, does not take it either.
    run(repo, contract, 1.5, "1632324", "2026-07-23T01:00:00Z", tags=["scratch"])
    assert degraded_row(repo)["median"] == "1.421743279 s"
    # A later plain run of the recipe on a degraded pair (an arm of no experiment) does not
    # displace the accepted one; without an accepted run it would be the row.
    run(repo, contract, 1.430000000, "1632324", "2026-07-23T02:00:00Z")
    assert degraded_row(repo)["median"] == "1.421743279 s"
