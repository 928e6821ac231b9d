"""The checker's page rules, run on what the site renders.

`ledger.checks.pages.check_page` is the code `ledger check` runs on spec pages: cell
width, prose budget, figures within their spread. Running it on the generated pages means
the site and the checker agree on what a cell is, how wide it renders, and how many
figures a measurement's spread supports. Severities and limits come from `rules:` in
ledger.yaml, as for `ledger check`.
"""

from __future__ import annotations

from ..checks.pages import Evidence, check_page
from ..checks.registry import Active, configure
from ..errors import Problem
from .context import Page, SiteData

#: The page rules that apply to generated pages (the owed high-water mark is about the
#: user's own spec pages, which `ledger check` already guards).
SITE_RULES = ("cell-width", "prose-budget", "figures-spread")


def spreads(data: SiteData) -> dict[str, float]:
    """Spread (percent) of every measurement that has one: all the figures rule needs."""
    out = {}
    for m in data.by_kind.get("measurement", []):
        spread = data.spread_percent(m.id)
        if spread is not None:
            out[m.id] = spread
    return out


def check(pages: list[Page], rules: dict | None, data: SiteData, prefix: str = "") -> list[Problem]:
    """Problems (file, line, rule) in the rendered pages, by the config's `rules:`. An empty
    list means they pass."""
    return check_texts([(p.path, p.text) for p in pages], configure(rules), spreads(data), prefix)


def check_texts(
    pages: list[tuple[str, str]], configured: dict[str, Active], spread: dict[str, float], prefix: str = ""
) -> list[Problem]:
    """`check` on plain data (the rules as `configure` made them), so it can run in a worker
    process beside MkDocs."""

    active = {k: v for k, v in configured.items() if k in SITE_RULES and v.severity != "off"}
    if not active:
        return []
    problems: list[Problem] = []

    def emit(
        rule_id: str,
        file: str,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        where = f"line {line}" if line else ""
        problems.append(Problem(prefix + file, where, f"[{rule_id}] {message}", fix or active[rule_id].rule.fix))

    def evidence_of(record_id: str) -> Evidence | None:
        value = spread.get(record_id)
        return Evidence(value, None) if value is not None else None

    for path, text in pages:
        # A generated page names many records: a figure is judged by the records its own
        # block names, never by every id on the page. The raw HTML of a generated page is
        # ledger's own (user text is escaped), so it is read as MkDocs renders it.
        check_page(path, text, active, emit, evidence_of, whole_page=False, html=True)
    return problems
