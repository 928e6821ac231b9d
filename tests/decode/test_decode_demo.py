"""Issue 17: `ledger demo --campaign decode DIR` re-enters the LTX-2.5 decode-speed investigation
from its published facts, checks it (exit 0) and builds its site: the thread sweep with its
honest stopping point, transcribed memory phases, findings F1-F5, issues corrected to owned or
closed, and owed items whose owners the site and the checker agree on."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import cli

from ledger.demo import CAMPAIGNS, campaign_text
from ledger.store.inputs import comment_warnings


def test_the_campaign_data_loses_no_text_to_yaml_comments():
    for name in CAMPAIGNS:
        assert comment_warnings(campaign_text(name)) == [], name


def test_decode_demo_checks_and_builds_its_site(demo_decode):
    # The run's one `ledger demo --campaign decode DIR --format json`, through the real command
    # (tests/conftest.py: demo_decode); read only.
    target, summary, _ = demo_decode
    assert summary["campaign"] == "decode" and summary["check"]["errors"] == 0
    assert summary["counts"]["finding"] == 5 and summary["counts"]["memory-profile"] == 2
    sections = {s["key"]: s for s in summary["status"]["sections"]}
    stop = sections["sweep:threads"]["extra"]["stopping_point"]
    assert stop["plateau"] == [16, 20] and not stop["distinguishable"]
    # The plateau's argument is that the min-max ranges overlap: the table shows the ranges,
    # each end at the width of its range (the median's one digit read 0.2 s for all four).
    ends = {r["value"]: (r["min"], r["max"]) for r in sections["sweep:threads"]["rows"]}
    assert ends[16] == ("0.21 s", "0.26 s") and ends[20] == ("0.20 s", "0.25 s"), ends
    titles = [c["title"] for c in sections["stopping_point"]["columns"]]
    assert "MFU" not in titles and "Local/global batch" not in titles
    owners = {r["item"][:30]: r["owner"] for r in sections["owed"]["rows"]}
    assert owners["The per-site dispatch test wit"] == "LTX25-DECODE-THREADS"  # via issue #1044's live record
    # the checker counts one unowned owed item, the mark the demo sets
    check = cli(target, "check", "--all", "--format", "json")
    assert check.returncode == 0, check.stdout + check.stderr
    issues = json.loads(cli(target, "list", "--kind", "issue", "--format", "json").stdout)
    assert sum(1 for r in issues if r["key"] == "#1044") == 2
    site = target / "site"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Sweep over threads" in home and "not distinguishable from threads=20" in home
    assert "LTX25-DECODE-THREADS" in home and "samples/s" not in home
    memory = (site / "memory" / "index.html").read_text(encoding="utf-8")
    # As the investigation transcribed them (compute-app +30.98 GiB), not rounded to +31 GiB.
    assert "−43.5 GiB" in memory and "+30.98 GiB" in memory and "Transcribed" in memory
    findings = (site / "findings" / "index.html").read_text(encoding="utf-8")
    assert all(f"F{i}" in findings for i in range(1, 6))
    # Every pull request is dated to the day: record pages say so and invent no midnight, and
    # the report files everything under the investigation's month, not the day the demo ran.
    pages = [re.sub(r"<[^>]+>", "", p.read_text(encoding="utf-8")) for p in (site / "records").rglob("*.html")]
    assert any("2026-08-16 (known to the day)" in text for text in pages)
    assert not any("2026-08-16 00:00" in text for text in pages)
    assert sorted(p.name for p in (site / "report").glob("20*.html")) == ["2026-08.html"]
    text = cli(target, "status").stdout
    assert "Sweep over threads" in text and "MFU" not in text


def test_an_unknown_campaign_is_bad_input(tmp_path: Path):
    result = cli(tmp_path, "demo", "--campaign", "nonsense", str(tmp_path / "x"))
    assert result.returncode == 2
