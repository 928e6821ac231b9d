"""`ledger status`, the site's home page and `ledger demo` show one status, from one builder
(ledger.analysis.status.ledger_status): the same rows, judged by ledger.yaml's thresholds, and
the same owed items with their owners resolved through the issues they cite."""

from __future__ import annotations

import json

from conftest import run_ledger
from guidance.edit_config import rules
from guidance.test_eligibility import environment, gpu

from ledger.demo import DemoResult
from ledger.demo.summary import summarize
from ledger.site import home
from ledger.site.builder import load_data
from ledger.store.ledger import Ledger


def test_status_site_and_demo_agree_and_judge_by_ledger_yaml(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "dit", "model": "DiT"})
    campaign.add("issue", {"number": 3, "title": "profile the attention", "owner": "ana"})
    # 1,890 of 1,980 MHz (95.5%): ineligible by the default 97%, eligible by this ledger's 95%.
    environment(campaign, "job-slow", "8x H200", [gpu(0), gpu(1, sm_clock_mhz=1890)])
    mid, _ = campaign.add(
        "measurement",
        {"contract": cid, "samples": [1.0, 1.01], "health": "healthy"},
        "--allocation",
        "job-slow",
        "--topology",
        "8x H200",
    )
    rules(campaign.ledger, "baseline-eligibility: {min_sm_clock_fraction: 0.95}")
    page = Ledger.open(campaign.ledger).specs_dir / "plan.md"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text("# Plan\n\n## Owed\n\n- a trace of the attention kernel (#3)\n", encoding="utf-8")

    shown = run_ledger(campaign.ledger, "status", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    cli = {s["key"]: s for s in json.loads(shown.stdout)["sections"]}
    [row] = cli["stopping_point"]["rows"]
    assert row["status"] == "eligible, not yet accepted" and row["measurement"] == mid, row
    assert [(o["item"], o["owner"]) for o in cli["owed"]["rows"]] == [("a trace of the attention kernel (#3)", "ana")]

    ledger = Ledger.open(campaign.ledger)
    site = {s.key: s.as_dict() for s in home.status_of(load_data(ledger)).sections}
    demo = {s["key"]: s for s in summarize(DemoResult(campaign.ledger, ledger), build_site=False).status["sections"]}
    for key in ("stopping_point", "owed"):
        assert site[key]["rows"] == cli[key]["rows"], key
        assert demo[key]["rows"] == cli[key]["rows"], key
