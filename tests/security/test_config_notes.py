"""Issue 22, principle 8: a `ledger-config` note accepts only the loosenings it names (the
setting and its new value), and some settings no push can loosen at all: append-only,
symlinks, secrets, the site's paths and `site.publish_hosts`.

Before the fix one note about `cell-width` also let `append-only` be switched off, and
`site.publish_hosts: true` or `site.mkdocs_yml: ../x.yml` needed no note. Each push goes
through the real hook to a bare remote; one is also pushed with `--no-verify` and judged by
a fresh clone's `check --base` (CI).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from checks.check_helpers import add, commit, push, set_rule
from conftest import git, run_ledger

NOTE = {"body": "cell-width 300: the decode spec's tables name full kernels", "tags": ["ledger-config"]}


def refused(repo: Path, *needles: str) -> str:
    before = git(repo, "ls-remote", "origin").stdout
    result = push(repo)
    assert result.returncode != 0, result.stderr
    assert "error[config-change]" in result.stderr, result.stderr
    for needle in needles:
        assert needle in result.stderr, result.stderr
    assert git(repo, "ls-remote", "origin").stdout == before
    return result.stderr


def set_site(repo: Path, key: str, value: str) -> None:
    path = repo / "ledger.yaml"
    lines = path.read_text().splitlines()
    out = []
    for line in lines:
        if line.startswith(f"  {key}:"):
            continue
        out.append(line)
        if line.startswith("site:"):
            out.append(f"  {key}: {value}")
    path.write_text("\n".join(out) + "\n")


def test_a_note_about_one_setting_does_not_accept_another(pushed: Path, tmp_path: Path) -> None:
    set_rule(pushed, "cell-width", max_chars=300)
    set_rule(pushed, "prose-budget", severity="warning")
    add(pushed, "note", NOTE)
    commit(pushed, "wider cells, and quietly a softer prose budget")
    stderr = refused(pushed, "rules.prose-budget.severity", "does not name it")
    assert "rules.cell-width" not in stderr  # that one the note names

    # Pushed anyway: CI on a fresh clone refuses the same range.
    assert push(pushed, "--no-verify", "HEAD:main").returncode == 0
    git(tmp_path, "clone", "-q", str(pushed.parent / "remote.git"), "ci")
    result = run_ledger(tmp_path / "ci", "check", "--base", "HEAD~1")
    assert result.returncode == 1 and "rules.prose-budget.severity" in result.stdout, result.stdout


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda r: set_rule(r, "append-only", severity="off"), "rules.append-only.severity"),
        (lambda r: set_rule(r, "symlinks", severity="warning"), "rules.symlinks.severity"),
        (lambda r: set_rule(r, "secrets", severity="off"), "rules.secrets.severity"),
        (lambda r: set_site(r, "publish_hosts", "true"), "site.publish_hosts"),
        (lambda r: set_site(r, "mkdocs_yml", "docs/x.yml"), "site.mkdocs_yml"),
        (lambda r: set_site(r, "site_dir", "public"), "site.site_dir"),
    ],
)
def test_some_settings_no_push_can_loosen(pushed: Path, change, field: str) -> None:
    change(pushed)
    name = field.split(".")[1]
    add(pushed, "note", {"body": f"{field} {name}: off, true, warning, docs/x.yml, public", "tags": ["ledger-config"]})
    commit(pushed, f"loosen {field}, with a note naming it")
    refused(pushed, field, "no push can loosen")


def test_a_note_naming_the_setting_and_value_still_accepts_it(pushed: Path) -> None:
    set_rule(pushed, "cell-width", max_chars=300)
    add(pushed, "note", NOTE)
    commit(pushed, "wider cells, and why")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
