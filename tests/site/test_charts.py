"""Charts that cannot mislead, on constructed ledgers: a degraded point is never joined to a
healthy one, records written in the same second land in the measured source's commit order,
and every axis carries its unit."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import git
from tests.site.conftest import Campaign

SVG = "{http://www.w3.org/2000/svg}"


def source_repo(root: Path, n: int) -> list[str]:
    """A git repository at `root` with `n` commits; their SHAs, oldest first."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    shas = []
    for i in range(n):
        (root / "train.py").write_text(f"step = {i}\n")
        git(root, "add", "train.py")
        git(root, "commit", "-q", "-m", f"change {i}", "--date", f"2026-07-{10 + i}T12:00:00Z")
        shas.append(git(root, "rev-parse", "HEAD").stdout.strip())
    return shas


def measure(c: Campaign, contract: str, sha: str, value: float, *, minutes: int = 10, health: str = "healthy") -> str:
    samples = [value * (1 + d) for d in (-0.002, -0.001, 0.0, 0.0, 0.001, 0.002)]
    return c.add(
        "measurement",
        minutes,
        {"contract": contract, "samples": samples, "health": health, "mfu_percent": 40.0 / value},
        sha=sha,
    )


def charts_of(root: Path):
    from ledger.site.builder import load_data
    from ledger.site.charts import collect
    from ledger.store import Ledger

    return {c.metric: c for c in collect(load_data(Ledger.open(root)))}


def lines(svg: bytes) -> dict[str, list[tuple[float, float]]]:
    """gid -> the vertices of the line drawn in that group (empty when only markers)."""
    out = {}
    for group in ET.fromstring(svg).iter(f"{SVG}g"):
        gid = group.get("id", "")
        if gid.startswith(("joined-", "unjoined-")):
            vertices: list[tuple[float, float]] = []
            for path in group.iter(f"{SVG}path"):
                d = path.get("d", "")
                if "L" in d:
                    vertices = [(float(x), float(y)) for x, y in re.findall(r"[ML]\s*([-\d.]+)\s+([-\d.]+)", d)]
            out[gid] = vertices
    return out


def test_a_degraded_point_is_drawn_apart_and_never_joined(tmp_path):
    from ledger.site.charts import svg

    root = tmp_path / "campaign"
    shas = source_repo(root, 3)
    c = Campaign(root)
    contract = c.add("contract", 0, {"name": "k", "model": "dit"}, sha=shas[0])
    for i, sha in enumerate(shas):
        measure(c, contract, sha, 1.0 - 0.01 * i, minutes=10 + i)
    # The same recipe on a degraded allocation, on the middle commit: 40% slower.
    degraded = measure(c, contract, shas[1], 1.4, minutes=20, health="degraded")
    chart = charts_of(root)["step_time"]
    assert [p.eligible for p in chart.points if p.id == degraded] == [False]
    drawn = lines(svg(chart))
    assert set(drawn) == {"joined-0", "unjoined-0"}
    assert len(drawn["joined-0"]) == 3, drawn  # the three healthy points, in commit order
    assert drawn["unjoined-0"] == []  # markers only: no line reaches the degraded point
    xs = [x for x, _ in drawn["joined-0"]]
    assert xs == sorted(xs)


def test_records_written_in_the_same_second_land_in_source_order(tmp_path):
    root = tmp_path / "campaign"
    shas = source_repo(root, 3)
    c = Campaign(root)
    contract = c.add("contract", 0, {"name": "k", "model": "dit"}, sha=shas[0])
    # Written newest commit first, all in the same second (same minute offset): the records'
    # ids and write times say the opposite of the source's order.
    for sha, value in ((shas[2], 0.9), (shas[0], 1.1), (shas[1], 1.0)):
        measure(c, contract, sha, value, minutes=30)
    chart = charts_of(root)["step_time"]
    assert [label for label, _ in chart.commits] == [s[:7] for s in shas]
    assert [d for _, d in chart.commits] == ["2026-07-10", "2026-07-11", "2026-07-12"]
    by_x = sorted(chart.points, key=lambda p: p.x)
    assert [p.commit for p in by_x] == shas
    assert "source checkout's order" in chart.x_label


