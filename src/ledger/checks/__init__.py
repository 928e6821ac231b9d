"""`ledger check`: the rules that guard the ledger, declared as data (id, severity, default
parameters, documentation, fix), a checker for the whole ledger or for what a push or a
range of commits adds, and reporters (text, json, GitHub workflow annotations).

    from ledger.checks import run_check
    result = run_check(ledger, mode="all")              # or "base" with base=REF,
    result.exit_code                                     # or "pre-push" with pre_push_input=stdin
    result.violations, result.errors, result.warnings

Rule families, one module each, in `registry.FAMILIES` order: artifacts (size, binary,
secrets, conflict markers, attachments), records (schema, hash, ids, keys, SHAs,
references), comparability (sandwich arms, MFU audit), derived (units, derived figures),
history (append-only, config changes, ignored records), pages (cell width, prose budget,
owed high-water mark, figures within their spread), keyedrows (keyed tables only grow),
provenance (local paths) and guidance (re-gates, rejected families, eligibility). `runner`
says which module does which job of a check.
"""

from .registry import RULES, Active, Rule, all_rules, configure
from .result import ERROR, WARNING, CheckResult, Violation
from .runner import run_check

__all__ = [
    "RULES",
    "Active",
    "Rule",
    "all_rules",
    "configure",
    "ERROR",
    "WARNING",
    "CheckResult",
    "Violation",
    "run_check",
]
