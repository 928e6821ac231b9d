"""What a check found: violations with rule id, severity, place, message and fix."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True, order=True)
class Violation:
    file: str  # path relative to the ledger root (or the git work tree for pushed files)
    line: int | None
    field: str | None
    rule: str
    severity: str
    message: str
    fix: str = ""

    @property
    def where(self) -> str:
        parts = []
        if self.line:
            parts.append(f"line {self.line}")
        if self.field:
            parts.append(f"field {self.field}")
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CheckResult:
    mode: str
    violations: list[Violation] = field(default_factory=list)
    records_checked: int = 0
    #: Record files answered from the verification cache (checks/cache.py) instead of parsed.
    cached: int = 0
    pages_checked: int = 0
    #: Rule ids that ran (severity not off).
    rules: list[str] = field(default_factory=list)
    #: What was compared, for range modes: (base sha, head sha) per pushed ref.
    ranges: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def errors(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == ERROR]

    @property
    def warnings(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == WARNING]

    @property
    def exit_code(self) -> int:
        """0 clean (warnings allowed), 1 when any error-severity rule found something."""
        return 1 if self.errors else 0

    def sorted(self) -> list[Violation]:
        return sorted(set(self.violations), key=lambda v: (v.file, v.line or 0, v.field or "", v.rule, v.message))

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "exit_code": self.exit_code,
            "errors": len(self.errors),
            "warnings": len(self.warnings),
            "records_checked": self.records_checked,
            "records_from_cache": self.cached,
            "pages_checked": self.pages_checked,
            "rules": self.rules,
            "ranges": [{"base": b, "head": h} for b, h in self.ranges],
            "violations": [v.as_dict() for v in self.sorted()],
        }
