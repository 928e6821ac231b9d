"""The LTX-2 campaign re-entered from its report through the real CLI (issue 28, "How to know it
is done"): records added as a newcomer would, one real push through the installed hook, then one
assertion per figure the campaign prints. A start, not the bar: items still open (GB200 clock
bins, ranges of readings) are not asserted here."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli, git

AUDIT = {
    "flop_per_sample": 353880819892224,
    "derivation": "strict no-recompute blocks-only model FLOP at 4,290 video / 1,024 text tokens",
    "peak": {"name": "house-2450", "tflops_per_gpu": 2450, "vendor_tflops_per_gpu": 2500},
    "peaks": [{"name": "vendor-dense-bf16", "tflops_per_gpu": 2500}],
}


def printed(value: float, stated: str) -> bool:
    """`value` is the campaign's `stated` figure at its digits: within half its last digit
    (the campaign rounds halves up; 1.4197459975 prints as 1.419745998)."""
    decimals = len(stated.split(".")[1]) if "." in stated else 0
    return abs(value - float(stated)) <= 0.5 * 10**-decimals + 1e-12 * max(1.0, abs(value))


def add(repo: Path, kind: str, body: dict, *extra: str) -> str:
    result = cli(repo, "add", kind, "-", *extra, input=json.dumps(body))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[0]


def sandwich(repo: Path, arms: list[str], *extra: str) -> dict:
    result = cli(repo, "sandwich", "--records", *arms, *extra, "--format", "json")
    assert result.returncode == 0, result.stderr
    sid = json.loads(result.stdout)["sandwich"]
    return json.loads(cli(repo, "show", sid, "--format", "json").stdout)


def test_the_campaign_comes_out_as_its_engineers_reported_it(pushed: Path) -> None:
    repo = pushed
    contract = add(repo, "contract", {"name": "ltx2-t2v-fp32master-81x480x832", "model": "LTX-2 T2V"})
    add(repo, "flop-audit", {**AUDIT, "contract": contract})
    healthy = {"health": "healthy", "observed_at": "2026-07-21T10:00:00Z", "contract": contract}
    degraded = {**healthy, "health": "degraded", "health_reasons": ["clocks/power were degraded"]}
    four = add(
        repo,
        "measurement",
        {**healthy, "median": 0.707865914, "world_size": 4, "local_batch": 2, "global_batch": 8},
        "--allocation",
        "1624214",
        "--topology",
        "4x GB200",
    )
    eight = add(
        repo,
        "measurement",
        {**healthy, "median": 0.993335918, "world_size": 8, "local_batch": 3, "global_batch": 24},
        "--allocation",
        "1627001",
        "--topology",
        "8x GB200",
    )
    add(
        repo,
        "decision",
        {
            "family": "no activation checkpointing, FA4, regional compile",
            "verdict": "accepted",
            "evidence": [four, eight],
        },
    )
    # Group 2 on degraded pair 1629519: A / group 2 / B, accepted into the recipe.
    arms = [
        add(
            repo,
            "measurement",
            {**degraded, "median": v, "world_size": 8, "local_batch": 3, "global_batch": 24},
            "--allocation",
            "1629519",
            "--topology",
            "8x GB200",
        )
        for v in (1.418004981, 1.421743279, 1.421487014)
    ]
    group2 = sandwich(repo, arms)
    add(repo, "decision", {"family": "two-module FSDP groups", "verdict": "accepted", "evidence": [group2["id"]]})
    # The fixed-arena gate in ms at 4x/B1.
    arena = [
        add(
            repo,
            "measurement",
            {
                **healthy,
                "unit": "ms",
                "median": v,
                "world_size": 4,
                "local_batch": 1,
                "global_batch": 4,
                "comparable": False,
                "non_comparable_reason": "scratch runtime, benchmark-only",
            },
            "--allocation",
            "1624214",
            "--topology",
            "4x GB200",
        )
        for v in (416.150371, 400.616610, 410.795182)
    ]
    fixed = sandwich(repo, arena)
    # The env stack on degraded pair 1632122, accepted for 4x only.
    env = [
        add(
            repo,
            "measurement",
            {
                **degraded,
                "median": v,
                "world_size": 8,
                "local_batch": 3,
                "global_batch": 24,
                "observed_at": "2026-07-22T18:00:00Z",
            },
            "--allocation",
            "1632122",
            "--topology",
            "8x GB200",
        )
        for v in (1.442031, 1.443601, 1.444706)
    ]
    envstack = sandwich(repo, env)
    add(
        repo,
        "decision",
        {
            "family": "env-only stack",
            "verdict": "accepted",
            "qualifier": "4x only",
            "evidence": [envstack["id"]],
            "pending_on": {"topology": "8x GB200", "health": "healthy"},
        },
    )

    # One real push through the hook.
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "LTX-2 campaign re-entered")
    pushed_ = git(repo, "push", "-q", "origin", "main", check=False)
    assert pushed_.returncode == 0, pushed_.stderr

    status = json.loads(cli(repo, "status", "--format", "json").stdout)
    rows = next(s for s in status["sections"] if s["key"] == "stopping_point")["rows"]
    by = {(r["topology"], r["status"].split(":")[0]): r for r in rows}
    r4, r8, rd = (
        by[("4x GB200", "final")],
        by[("8x GB200", "fastest accepted")],
        by[("8x GB200", "baseline-ineligible")],
    )
    # The stopping-point table, figure by figure.
    assert r4["median"] == "0.707865914 s"
    assert r4["throughput"] == "11.301575 samples/s"
    assert r4["mfu"] == "40.810314%"
    assert r4["mfu@vendor-dense-bf16"] == "39.994108%"
    assert r8["median"] == "0.993335918 s"
    assert r8["throughput"] == "24.161011 samples/s"
    assert r8["mfu"] == "43.623053%"
    assert r8["mfu@vendor-dense-bf16"] == "42.750592%"
    assert rd["median"] == "1.421743279 s"
    assert rd["throughput"] == "16.880685 samples/s"
    assert rd["mfu"] == "30.478319%"
    assert r4["batch"] == "2/8" and r8["batch"] == "3/24" and rd["batch"] == "3/24"

    # The fixed-arena gate: 400.616610 ms / 36.054708% against a 413.472777 ms midpoint,
    # saving 12.856167 ms / 3.109314% with 1.295174% control drift.
    from ledger.analysis.figures import sandwich_figures
    from ledger.analysis.metrics import mfu_under_peaks
    from ledger.schema.kinds import FlopAudit, Measurement, Sandwich
    from ledger.store import Ledger

    book = Ledger.open(repo)
    audit = next(r for r in book.records("flop-audit") if isinstance(r, FlopAudit))
    arena_x = book.get(arena[1])
    assert isinstance(arena_x, Measurement)
    # The campaign derived this row from its harness numerator, 353.8808175 TFLOP/sample
    # (14.444115 percentage-seconds), 0.0007% below the exact count the table rows match.
    harness = audit.model_copy(update={"flop_per_sample": 353880817500000})
    assert mfu_under_peaks(arena_x, harness)[0]["text"] == "36.054708%"
    s = book.get(fixed["id"])
    assert isinstance(s, Sandwich)
    shown = sandwich_figures(s)
    assert shown["a"] == "416.150371 ms"
    assert shown["candidate"] == "400.61661 ms"
    assert shown["b"] == "410.795182 ms"
    assert printed(s.midpoint, "413.472777")  # the campaign's midpoint, to its digits
    assert printed(s.delta, "-12.856167")
    assert printed(s.delta_percent, "-3.109314")
    # 1.2951735%: the campaign rounds it from its six-decimal midpoint to 1.295174.
    assert abs(s.drift_percent - 1.295174) < 1e-6
    # Group 2: +1.997281 ms / +0.140679% against 1.419745998 s, inside 0.245257% drift (per A).
    g = book.get(group2["id"])
    assert isinstance(g, Sandwich)
    assert printed(g.midpoint, "1.419745998")
    assert printed(g.delta * 1000, "1.997281")
    assert printed(g.delta_percent, "0.140679")
    assert printed(g.drift_percent, "0.245257")  # this gate states its drift against the midpoint
    assert g.verdict == "neutral"
    # Env stack: 1.443369 s midpoint, +0.232 ms / +0.016%, neutral, with 0.185% drift.
    e = book.get(envstack["id"])
    assert isinstance(e, Sandwich)
    assert printed(e.midpoint, "1.443369") and printed(e.delta * 1000, "0.232")
    assert printed(e.delta_percent, "0.016") and printed(e.drift_percent, "0.185") and e.verdict == "neutral"
    # Sandwiches are filed under the arms' days, stamped on the arms' allocation.
    assert e.observed_at is not None and e.observed_at.strftime("%Y-%m-%d") == "2026-07-22"
    assert g.allocation is not None and g.allocation.id == "1629519"
