"""Stamps: the measured source's commit and dirty state, and the allocation from the scheduler."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from conftest import cli, git

from ledger.store.stamps import detect_allocation, gpus_visible, redact_url


def added(repo: Path, *args: str, env: dict[str, str] | None = None, body: str = "body: x") -> dict:
    result = cli(repo, "add", "note", "-", *args, input=body, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(cli(repo, "show", result.stdout.strip(), "--format", "json").stdout)


def test_dirty_source_is_flagged_with_the_hash_of_its_diff(repo: Path) -> None:
    (repo / "ledger.yaml").write_text((repo / "ledger.yaml").read_text() + "\n# a local edit\n")
    diff = git(repo, "diff", "HEAD", "--binary").stdout
    rec = added(repo)
    assert rec["source"]["dirty"] is True
    assert rec["source"]["diff_sha256"] == hashlib.sha256(diff.encode()).hexdigest()


def test_source_can_be_another_checkout(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "model-code"
    other.mkdir()
    git(other, "init", "-q")
    (other / "train.py").write_text("print('hi')\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "model")
    git(other, "remote", "add", "origin", "https://user:ghp_secret@example.invalid/org/model.git")
    # Another repository's commits are verified in its clone, declared in `sources:` (an
    # undeclared one is refused: `sha-foreign`).
    config = repo / "ledger.yaml"
    declared = f'sources:\n  "https://example.invalid/org/model.git": "{other}"\n'
    config.write_text(config.read_text().replace("sources: {}\n", declared, 1))
    rec = added(repo, "--source", str(other))
    assert rec["source"]["sha"] == git(other, "rev-parse", "HEAD").stdout.strip()
    assert rec["source"]["repo"] == "https://example.invalid/org/model.git"  # token never recorded


def test_a_git_dir_inherited_from_a_hook_does_not_redirect_the_stamp(repo: Path, tmp_path: Path) -> None:
    """A hook that git starts from a `git worktree` has GIT_DIR set; the stamp still reads
    the checkout it is asked about, not the repository GIT_DIR names."""
    other = tmp_path / "elsewhere"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "commit", "-q", "--allow-empty", "-m", "another repository")
    rec = added(repo, env={"GIT_DIR": str(other / ".git"), "GIT_WORK_TREE": str(other)})
    assert rec["source"]["sha"] == git(repo, "rev-parse", "HEAD").stdout.strip()
    assert rec["source"]["sha"] != git(other, "rev-parse", "HEAD").stdout.strip()


def test_historical_abbreviated_sha_is_accepted_and_marked(repo: Path) -> None:
    rec = added(repo, "--source-sha", "20C36ACEF")
    assert rec["source"] == {"sha": "20c36acef", "abbreviated": True, "dirty": False}
    bad = cli(repo, "add", "note", "-", "--source-sha", "xyz", input="body: x")
    assert bad.returncode == 2


def test_slurm_allocation(repo: Path) -> None:
    env = {"SLURM_JOB_ID": "1627918", "SLURM_JOB_NUM_NODES": "2", "SLURM_GPUS_ON_NODE": "4", "LEDGER_GPU_NAME": "GB200"}
    rec = added(repo, env=env)
    assert rec["allocation"] == {
        "id": "1627918",
        "scheduler": "slurm",
        "topology": "8x GB200",
        "nodes": 2,
        "gpus_per_node": 4,
        "hosts": [],
    }


def test_torchrun_allocation_and_overrides(repo: Path) -> None:
    env = {"WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "4", "TORCHELASTIC_RUN_ID": "abc"}
    rec = added(repo, env=env)
    assert rec["allocation"]["scheduler"] == "torchrun" and rec["allocation"]["nodes"] == 2
    assert rec["allocation"]["id"] == "torchrun-abc"
    rec = added(repo, "--allocation", "job-9", "--topology", "4x H200", env=env)
    assert rec["allocation"]["id"] == "job-9" and rec["allocation"]["topology"] == "4x H200"


def test_torchrun_on_cpu_stamps_cpu_processes_not_gpus(repo: Path) -> None:
    """The guide's torchrun recipe (`--nproc-per-node 8`) run where no GPU is visible (CUDA
    hides them all, as on a CPU-only node) stamps what ran: 8 CPU processes, not "8x GPU"."""
    env = {"WORLD_SIZE": "8", "LOCAL_WORLD_SIZE": "8", "TORCHELASTIC_RUN_ID": "cpu", "CUDA_VISIBLE_DEVICES": ""}
    rec = added(repo, env=env)
    alloc = rec["allocation"]
    assert alloc["scheduler"] == "torchrun" and alloc["nodes"] == 1
    assert alloc["topology"] == "8x CPU process" and alloc.get("gpus_per_node") is None
    seen = added(repo, env={**env, "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7", "LEDGER_GPU_NAME": "H200"})
    if gpus_visible(os.environ | {"CUDA_VISIBLE_DEVICES": "0"}):  # a GPU host: the ranks are GPUs
        assert seen["allocation"]["topology"] == "8x H200"
    else:
        assert seen["allocation"]["topology"] == "8x CPU process"


def test_ci_and_local_allocations() -> None:
    gha = detect_allocation({"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "77", "GITHUB_RUN_ATTEMPT": "2"})
    assert (gha.scheduler, gha.id) == ("github-actions", "77-2")
    gitlab = detect_allocation({"GITLAB_CI": "true", "CI_JOB_ID": "5"})
    assert (gitlab.scheduler, gitlab.id) == ("gitlab-ci", "5")
    local = detect_allocation({})
    assert local.scheduler == "local" and local.id.startswith("local-")
    assert local == detect_allocation({})  # one boot of one host is one allocation


def test_redact_url() -> None:
    assert redact_url("https://x:tok@github.com/a/b") == "https://github.com/a/b"
    assert redact_url("git@github.com:a/b.git") == "git@github.com:a/b.git"
