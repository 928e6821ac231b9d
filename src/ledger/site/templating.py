"""The Jinja2 environment that renders the site's Markdown pages.

Escaping is on by default: every `{{ value }}` goes through `md_inline` unless the value
is already `Markup` (made by a filter below, which escapes what it takes). A template
that must emit raw Markdown marks it with `|safe`; the packaged templates only do so for
strings they built themselves. Users override a template by putting a file of the same
name in the folder named by `site.templates` in ledger.yaml.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from jinja2 import BaseLoader, ChoiceLoader, Environment, FileSystemLoader, PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from markupsafe import Markup

from ..analysis.dates import approximate_note, time_of_day, when_text
from ..analysis.figures import format_figure
from .escape import cell, clip, figure, md_block, md_code, md_fence, md_inline, md_url, percent, quotation
from .publish import scrub_text
from .tables import verdict_cell


def _finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Markup):
        return value
    return md_inline(value)


_cell = cell


def _when(value: Any) -> str:
    if value is None:
        return ""
    return value.strftime("%Y-%m-%d %H:%M UTC")


def _observed(record: Any, note: bool = True) -> Markup:
    """When a record's evidence was taken, at the precision it is known (analysis.dates);
    `note` adds "(known to the day)" (a table's date column leaves it to the date's form)."""
    # The date and the time each stay whole (a narrow column broke "2026-08-16" into four lines).
    parts = [f'<span class="ledger-fig">{html.escape(p)}</span>' for p in when_text(record).split(" ", 1)]
    return Markup(" ".join(parts) + html.escape(approximate_note(record) if note else ""))


def _time_of_day(record: Any) -> str:
    return time_of_day(record) or "–"


def _page_title(value: Any) -> Markup:
    """A YAML scalar for a page's `title:` front matter, HTML-escaped.

    MkDocs takes a page's title from its first heading with entities decoded, and themes
    write it into `<title>` and the nav unescaped: user text in a heading would become
    live HTML there. A `title:` in the front matter is used as written, so ledger gives
    every page whose heading holds user text an escaped title of its own.
    """

    return Markup(json.dumps(html.escape(" ".join(scrub_text(str(value)).split()), quote=True)))


def _figure(value: Any, spread: Any = None) -> str:
    if value is None:
        return ""
    if spread is not None and isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return format_figure(float(value), float(spread))
        except (ImportError, ValueError):
            pass
    return figure(value)


_PLURALS = {"hypothesis": "hypotheses", "flop-audit": "flop audits", "memory-profile": "memory profiles"}


def plural(word: Any, count: int) -> str:
    """`1 decision`, `11 decisions`, `2 hypotheses`: a count with its noun agreeing."""
    word = str(word)
    if count == 1:
        return f"1 {word.replace('-', ' ')}"
    if word in _PLURALS:
        many = _PLURALS[word]
    elif word.endswith("y") and word[-2:-1] not in "aeiou":
        many = word[:-1] + "ies"
    elif word.endswith(("s", "x", "ch", "sh")):
        many = word + "es"  # sandwiches
    else:
        many = word + "s"
    return f"{count} {many.replace('-', ' ')}"


def _verdict(word: Any, qualifier: Any = None) -> Markup:

    return verdict_cell(str(word), qualifier)


def _quoted_cell(value: Any) -> Markup:
    """A record's own words in a table cell (a decision's mechanism, where to continue), marked
    as a quotation: the page shows what the record says; the figures rule judged it at add."""
    shown = cell(value)
    return shown if str(shown) == "–" else quotation(shown)


def environment(user_templates: Path | None = None):
    """The environment: the user's folder first (if any), then the packaged templates."""

    loaders: list[BaseLoader] = []
    if user_templates is not None:
        loaders.append(FileSystemLoader(str(user_templates)))
    loaders.append(PackageLoader("ledger", "templates/site"))
    # The repository's templates are the repository's code: they render in Jinja's sandbox,
    # which refuses attributes such as `__class__` and `__globals__` (no way to Python objects).
    factory = SandboxedEnvironment if user_templates is not None else Environment
    env = factory(
        loader=ChoiceLoader(loaders),
        # Markdown, not HTML: autoescape is replaced by `finalize`, which escapes for Markdown
        # (HTML entities plus Markdown punctuation). Raw HTML templates, if a user adds
        # them, are `.html` and get Jinja's HTML autoescape.
        autoescape=lambda name: name is not None and name.endswith((".html", ".htm", ".xml")),
        finalize=_finalize,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        md=md_inline,
        cell=_cell,
        clip=clip,
        block=md_block,
        code=md_code,
        fence=md_fence,
        url=md_url,
        figure=_figure,
        page_title=_page_title,
        percent=percent,
        quoted=quotation,
        quoted_cell=_quoted_cell,
        plural=plural,
        verdict=_verdict,
        when=_when,
        observed=_observed,
        time_of_day=_time_of_day,
    )
    return env
