"""What one check found, and the rules it judges by: every rule reports through `emit`."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from .records import FileRules
from .registry import RULES, Active, rule
from .result import CheckResult, Violation

#: The rules `inspect_file` decides from one record file's bytes.
FILE_RULES = (
    "schema-valid",
    "content-hash",
    "unique-id",
    "record-size",
    "binary-content",
    "secrets",
    "conflict-markers",
    "sandwich-verdict",
    "local-path",
    "canonical-bytes",
    "parse-limits",
    "supersedes-chain",
    "record-time",
    "unit-known",
    "derived-figures",
)


class Findings:
    """The rules that are on (severity not off), the config whose folders they name, and the
    violations found so far (`result`)."""

    def __init__(self, mode: str, config: Any, active: dict[str, Active]):
        self.result = CheckResult(mode=mode)
        self.use(config, active)

    def use(self, config: Any, active: dict[str, Active]) -> None:
        """Judge with `config`'s paths and these rules (a range is judged by its base's)."""
        self.config = config
        self.active = {k: a for k, a in active.items() if a.severity != "off"}
        self.result.rules = sorted(set(self.result.rules) | set(self.active))
        self.records_rel = PurePosixPath(config.records).as_posix().strip("/")
        self.specs_rel = PurePosixPath(config.specs).as_posix().strip("/")

    def on(self, rule_id: str) -> bool:
        """Whether the rule runs; an undeclared id raises UnknownRule."""
        if rule_id in self.active:
            return True
        rule(rule_id)
        return False

    def params(self, rule_id: str) -> dict[str, Any]:
        return self.active[rule_id].params

    def emit(
        self,
        rule_id: str,
        file: str,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
        fix: str | None = None,
        severity: str | None = None,
    ) -> None:
        """Report a violation at the rule's severity, or at `severity` when that is stricter
        (a page that asks for an error)."""
        active = self.active.get(rule_id)
        if active is None:
            rule(rule_id)  # an undeclared id raises UnknownRule; a rule turned off is dropped
            return
        level = severity if severity == "error" else active.severity
        self.result.violations.append(
            Violation(file, line, field, rule_id, level, message, fix if fix is not None else RULES[rule_id].fix)
        )

    def extend(self, violations: list[Violation]) -> None:
        """Violations a per-file rule found (already carrying their severity)."""
        self.result.violations.extend(violations)

    def file_rules(self) -> FileRules:
        on = {r: self.active[r].severity for r in FILE_RULES if r in self.active}
        return FileRules(
            on,
            {r: self.active[r].params for r in on},
            {r: self.active[r].rule.fix for r in on},
            prefix=self.records_rel + "/",
        )
