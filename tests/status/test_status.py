"""`ledger status` through the real CLI: the current-contract rule, sections, 80 columns, refusals."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli


def add(repo: Path, kind: str, body: dict) -> str:
    result = cli(repo, "add", kind, "-", input=json.dumps(body))
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def campaign(repo: Path) -> dict[str, str]:
    ids = {}
    ids["old"] = add(repo, "contract", {"name": "campaign-a", "model": "dit"})
    # MFU is reportable only beside the FLOP audit of its numerator (add refuses it otherwise).
    ids["audit"] = add(
        repo,
        "flop-audit",
        {
            "contract": ids["old"],
            "flop_per_sample": 1000,
            "derivation": "analytic",
            "peak": {"name": "p", "tflops_per_gpu": 1.0},
        },
    )
    ids["m1"] = add(
        repo,
        "measurement",
        {
            "contract": ids["old"],
            "samples": [1.01, 1.02, 1.0, 1.03, 1.02, 1.01, 1.02, 1.02],
            "allocation": {"id": "job-1", "topology": "4x H200"},
            "mfu_percent": 41.27,
            "flop_audit": ids["audit"],
        },
    )
    ids["d1"] = add(
        repo, "decision", {"family": "fused optimizer step", "verdict": "accepted", "evidence": [ids["m1"]]}
    )
    # An unrelated contract written later, with no measurement under it.
    ids["new"] = add(repo, "contract", {"name": "unrelated-kernel", "model": "gemm"})
    (repo / "ledger" / "specs").mkdir(parents=True, exist_ok=True)
    (repo / "ledger" / "specs" / "plan.md").write_text(
        "# Plan\n\n## Owed\n\n- Re-gate the fused step on 8x (owner: perf-team) #12\n"
    )
    return ids


def test_status_follows_the_measured_contract_not_the_newest_record(repo: Path) -> None:
    ids = campaign(repo)
    result = cli(repo, "status", "--format", "json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["contract"]["name"] == "campaign-a"
    assert "newest accepted decision" in data["contract_rule"]
    keys = [s["key"] for s in data["sections"]]
    assert [k for k in keys if k in ("stopping_point", "decisions", "owed")] == ["stopping_point", "owed", "decisions"]
    sections = {s["key"]: s for s in data["sections"]}
    (row,) = sections["stopping_point"]["rows"]
    assert row["measurement"] == ids["m1"] and row["topology"] == "4x H200" and row["status"] == "final"
    decisions = sections["decisions"]["rows"]
    assert [d["id"] for d in decisions] == [ids["d1"]]
    owed = sections["owed"]["rows"]
    assert owed[0]["owner"] == "perf-team" and owed[0]["issues"] == "#12"


def test_status_contract_option_and_ledger_yaml(repo: Path) -> None:
    campaign(repo)
    other = json.loads(cli(repo, "status", "--contract", "unrelated-kernel", "--format", "json").stdout)
    assert other["contract"]["name"] == "unrelated-kernel" and other["sections"][0]["rows"] == []
    text = cli(repo, "status", "--contract", "unrelated-kernel").stdout
    assert "No measurement under this contract yet." in text
    config = repo / "ledger.yaml"
    config.write_text(config.read_text().replace("contract:\n", "contract: unrelated-kernel\n"))
    named = json.loads(cli(repo, "status", "--format", "json").stdout)
    assert named["contract"]["name"] == "unrelated-kernel" and "ledger.yaml" in named["contract_rule"]


def test_status_refuses_an_unknown_contract_naming_the_known_ones(repo: Path) -> None:
    campaign(repo)
    result = cli(repo, "status", "--contract", "no-such-thing")
    assert result.returncode == 2
    assert "no-such-thing" in result.stderr and "campaign-a" in result.stderr and "--contract" in result.stderr
    config = repo / "ledger.yaml"
    config.write_text(config.read_text().replace("contract:\n", "contract: typo-contract\n"))
    result = cli(repo, "status")
    assert result.returncode == 2 and "ledger.yaml" in result.stderr and "typo-contract" in result.stderr


def test_status_fits_80_columns_with_unique_id_prefixes(repo: Path) -> None:
    ids = campaign(repo)
    result = cli(repo, "status", env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80, result.stdout
    assert "Verdict" in result.stdout and "accepted" in result.stdout and "MFU" in result.stdout
    # The id is shown as a prefix that `ledger show` resolves to the same record.
    prefix = next(
        word for line in lines if "fused optimizer" in line for word in line.split() if ids["d1"].startswith(word)
    )
    assert 8 <= len(prefix) < len(ids["d1"])
    shown = json.loads(cli(repo, "show", prefix, "--format", "json").stdout)
    assert shown["id"] == ids["d1"]


def test_status_of_an_empty_ledger(repo: Path) -> None:
    result = cli(repo, "status")
    assert result.returncode == 0, result.stderr
    assert "No contract record yet" in result.stdout and "No decision recorded yet." in result.stdout


def test_nothing_vanishes_and_nothing_contradicts(repo: Path) -> None:
    """A measurement under no contract is listed (status, and so home), never dropped; a
    contract whose only measurement is not comparable says why it has no row; `show` of a
    run that kept no median says what it kept, never "no valid step: ok"."""
    ids = campaign(repo)
    loose = add(repo, "measurement", {"samples": [0.71, 0.70, 0.72], "allocation": {"id": "j", "topology": "4x H200"}})
    odd = add(
        repo,
        "measurement",
        {
            "contract": ids["new"],
            "metric": "mfu",
            "unit": "%",
            "lower_is_better": False,
            "n": 4,
            "min": 11.71,
            "max": 13.46,
            "comparable": False,
            "non_comparable_reason": "bf16 parameters.",
        },
    )
    data = json.loads(cli(repo, "status", "--format", "json").stdout)
    outside = next(s for s in data["sections"] if s["key"] == "outside_contract")
    assert [r["id"] for r in outside["rows"]] == [loose] and outside["rows"][0]["contract"] == "none named"
    text = cli(repo, "status", env={"COLUMNS": "80"}).stdout
    assert "Outside any contract" in text and "ledger add contract" in text
    other = json.loads(cli(repo, "status", "--contract", "unrelated-kernel", "--format", "json").stdout)
    stopping = next(s for s in other["sections"] if s["key"] == "stopping_point")
    assert stopping["rows"] == [] and "1 measurement(s) under this contract" in stopping["empty"]
    assert "not comparable: bf16 parameters)" in stopping["empty"], stopping["empty"]
    shown = cli(repo, "show", odd).stdout
    assert "no median recorded, 11.71-13.46% mfu, n = 4" in shown and "no valid step" not in shown, shown
    wrong = cli(repo, "compare", ids["d1"], ids["m1"])
    assert wrong.returncode == 2 and "ledger list --kind measurement" in wrong.stderr, wrong.stderr


def test_the_quickstart_says_what_to_do_next(repo: Path) -> None:
    """The quickstart's one measurement: its row says a decision citing it makes it final,
    its local batch follows from `--topology "4x H200"` (2/8, not ?/8), and the site leaves
    the sections with nothing in them (sandwiches, sweeps, memory, findings) out of its nav."""
    import re

    contract = add(repo, "contract", {"name": "dit-bf16-4x", "model": "DiT-XL training"})
    body = {"contract": contract, "samples": [0.712, 0.709, 0.708, 0.711], "global_batch": 8}
    added = cli(repo, "add", "measurement", "-", "--topology", "4x H200", input=json.dumps(body))
    assert added.returncode == 0, added.stderr
    data = json.loads(cli(repo, "status", "--format", "json").stdout)
    (row,) = next(s for s in data["sections"] if s["key"] == "stopping_point")["rows"]
    assert row["batch"] == "2/8" and row["status"] == "eligible, not yet accepted"
    assert any("`ledger add decision`" in r and "makes it final" in r for r in row["reasons"]), row
    built = cli(repo, "site", "build", "--strict")
    assert built.returncode == 0, built.stdout + built.stderr
    home = (repo / "site" / "index.html").read_text(encoding="utf-8")
    nav = set(re.findall(r'<a href="([^"#]+)" class="md-nav__link', home))
    assert "decisions/index.html" in nav and "records/index.html" in nav, nav
    assert not nav & {"sandwiches/index.html", "sweeps/index.html", "memory/index.html", "findings/index.html"}, nav
    assert (repo / "site" / "sandwiches" / "index.html").is_file()  # built, only not in the nav
