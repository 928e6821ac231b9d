"""Units: every figure ledger derives from a time converts it (ns, us, ms, s, min, h); a unit
it cannot place is refused at add (exit 2, naming the field and the fix) and in check; a
chart never splits one metric into two charts because of a unit.

From the LTX-2 campaign re-entered: the fixed-arena run, 400.616610 ms on 4x GB200 at
global batch 4, showed 0.036054709% MFU where the campaign has 36.054708%."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli as here

from ledger.analysis.metrics import flop_rate_gflops, mfu_by_peak, recompute, step_seconds
from ledger.schema.kinds import FlopAudit, Measurement
from ledger.units import convert, seconds_per

BASE = {
    "id": "01K00000000000000000000000",
    "created_at": "2026-07-21T00:00:00Z",
    "tool": {"version": "0"},
    "sha256": "0" * 64,
}
AUDIT = {
    "flop_per_sample": 353880817500000,
    "counted_flop_per_sample": 353880819892224,
    "itemised": {"harness numerator 353.8808175 TFLOP (rounded)": -2392224},
    "derivation": "strict no-recompute blocks-only count at 4,290 video / 1,024 text tokens",
    "peak": {"name": "house-2450", "tflops_per_gpu": 2450, "vendor_tflops_per_gpu": 2500},
    "peaks": [{"name": "vendor-dense-bf16", "tflops_per_gpu": 2500}],
}


def arena(unit: str = "ms", median: float = 400.616610) -> dict:
    return {
        "metric": "step_time",
        "unit": unit,
        "median": median,
        "world_size": 4,
        "local_batch": 1,
        "global_batch": 4,
        "allocation": {"id": "1624214", "topology": "4x GB200"},
    }


@pytest.mark.parametrize(
    ("unit", "median"),
    [
        ("ms", 400.616610),
        ("s", 0.400616610),
        ("us", 400616.610),
        ("ns", 400616610.0),
        ("msec", 400.616610),
        ("ms/step", 400.616610),
    ],
)
def test_mfu_and_throughput_convert_every_time_unit(unit: str, median: float) -> None:
    m = Measurement.model_validate({**BASE, **arena(unit, median)})
    audit = FlopAudit.model_validate({**BASE, **AUDIT})
    derived = recompute(m, audit)
    assert derived is not None
    assert f"{derived['mfu_percent']:.6f}" == "36.054708"
    assert f"{derived['throughput']:.6f}" == "9.984608"
    peaks = mfu_by_peak(m, audit)
    assert [(name, f"{mfu:.6f}") for name, _, mfu in peaks] == [
        ("house-2450", "36.054708"),
        ("vendor-dense-bf16", "35.333614"),
    ]


def test_minutes_hours_and_flop_rate() -> None:
    assert seconds_per("min") == 60 and seconds_per("h") == 3600 and seconds_per("tokens/s") is None
    assert convert(1.5, "h", "min") == 90
    m = Measurement.model_validate({**BASE, "metric": "decode", "unit": "ms", "median": 2.0, "flop": 4e9})
    assert step_seconds(m) == 0.002
    assert flop_rate_gflops(m) == pytest.approx(2000.0)


def test_an_unknown_unit_is_refused_at_add_naming_field_and_fix(repo: Path) -> None:
    (repo / "m.json").write_text(json.dumps(arena("msecs")))
    result = here(repo, "add", "measurement", "m.json")
    assert result.returncode == 2, result.stdout
    assert "unit-known" in result.stderr and "field unit" in result.stderr
    assert "'msecs' is not a unit of time" in result.stderr and "unit: ms" in result.stderr
    assert not list((repo / "ledger" / "records").rglob("*.json"))
    # A unit nothing is derived from is the record's own business.
    (repo / "r.json").write_text(
        json.dumps({"metric": "tokens", "unit": "tokens/s", "median": 12.5, "lower_is_better": False})
    )
    assert here(repo, "add", "measurement", "r.json").returncode == 0


def test_check_refuses_an_unknown_unit_written_by_hand(repo: Path) -> None:
    """A record that bypassed `ledger add` (written by hand, canonical, hashed) is refused by check."""
    from ledger.store import canonical_bytes, content_hash

    (repo / "m.json").write_text(json.dumps(arena("ms")))
    assert here(repo, "add", "measurement", "m.json").returncode == 0
    (path,) = (repo / "ledger" / "records").rglob("*.json")
    data = json.loads(path.read_bytes())
    data["unit"] = "jiffies"
    data.pop("sha256")
    data["sha256"] = content_hash(data)
    path.write_bytes(canonical_bytes(data))
    result = here(repo, "check", "--all")
    assert result.returncode == 1
    assert "unit-known" in result.stdout + result.stderr and "jiffies" in result.stdout + result.stderr


def test_status_and_site_charts_convert_ms(repo: Path) -> None:
    """The stopping point in ms gives the campaign's MFU; the chart of one metric in ms and s is one chart."""
    from ledger.site.charts import collect
    from ledger.site.context import SiteData
    from ledger.store import Ledger

    (repo / "c.yaml").write_text("name: ltx2-fp32-master\nmodel: FastVideo/LTX2-Distilled-Diffusers\n")
    contract = here(repo, "add", "contract", "c.yaml").stdout.strip()
    (repo / "a.json").write_text(json.dumps({**AUDIT, "contract": contract}))
    audit = here(repo, "add", "flop-audit", "a.json").stdout.strip()
    first = {**arena("ms"), "contract": contract, "flop_audit": audit, "health": "healthy"}
    second = {**arena("s", 0.4148231971), "contract": contract, "flop_audit": audit, "health": "healthy"}
    (repo / "m.jsonl").write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    added = here(repo, "add", "measurement", "m.jsonl", "--format", "json")
    assert added.returncode == 0, added.stderr
    status = here(repo, "status", "--format", "json")
    assert status.returncode == 0, status.stderr
    text = status.stdout
    assert "36.054708%" in text and "0.036" not in text
    charts = collect(SiteData.build("t", Ledger.open(repo).records(), []))
    step = [c for c in charts if c.metric == "step_time"]
    assert len(step) == 1 and step[0].unit in ("ms", "s")
    values = sorted(round(convert(p.value, step[0].unit, "ms"), 6) for p in step[0].points)
    assert values == [400.61661, 414.823197]
    mfu = [c for c in charts if c.metric == "MFU"]
    assert len(mfu) == 1 and sorted(round(p.value, 6) for p in mfu[0].points) == [34.819931, 36.054708]
