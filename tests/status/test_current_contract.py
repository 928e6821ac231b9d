"""Which contract is current when ledger.yaml names none: chosen from the campaign's evidence
(the newest accepted decision, else the most valid measurements), never from the order the
records were added in, and never a contract with no valid measurement while another has one."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli, run_ledger

from ledger.analysis.sandwich import compute
from ledger.analysis.stopping_point import (
    RULE_DECIDED,
    RULE_MEASURED,
    RULE_MOST,
    RULE_ONLY,
    choose_contract,
)
from ledger.store.ledger import Ledger


def add(repo: Path, kind: str, body: dict) -> str:
    result = cli(repo, "add", kind, "-", input=json.dumps(body))
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def run(repo: Path, contract: str, median: float, **extra) -> str:
    body = {"contract": contract, "metric": "decode_wall", "unit": "s", "median": median, "n": 14, **extra}
    return add(repo, "measurement", body)


def chosen(repo: Path) -> tuple[str | None, str]:
    choice = choose_contract(Ledger.open(repo).records())
    return (choice.contract.name if choice.contract else None), choice.rule


def sweep_then_pair(repo: Path) -> dict[str, str]:
    """The decode investigation's shape: a 14-run sweep, then a two-run pair (n = 3) added last."""
    ids = {"sweep": add(repo, "contract", {"name": "threads-sweep", "model": "vae"})}
    ids["t1"] = run(repo, ids["sweep"], 5.1, min=5.0, max=5.2)
    ids["t8"] = run(repo, ids["sweep"], 0.8, min=0.75, max=0.85)
    ids["t20"] = run(repo, ids["sweep"], 0.55, min=0.5, max=0.6)
    ids["pair"] = add(repo, "contract", {"name": "base128-pair", "model": "vae"})
    ids["p1"] = run(repo, ids["pair"], 5.1015, n=3)
    ids["p20"] = run(repo, ids["pair"], 0.5276, n=3)
    return ids


def test_the_most_measured_contract_not_the_last_pair_added(repo: Path) -> None:
    sweep_then_pair(repo)
    assert chosen(repo) == ("threads-sweep", RULE_MOST)


def test_the_newest_accepted_decision_chooses_directly_or_via_a_sandwich(repo: Path) -> None:
    ids = sweep_then_pair(repo)
    add(repo, "decision", {"family": "threads", "verdict": "accepted", "evidence": [ids["p20"]]})
    assert chosen(repo) == ("base128-pair", RULE_DECIDED)
    # A newer decision that cites the sweep through a sandwich's arms takes it back.
    fields = {k: v for k, v in compute(0.8, 0.55, 0.81).record_fields().items() if v is not None}
    fields.update(
        {"metric": "decode_wall", "unit": "s", "control_a": ids["t8"], "candidate": ids["t20"], "control_b": ids["t8"]}
    )
    sandwich = add(repo, "sandwich", fields)
    add(repo, "decision", {"family": "threads-20", "verdict": "accepted", "evidence": [sandwich]})
    assert chosen(repo) == ("threads-sweep", RULE_DECIDED)
    # Rejected and superseded decisions choose nothing; a decision citing only a gate is skipped.
    add(repo, "decision", {"family": "pair", "verdict": "rejected", "evidence": [ids["p1"]]})
    assert chosen(repo) == ("threads-sweep", RULE_DECIDED)


def test_never_a_contract_without_a_valid_measurement_while_another_has_one(repo: Path) -> None:
    ids = sweep_then_pair(repo)
    diag = add(repo, "contract", {"name": "bf16-diagnostic", "model": "vae"})
    kept = run(repo, diag, 1.0, comparable=False, non_comparable_reason="bf16 diagnostic")
    oom = run(repo, diag, None, outcome="oom")
    add(repo, "decision", {"family": "diagnostic", "verdict": "accepted", "evidence": [kept, oom]})
    # The newest decision cites only invalid runs: the next one down (none) leaves it to the counts.
    assert chosen(repo) == ("threads-sweep", RULE_MOST)
    add(repo, "decision", {"family": "threads", "verdict": "accepted", "evidence": [ids["t20"], kept]})
    assert chosen(repo) == ("threads-sweep", RULE_DECIDED)


def test_without_any_valid_measurement_the_most_recent_then_the_newest_contract(repo: Path) -> None:
    first = add(repo, "contract", {"name": "first", "model": "vae"})
    assert chosen(repo) == ("first", RULE_ONLY)
    run(repo, first, None, outcome="oom")
    add(repo, "contract", {"name": "second", "model": "vae"})
    assert chosen(repo) == ("first", RULE_MEASURED)


def test_status_and_home_say_which_rule_chose_it(repo: Path) -> None:
    """End to end through the installed command: `ledger status` names the contract and its rule."""
    sweep_then_pair(repo)
    result = run_ledger(repo, "status")
    assert result.returncode == 0, result.stderr
    assert "threads-sweep" in result.stdout and RULE_MOST in " ".join(result.stdout.split())
    data = json.loads(cli(repo, "status", "--format", "json").stdout)
    assert data["contract"]["name"] == "threads-sweep" and data["contract_rule"] == RULE_MOST


def test_both_demo_campaigns_choose_their_own_contract_with_contract_blank(tmp_path: Path) -> None:
    """Blank `contract:` in either demo and the campaign's own contract is still current: the
    LTX-2 demo's later BF16 diagnostic run and the decode demo's n = 3 pair take nothing."""
    from ledger.demo import CAMPAIGNS, build_demo

    for name, campaign in CAMPAIGNS.items():
        demo = build_demo(tmp_path / name, name)
        choice = choose_contract(demo.ledger.records())
        assert choice.contract is not None and choice.contract.name == campaign.contract, (name, choice)
        assert choice.rule == RULE_DECIDED, (name, choice.rule)


def test_a_pair_without_ranges_is_never_called_distinguishable(repo: Path) -> None:
    """The n = 3 pair records medians only: "their ranges do not overlap" would be false."""
    from ledger.analysis.sweep import sweeps

    sweep = {"name": "threads", "unit": "workers", "base": 1, "ideal": "linear"}
    pair = add(repo, "contract", {"name": "base128-pair", "model": "vae", "sweep": [sweep]})
    run(repo, pair, 5.1015, n=3, parameters={"threads": 1})
    run(repo, pair, 0.5276, n=3, parameters={"threads": 20})
    contract = next(c for c in Ledger.open(repo).records("contract"))
    (found,) = sweeps(Ledger.open(repo).records(), contract)
    stop = found.stopping_point()
    assert not stop["distinguishable"] and "do not overlap" not in stop["text"]
    assert "threads=20" in stop["text"] and "recorded no min or max" in stop["text"]
