"""Issue 22, item 8: bounds on what a repository's ledger.yaml can make ledger do: a 3 KB
alias bomb ended in `internal error: MemoryError`, and `max_paragraphs: -5` was an internal
error. Both are now config errors (exit 2) naming the file and line or field, through the
real command."""

from __future__ import annotations

from pathlib import Path

from checks.check_helpers import commit
from conftest import cli, git, run_ledger

BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(9)
)


def test_an_alias_in_ledger_yaml_is_a_config_error(repo: Path) -> None:
    (repo / "ledger.yaml").write_text("version: 1\nx-shared: &a 300\nrules:\n  cell-width:\n    max_chars: *a\n")
    for args in (("check", "--all"), ("status",), ("list",)):
        result = cli(repo, *args)
        assert result.returncode == 2, (args, result.stderr)
        assert "ledger.yaml" in result.stderr and "alias" in result.stderr and "internal error" not in result.stderr


def test_the_real_bomb_is_refused_fast(repo: Path) -> None:
    (repo / "ledger.yaml").write_text("version: 1\n" + BOMB)
    result = cli(repo, "check", "--all")
    assert result.returncode == 2 and "alias" in result.stderr and "MemoryError" not in result.stderr, result.stderr


def test_a_negative_rule_parameter_is_a_config_error(repo: Path) -> None:
    (repo / "ledger.yaml").write_text("version: 1\nrules:\n  prose-budget:\n    max_paragraphs: -5\n")
    result = cli(repo, "check", "--all")
    assert result.returncode == 2, result.stderr
    assert "rules.prose-budget.max_paragraphs" in result.stderr and "internal error" not in result.stderr


def test_an_alias_bomb_in_mkdocs_yml_is_refused_before_mkdocs_loads_it(pushed: Path, tmp_path: Path) -> None:
    """MkDocs loads mkdocs.yml with PyYAML, unbounded: the same 3 KB bomb pushed in mkdocs.yml
    took 50 s and 2.2 GB to end in `internal error` (MemoryError under a 3 GB limit) in every
    clone's `ledger site build`. Refused before anything is built, naming the file and line."""
    text = (pushed / "mkdocs.yml").read_text()
    (pushed / "mkdocs.yml").write_text(
        text.replace("extra:\n", "extra:\n  lol: *j\n")
        + "x-vars:\n"
        + "".join(f"  {line}\n" for line in BOMB.splitlines())
    )
    commit(pushed, "a bigger mkdocs.yml")
    assert git(pushed, "push", "-q", "origin", "HEAD:main", check=False).returncode == 0
    git(tmp_path, "clone", "-q", str(tmp_path / "remote.git"), "ci")
    result = run_ledger(tmp_path / "ci", "site", "build")
    assert result.returncode == 2, result.stderr
    assert "mkdocs.yml:line" in result.stderr and "aliases" in result.stderr
    assert "internal error" not in result.stderr and not (tmp_path / "ci" / "site").exists()


def test_an_invalid_mkdocs_value_names_its_field(repo: Path) -> None:
    """MkDocs logs `Config value 'repo_url': ...` and raises a bare `Aborted with a configuration
    error!`; the build said only the latter."""
    text = (repo / "mkdocs.yml").read_text()
    (repo / "mkdocs.yml").write_text("repo_url: not-a-url\n" + text)
    result = cli(repo, "site", "build")
    assert result.returncode == 2, result.stderr
    assert "mkdocs.yml" in result.stderr and "Config value 'repo_url'" in result.stderr
