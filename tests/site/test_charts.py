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
    from ledger.site.charts import Chart, collect
    from ledger.store import Ledger

    return {c.metric: c for c in collect(load_data(Ledger.open(root))) if isinstance(c, Chart)}


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
    body = svg(chart)
    drawn = lines_of(body, "line-")
    assert set(drawn) == {"line-run-0"}
    assert len(drawn["line-run-0"]) == 3, drawn  # the three healthy points, in commit order
    # The degraded point is a hollow marker of its own group; no line reaches it.
    assert b'id="marks-unjoined-0"' in body
    xs = [x for x, _ in drawn["line-run-0"]]
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
    assert lines_of(image, "line-") == {}  # markers only
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
def test_a_sweep_of_a_contract_that_is_not_current_is_on_the_sweeps_page(repo: Path) -> None:
    """Every contract's sweep is charted over its parameter on the Sweeps page (the current
    one first), never by commit: 1 and 2 threads at one commit are not a trend between
    commits (issue 23 item 12)."""
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
    # Named current: by evidence alone the sweep's contract, with more valid runs, would be.
    config = repo / "ledger.yaml"
    config.write_text(config.read_text().replace("\ncontract:\n", "\ncontract: current-one\n", 1))
    built = run_ledger(repo, "site", "build")
    assert built.returncode == 0, built.stderr
    index = (repo / "site" / "charts" / "index.html").read_text(encoding="utf-8")
    assert "old-sweep" not in index and "current-one" in index
    page = (repo / "site" / "sweeps" / "index.html").read_text(encoding="utf-8")
    assert "old-sweep: threads" in page and "not the current contract" in page
    assert (repo / "site" / "sweeps" / "old-sweep-threads.svg").is_file()


# -- issue 27 item 3, issue 23 item 12, issue 26 item 2: what a chart joins, says and links --


def sandwich(c: Campaign, contract: str, minutes: int, sha: str, a: float, cand: float, b: float, label: str) -> dict:
    """Three arms on one commit and the sandwich over them; the arms' ids and the sandwich's."""
    arms = [measure(c, contract, sha, v, minutes=minutes + i) for i, v in enumerate((a, cand, b))]
    mid = (a + b) / 2
    s = c.add(
        "sandwich",
        minutes + 3,
        {
            "contract": contract,
            "control_a": arms[0],
            "candidate": arms[1],
            "control_b": arms[2],
            "candidate_label": label,
            "a_value": a,
            "candidate_value": cand,
            "b_value": b,
            "midpoint": mid,
            "delta": cand - mid,
            "delta_percent": 100 * (cand - mid) / mid,
            "drift_percent": 100 * abs(a - b) / mid,
            "floor_percent": 0.5,
            "verdict": "faster" if cand < mid * 0.995 else "slower" if cand > mid * 1.005 else "neutral",
        },
        sha=sha,
    )
    return {"arms": arms, "id": s}


def sandwich_campaign(root: Path) -> tuple[list[str], dict]:
    """Three commits: a plain run on the first; on the second two sandwiches (six arms at one
    commit) and a decision accepting the second's candidate; three more runs on the third."""
    shas = source_repo(root, 3)
    c = Campaign(root)
    contract = c.add("contract", 0, {"name": "k", "model": "dit"}, sha=shas[0])
    first = measure(c, contract, shas[0], 1.0, minutes=5)
    one = sandwich(c, contract, 10, shas[1], 1.0, 1.01, 1.0, "flag one")
    two = sandwich(c, contract, 20, shas[1], 1.0, 0.9, 1.0, "flag two")
    c.add("decision", 30, {"family": "flags", "verdict": "accepted", "evidence": [first, two["id"]]}, sha=shas[1])
    late = [measure(c, contract, shas[2], v, minutes=40 + i) for i, v in enumerate((0.9, 0.91, 0.92))]
    return shas, {"first": first, "one": one, "two": two, "late": late}


def svg_lines(body: bytes) -> dict[str, int]:
    """gid -> vertices of every line (`line-*`) a chart draws."""
    return {gid: len(v) for gid, v in lines_of(body, "line-").items()}


