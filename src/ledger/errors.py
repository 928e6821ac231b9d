"""Errors the library raises. The CLI turns them into messages and exit codes; the library never prints."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where it is, what is wrong, and what to do."""

    file: str
    where: str  # "line 12", "field samples[3]", "line 4, field contract"
    message: str
    fix: str = ""

    def __str__(self) -> str:
        where = f":{self.where}" if self.where else ""
        fix = f" ({self.fix})" if self.fix else ""
        return f"{self.file}{where}: {self.message}{fix}"

    def as_dict(self) -> dict[str, str]:
        return {"file": self.file, "where": self.where, "message": self.message, "fix": self.fix}


class LedgerError(Exception):
    """Base of ledger's errors. Every one maps to exit code 2: bad input or usage."""

    exit_code = 2

    def __init__(self, message: str, problems: list[Problem] | None = None):
        super().__init__(message)
        self.problems = list(problems or [])

    def lines(self) -> list[str]:
        return [str(p) for p in self.problems] or [str(self)]


class InputError(LedgerError):
    """Input that does not parse or does not validate. Nothing was written."""


class NotFound(LedgerError):
    """A record id, file or ledger that does not exist."""


class ConfigError(LedgerError):
    """The ledger's config file is missing or invalid."""


class WriteError(LedgerError):
    """The records folder could not be written (full disk, read-only); nothing was left behind."""


class MissingExtra(LedgerError):
    """A command needs an optional part of ledger that is not installed (exit 2)."""

    def __init__(self, command: str, extra: str, package: str):
        super().__init__(
            f"{command} needs the {extra} extra ({package} is not installed): pip install 'ledger[{extra}]'",
            [
                Problem(
                    command,
                    "",
                    f"is part of the {extra} extra, which is not installed: no module {package}",
                    f"pip install 'ledger[{extra}]'",
                )
            ],
        )
        self.extra = extra
        self.package = package
