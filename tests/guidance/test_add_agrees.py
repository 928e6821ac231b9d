"""`ledger add` never writes what `ledger check` refuses (15.4): a table of records, each refused
by `check` for a rule decidable from the record and the ledger as it stands, is refused by `add`
with the same rule id, and nothing is written; written by hand instead, `check` refuses it."""

from __future__ import annotations

import hashlib
import json

import pytest
from checks.check_helpers import names_rule, raw_record
from conftest import cli

WANDB = "WANDB_API_KEY=" + "0123456789abcdef" * 2 + "01234567"
SANDWICH = {
    "a_value": 1.0,
    "candidate_value": 0.9,
    "b_value": 1.0,
    "midpoint": 1.0,
    "delta": -0.1,
    "delta_percent": -10.0,
    "drift_percent": 0.0,
    "floor_percent": 1.0,
}


def cases(campaign, ids: dict) -> list[tuple[str, str, dict, tuple[str, ...]]]:
    """(rule, kind, record, extra `ledger add` arguments)."""
    digest = hashlib.sha256(b"never written").hexdigest()
    return [
        ("schema-valid", "note", {"title": "no body"}, ()),
        ("schema-valid", "measurement", {"samples": [1.0, -2.0]}, ()),
        ("reference-resolves", "measurement", {"samples": [1.0], "contract": "01JAAAAAAAAAAAAAAAAAAAAAAA"}, ()),
        ("unique-key", "contract", {"name": "dit", "model": "DiT again"}, ()),
        ("unique-key", "issue", {"number": 7, "title": "seven again"}, ()),
        ("sha-resolves", "note", {"body": "from nowhere", "source": {"sha": "f" * 40}}, ()),
        (
            "sandwich-arms",
            "sandwich",
            {
                **SANDWICH,
                "verdict": "faster",
                "contract": ids["contract"],
                "control_a": ids["a"],
                "candidate": ids["elsewhere"],
                "control_b": ids["b"],
            },
            (),
        ),
        ("sandwich-verdict", "sandwich", {**SANDWICH, "verdict": "neutral"}, ()),
        ("mfu-audit", "measurement", {"samples": [1.0], "contract": ids["contract"], "mfu_percent": 40.0}, ()),
        ("record-size", "note", {"body": "word " * 60_000}, ()),
        ("binary-content", "note", {"body": "trace: " + "QUJD" * 1100}, ()),
        ("secrets", "note", {"body": f"oops {WANDB}"}, ()),
        ("record-time", "note", {"body": "from the future", "observed_at": "2099-01-01T00:00:00Z"}, ()),
        ("attachments", "note", {"body": "with a log", "attachments": {"attachments/run.log": digest}}, ()),
    ]


def records_on_disk(campaign) -> list[str]:
    return sorted(str(p) for p in (campaign.ledger / "ledger" / "records").rglob("*.json"))


@pytest.mark.slow  # several seconds: out of the quick subset
def test_every_record_check_refuses_is_refused_by_add_with_the_same_rule(campaign) -> None:
    ids = {}
    ids["contract"], _ = campaign.add("contract", {"name": "dit", "model": "DiT"})
    campaign.add("issue", {"number": 7, "title": "seven"})
    m = {"samples": [1.0, 1.01], "contract": ids["contract"]}
    ids["a"], _ = campaign.add("measurement", m, "--allocation", "job-1")
    ids["b"], _ = campaign.add("measurement", m, "--allocation", "job-1")
    ids["elsewhere"], _ = campaign.add("measurement", m, "--allocation", "job-2")
    code, violations = campaign.check()
    assert code == 0, violations
    head = campaign.head()
    for rule, kind, record, args in cases(campaign, ids):
        before = records_on_disk(campaign)
        refused = campaign.add(kind, record, *args, ok=False)
        assert refused.returncode == 2, (rule, refused.stdout, refused.stderr)
        assert names_rule(refused.stderr, rule), (rule, refused.stderr)
        assert WANDB not in refused.stderr
        assert records_on_disk(campaign) == before, rule  # nothing written
        # The same record written by hand (another tool, a hand edit): `check` refuses it by the same rule.
        path = raw_record(campaign.ledger, kind, {"source": {"sha": head}, **record})
        code, violations = campaign.check()
        mine = [v for v in violations if v["file"].endswith(path.name)]
        assert code == 1 and rule in {v["rule"] for v in mine if v["severity"] == "error"}, (rule, mine)
        path.unlink()


def test_adding_the_same_contract_file_twice_fails_the_second_time_with_a_contract_fix(campaign, tmp_path) -> None:
    spec = tmp_path / "contract.yaml"
    spec.write_text("name: ltx2-fp32master\nmodel: LTX-2\nparam_precision: fp32\n")
    first = cli(campaign.ledger, "add", "contract", str(spec))
    assert first.returncode == 0, first.stderr
    second = cli(campaign.ledger, "add", "contract", str(spec))
    assert second.returncode == 2
    assert f"{spec}:line 1, field name: unique-key: contract name" in second.stderr, second.stderr
    assert "contract" in second.stderr.split("(", 1)[1] and "renumber" not in second.stderr.lower()
    assert "issue" not in second.stderr.lower()
    assert len(list((campaign.ledger / "ledger" / "records" / "contract").rglob("*.json"))) == 1
    code, violations = campaign.check()
    assert code == 0, violations
    # A correction that supersedes it may repeat the name (issue 17's keyed corrections).
    old = json.loads(cli(campaign.ledger, "list", "--kind", "contract", "--format", "json").stdout)[0]["id"]
    fixed = campaign.add("contract", {"name": "ltx2-fp32master", "model": "LTX-2", "supersedes": [old]}, ok=False)
    assert fixed.returncode == 0, fixed.stderr


def test_what_add_generates_cannot_break_the_hash_or_the_placement(campaign) -> None:
    # A record carrying another id and a wrong hash (a `ledger show --format json` reprint)
    # is written afresh: content-hash and unique-id hold by construction.
    rid, _ = campaign.add("note", {"body": "reprint", "id": "01JAAAAAAAAAAAAAAAAAAAAAAA", "sha256": "0" * 64})
    assert rid != "01JAAAAAAAAAAAAAAAAAAAAAAA"
    code, violations = campaign.check()
    assert code == 0 and not [v for v in violations if v["rule"] in ("content-hash", "unique-id")]
