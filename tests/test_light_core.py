"""The light core: with only what `pip install ledger` installs, the core commands work and
the site's commands name the extra to install.

The core environment is real, not simulated: a folder holding the packages of exactly the
distributions pyproject.toml's `dependencies` require (their closure, read from the
installed distributions' metadata), linked from this environment, put on the path of an
interpreter started with `-S` (no site-packages). jinja2, mkdocs, matplotlib and numpy are
not in that folder, so a core command that needed them would fail here.
(benchmarks/core_bench.py measures the same split with `pip install .` into fresh venvs.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from conftest import ROOT, git
from packaging.requirements import Requirement

SITE_ONLY = ("jinja2", "markupsafe", "mkdocs", "material", "matplotlib", "numpy", "PIL", "markdown")


def core_distributions() -> set[str]:
    """Names of the distributions `pip install ledger` brings, read from pyproject and metadata."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo = [Requirement(r) for r in project["dependencies"]]
    seen: set[str] = set()
    while todo:
        req = todo.pop()
        name = req.name.lower().replace("_", "-")
        if name in seen or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(name)
        for sub in metadata.distribution(name).requires or []:
            sub_req = Requirement(sub)
            if not sub_req.marker or sub_req.marker.evaluate({"extra": ""}):
                todo.append(sub_req)
    return seen


@pytest.fixture(scope="module")
def core_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("core-site-packages")
    for name in core_distributions():
        dist = metadata.distribution(name)
        base = Path(str(dist.locate_file("")))
        tops = {Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            if not (folder / top).exists() and (base / top).exists():
                (folder / top).symlink_to(base / top)
    return folder


def core_ledger(core_path: Path, cwd: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess:
    code = (
        "import sys; sys.path[:0] = sys.argv[1:3]; del sys.argv[1:3]; "
        "from ledger.cli.main import main; sys.exit(main(sys.argv[1:]))"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(
        [sys.executable, "-S", "-c", code, str(ROOT / "src"), str(core_path), *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        env=env,
    )


def test_the_core_has_none_of_the_site_stack(core_path: Path) -> None:
    present = {p.name for p in core_path.iterdir()}
    assert "pydantic" in present and "orjson" in present
    assert present.isdisjoint(SITE_ONLY), present & set(SITE_ONLY)


@pytest.mark.slow
def test_core_commands_run_without_the_site_stack(core_path: Path, tmp_path: Path) -> None:
    repo = tmp_path / "campaign"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    assert core_ledger(core_path, repo, "init").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    added = core_ledger(core_path, repo, "add", "note", "-", input="body: the core writes records\n")
    assert added.returncode == 0, added.stderr
    rid = added.stdout.strip()
    shown = core_ledger(core_path, repo, "show", rid, "--format", "json")
    assert json.loads(shown.stdout)["body"] == "the core writes records"
    listed = core_ledger(core_path, repo, "list", "--format", "json")
    assert rid in listed.stdout, listed.stdout + listed.stderr
    assert core_ledger(core_path, repo, "list").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a note")
    checked = core_ledger(core_path, repo, "check", "--all")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert core_ledger(core_path, repo, "hook", "install").returncode == 0
    assert core_ledger(core_path, repo, "status").returncode == 0
    modules = core_ledger(core_path, repo, "--version")
    assert modules.returncode == 0


@pytest.mark.parametrize("command", [["site", "build"], ["demo"], ["site", "--help"]])
def test_a_command_of_the_site_extra_names_it_and_exits_2(core_path: Path, tmp_path: Path, command: list[str]) -> None:
    result = core_ledger(core_path, tmp_path, *command)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "pip install 'ledger[site]'" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_lists_every_command_and_marks_the_missing_extra(core_path: Path, tmp_path: Path) -> None:
    result = core_ledger(core_path, tmp_path, "--help")
    assert result.returncode == 0, result.stderr
    assert "add " in result.stdout and "check " in result.stdout
    assert "needs the site extra" in result.stdout
