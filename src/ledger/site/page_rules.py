"""The checker's page rules, run on what the site renders.

`ledger.checks.pages.check_page` is the code `ledger check` runs on spec pages: cell
width, prose budget, figures within their spread. Running it on the generated pages means
the site and the checker agree on what a cell is, how wide it renders, and how many
figures a measurement's spread supports. Severities and limits come from `rules:` in
ledger.yaml, as for `ledger check`.
"""

from __future__ import annotations

import re

from ..checks.pages import Evidence, check_page
from ..checks.registry import Active, configure
from ..errors import Problem
from .build_cache import BuildCache, key
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
    return [p for found in check_each(pages, configured, spread, prefix) for p in found]


def _site_rules(configured: dict[str, Active]) -> dict[str, Active]:
    return {k: v for k, v in configured.items() if k in SITE_RULES and v.severity != "off"}


def settings_of(configured: dict[str, Active], prefix: str = "") -> str:
    """What the page rules' verdicts depend on besides a page's own text and evidence: the
    site rules' severities and parameters, and the prefix their file names carry."""
    active = _site_rules(configured)
    return repr(
        (prefix, sorted((k, v.severity, sorted((p, repr(x)) for p, x in v.params.items())) for k, v in active.items()))
    )


#: A record id anywhere in a page's Markdown: the figures rule reads the spread of the ids a
#: block names (in its text or its links), and both are substrings of the page's text.
_ID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")


def page_key(path: str, text: str, spread: dict[str, float]) -> str:
    """The digest of all one page's verdict reads: its path, its text, and the spread of
    every record id it names (a measurement's spread is fixed, but a correction may add one)."""
    ids = sorted(set(_ID.findall(text)))
    return key(path, text, repr([(i, spread[i]) for i in ids if i in spread]))


def remembered(
    cache: BuildCache, pages: list[tuple[str, str]], spread: dict[str, float]
) -> tuple[list[list[Problem] | None], list[str]]:
    """For each page, the problems the cache remembers (None where it does not), and each
    page's key (for `remember`)."""
    keys = [page_key(path, text, spread) for path, text in pages]
    found: list[list[Problem] | None] = []
    for digest in keys:
        entry = cache.get(digest)
        try:
            found.append([Problem(*p) for p in entry] if entry is not None else None)
        except TypeError:  # not the shape this version writes: verify the page again
            found.append(None)
    return found, keys


def remember(cache: BuildCache, digest: str, problems: list[Problem]) -> None:
    cache.put(digest, tuple((p.file, p.where, p.message, p.fix) for p in problems))


def check_each(
    pages: list[tuple[str, str]], configured: dict[str, Active], spread: dict[str, float], prefix: str = ""
) -> list[list[Problem]]:
    """The problems of each page, in the order of `pages`."""

    active = _site_rules(configured)
    if not active:
        return [[] for _ in pages]
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

    out: list[list[Problem]] = []
    for path, text in pages:
        # A generated page names many records: a figure is judged by the records its own
        # block names, never by every id on the page. The raw HTML of a generated page is
        # ledger's own (user text is escaped), so it is read as MkDocs renders it.
        check_page(path, text, active, emit, evidence_of, whole_page=False, html=True)
        out.append(problems)
        problems = []
    return out
