"""The house style, checked by the test command: ruff (lint and format) and mypy, configured in
pyproject.toml, clean on the tree. A complexity warning is fixed by splitting the function where
a reader loses the thread, or carries a `# noqa` where one pass reads best top to bottom."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import ROOT

PATHS = ["src", "tests", "benchmarks"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_lint_is_clean() -> None:
    result = run("ruff", "check", "--no-cache", *PATHS)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_applied() -> None:
    result = run("ruff", "format", "--check", "--no-cache", *PATHS)
    assert result.returncode == 0, result.stdout + result.stderr


# A fresh clone has no .mypy_cache: 20-60 s of the quick subset; run before a push.
@pytest.mark.slow
def test_mypy_is_clean_on_src() -> None:
    result = run("mypy")  # files, plugins and overrides from [tool.mypy]
    assert result.returncode == 0, result.stdout + result.stderr
