"""A rule as data: id, family, default severity, documentation, fix and parameters.

Each rule family module exports its rules as `RULES`; `ledger.checks.registry.FAMILIES`
lists the families, and its `RULES` is the one declaration of every rule id.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .result import ERROR, WARNING

SEVERITIES = (ERROR, WARNING, "off")


@dataclass(frozen=True)
class Rule:
    id: str
    family: str  # module of ledger.checks that implements it
    severity: str
    doc: str  # what it checks and why (from the users' records)
    fix: str  # what to do when it fires
    params: dict[str, Any] = field(default_factory=dict)
    #: Documentation of each parameter.
    param_docs: dict[str, str] = field(default_factory=dict)
    #: Which way each parameter loosens the rule ("higher", "lower", or "grow" for a list of
    #: what is let through); numeric parameters not named here loosen upwards (they are
    #: limits), list parameters by dropping an entry,
    #: others by any change. A push may tighten a rule at once; loosening it is
    #: `config-change` (see checks.policy).
    param_looser: dict[str, str] = field(default_factory=dict)
    #: Checks of structured parameters beyond their type: name -> a function giving (where
    #: inside the value, what is wrong) for each problem, [] when the value is valid.
    param_checks: dict[str, Callable[[Any], list[tuple[str, str]]]] = field(default_factory=dict)
