"""Issue 22, principle 4: every file the MkDocs build reads under its docs folder follows the
no-follow rule of records and specs. MkDocs walks with `followlinks=True` and copies what a
link points at, so a committed `docs/env.md -> /proc/self/environ` published the CI
environment (tokens included) on the site and in its search index, and `docs/root -> /` hung
the build. The embedded layout this project uses (`docs_dir: docs`), pushed and built in a
fresh clone with a token in the environment.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from checks.check_helpers import commit
from conftest import git, run_ledger

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def embed(repo: Path) -> None:
    """mkdocs.yml's docs_dir: docs, ledger's pages in docs/evidence (as this project)."""
    text = (repo / "mkdocs.yml").read_text().replace("docs_dir: .ledger-build/docs", "docs_dir: docs")
    text = text.replace("- assets/ledger/", "- evidence/assets/ledger/")
    (repo / "mkdocs.yml").write_text(text)
    config = (repo / "ledger.yaml").read_text().replace("docs_dir: .ledger-build/docs", "docs_dir: docs/evidence")
    (repo / "ledger.yaml").write_text(config)
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("# Guide\n")


@pytest.mark.parametrize(
    "name, target",
    [("env.md", "/proc/self/environ"), ("root", "/"), ("notes/host.md", "../../../../../../etc/hostname")],
)
def test_a_pushed_symlink_in_the_docs_folder_is_refused(pushed: Path, tmp_path: Path, name: str, target: str) -> None:
    embed(pushed)
    link = pushed / "docs" / name
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    commit(pushed, "docs")
    assert git(pushed, "push", "-q", "--no-verify", "origin", "HEAD:main", check=False).returncode == 0
    url = git(pushed, "remote", "get-url", "origin").stdout.strip()
    git(tmp_path, "clone", "-q", url, "ci")
    ci = tmp_path / "ci"
    assert (ci / "docs" / name).is_symlink()
    result = run_ledger(ci, "site", "build", "--strict", env={"CI_TOKEN": TOKEN})
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"docs/{name}" in result.stderr and "symbolic link" in result.stderr
    site = ci / "site"
    leaked = [p for p in site.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()] if site.exists() else []
    assert not leaked
