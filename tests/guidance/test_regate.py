"""Re-gate owed: a stopping-point row whose measured source moved in its recipe paths is owed a
re-gate until a newer measurement or a neutral re-gate sandwich covers it (issue 15.1)."""

from __future__ import annotations

from conftest import cli

SANDWICH = {"a_value": 1.0, "b_value": 1.0, "midpoint": 1.0, "drift_percent": 0.0, "floor_percent": 0.5}


def regates(campaign) -> dict[str, dict]:
    return {r["topology"]: r for r in campaign.status()["regates"]["rows"]}


def owed_warnings(campaign) -> list[dict]:
    code, violations = campaign.check()
    assert code == 0, violations  # a warning never fails the check
    return [v for v in violations if v["rule"] == "regate-owed"]


def sandwich(campaign, cid: str, candidate: float, verdict: str) -> str:
    delta = candidate - 1.0
    rid, _ = campaign.add(
        "sandwich",
        {
            **SANDWICH,
            "contract": cid,
            "regate": True,
            "candidate_value": candidate,
            "delta": delta,
            "delta_percent": delta * 100,
            "verdict": verdict,
            "title": "re-gate of the new head",
        },
        "--topology",
        "4x H200",
    )
    return rid


def test_regate_owed_appears_with_a_recipe_change_and_a_neutral_regate_carries_the_row(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "dit", "model": "DiT", "recipe_paths": ["model/**", "run.sh"]})
    measured_at = campaign.head()
    mid, _ = campaign.add("measurement", {"contract": cid, "samples": [1.0, 1.01, 0.99]}, "--topology", "4x H200")
    assert regates(campaign)["4x H200"]["state"] == "current"
    assert owed_warnings(campaign) == []

    # A change outside the recipe paths moves the source but owes nothing.
    campaign.change("README.md", "docs only\n")
    row = regates(campaign)["4x H200"]
    assert row["state"] == "current" and "leave the recipe paths unchanged" in row["reason"]
    assert row["holds_at"] == measured_at[:9]

    # A change of the recipe: the row is re-gate owed, in status, in check, and in the owed list.
    head = campaign.change("model/block.py", "def block(x):\n    return 2 * x\n")
    row = regates(campaign)["4x H200"]
    assert row["state"] == "re-gate owed" and "model/block.py" in row["reason"], row
    status = campaign.status()
    assert status["stopping_point"]["rows"][0]["regate"] == "re-gate owed"
    assert any(o["item"].startswith("re-gate owed: 4x H200") for o in status["owed"]["rows"])
    [warning] = owed_warnings(campaign)
    assert warning["severity"] == "warning" and "4x H200" in warning["message"] and head[:9] in warning["message"]
    text = cli(campaign.ledger, "status")
    assert "RE-GATE OWED" in text.stdout

    # A re-gate that came out slower carries nothing: still owed, and it says why.
    sandwich(campaign, cid, 1.05, "slower")
    row = regates(campaign)["4x H200"]
    assert row["state"] == "re-gate owed" and "came out slower" in row["reason"]

    # A neutral re-gate sandwich on the new head carries the row forward: the status disappears.
    sid = sandwich(campaign, cid, 1.001, "neutral")
    row = regates(campaign)["4x H200"]
    assert row["state"] == "current" and row["holds_at"] == head[:9] and row["id"] == sid
    assert owed_warnings(campaign) == []
    assert campaign.status()["stopping_point"]["rows"][0]["measurement"] == mid  # the row itself is unchanged


def test_without_recipe_paths_any_source_change_counts_and_a_new_measurement_covers(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "any-change", "model": "DiT"})
    campaign.add("measurement", {"contract": cid, "samples": [1.0, 1.02]}, "--topology", "8x H200")
    campaign.change("README.md", "any change counts\n")
    row = regates(campaign)["8x H200"]
    assert row["state"] == "re-gate owed" and "changing the source: README.md" in row["reason"]
    assert len(owed_warnings(campaign)) == 1
    # A measurement on the same topology at the new head covers it.
    campaign.add("measurement", {"contract": cid, "samples": [1.1, 1.12]}, "--topology", "8x H200")
    assert regates(campaign)["8x H200"]["state"] == "current"
    assert owed_warnings(campaign) == []


def test_a_measurement_off_the_heads_history_is_owed_and_hostile_recipe_paths_are_refused(campaign) -> None:
    cid, _ = campaign.add("contract", {"name": "branchy", "model": "DiT"})
    from conftest import git

    git(campaign.source, "checkout", "-q", "-b", "experiment")
    campaign.change("model/block.py", "experiment\n")
    campaign.add("measurement", {"contract": cid, "samples": [1.0]}, "--topology", "1x H200")
    git(campaign.source, "checkout", "-q", "main")
    row = regates(campaign)["1x H200"]
    assert row["state"] == "re-gate owed" and "not in the history" in row["reason"]
    # Recipe paths are paths inside the measured repository: no escape, no pathspec magic.
    for bad in ("../secrets", "/etc/passwd", ":(exclude)x", "a/../../b"):
        refused = campaign.add("contract", {"name": "bad", "model": "m", "recipe_paths": [bad]}, ok=False)
        assert refused.returncode == 2 and "schema-valid" in refused.stderr and "recipe_paths" in refused.stderr