def lines_of(body: bytes, prefix: str) -> dict[str, list[tuple[float, float]]]:
    out = {}
    for group in ET.fromstring(body).iter(f"{SVG}g"):
        gid = group.get("id", "")
        if gid.startswith(prefix):
            d = " ".join(path.get("d", "") for path in group.iter(f"{SVG}path"))
            out[gid] = [(float(x), float(y)) for x, y in re.findall(r"[ML]\s*([-\d.]+)\s+([-\d.]+)", d)]
    return out


def test_points_of_one_commit_are_never_a_trend_line(tmp_path):
    """Six sandwich arms and three runs at one commit once read as a zig-zag climb: now the
    stopping point's history (one accepted point per commit) is the only line, the arms are
    on the sandwiches chart, and three runs of one commit stay points."""
    from ledger.site.charts import svg

    root = tmp_path / "campaign"
    shas, ids = sandwich_campaign(root)
    charts = charts_of(root)
    for metric in ("step_time", "MFU"):
        chart = charts[metric]
        drawn = {p.id for p in chart.points}
        # The arms are not history: only the accepted candidate stays on the by-commit chart.
        assert drawn == {ids["first"], ids["two"]["arms"][1], *ids["late"]}, metric
        assert chart.arms == 5 and chart.sandwiches is not None
        ((role, _, line),) = chart.series()
        assert role == "history" and [p.id for p in line] == [ids["first"], ids["two"]["arms"][1]]
        for _, _, points in chart.series():
            commits = [p.commit for p in points]
            assert len(commits) == len(set(commits)), commits
        assert not any(p.joined for p in chart.points if p.id in ids["late"])
        body = svg(chart)
        assert svg_lines(body) == {"line-history-0": 2}, metric  # no line through the three late runs
        assert b"several at one commit: not joined" in body