def test_without_the_source_checkout_the_axis_says_first_measurement_order(tmp_path):
    root = tmp_path / "campaign"
    root.mkdir()
    c = Campaign(root)
    contract = c.add("contract", 0, {"name": "k", "model": "dit"})
    measure(c, contract, "a" * 40, 1.0, minutes=5)
    measure(c, contract, "b" * 40, 0.9, minutes=3)
    chart = charts_of(root)["step_time"]
    assert "first measurement" in chart.x_label
    assert [label for label, _ in chart.commits] == ["bbbbbbb", "aaaaaaa"]


def test_axes_carry_units_and_start_at_zero(tmp_path):
    from ledger.site.charts import svg

    root = tmp_path / "campaign"
    shas = source_repo(root, 2)
    c = Campaign(root)
    contract = c.add("contract", 0, {"name": "k", "model": "dit"}, sha=shas[0])
    for i, sha in enumerate(shas):
        measure(c, contract, sha, 46.5 + i * 0.1, minutes=10 + i)
    charts = charts_of(root)
    for metric, unit in (("step_time", "median step time (s)"), ("MFU", "MFU (%)")):
        chart = charts[metric]
        body = svg(chart).decode()
        texts = [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", body)]
        assert unit in texts, texts
        assert any(t.startswith("commit (short SHA, commit date)") for t in texts), texts
        assert shas[0][:7] in body and "2026-07-10" in body
        # The y-axis starts at zero: its lowest tick label is 0, not the noise around 46.5.
        assert "0" in texts or "0.0" in texts, texts
        assert b"<script" not in body.encode()


def test_points_under_no_contract_are_never_joined(tmp_path):
    """Measurements that name no contract (an attention benchmark over kernels and shapes)
    share no measurement contract: drawn as points, never as a line."""
    from ledger.site.charts import svg

    root = tmp_path / "campaign"
    shas = source_repo(root, 3)
    c = Campaign(root)
    for i, sha in enumerate(shas):
        c.add("measurement", 10 + i, {"samples": [1.0 + i, 1.1 + i, 1.2 + i]}, sha=sha)
    chart = charts_of(root)["step_time"]
    assert chart.contract_id == "" and len(chart.points) == 3
    image = svg(chart)
    drawn = lines(image)
    assert drawn == {"joined-0": []}, drawn  # markers only
    assert b"not comparable, not joined" in image


def test_the_sample_strip_speaks_figures_not_float_noise() -> None:
    """The strip's screen-reader label and its geometry carry the axis labels' figures,
    never a float's seventeen digits (0.25971160888671874 read aloud is noise)."""
    from ledger.site.lead import strip

    samples = [0.25971160888671874, 0.26104700000000004, 0.2612345678901234, 0.27208102416992186]
    svg = str(strip(samples, "s", 0.2611))
    root = ET.fromstring(svg)
    assert root.get("aria-label") == "4 samples from 0.259712 s to 0.272081 s"
    numbers = re.findall(r"\d+\.\d+", svg)
    assert numbers and all(len(n.split(".")[1]) <= 6 for n in numbers), numbers


@pytest.mark.slow
def test_a_sweep_of_a_contract_that_is_not_current_stays_on_the_charts(repo: Path) -> None:
    """Only the current contract's sweep has a Sweeps page; another contract's swept
    measurements are charted by commit rather than vanishing from the site."""
    from tests.conftest import run_ledger

    def add(kind: str, body: dict) -> str:
        result = run_ledger(repo, "add", kind, "-", input=json.dumps(body))
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    old = add("contract", {"name": "old-sweep", "model": "m", "sweep": [{"name": "threads", "base": 1}]})
    for t, value in ((1, 2.0), (2, 1.1)):
        add(
            "measurement",
            {"contract": old, "metric": "decode_wall", "unit": "s", "median": value, "parameters": {"threads": t}},
        )
    new = add("contract", {"name": "current-one", "model": "m"})
    add("measurement", {"contract": new, "metric": "decode_wall", "unit": "s", "median": 1.0})
    built = run_ledger(repo, "site", "build")
    assert built.returncode == 0, built.stderr
    index = (repo / "site" / "charts" / "index.html").read_text(encoding="utf-8")
    assert "old-sweep" in index and "current-one" in index
