"""Issue 18: a stamp identifies the measured repository, never the folder a checkout lives in."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import cli, git

from ledger.store.stamps import redact_url, repository_identity


def _source_repo(where: Path) -> str:
    result = cli(where, "add", "note", "-", input="body: identity")
    assert result.returncode == 0, result.stderr
    shown = cli(where, "show", result.stdout.strip(), "--format", "json")
    return json.loads(shown.stdout)["source"]["repo"]


def test_a_repository_without_remote_has_the_same_identity_in_two_folders(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "home" / "alice" / "another-folder"
    elsewhere.parent.mkdir(parents=True)
    shutil.copytree(repo, elsewhere)
    here, there = _source_repo(repo), _source_repo(elsewhere)
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    assert here == there == f"git-root:{root}"
    assert str(tmp_path) not in here


def test_a_clone_stamps_the_identity_of_its_remote_and_a_local_remote_is_not_a_name(repo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "srv" / "campaign.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    git(repo, "remote", "add", "origin", str(bare))
    # A remote that is a folder of this machine names the machine, not the repository.
    root = git(repo, "rev-list", "--max-parents=0", "HEAD").stdout.strip()
    assert _source_repo(repo) == f"git-root:{root}"
    git(repo, "remote", "set-url", "origin", "https://alice:tok3n@example.invalid/org/campaign.git?access_token=abc")
    assert _source_repo(repo) == "https://example.invalid/org/campaign.git"


def test_remote_urls_lose_every_credential_form() -> None:
    assert redact_url("alice:hunter2@git.example.com:org/repo.git") == "git.example.com:org/repo.git"
    assert redact_url("git@github.com:org/repo.git") == "git@github.com:org/repo.git"  # a user name is no secret
    assert (
        redact_url("https://gitlab.example.com/org/repo.git?private_token=glpat-x")
        == "https://gitlab.example.com/org/repo.git"
    )
    assert repository_identity("file:///home/alice/repo.git", ["b" * 40, "a" * 40]) == "git-root:" + "a" * 40
    assert repository_identity(r"C:\Users\alice\repo", []) is None


def test_check_counts_records_that_carry_a_local_path(repo: Path) -> None:
    body = json.dumps(
        {
            "body": "run with python /home/alice/bench/run.py",
            "source": {"repo": "/home/alice/campaign", "sha": git(repo, "rev-parse", "HEAD").stdout.strip()},
        }
    )
    added = cli(repo, "add", "note", "-", input=body)
    assert added.returncode == 0, added.stderr
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a record with local paths")
    result = cli(repo, "check", "--all", "--format", "json")
    assert result.returncode == 0, result.stdout  # a warning: the ledger can see how many it has
    found = [v for v in json.loads(result.stdout)["violations"] if v["rule"] == "local-path"]
    assert {v["field"] for v in found} == {"source.repo", "body"}
    assert all(v["severity"] == "warning" and v["file"].endswith(".json") and v["fix"] for v in found)
