"""Issue 22, item 8: bounds on what a repository's ledger.yaml can make ledger do: a 3 KB
alias bomb ended in `internal error: MemoryError`, and `max_paragraphs: -5` was an internal
error. Both are now config errors (exit 2) naming the file and line or field, through the
real command."""

from __future__ import annotations

from pathlib import Path

from conftest import cli

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
