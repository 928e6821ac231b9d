"""`ledger init`: a commented config, the records folder, mkdocs.yml created or updated, idempotent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, git


def test_init_twice_changes_nothing(tmp_path: Path) -> None:
    root = tmp_path / "c"
    first = cli(tmp_path, "init", str(root))
    assert first.returncode == 0 and "created ledger.yaml" in first.stdout
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    second = cli(tmp_path, "init", str(root))
    assert second.returncode == 0 and "nothing changed" in second.stdout
    assert snapshot == {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert "# " in (root / "ledger.yaml").read_text()  # commented for the user
    assert "font: false" in (root / "mkdocs.yml").read_text()


def test_init_updates_an_existing_mkdocs_yml_keeping_comments(tmp_path: Path) -> None:
    root = tmp_path / "docs-site"
    root.mkdir()
    original = (
        "# our docs\nsite_name: Team docs  # keep this name\ntheme:\n  name: material\n  palette: {primary: red}\n"
    )
    (root / "mkdocs.yml").write_text(original)
    assert cli(root, "init").returncode == 0
    text = (root / "mkdocs.yml").read_text()
    assert text.startswith("# our docs\nsite_name: Team docs  # keep this name\n")
    assert "palette: {primary: red}" in text and "font: false" in text and "validation:" in text
    assert cli(root, "init").stdout.strip().endswith("nothing changed")


def test_bad_config_is_reported_with_its_field(repo: Path) -> None:
    (repo / "ledger.yaml").write_text(
        (repo / "ledger.yaml").read_text().replace("version: 1", "version: 1\nrecrods: x")
    )
    result = cli(repo, "list")
    assert result.returncode == 2 and "ledger.yaml" in result.stderr and "recrods" in result.stderr


@pytest.mark.slow
def test_site_build_leaves_the_committed_init_clean(repo: Path) -> None:
    """The quickstart commits what `ledger init` wrote; a site build must not rewrite the
    tracked mkdocs.yml afterwards, or every later record is stamped dirty."""
    assert cli(repo, "add", "note", "-", input="body: first").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a note")
    built = cli(repo, "site", "build", "--strict")
    assert built.returncode == 0, built.stdout + built.stderr
    assert git(repo, "status", "--porcelain").stdout == ""
    rid = cli(repo, "add", "note", "-", input="body: after the build").stdout.strip()
    shown = cli(repo, "show", rid, "--format", "json")
    assert json.loads(shown.stdout)["source"]["dirty"] is False
