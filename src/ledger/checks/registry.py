"""Rules as data: each rule has an id, a severity, default parameters, documentation and a
fix message. `ledger.yaml`'s `rules:` mapping overrides severities and parameters by id:

    rules:
      cell-width: {max_chars: 200}
      sha-abbreviated: {severity: error}
      figures-spread: {severity: off}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..analysis.guidance import Guidance, build_guidance
from ..errors import ConfigError, Problem
from ..schema.envelope import Envelope
from ..store.ledger import Ledger
from ..store.sources import source_view
from . import artifacts, comparability, derived, guidance, history, keyedrows, pages, provenance, records
from .rule import SEVERITIES, Rule

#: The rule families, one module each; each exports its rules as `RULES`.
FAMILIES = (artifacts, records, comparability, derived, history, pages, keyedrows, provenance, guidance)

#: Every rule by id, in family order.
RULES: dict[str, Rule] = {rule.id: rule for family in FAMILIES for rule in family.RULES}


class UnknownRule(LookupError):
    """A rule id no family declares: a programming error (a typo, a rule not registered),
    never a rule the user turned off."""


def rule(rule_id: str) -> Rule:
    """The declared rule of this id; UnknownRule when no family declares it."""
    try:
        return RULES[rule_id]
    except KeyError:
        raise UnknownRule(f"no rule {rule_id!r} is declared (ledger.checks.registry.FAMILIES)") from None


def all_rules() -> dict[str, Rule]:
    """Every rule by id."""
    return RULES


@dataclass(frozen=True)
class Active:
    """A rule as configured: its effective severity and parameters."""

    rule: Rule
    severity: str
    params: dict[str, Any]

    @property
    def id(self) -> str:
        return self.rule.id


def configure(config_rules: dict[str, dict[str, Any]] | None, config_file: str = "ledger.yaml") -> dict[str, Active]:
    """Merge the config's `rules:` over the defaults. Unknown ids or parameters are errors (exit 2)."""
    rules = all_rules()
    problems: list[Problem] = []
    active: dict[str, Active] = {}
    given = dict(config_rules or {})
    for rule_id in given:
        if rule_id not in rules:
            problems.append(
                Problem(config_file, f"rules.{rule_id}", f"no rule {rule_id!r}", "`ledger rules` lists the rule ids")
            )
    for rule_id, rule in rules.items():
        override = given.get(rule_id) or {}
        if not isinstance(override, dict):
            problems.append(
                Problem(
                    config_file,
                    f"rules.{rule_id}",
                    "must be a mapping of severity and parameters",
                    f"e.g. `{rule_id}: {{severity: warning}}`",
                )
            )
            continue
        severity = str(override.get("severity", rule.severity))
        if severity not in SEVERITIES:
            problems.append(
                Problem(
                    config_file,
                    f"rules.{rule_id}.severity",
                    f"severity {severity!r} is not one of {', '.join(SEVERITIES)}",
                    "use error, warning or off",
                )
            )
        params = dict(rule.params)
        for key, value in override.items():
            if key == "severity":
                continue
            if key not in rule.params:
                problems.append(
                    Problem(
                        config_file,
                        f"rules.{rule_id}.{key}",
                        f"rule {rule_id} has no parameter {key!r}",
                        f"its parameters: {', '.join(rule.params) or 'none'}",
                    )
                )
                continue
            default = rule.params[key]
            if (
                default is not None
                and not isinstance(value, type(default))
                and not (isinstance(default, float) and isinstance(value, int))
            ):
                problems.append(
                    Problem(
                        config_file,
                        f"rules.{rule_id}.{key}",
                        f"must be {type(default).__name__}, not {type(value).__name__}",
                        f"default: {default!r}",
                    )
                )
                continue
            if (
                isinstance(value, (int, float))
                and not isinstance(value, bool)
                and isinstance(default, (int, float))
                and not isinstance(default, bool)
                and default >= 0
                and not (value >= 0)  # NaN too
            ):
                # Every numeric parameter is a count, a width, a limit or a fraction: a
                # negative one (`max_paragraphs: -5`) was an internal error.
                problems.append(
                    Problem(
                        config_file,
                        f"rules.{rule_id}.{key}",
                        f"must be zero or more, not {value!r}",
                        f"default: {default!r}",
                    )
                )
                continue
            check = rule.param_checks.get(key)
            found = check(value) if check is not None else []
            if found:
                problems.extend(
                    Problem(
                        config_file, f"rules.{rule_id}.{key}{where}", message, f"{key}: {rule.param_docs.get(key, '')}"
                    )
                    for where, message in found
                )
                continue
            params[key] = value
        active[rule_id] = Active(rule, severity, params)
    if problems:
        raise ConfigError("the rules in the config are invalid", problems)
    return active


def eligibility_thresholds(config_rules: dict | None, config_file: str = "ledger.yaml") -> dict[str, Any]:
    """The baseline-eligibility thresholds as configured (`rules: baseline-eligibility:`), which
    the stopping point, `ledger status` and the site judge allocations by."""
    return dict(configure(config_rules, config_file)["baseline-eligibility"].params)


def ledger_guidance(ledger: Ledger, records: list[Envelope], active: dict[str, Active] | None = None) -> Guidance:
    """The guidance over `records` (re-gates owed, eligibility, pending decisions) as the
    ledger's ledger.yaml configures it (`active`, its rules as `configure` made them, when the
    caller has them), against its measured source: what `ledger status`, the site and
    `ledger demo` judge by."""
    thresholds = (
        dict(active["baseline-eligibility"].params)
        if active is not None
        else eligibility_thresholds(ledger.config.rules)
    )
    return build_guidance(records, source_view(ledger), thresholds)
