"""The Sweeps and Memory charts, in-process (issue 23 item 12, issue 26 item 2): a sweep is
drawn over its parameter from zero with a hover text and record link per point; a
transcribed memory figure keeps its digits; the GPU utilisation recorded per phase is shown;
a long title wraps and is never clipped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.site.conftest import Campaign

SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}href"
THREADS = ((1, 5.0, 5.1, 5.2), (2, 2.6, 2.65, 2.7), (4, 1.4, 1.45, 1.5), (8, 0.8, 0.82, 0.85))


def campaign(root: Path) -> Campaign:
    c = Campaign(root)
    contract = c.add(
        "contract", 0, {"name": "decode-threads", "model": "vae", "sweep": [{"name": "threads", "base": 1}]}
    )
    for i, (t, lo, med, hi) in enumerate(THREADS):
        c.add(
            "measurement",
            10 + i,
            {
                "contract": contract,
                "metric": "decode_wall",
                "unit": "s",
                "min": lo,
                "median": med,
                "max": hi,
                "parameters": {"threads": t},
            },
        )
    c.add(
        "memory-profile",
        30,
        {
            "title": "Rung 2, 320x192/25f with --device cuda, 1082 sampler rows, exit 1 after 2407 s, transcribed",
            "transcribed": True,
            "transcribed_from": "PR 1038",
            "phases": [
                {
                    "name": "one thread, unnamed (the VAE decode cannot yet be named, #1010)",
                    "source": "transcribed",
                    "mem_available_delta_bytes": -46707769344,
                    "gpu_utilization_max_percent": 3.0,
                    "processes": [{"process": "vllm", "anon_delta_bytes": 10737418}],
                },
                {"name": "text tower released", "source": "transcribed", "mem_available_delta_bytes": 32212254720},
            ],
        },
    )
    return c


def data_of(root: Path):
    from ledger.site.builder import load_data
    from ledger.store import Ledger

    return load_data(Ledger.open(root))


def texts(body: bytes) -> list[str]:
    return [t.strip() for t in re.findall(r"<text[^>]*>([^<]*)</text>", body.decode())]


def test_a_sweep_is_drawn_over_its_parameter_from_zero_and_names_every_point(tmp_path):
    from ledger.analysis.sweep import sweeps
    from ledger.site.investigation import sweep_svg

    root = tmp_path / "campaign"
    campaign(root)
    data = data_of(root)
    (sweep,) = sweeps(data.records, data.current_contract())
    for narrow in (False, True):
        body = sweep_svg(sweep, data, narrow=narrow)
        drawn = texts(body)
        # Both panels start at zero: the lowest tick of each y-axis is 0.
        assert drawn.count("0") + drawn.count("0.0") + drawn.count("0.00") >= 2, drawn
        links = list(ET.fromstring(body).iter(f"{SVG}a"))
        assert len(links) == len(THREADS)
        for a, (t, *_rest) in zip(links, THREADS, strict=True):
            title = a.find(f"{SVG}title").text
            assert title.startswith(f"threads={t}: median ") and "min-max" in title and "record " in title, title
            assert "commit " in title
            assert a.get(XLINK).startswith("../records/measurement/"), a.get(XLINK)


def test_a_transcribed_phase_keeps_its_digits_and_its_gpu_utilisation(tmp_path):
    from ledger.analysis.figures import transcribed_bytes
    from ledger.site.investigation import GPU_UTIL, memory_svg, phase_rows

    assert transcribed_bytes(10737418) == "0.01 GiB"  # never 10.2 MiB
    assert transcribed_bytes(-46707769344) == "-43.5 GiB"
    assert transcribed_bytes(1000) == "1000 bytes"
    root = tmp_path / "campaign"
    campaign(root)
    (profile,) = data_of(root).by_kind["memory-profile"]
    titles, rows = phase_rows(profile)
    assert GPU_UTIL in titles
    assert rows[0]["anonymous"] == "+0.01 GiB" and rows[0]["MemAvailable"] == "−43.5 GiB"
    assert rows[0][GPU_UTIL] == "3%" and rows[1][GPU_UTIL] == "–"
    for narrow in (False, True):
        body = memory_svg(profile, data_of(root), narrow=narrow)
        drawn = texts(body)
        joined = "".join("".join(drawn).split())
        assert not any("…" in t for t in drawn), drawn
        assert "".join(profile.summary().split()) in joined  # the title, whole, over its lines
        assert "GPUutil.max3%" in joined
        hover = [t.text for t in ET.fromstring(body).iter(f"{SVG}title")]
        assert any("anonymous +0.01 GiB" in t and "GPU utilisation max 3%" in t for t in hover), hover


def test_the_speedup_panel_is_linear_so_the_ideal_is_a_straight_line(tmp_path):
    """An outsider read log-x against linear-y speedup as a curve bending up: the ideal
    (linear) line must be the diagonal, so the speedup panel is linear on both axes."""
    import matplotlib.figure

    from ledger.analysis.sweep import sweeps
    from ledger.site import investigation

    root = tmp_path / "campaign"
    campaign(root)
    data = data_of(root)
    (sweep,) = sweeps(data.records, data.current_contract())
    scales = []
    original = matplotlib.figure.Figure.savefig

    def keep_scales(fig, *args, **kwargs):
        scales.extend((ax.get_xscale(), ax.get_yscale()) for ax in fig.axes)
        return original(fig, *args, **kwargs)

    matplotlib.figure.Figure.savefig = keep_scales
    try:
        investigation.sweep_svg(sweep, data, narrow=False)
    finally:
        matplotlib.figure.Figure.savefig = original
    assert scales == [("log", "linear"), ("linear", "linear")], scales
