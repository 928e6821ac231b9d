"""Shared fixtures: real git repositories in temporary folders and the real `ledger` CLI.

Two ways to run a command, with the same arguments and the same result
(`subprocess.CompletedProcess`: returncode, stdout, stderr):

- `cli(cwd, *args, input=..., env=...)` runs `ledger ARGS` in this process through click's
  test runner over `ledger.cli.main.main` (what `entry()` calls): the same parsing, output and
  exit codes, without the 0.4 s start of a new interpreter. Use it by default.
- `run_ledger(cwd, *args, ...)` starts the installed `ledger` executable, as a user or the git
  hook does. Keep it for the one end-to-end test of a behaviour, and for what only a process
  shows (imports, signals, a pipe, the hook's own start).

Expensive builds are made once per run and shared (`shared_build`; `demo_ltx2`, `demo_decode`):
with pytest-xdist the workers share one build through a lock. Tests only read a shared build;
a test that changes one works on a copy (`copy_repo`).

Repositories are made once per session and copied (`repo`, `pushed`): `git init`, `ledger
init`, the commit, the bare remote, the installed hook and the first push through it cost
about a second; a copy costs milliseconds. Every copy is a real repository with its own
folder; nothing is shared between tests.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LEDGER_BIN = Path(sys.executable).with_name("ledger")

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
#: Variables of the machine running the tests that must not leak into a command: scheduler
#: variables would land in stamps, and the terminal size (pytest-xdist workers export
#: COLUMNS=80 and LINES=24) would fold piped output that a user's pipe never folds (tests that
#: want a width say so).
SCRUBBED = (
    "SLURM_JOB_ID",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "LEDGER_DIR",
    "COLUMNS",
    "LINES",
)


#: A test that uses one of these fixtures is marked `slow` (pushes through a remote, the
#: demo's build): the quick subset, `pytest -m "not slow and not browser"`, leaves it out.
SLOW_FIXTURES = frozenset({"pushed", "pushed_template", "demo_ltx2", "demo_decode"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def git(cwd: Path, *args: str, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=check, text=True, capture_output=True, input=input)


def _env(env: dict[str, str] | None) -> dict[str, str]:
    full_env = {**os.environ, **GIT_ENV, **(env or {})}
    for name in SCRUBBED:
        if env is None or name not in env:
            full_env.pop(name, None)
    return full_env


#: Where coverage's subprocess patch (pyproject.toml) tells a Python child to measure itself.
COVERAGE_ENV = "COVERAGE_PROCESS_CONFIG"


def unmeasured(env: dict[str, str]) -> dict[str, str]:
    """`env` for a `ledger` process that coverage need not measure: one killed with SIGKILL
    (it writes no coverage data, so measuring it only slows it), or one of many running the
    same lines as a measured sibling."""
    return {k: v for k, v in env.items() if k != COVERAGE_ENV}


def stop_measuring() -> None:
    """In a forked child that ends by os._exit or a kill (multiprocessing's children do):
    coverage never saves what such a child ran, so its tracer, inherited from the parent,
    only slows it down. Turned off for this thread."""
    sys.settrace(None)


def run_ledger(
    cwd: Path, *args: str, input: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the installed `ledger` command as a user would (a new process)."""
    return subprocess.run([str(LEDGER_BIN), *args], cwd=cwd, env=_env(env), text=True, capture_output=True, input=input)


@contextmanager
def _in_folder(cwd: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


def cli(
    cwd: Path, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run `ledger ARGS` in this process, in folder `cwd`, with `input` on stdin and `env` over
    the environment (scrubbed as `run_ledger` scrubs it): click's CliRunner over
    `ledger.cli.main.main`, the function the installed command runs. Returns what
    `run_ledger` returns."""
    from click.testing import CliRunner

    from ledger.cli.main import main

    overrides: dict[str, str | None] = {**GIT_ENV, **dict.fromkeys(SCRUBBED)}
    overrides.update(env or {})
    runner = CliRunner()
    with runner.isolation(input=input, env=overrides) as (out, err, _), _in_folder(cwd):
        try:
            code = main(list(args))
        except SystemExit as exc:  # a command that exits by itself, as the process would
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        stdout, stderr = out.getvalue(), err.getvalue()
    return subprocess.CompletedProcess(
        ["ledger", *args],
        code,
        stdout.decode("utf-8").replace("\r\n", "\n"),
        stderr.decode("utf-8", "backslashreplace").replace("\r\n", "\n"),
    )


def copy_repo(source: Path, target: Path) -> Path:
    """A copy of the repository (or folder of repositories) `source` at `target`: its own
    real git repository, made in milliseconds."""
    shutil.copytree(source, target, symlinks=True)
    return target


@pytest.fixture(scope="session")
def repo_template(tmp_path_factory) -> Path:
    """Made once per session: a git repository with one commit and an initialised ledger.
    Tests never touch it; they get copies (`repo`)."""
    root = tmp_path_factory.mktemp("template") / "campaign"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    result = run_ledger(root, "init")
    assert result.returncode == 0, result.stderr
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init ledger")
    return root


@pytest.fixture
def repo(tmp_path: Path, repo_template: Path) -> Path:
    """A git repository with one commit and an initialised ledger (a copy of the session's)."""
    return copy_repo(repo_template, tmp_path / "campaign")


def with_remote(repo: Path, tmp_path: Path) -> Path:
    """Give `repo` a bare remote `origin` and install ledger's pre-push hook, so a `git push`
    goes through the real hook. Returns the remote's path."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    result = run_ledger(repo, "hook", "install")
    assert result.returncode == 0, result.stderr
    return remote


@pytest.fixture(scope="session")
def pushed_template(tmp_path_factory, repo_template: Path) -> Path:
    """Made once per session: the folder holding `campaign` (the repository, its remote
    `origin` and the installed hook, main pushed through the hook) and `remote.git`."""
    folder = tmp_path_factory.mktemp("pushed")
    repo = copy_repo(repo_template, folder / "campaign")
    with_remote(repo, folder)
    git(repo, "push", "-q", "origin", "main")
    git(repo, "fetch", "-q", "origin")
    return folder


@pytest.fixture
def pushed(tmp_path: Path, pushed_template: Path) -> Path:
    """The campaign repository with a bare remote `origin` (tmp_path / "remote.git"), the hook
    installed, main pushed: a copy of the session's, its remote pointed at its own copy."""
    for name in ("campaign", "remote.git"):
        copy_repo(pushed_template / name, tmp_path / name)
    repo = tmp_path / "campaign"
    git(repo, "remote", "set-url", "origin", str(tmp_path / "remote.git"))
    return repo


@pytest.fixture
def book(repo: Path):
    from ledger.store import Ledger

    return Ledger.open(repo)


def shared_folder(tmp_path_factory) -> Path:
    """A folder every pytest-xdist worker of this run sees (the run's base temporary folder)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_build(tmp_path_factory, name: str, make) -> Path:
    """`make(folder)` once per run, whichever worker asks first; the others wait for it and
    get the same folder. What `make` returns (JSON-able) is kept in `folder/build.json` and a
    failure is kept too, so every test that needs the build fails with the same message."""
    folder = shared_folder(tmp_path_factory) / f"shared-{name}"
    done = folder / "build.json"
    with open(shared_folder(tmp_path_factory) / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            folder.mkdir(exist_ok=True)
            try:
                kept = {"ok": True, "value": make(folder)}
            except BaseException as exc:  # kept for the tests that run later; this one fails now
                done.write_text(json.dumps({"ok": False, "value": f"{type(exc).__name__}: {exc}"}))
                raise
            done.write_text(json.dumps(kept))
    kept = json.loads(done.read_text())
    if not kept["ok"]:
        pytest.fail(f"the shared build {name!r} failed: {kept['value']}")
    return folder


def _demo(tmp_path_factory, campaign: str) -> tuple[Path, dict, str]:
    def make(folder: Path) -> dict:
        # The real command, as a user runs it: writes the campaign, checks it, builds its site.
        result = run_ledger(folder, "demo", "--campaign", campaign, "campaign", "--format", "json")
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        return {"summary": json.loads(result.stdout), "stderr": result.stderr}

    folder = shared_build(tmp_path_factory, f"demo-{campaign}", make)
    kept = json.loads((folder / "build.json").read_text())["value"]
    return folder / "campaign", kept["summary"], kept["stderr"]


@pytest.fixture(scope="session")
def demo_ltx2(tmp_path_factory) -> tuple[Path, dict, str]:
    """`ledger demo` (the LTX-2 campaign, with its site) made once per run: its folder, the
    JSON summary it printed and its stderr. Read only; copy it to change it."""
    return _demo(tmp_path_factory, "ltx2")


@pytest.fixture(scope="session")
def demo_decode(tmp_path_factory) -> tuple[Path, dict, str]:
    """`ledger demo --campaign decode` made once per run, as `demo_ltx2`."""
    return _demo(tmp_path_factory, "decode")
