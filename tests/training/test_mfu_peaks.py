"""MFU under every named peak (issue 28 item 4): the audit names `peaks: [vendor-dense-bf16 2500]`
beside its house 2,450 convention, and status, the home page, the record page and `ledger show`
give the campaign's 42.750592% / 39.994108% beside 43.623053% / 40.810314%. `ledger show` of a
measurement prints the MFU and throughput ledger derives for it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli as here

AUDIT = {
    "flop_per_sample": 353880819892224,
    "derivation": "strict no-recompute blocks-only count at 4,290 video / 1,024 text tokens",
    "peak": {"name": "house-2450", "tflops_per_gpu": 2450, "vendor_tflops_per_gpu": 2500},
    "peaks": [{"name": "vendor-dense-bf16", "tflops_per_gpu": 2500}],
}


def _campaign(repo: Path) -> dict[str, str]:
    (repo / "c.yaml").write_text("name: ltx2-fp32-master\nmodel: FastVideo/LTX2-Distilled-Diffusers\n")
    contract = here(repo, "add", "contract", "c.yaml").stdout.strip()
    (repo / "a.json").write_text(json.dumps({**AUDIT, "contract": contract}))
    audit = here(repo, "add", "flop-audit", "a.json").stdout.strip()
    rows = [
        # The 4x row cites no audit: the contract's audit is its numerator, on every surface.
        ({"median": 0.707865914, "world_size": 4, "local_batch": 2, "global_batch": 8}, "1631376", "4x GB200"),
        (
            {"median": 0.993335918, "world_size": 8, "local_batch": 3, "global_batch": 24, "flop_audit": audit},
            "1624214",
            "8x GB200",
        ),
    ]
    ids = {}
    for fields, alloc, topo in rows:
        (repo / "m.json").write_text(json.dumps({**fields, "contract": contract, "health": "healthy"}))
        result = here(repo, "add", "measurement", "m.json", "--allocation", alloc, "--topology", topo)
        assert result.returncode == 0, result.stderr
        ids[topo] = result.stdout.strip()
    return ids


def test_status_gives_mfu_under_every_named_peak(repo: Path) -> None:
    _campaign(repo)
    status = json.loads(here(repo, "status", "--format", "json").stdout)
    stop = next(s for s in status["sections"] if s["key"] == "stopping_point")
    got = {r["topology"]: (r["mfu"], r["mfu@vendor-dense-bf16"], r["throughput"]) for r in stop["rows"]}
    assert got == {
        "4x GB200": ("40.810314%", "39.994108%", "11.301575 samples/s"),
        "8x GB200": ("43.623053%", "42.750592%", "24.161011 samples/s"),
    }
    titles = [c["title"] for c in stop["columns"]]
    assert titles.index("MFU, vendor-dense-bf16") == titles.index("MFU") + 1
    assert any("vendor-dense-bf16, 2,500 TFLOP/s per GPU" in n for n in stop["notes"])
    text = here(repo, "status", env={"COLUMNS": "200"}).stdout
    assert "42.750592%" in text and "39.994108%" in text


def test_show_prints_derived_mfu_under_each_peak_and_throughput(repo: Path) -> None:
    ids = _campaign(repo)
    shown = here(repo, "show", ids["4x GB200"], env={"COLUMNS": "300"})
    assert shown.returncode == 0, shown.stderr
    assert (
        "MFU: 40.810314% (house-2450, 2,450 TFLOP/s per GPU); 39.994108% (vendor-dense-bf16, 2,500 TFLOP/s per GPU)"
        in shown.stdout
    )
    assert "Throughput: 11.301575 samples/s" in shown.stdout
    eight = here(repo, "show", ids["8x GB200"], env={"COLUMNS": "300"}).stdout
    assert "43.623053%" in eight and "42.750592%" in eight and "24.161011 samples/s" in eight


def test_record_page_and_home_give_every_peak(repo: Path) -> None:
    """The record page's lead and the home table (Markdown, in-process; the build is the site tests')."""
    from ledger.site.context import SiteData
    from ledger.site.lead import measurement
    from ledger.store import Ledger

    ids = _campaign(repo)
    data = SiteData.build("t", Ledger.open(repo).records(), [])
    lead = str(measurement(data, data.by_id[ids["4x GB200"]]))
    mfu = next(line for line in lead.splitlines() if line.startswith("**MFU:**")).replace("\\", "")
    assert "40.810314% (house-2450, 2,450 TFLOP/s per GPU); 39.994108% (vendor-dense-bf16" in mfu
    assert "**Throughput:** 11\\.301575 samples/s" in lead
    from ledger.site.home import section_markdown, status_of

    status = status_of(data)
    home = str(section_markdown(data, "index.md", status.section("stopping_point")))
    assert "| MFU | MFU, vendor-dense-bf16 |" in home and "39\\.994108%" in home and "42\\.750592%" in home
