"""Issue 17: a sweep (threads) declared by its contract, shown by `ledger status` and the site
with speedup and efficiency against the named base and a stopping point that says when the
best is not distinguishable from its neighbours; inference units without training words;
memory observations transcribed without a series; review findings; exit-code-only gates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, git

# The document's CPU A/B: threads, runs, min, median, max (seconds, one decode).
THREADS = [
    (1, 1.9859, 2.0418, 2.1172),
    (2, 1.0266, 1.0552, 1.0843),
    (4, 0.5464, 0.5555, 0.5674),
    (8, 0.2920, 0.3013, 0.3072),
    (16, 0.2129, 0.2232, 0.2597),
    (20, 0.2024, 0.2234, 0.2534),
]
CONTRACT = {
    "name": "ltx25-decode-threads",
    "model": "LTX-2.5 conv video VAE decode",
    "compute_precision": "f32",
    "rank_reduction": "single",
    "sweep": [{"name": "threads", "unit": "threads", "base": 1, "ideal": "linear"}],
}


def add(repo: Path, kind: str, data, *args: str) -> list[str]:
    result = cli(repo, "add", kind, "-", *args, input=json.dumps(data))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


@pytest.fixture
def swept(repo: Path) -> Path:
    return record_sweep(repo)


def record_sweep(repo: Path, fixed: dict | None = None) -> Path:
    """The threads sweep under its contract; `fixed` adds parameters every point shares."""
    (cid,) = add(repo, "contract", CONTRACT)
    add(
        repo,
        "measurement",
        [
            {
                "contract": cid,
                "metric": "decode_wall",
                "unit": "s",
                "n": 14,
                "min": lo,
                "median": med,
                "max": hi,
                "parameters": {"threads": t, **(fixed or {})},
                "flop": 7.25e12 / 1000,
                "peak_flops": {"name": "20-core fp32 FMA (illustrative)", "gflops": 1280, "device": "cpu"},
                "rates": [{"value": round(1 / med, 3), "unit": "decodes/s"}],
            }
            for t, lo, med, hi in THREADS
        ],
        "--allocation",
        "box-20core",
        "--topology",
        "cpu 20-core",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "sweep")
    return repo


def test_a_plateau_row_with_more_parameters_never_names_itself(repo: Path):
    """The row of threads=16 (tile=64) is not distinguishable from threads=20, not from itself."""
    record_sweep(repo, {"tile": 64})
    data = json.loads(cli(repo, "status", "--format", "json").stdout)
    stopping = next(s for s in data["sections"] if s["key"] == "stopping_point")
    assert stopping["rows"][0]["parameters"] == "threads=16, tile=64"
    reasons = stopping["rows"][0]["reasons"]
    # Besides the next step (a decision makes it final): the plateau, never the row itself.
    assert "not distinguishable from threads=20: see the threads sweep" in reasons
    assert not any("threads=16" in r for r in reasons)


def test_status_shows_the_sweep_and_its_honest_stopping_point(swept: Path):
    data = json.loads(cli(swept, "status", "--format", "json").stdout)
    section = next(s for s in data["sections"] if s["key"] == "sweep:threads")
    rows = {r["value"]: r for r in section["rows"]}
    assert rows[1]["speedup"] == "1x (base)" and rows[1]["efficiency"] == "100% (base)"
    # 9.15x from a 21% spread plus the base's 6.4%: one figure
    assert rows[16]["speedup"] == "9x" and rows[16]["speedup_value"] == pytest.approx(2.0418 / 0.2232)
    assert rows[2]["speedup"] == "2x"
    stop = section["extra"]["stopping_point"]
    assert stop["distinguishable"] is False and stop["plateau"] == [16, 20] and stop["value"] == 16
    assert "not distinguishable from threads=20" in stop["text"]
    # no training words on an inference/CPU campaign
    stopping = next(s for s in data["sections"] if s["key"] == "stopping_point")
    titles = [c["title"] for c in stopping["columns"]]
    assert "MFU" not in titles and "Local/global batch" not in titles and "Configuration" in titles
    assert stopping["rows"][0]["parameters"] == "threads=16"
    reasons = stopping["rows"][0]["reasons"]
    # Besides the next step (a decision makes it final): the plateau, never the row itself.
    assert "not distinguishable from threads=20: see the threads sweep" in reasons
    assert "FLOP utilisation" in titles and "GFLOP/s" in titles and "Rate" in titles
    assert stopping["rows"][0]["gflops"] == "30 GFLOP/s"  # 32.5 from a 21% spread: one figure
    assert any("20-core fp32 FMA (illustrative)" in n for n in stopping["notes"])
    text = cli(swept, "status").stdout
    assert "Sweep over threads" in text and "not distinguishable" in text
    assert "samples/s" not in text and "MFU" not in text


def test_a_distinguishable_best_is_named_so(repo: Path):
    (cid,) = add(repo, "contract", {**CONTRACT, "name": "narrow"})
    add(
        repo,
        "measurement",
        [
            {"contract": cid, "min": lo, "median": med, "max": hi, "parameters": {"threads": t}}
            for t, lo, med, hi in THREADS[:4]
        ],
    )
    data = json.loads(cli(repo, "status", "--format", "json").stdout)
    stop = next(s for s in data["sections"] if s["key"] == "sweep:threads")["extra"]["stopping_point"]
    assert stop["distinguishable"] is True and stop["value"] == 8
    assert "distinguishable from its neighbours (threads=4)" in stop["text"]


@pytest.mark.slow
def test_site_shows_sweep_table_chart_memory_phases_and_findings(swept: Path):
    add(
        swept,
        "memory-profile",
        {
            "title": "DiT staging, rung 1",
            "transcribed": True,
            "transcribed_from": "PR 1038, rung 1",
            "phases": [
                {
                    "name": "DiT staging",
                    "source": "transcribed",
                    "mem_available_delta_bytes": -46707769344,
                    "processes": [
                        {
                            "process": "vllm",
                            "anon_delta_bytes": 10737418,
                            "file_delta_bytes": 11628623954,
                            "gpu_delta_bytes": 33264966533,
                        }
                    ],
                }
            ],
        },
    )
    add(
        swept,
        "finding",
        {
            "finding": "F4",
            "review": "PR 1041 review",
            "claim": "the evidence SHA did not resolve",
            "verified_how": "git merge-base --is-ancestor exits 1",
            "verdict": "confirmed",
            "repair": "cites a SHA that resolves",
        },
    )
    git(swept, "add", "-A")
    git(swept, "commit", "-q", "-m", "memory and finding")
    built = cli(swept, "site", "build")
    assert built.returncode == 0, built.stderr
    site = swept / "site"
    sweeps = (site / "sweeps" / "index.html").read_text()
    assert "not distinguishable from threads=20" in sweeps and "1x (base)" in sweeps
    assert list((site / "sweeps").glob("*.svg"))
    # the sweep is charted over threads, not by commit (where it was a vertical line)
    charts = (site / "charts" / "index.html").read_text()
    assert "decode_wall" not in charts and "Sweeps" in charts
    memory = (site / "memory" / "index.html").read_text()
    # As transcribed: 0.01 GiB is never 10.2 MiB, 10.83 GiB never 10.8 GiB (issue 23 item 12).
    assert "−43.5 GiB" in memory and "+31 GiB" in memory and "+10.83 GiB" in memory and "Transcribed" in memory
    assert "+0.01 GiB" in memory and "10.2 MiB" not in memory
    findings = (site / "findings" / "index.html").read_text()
    assert "F4" in findings and "git merge-base --is-ancestor exits 1" in findings


def test_a_sampled_profile_still_needs_its_series_fields(repo: Path):
    result = cli(repo, "add", "memory-profile", "-", input=json.dumps({"phases": []}))
    assert result.returncode == 2
    assert "transcribed: true" in result.stderr


def test_a_confirmed_finding_needs_a_repair_or_owed_item(repo: Path):
    body = {"finding": "F1", "review": "r", "claim": "c", "verified_how": "read it", "verdict": "confirmed"}
    result = cli(repo, "add", "finding", "-", input=json.dumps(body))
    assert result.returncode == 2 and "repair or what is owed" in result.stderr
    (fid,) = add(repo, "finding", {**body, "owed": "per-site test", "issue": 1044})
    shown = cli(repo, "list", "--kind", "finding").stdout
    assert "F1 (r)" in shown


def test_an_exit_code_only_gate_passes(repo: Path):
    add(
        repo,
        "gate",
        {"command": "scripts/agent-preflight.sh", "exit_code": 0, "exit_code_only": True, "outcome": "pass"},
    )
    refused = cli(repo, "add", "gate", "-", input=json.dumps({"command": "x", "outcome": "pass"}))
    assert refused.returncode == 2 and "exit_code_only" in refused.stderr


def test_inference_measurements_carry_no_samples_per_second(repo: Path):
    (mid,) = add(repo, "measurement", {"metric": "decode_wall", "median": 2681.0, "throughput": 9.3})
    shown = json.loads(cli(repo, "show", mid, "--format", "json").stdout)
    record = shown.get("record", shown)
    assert record.get("throughput_unit") is None
    assert "samples/s" not in cli(repo, "show", mid).stdout


@pytest.mark.slow
def test_hostile_sweep_values_render_escaped_and_bad_profiles_are_refused(repo: Path):
    (cid,) = add(repo, "contract", {**CONTRACT, "name": "hostile", "sweep": [{"name": "variant", "base": "a"}]})
    add(
        repo,
        "measurement",
        [
            {"contract": cid, "median": 1.0, "min": 0.9, "max": 1.1, "parameters": {"variant": "a"}},
            {
                "contract": cid,
                "median": 0.5,
                "min": 0.45,
                "max": 0.55,
                "parameters": {"variant": "<script>x</script>|"},
            },
        ],
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hostile")
    built = cli(repo, "site", "build")
    assert built.returncode == 0, built.stderr
    sweeps = (repo / "site" / "sweeps" / "index.html").read_text()
    assert "<script>x</script>" not in sweeps and "&lt;script&gt;" in sweeps
    twice = cli(
        repo,
        "add",
        "contract",
        "-",
        input=json.dumps({**CONTRACT, "name": "t2", "sweep": [{"name": "a"}, {"name": "a"}]}),
    )
    assert twice.returncode == 2 and "names a parameter twice" in twice.stderr
    series = {"transcribed": True, "series": "a.jsonl.gz", "attachments": {"a.jsonl.gz": "0" * 64}}
    refused = cli(repo, "add", "memory-profile", "-", input=json.dumps(series))
    assert refused.returncode == 2 and "a transcribed profile has no series" in refused.stderr
    untimed = {"interval_s": 1, "duration_s": 2, "samples": 2, "phases": [{"name": "load"}]}
    refused = cli(repo, "add", "memory-profile", "-", input=json.dumps(untimed))
    assert refused.returncode == 2 and "have no start_s/end_s" in refused.stderr
