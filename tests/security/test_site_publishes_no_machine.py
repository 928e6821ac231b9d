"""Issue 12 (class 14) and issue 18: the published site says nothing about the machines a
ledger was written on: no hostname, no boot id, no checkout folder, no home folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, git, run_ledger

HOST = "gpu-node-17.internal.example"
CHECKOUT = "/home/alice/secret-project"


def _built_text(root: Path) -> str:
    site = root / "site"
    parts = []
    for path in sorted(site.rglob("*")):
        if path.is_file() and path.suffix in (".html", ".json", ".svg", ".xml", ".txt"):
            parts.append(path.read_text(encoding="utf-8", errors="replace"))
    generated = root / ".ledger-build"
    for path in sorted(generated.rglob("*.md")):
        parts.append(path.read_text(encoding="utf-8"))
    return "\n".join(parts)


def _campaign(repo: Path) -> None:
    sha = git(repo, "rev-parse", "HEAD").stdout.strip()
    env = {"LEDGER_ALLOCATION": ""}  # detection, as on a user's machine
    environment = {
        "hostname": HOST,
        "title": f"{HOST}: 1x NVIDIA H200 (idle)",
        "source": {"repo": CHECKOUT, "sha": sha},
        "allocation": {"id": f"local-{HOST}-c0c6fc28", "scheduler": "local", "hosts": [HOST]},
    }
    note = {
        "title": f"baseline note: python {CHECKOUT}/bench.py --out /Users/bob/results",
        "body": f"ran python {CHECKOUT}/bench.py --out /Users/bob/results on {HOST}",
        "source": {"repo": CHECKOUT, "sha": sha},
        "allocation": {"id": f"local-{HOST}-c0c6fc28", "scheduler": "local", "hosts": [HOST]},
    }
    for kind, body in (("environment", environment), ("note", note)):
        result = cli(repo, "add", kind, "-", input=json.dumps(body), env=env)
        assert result.returncode == 0, result.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "records written on a named host")


@pytest.mark.slow
def test_the_site_withholds_hostnames_boot_ids_and_local_paths(repo: Path) -> None:
    _campaign(repo)
    result = run_ledger(repo, "site", "build", "--strict")
    assert result.returncode == 0, result.stderr + result.stdout
    text = _built_text(repo)
    assert "baseline note: python ~/secret" in text  # the record is published ...
    for leak in (HOST, "gpu-node-17", "c0c6fc28", "/home/alice", "alice", "/Users/bob", str(repo)):
        assert leak not in text, leak  # ... without what maps the machine
    assert "local#" in text  # one allocation is still one id


@pytest.mark.slow
def test_publish_hosts_is_an_explicit_choice(repo: Path) -> None:
    _campaign(repo)
    config = repo / "ledger.yaml"
    config.write_text(config.read_text().replace("publish_hosts: false", "publish_hosts: true", 1))
    result = cli(repo, "site", "build", "--strict")
    assert result.returncode == 0, result.stderr + result.stdout
    text = _built_text(repo)
    assert HOST in text
    assert "/home/alice" not in text  # home folders are never published


def test_scratch_folders_and_gpu_uuids_are_withheld(repo: Path) -> None:
    # Issue 22, item 11: values like /scratch/NAME/... and GPU UUIDs reached the site.
    uuid = "GPU-1a2b3c4d-1111-2222-3333-444455556666"
    note = {
        "title": f"ran /scratch/carol/runs/bench.py on {uuid} (MIG-0a1b2c3d-1111-2222-3333-444455556666)",
        "body": "the baseline on one board",
    }
    result = cli(repo, "add", "note", "-", input=json.dumps(note))
    assert result.returncode == 0, result.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a note naming a scratch folder and a board")
    result = cli(repo, "site", "build", "--strict")
    assert result.returncode == 0, result.stderr + result.stdout
    text = _built_text(repo)
    assert "~/runs/bench" in text and "GPU#" in text and "MIG#" in text
    for leak in ("carol", "1a2b3c4d", "0a1b2c3d", "/scratch/"):
        assert leak not in text, leak
