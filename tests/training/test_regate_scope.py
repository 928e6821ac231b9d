"""Re-gates (issue 28 item 3): only a measurement that re-establishes a row (eligible, of the
current recipe, on that topology) or a re-gate sandwich on that topology moves where it holds.

The LTX-2 campaign's 4x/B2 re-gate of 52f1114dd carried its 4x row; it said nothing of the
1x row, measured twelve recipe-touching commits earlier and never re-gated on one GPU. And
scratch arms on a degraded 1,965 MHz tray re-anchored "holds at" before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, git

SANDWICH = {"a_value": 1.0, "b_value": 1.0, "midpoint": 1.0, "drift_percent": 0.0, "floor_percent": 0.5}


class Source:
    def __init__(self, ledger: Path, source: Path):
        self.ledger, self.source = ledger, source

    def head(self) -> str:
        return git(self.source, "rev-parse", "HEAD").stdout.strip()

    def change(self, text: str) -> str:
        (self.source / "model" / "block.py").write_text(text)
        git(self.source, "commit", "-qam", "change the recipe")
        return self.head()

    def add(self, kind: str, data: dict, *args: str) -> str:
        result = cli(self.ledger, "add", kind, "-", *args, input=json.dumps(data))
        assert result.returncode == 0, result.stderr
        return result.stdout.split()[0]

    def regates(self) -> dict[str, dict]:
        """Each stopping-point row's re-gate state and where it holds, by topology."""
        data = json.loads(cli(self.ledger, "status", "--format", "json").stdout)
        rows = next(s for s in data["sections"] if s["key"] == "stopping_point")["rows"]
        return {r["topology"]: {"state": r["regate"], "holds_at": r["holds_at"]} for r in rows}

    def owed_in_check(self) -> list[str]:
        result = cli(self.ledger, "check", "--all", "--format", "json")
        return [v["message"] for v in json.loads(result.stdout)["violations"] if v["rule"] == "regate-owed"]


@pytest.fixture
def campaign(repo: Path, tmp_path: Path) -> Source:
    source = tmp_path / "model-code"
    (source / "model").mkdir(parents=True)
    git(source, "init", "-q", "-b", "main")
    (source / "model" / "block.py").write_text("def block(x):\n    return x\n")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "model")
    config = repo / "ledger.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace("\nsource: .", f"\nsource: {source}", 1))
    git(repo, "commit", "-qam", "measure ../model-code")
    return Source(repo, source)


def test_a_regate_covers_its_topology_and_scratch_or_control_arms_never_move_a_row(campaign: Source) -> None:
    c = campaign
    cid = c.add("contract", {"name": "ltx2", "model": "LTX-2", "recipe_paths": ["model/**"]})
    measured_at = c.head()
    for topo in ("1x GB200", "4x GB200"):
        c.add("measurement", {"contract": cid, "samples": [1.0, 1.01, 0.99], "health": "healthy"}, "--topology", topo)
    head = c.change("def block(x):\n    return 2 * x\n")
    assert {t: r["state"] for t, r in c.regates().items()} == {"1x GB200": "re-gate owed", "4x GB200": "re-gate owed"}

    # The 4x re-gate sandwich carries the 4x row; the 1x row stays owed where it was measured.
    c.add(
        "sandwich",
        {
            **SANDWICH,
            "contract": cid,
            "regate": True,
            "candidate_value": 1.001,
            "delta": 0.001,
            "delta_percent": 0.1,
            "verdict": "neutral",
        },
        "--topology",
        "4x GB200",
    )
    rows = c.regates()
    assert rows["4x GB200"]["state"] == "current" and rows["4x GB200"]["holds_at"] == head[:9]
    assert rows["1x GB200"]["state"] == "re-gate owed" and rows["1x GB200"]["holds_at"] == measured_at[:9]

    # Scratch runs and another experiment's arms on a degraded 1x tray at head move nothing.
    c.add(
        "measurement",
        {"contract": cid, "samples": [1.2, 1.21], "tags": ["scratch"]},
        "--topology",
        "1x GB200",
    )
    arms = [
        c.add(
            "measurement",
            {"contract": cid, "samples": [v, v], "health": "degraded", "health_reasons": ["1,965 MHz bin"]},
            "--topology",
            "1x GB200",
            "--allocation",
            "1632324",
        )
        for v in (1.3, 1.29, 1.31)
    ]
    result = cli(c.ledger, "sandwich", "--records", *arms)
    assert result.returncode == 0, result.stderr
    rows = c.regates()
    assert rows["1x GB200"]["state"] == "re-gate owed" and rows["1x GB200"]["holds_at"] == measured_at[:9]
    owed = c.owed_in_check()
    assert len(owed) == 1 and "1x GB200" in owed[0], owed

    # A run of the recipe on a healthy 1x allocation at head re-establishes the row.
    c.add("measurement", {"contract": cid, "samples": [1.0, 1.0], "health": "healthy"}, "--topology", "1x GB200")
    assert c.regates()["1x GB200"]["state"] == "current"
    assert c.owed_in_check() == []
