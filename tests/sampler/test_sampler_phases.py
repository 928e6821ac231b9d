"""The sampler watching a real child that allocates and frees memory in two marked phases."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
from conftest import LEDGER_BIN, run_ledger

MIB = 1 << 20

HOG = """\
import mmap, subprocess, sys, time
ledger, data = sys.argv[1], sys.argv[2]
def mark(*args):
    subprocess.run([ledger, "sampler", "mark", *args], check=True)
    time.sleep(0.3)
mark("load")
anon = b"\\x01" * (256 << 20)                      # anonymous memory
fh = open(data, "rb")
mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
touched = sum(mapped[i] for i in range(0, len(mapped), 4096))  # file-backed pages
time.sleep(1.0)
mark("release")
del anon
mapped.close()
time.sleep(1.0)
mark("--end")
"""


def records(repo: Path, kind: str) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((repo / "ledger" / "records").glob(f"{kind}/*/*.json"))]


@pytest.mark.slow
def test_each_phase_delta_is_attributed_to_its_phase_and_the_wrapper_is_not_matched(repo: Path, tmp_path: Path) -> None:
    # The workload runs as `memhog` (a link to the interpreter, so comm is memhog) under an
    # `sh` wrapper whose own command line mentions memhog: only the workload may be sampled.
    # A name of this run's own (comm keeps 15 characters): the sampler matches by name across
    # the machine, and a second `memhog` alive at the same moment was sampled beside it.
    name = f"memhog{os.getpid() % 100000}"
    memhog = tmp_path / name
    memhog.symlink_to(os.path.realpath(sys.executable))
    (tmp_path / "hog.py").write_text(HOG)
    data = tmp_path / "weights.bin"
    data.write_bytes(os.urandom(64 * MIB))
    wrapper = f"{memhog} {tmp_path / 'hog.py'} {LEDGER_BIN} {data}; echo {name} finished"
    result = run_ledger(
        repo,
        "sampler",
        "run",
        "--name",
        name,
        "--interval",
        "0.05",
        "--no-nvml",
        "--format",
        "json",
        "--",
        "sh",
        "-c",
        wrapper,
    )
    assert result.returncode == 0, result.stderr
    [rec] = records(repo, "memory-profile")
    assert [p["name"] for p in rec["processes"]] == [name]
    assert rec["processes"][0]["found_by"] == "name"
    assert rec["targets"] == [f"name={name}"]
    assert rec["command"].startswith("sh -c ")
    phases = {p["name"]: p for p in rec["phases"]}
    assert list(phases) == ["load", "release"]
    assert all(p["source"] == "marker" for p in phases.values())
    assert phases["load"]["end_s"] == pytest.approx(phases["release"]["start_s"])
    [load] = phases["load"]["processes"]
    [release] = phases["release"]["processes"]
    assert load["anon_delta_bytes"] > 200 * MIB
    assert load["file_delta_bytes"] > 48 * MIB
    assert release["anon_delta_bytes"] < -200 * MIB
    assert release["file_delta_bytes"] < -48 * MIB
    assert rec["processes"][0]["anon_peak_bytes"] > 256 * MIB
    # the full series is attached, and its sha256 is in the record
    [(rel, digest)] = rec["attachments"].items()
    assert rel == rec["series"]
    blob = (repo / "ledger" / "records" / rel).read_bytes()
    assert hashlib.sha256(blob).hexdigest() == digest
    lines = [json.loads(line) for line in gzip.decompress(blob).decode().splitlines()]
    assert lines[0]["format"] == "ledger-sampler/1"
    assert sum(1 for line in lines if "mem_available" in line) == rec["samples"]
    assert [(line["phase"], line["event"]) for line in lines if "phase" in line] == [
        ("load", "begin"),
        ("load", "end"),
        ("release", "begin"),
        ("release", "end"),
    ]


def test_in_process_phases_through_the_api(book) -> None:
    from ledger.collectors.sampler import Sampler, save

    with Sampler(pids=[os.getpid()], interval=0.05, nvml=False) as sampler:
        with sampler.phase("allocate"):
            held = bytearray(b"\x02" * (128 * MIB))
        with sampler.phase("free"):
            del held
    body = sampler.summary()
    phases = {p["name"]: p["processes"][0] for p in body["phases"]}
    assert phases["allocate"]["anon_delta_bytes"] > 100 * MIB
    assert phases["free"]["anon_delta_bytes"] < -100 * MIB
    assert body["gpu"] == {"nvml": False, "reason": "disabled", "devices": 0}
    saved = save(book, sampler, title="in-process phases")
    stored = book.get(saved.record.id)
    assert stored.series in stored.attachments
    assert [p.name for p in stored.phases] == ["allocate", "free"]


def test_name_matching_is_exact() -> None:
    from ledger.collectors.sampler import name_matches

    assert name_matches("python3", "python3", "/usr/bin/python3")
    assert name_matches("python3", "other", "python3")
    assert not name_matches("python3", "sudo", "sudo")  # `sudo docker run ... python3 x.py`
    assert not name_matches("python", "python3", "python3")
    # the kernel keeps 15 characters of comm
    assert name_matches("ledger-decode-worker", "ledger-decode-w", "x")


def test_mark_without_a_running_sampler_exits_2(repo: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LEDGER_SAMPLER_MARKS"}
    result = run_ledger(repo, "sampler", "mark", "decode", env={**env, "LEDGER_SAMPLER_MARKS": ""})
    assert result.returncode == 2
    assert "LEDGER_SAMPLER_MARKS" in result.stderr


def test_marks_from_a_shell_into_a_file(repo: Path, tmp_path: Path) -> None:
    marks = tmp_path / "marks.jsonl"
    for args in (["decode"], ["--end"]):
        result = run_ledger(repo, "sampler", "mark", *args, "--file", str(marks))
        assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in marks.read_text().splitlines()]
    assert [(m["name"], m["event"]) for m in lines] == [("decode", "begin"), ("", "end")]
    assert lines[0]["t"] <= lines[1]["t"]