def test_sandwiches_are_charted_as_sandwiches_in_the_order_tried(tmp_path):
    from ledger.site.charts import SandwichChart, sandwich_svg

    root = tmp_path / "campaign"
    _, ids = sandwich_campaign(root)
    (chart,) = [c for c in charts_of_all(root) if isinstance(c, SandwichChart)]
    assert [s.id for s in chart.tried] == [ids["one"]["id"], ids["two"]["id"]]
    by_x = sorted(chart.points, key=lambda p: p.x)
    assert [p.arm for p in by_x] == ["A", "candidate", "B"] * 2
    assert [p.id for p in by_x] == ids["one"]["arms"] + ids["two"]["arms"]
    assert chart.accepted == {ids["two"]["id"]}
    body = sandwich_svg(chart)
    assert svg_lines(body) == {}  # nothing joins one sandwich, or arm, to the next
    texts = [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", body.decode())]
    assert "slower" in texts and "faster ✓" in texts, texts
    assert "#1" in texts and "#2" in texts


def charts_of_all(root: Path):
    from ledger.site.builder import load_data
    from ledger.site.charts import collect
    from ledger.store import Ledger

    return collect(load_data(Ledger.open(root)))


def test_every_point_has_its_value_spread_commit_and_record_on_hover_and_a_link(tmp_path):
    from ledger.site.charts import SandwichChart, sandwich_svg, svg

    root = tmp_path / "campaign"
    shas, ids = sandwich_campaign(root)
    for chart in charts_of_all(root):
        draw = sandwich_svg if isinstance(chart, SandwichChart) else svg
        for directory_urls in (False, True):
            tree = ET.fromstring(draw(chart, directory_urls=directory_urls))
            links = list(tree.iter(f"{SVG}a"))
            assert len(links) == len(chart.points), chart.slug
            for a in links:
                href = a.get("{http://www.w3.org/1999/xlink}href", "")
                title = a.find(f"{SVG}title")
                assert title is not None and "record " in title.text, chart.slug
                rid = re.search(r"record (\w+)", title.text).group(1)
                assert rid.lower() in href.lower() and href.startswith("../records/"), href
                assert ("/#r-" in href or href.endswith("/")) if directory_urls else (".html" in href), href
                assert "commit " in title.text and ("IQR" in title.text), title.text
            if not isinstance(chart, SandwichChart) and chart.metric == "step_time":
                first = next(a for a in links if ids["first"] in a.find(f"{SVG}title").text)
                text = first.find(f"{SVG}title").text
                # value to the digits its spread supports, its IQR, the commit, the record
                assert re.search(r"median step time 1\.0+ s · IQR ", text), text
                assert f"commit {shas[0][:9]}" in text and f"record {ids['first']}" in text
                assert "the stopping point's history" in text


def test_charts_take_the_pages_colours_and_embed_cleanly(tmp_path):
    """No white panel in the dark scheme: text, axes and grid are currentColor, legend faces
    drawn on no panel at all; the inlined copy drops the file's own scheme style,
    prefixes every id it defines and references, and scopes matplotlib's `*` style."""
    from ledger.site import chart_svg
    from ledger.site.charts import svg

    root = tmp_path / "campaign"
    sandwich_campaign(root)
    body = svg(charts_of(root)["step_time"])
    text = body.decode()
    assert chart_svg.FG not in text and chart_svg.BG not in text
    assert "#ffffff" not in text.split("</style>", 1)[1] and "fill: white" not in text
    tree = ET.fromstring(body)
    fills = [t.get("style", "") for t in tree.iter(f"{SVG}text")]
    assert fills and all("fill: currentColor" in s for s in fills), fills[:3]
    assert "prefers-color-scheme: dark" in text  # the standalone file (thumbnails, full size)
    inlined = chart_svg.inline(body, "c1", up="../")
    assert "prefers-color-scheme" not in inlined and "<?xml" not in inlined and "\n\n" not in inlined
    ids = set(re.findall(r'\bid="([^"]+)"', inlined))
    assert ids and all(i.startswith("c1-") for i in ids)
    refs = re.findall(r'(?:url\(#|xlink:href="#)([^)"]+)', inlined)
    assert refs and set(refs) <= ids
    assert ".c1 *{stroke-linejoin" in inlined and "\n*{" not in inlined
    assert 'xlink:href="../../records/' in inlined


def test_a_long_title_wraps_and_is_never_clipped(tmp_path):
    from ledger.site.charts import svg

    root = tmp_path / "campaign"
    shas = source_repo(root, 2)
    c = Campaign(root)
    name = "ltx2-t2v-" + "-".join(f"part{i}" for i in range(12)) + "-rung-2-exit-1-after-2407-s"
    contract = c.add("contract", 0, {"name": name, "model": "dit"}, sha=shas[0])
    for i, sha in enumerate(shas):
        measure(c, contract, sha, 1.0, minutes=10 + i)
    chart = charts_of(root)["step_time"]
    for narrow in (False, True):
        texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg(chart, narrow=narrow).decode())
        assert not any("…" in t for t in texts), texts
        # Every character of the title is drawn, in order, over as many lines as it takes.
        assert "".join(chart.title.split()) in "".join("".join(texts).split()), texts


def test_points_of_one_commit_share_its_x_unless_they_would_overlap(tmp_path):
    """Issue 26: the ltx2 demo's one commit drew 0.71, 0.99 and 1.42 s side by side in
    topology order, a rising line of dots between commits that never happened. Points of one
    commit share its x; only values whose markers would overlap are moved apart."""
    root = tmp_path / "campaign"
    root.mkdir()
    c = Campaign(root)
    contract = c.add("contract", 0, {"name": "k", "model": "dit"})
    for minutes, value in ((3, 0.71), (4, 0.99), (5, 1.42), (6, 1.425)):
        measure(c, contract, "a" * 40, value, minutes=minutes)
    chart = charts_of(root)["step_time"]
    x = {round(p.value, 3): p.x for p in chart.points}
    assert x[0.71] == x[0.99] == 0.0, x  # apart in value: one column
    assert x[1.42] != x[1.425] and abs(x[1.42] - x[1.425]) <= 0.6, x  # would overlap: side by side
