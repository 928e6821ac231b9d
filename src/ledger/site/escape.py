"""Escaping of user text for Markdown pages that MkDocs (Python-Markdown) renders.

Everything a user typed goes through one of these functions before it reaches a page, so
`<script>`, `[x](javascript:...)` or `{: onclick=...}` typed into a record is shown as
typed and never becomes live. Python-Markdown has no safe mode any more, so the escaping
happens here: HTML-significant characters become entities and Markdown punctuation is
backslash-escaped (only the characters Python-Markdown and markdown-it both unescape).
"""

from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import quote, urlsplit

from markupsafe import Markup

from ..pages.markdown import QUOTE_OPEN
from .publish import scrub_text

# Characters Python-Markdown backslash-unescapes (its ESCAPED_CHARS plus `|` from tables),
# minus those that only matter at the start of a line (handled separately below).
_ALWAYS = set("\\`*_{}[]()!|")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}
_LINE_START = re.compile(r"^(\s*)([#+\-]|\d+[.)])")
_SPACES = re.compile(r"[\t\r\n\f\v\u2028\u2029]+")


def _escape_chars(text: str) -> str:
    out = []
    for ch in text:
        if ch in _ENTITIES:
            out.append(_ENTITIES[ch])
        elif ch in _ALWAYS:
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def _escape_line_start(line: str) -> str:
    # `# x` (heading), `- x` or `+ x` (list), `1. x` (ordered list).
    stripped = line.lstrip()
    match = _LINE_START.match(stripped)
    if not match:
        return stripped
    lead = match.group(2)
    if lead[0].isdigit():
        return lead[:-1] + "\\" + lead[-1] + stripped[len(lead) :]
    return "\\" + stripped


def md_inline(value: Any) -> Markup:
    """User text as one line of inline Markdown: safe in a table cell, a heading or a list."""
    if value is None:
        return Markup("")
    if isinstance(value, Markup):
        return value
    text = _SPACES.sub(" ", scrub_text(str(value))).strip()
    return Markup(_escape_line_start(_escape_chars(text)))


def cell(value: Any) -> Markup:
    """A table cell: escaped, one line, clipped, and never empty (an empty cell reads as missing)."""
    if value is None or isinstance(value, Markup):
        return md_inline(value) if value is not None else Markup("–")
    text = md_inline(clip(value))
    return text if str(text) else Markup("–")


#: The mark around text a generated page quotes from a record (its title, its finding): the
#: figures rule reads what the page claims, and a quotation is the record's claim, judged when
#: it was added (pages.markdown skips it). Only generated pages are parsed with HTML on, so a
#: user's page cannot use the mark to hide a figure.


def quotation(text: Markup, quoted: bool = True) -> Markup:
    """`text` marked as a quotation from a record (where `quoted`)."""
    return Markup(f"{QUOTE_OPEN}{text}</span>") if quoted else text


def md_block(value: Any) -> Markup:
    """Multi-line user text as paragraphs of plain text (line breaks kept, nothing live)."""
    if value is None:
        return Markup("")
    if isinstance(value, Markup):
        return value
    lines = scrub_text(str(value)).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out = []
    for line in lines:
        line = _SPACES.sub(" ", line)
        # Leading spaces would start a code block; a trailing double space a hard break.
        out.append(_escape_line_start(_escape_chars(line.strip())))
    return Markup("\n".join(out).strip("\n"))


def md_code(value: Any) -> Markup:
    """User text as an inline code span. Python-Markdown escapes HTML inside code spans itself."""
    if value is None or value == "":
        return Markup("")
    text = _SPACES.sub(" ", scrub_text(str(value)))
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    # A pipe inside a code span in a table cell must still be escaped for the table parser.
    text = text.replace("|", "\\|")
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return Markup(f"{fence}{pad}{text}{pad}{fence}")


def md_fence(value: Any, lang: str = "text") -> Markup:
    """User text as a fenced code block (fence longer than any backtick run inside)."""
    text = "" if value is None else scrub_text(str(value))
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * max(3, longest + 1)
    return Markup(f"{fence}{lang}\n{text.rstrip()}\n{fence}")


SAFE_SCHEMES = ("http", "https")


def safe_url(url: str) -> str | None:
    """The URL if it is an http(s) URL, percent-encoded for a Markdown link; else None."""
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in SAFE_SCHEMES or not parts.netloc:
        return None
    # Characters that could end the link destination or open HTML are percent-encoded.
    return quote(url, safe=":/?#@!$&*+,;=%~-._")


def md_url(url: Any, label: str | None = None) -> Markup:
    """A user URL: a link when it is http(s), else plain escaped text (`label` shown if given)."""
    if url is None:
        return Markup("")
    href = safe_url(str(url))
    shown = label if label is not None else str(url)
    text = shown if len(shown) <= 100 else shown[:100] + " …"
    if href is None:
        return md_inline(text)
    return Markup(f"[{md_inline(text)}]({href})")


def figure(value: Any, spread: float | None = None, digits: int | None = None) -> str:
    """A number quoted with no more significant figures than its spread supports.

    With a spread (IQR, or max - min), the value is rounded at the spread's leading digit;
    without one, `digits` significant figures if given, else the figure as recorded
    (see `as_recorded`). Integers print as integers.
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, tuple) and len(value) == 2:
        # A range of readings (an environment's "1.4-1.8 GHz"), each end as recorded.
        return f"{figure(value[0])}-{figure(value[1])}"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(number):
        return str(number)
    if number == 0:
        return "0"
    if spread is not None and spread > 0:
        place = math.floor(math.log10(spread))
        decimals = max(0, -place)
        rounded = round(number, -place)
        return f"{rounded:.{decimals}f}"
    if digits is None:
        return as_recorded(number)
    return f"{number:.{digits}g}"


#: A number typed by a person carries at most this many significant figures; more means
#: it was computed (a recomputed MFU), and those are quoted to COMPUTED_DIGITS.
TYPED_DIGITS = 10
COMPUTED_DIGITS = 8


def as_recorded(number: float) -> str:
    """A figure whose spread is unknown, to the last digit it was recorded with.

    Nothing supports trimming it, so it is not trimmed: 0.707865914 s stays 0.707865914 s.
    A computed value (17 significant figures of float noise) is quoted to 8.
    """
    if float(number).is_integer() and abs(number) < 1e18:
        return f"{int(number):,}" if abs(number) >= 10_000 else str(int(number))
    shortest = repr(float(number))
    mantissa = shortest.split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    if len(mantissa) <= TYPED_DIGITS and "e" not in shortest:
        return shortest[:-2] if shortest.endswith(".0") else shortest
    return f"{number:.{COMPUTED_DIGITS}g}"


def percent(value: Any, digits: int = 3) -> str:
    if value is None:
        return ""
    return f"{float(value):.{digits}g}%"


#: Longest user text shown in a table cell; the full text is on the record's page. Kept
#: under the page rule's 220-character cell width, with room for what a template adds.
CELL_CLIP = 120


def clip(value: Any, limit: int = CELL_CLIP) -> str:
    """One line of at most `limit` characters, cut at a word and marked with an ellipsis."""
    text = " ".join(str(value).split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(",;:.") + " …"
