"""Walk markdown-it-py's token stream for the things the checker and the site measure."""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass, field, replace
from functools import lru_cache

from .frontmatter import split


@dataclass(frozen=True)
class Cell:
    line: int  # 1-based line of the row in the full text
    row: int  # 0 is the header row
    column: int
    header: str  # rendered text of this column's header cell
    text: str  # rendered text: what a reader sees (no markup, no link targets)
    width: int  # rendered width (see rendered_width)
    table: int = 0  # which table of the page, counting from 0


@dataclass(frozen=True)
class Paragraph:
    line: int
    text: str


@dataclass(frozen=True)
class Section:
    line: int
    level: int  # 2 for `##`
    title: str  # rendered heading text, e.g. "7. Owed"
    end_line: int = 0  # last line of the section (0: end of page)


@dataclass(frozen=True)
class OwedItem:
    line: int
    text: str
    owner: str | None  # from an owner column, `owner: NAME`, `owned by NAME` or `@handle`
    issues: tuple[int, ...]  # issue numbers the item names (`#1044`)
    section: str = ""


@dataclass(frozen=True)
class Figure:
    line: int
    text: str  # as quoted, e.g. "9.14x"
    value: float
    unit: str
    digits: int  # significant digits as written
    approximate: bool  # written with `~` or `≈`: claims no precision
    spread_percent: float | None  # spread stated in the same paragraph or table row
    ids: tuple[str, ...] = field(default_factory=tuple)  # record ids named in the same block
    #: An observed extreme (a cell under Min or Max beside the other end): the width of its
    #: row's range, at whose leading place the ends are quoted so they stay apart.
    resolution: float | None = None
    #: Quoted beside its row's spread under a column the page declares (front matter
    #: `figures: {spread_column: Spread}`): the reader sees the spread, so the digits stand.
    beside_spread: bool = False
    in_table: bool = False
    #: The clause the figure stands in, and for a table figure its row as (header, cell text):
    #: where the swept value a page's sweep evidence is found by (checks.sweepevidence).
    clause: str = ""
    row: tuple[tuple[str, str], ...] = ()
    #: With `resolution`: the median between the row's ends, not an end itself.
    centre: bool = False


# -- parsing -----------------------------------------------------------------------------


# One parse, one truth: the page rules, `ledger status` and the site read a user's page
# through this one parser, so nothing the site shows is hidden from the rules. Raw HTML is
# off: ledger renders spec pages with markdown-it and these settings (ledger.site.specs
# renders the very tokens `body_tokens` returns), so `<!--` or `<div>` is text a reader
# sees, and text the rules judge. With HTML on, an unclosed `<!--` made an HTML block of the
# rest of the page: no rule saw it, while the site showed all of it. Guarded documents
# outside the specs folder are read the same way (MkDocs renders their HTML, but text inside
# it is what a reader sees, so the rules judge it). Only ledger's own generated pages, whose
# HTML is ledger's and whose user text is escaped, are read with HTML on (`html=True`).
OPTIONS = {"html": False, "linkify": False, "typographer": False}


@lru_cache(maxsize=2)
def parser(html: bool = False):
    """The markdown-it-py parser of user pages (`html=False`), or of ledger's generated pages."""
    # Imported here, not at the top: the pre-push hook loads this module with the checks and
    # parses markdown only when the push brings pages (markdown-it is 20 ms of a 0.37 s hook).
    from markdown_it import MarkdownIt

    # CommonMark plus GFM tables and strikethrough: what MkDocs' Python-Markdown renders
    # for these constructs.
    return MarkdownIt("commonmark", {**OPTIONS, "html": html}).enable(["table", "strikethrough"])


def body_tokens(body: str, html: bool = False) -> tuple:
    """The token stream of a page's body (front matter already split off): the one parse that
    the page rules judge and `ledger.site.specs` renders. Treat the tokens as read-only."""
    return _tokens(body, html)


@lru_cache(maxsize=32)
def _tokens(body: str, html: bool) -> tuple:
    return tuple(parser(html).parse(body))


def _parse(text: str, html: bool = False, body: bool = False):
    """Tokens of a whole page (front matter split off here) or, with `body`, of a page's body
    whose front matter the caller already split off: splitting a body again would take a
    second `---` block for front matter and hide it from the caller alone."""
    if body:
        return body_tokens(text, html), 0
    _, rest, offset = split(text)
    return body_tokens(rest, html), offset


def _line(token, offset: int) -> int:
    return (token.map[0] if token.map else 0) + offset + 1


def _plain(inline, *, code: bool = True, quotations: bool = True) -> str:
    """What a reader sees of an inline token: text and code, no markup or link targets.
    Without `quotations`, text a generated page marks as quoted from a record is left out
    (site.escape.quotation; only HTML-on parses, ledger's own pages, see the mark)."""
    out: list[str] = []
    depth = 0  # open <span>s inside a quotation; the quotation ends at its own </span>
    for child in inline.children or ():
        if child.type == "html_inline" and not quotations:
            tag = child.content.strip()
            if depth == 0 and tag == QUOTE_OPEN:
                depth = 1
            elif depth and tag.startswith("<span"):
                depth += 1
            elif depth and tag == "</span>":
                depth -= 1
            continue
        if depth:
            continue
        if child.type == "text":
            out.append(child.content)
        elif child.type == "code_inline":
            if code:
                out.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            out.append(" ")
        elif child.type == "image":
            out.append(_plain(child, code=code))
    return "".join(out)


def _hrefs(inline) -> list[str]:
    return [str(c.attrs.get("href", "")) for c in inline.children or () if c.type == "link_open"]


def rendered_width(text: str) -> int:
    """Columns the text takes: East Asian wide and full-width characters count 2,
    combining marks 0 (Unicode's own tables, via unicodedata)."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


# -- tables ------------------------------------------------------------------------------


def _rows(tokens, offset: int):
    """(table index, row index, line, [inline tokens]) for every table row."""
    table = -1
    row = -1
    line = 0
    cells: list = []
    for i, tok in enumerate(tokens):
        if tok.type == "table_open":
            table += 1
            row = -1
        elif tok.type == "tr_open":
            row += 1
            line = _line(tok, offset)
            cells = []
        elif tok.type in ("th_open", "td_open"):
            cells.append(tokens[i + 1])
        elif tok.type == "tr_close":
            yield table, row, line, cells


def tables(text: str, html: bool = False) -> list[Cell]:
    """Every table cell of the page, header cells included (row 0)."""
    tokens, offset = _parse(text, html)
    out: list[Cell] = []
    headers: list[str] = []
    for table, row, line, cells in _rows(tokens, offset):
        texts = [_plain(c).strip() for c in cells]
        if row == 0:
            headers = texts
        for col, cell_text in enumerate(texts):
            header = headers[col] if col < len(headers) else ""
            out.append(Cell(line, row, col, header, cell_text, rendered_width(cell_text), table))
    return out


# -- prose -------------------------------------------------------------------------------


def prose_paragraphs(text: str, html: bool = False) -> list[Paragraph]:
    """Paragraphs of running prose: top-level and block-quoted paragraphs. Paragraphs
    inside list items and table cells are structure, not prose, and are not counted."""
    tokens, offset = _parse(text, html)
    out: list[Paragraph] = []
    in_list = 0
    for i, tok in enumerate(tokens):
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            in_list += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            in_list -= 1
        elif tok.type == "paragraph_open" and not in_list:
            out.append(Paragraph(_line(tok, offset), _plain(tokens[i + 1]).strip()))
    return out


# -- Owed --------------------------------------------------------------------------------

# A heading is an Owed section when its text, after an optional section number and its
# punctuation ("7.", "7.1", "§7", "7)", "7:", "7 —", "7 -", "7 |", "A.2"), starts with the word "Owed". This is matched on the
# heading's rendered text, which markdown-it has already separated from the `#`s.
_OWED_TITLE = re.compile(r"^(?:§\s*)?(?:\d+(?:\.\d+)*\.?\s*(?:[.):|/—–-]|--)?\s*)?owed\b", re.IGNORECASE)
_OWNER = re.compile(
    r"(?:\bowner\s*[:=]\s*|\bowned\s+by\s+)([^\s,;)\]]+)|(?<![\w@])@([A-Za-z0-9][\w.-]*)", re.IGNORECASE
)
_ISSUE = re.compile(r"(?<![\w&])#(\d+)\b")
_OWNER_HEADERS = {"owner", "owners", "owned by", "owner(s)"}
_NO_OWNER = {"", "-", "—", "–", "none", "nobody", "unowned", "tbd", "?", "n/a"}


def _sections(tokens, offset: int) -> list[Section]:
    """Every heading with the last line of its section: the line before the next heading of
    the same or a higher level (0: the end of the page). One pass with a stack of the open
    sections, so a page of thousands of headings costs what it reads."""
    heads = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            heads.append((_line(tok, offset), int(tok.tag[1]), _plain(tokens[i + 1]).strip()))
    ends = [0] * len(heads)
    open_sections: list[int] = []
    for n, (line, level, _) in enumerate(heads):
        while open_sections and heads[open_sections[-1]][1] >= level:
            ends[open_sections.pop()] = line - 1
        open_sections.append(n)
    return [Section(line, level, title, end) for (line, level, title), end in zip(heads, ends, strict=True)]


def owed_sections(text: str, html: bool = False, body: bool = False) -> list[Section]:
    """Headings titled Owed, numbered or not (`## Owed`, `## 7. Owed`, `### 7.2 Owed items`).
    `body`: `text` is a page's body, front matter already split off (line numbers are then
    the body's)."""
    tokens, offset = _parse(text, html, body)
    return [s for s in _sections(tokens, offset) if _OWED_TITLE.match(s.title)]


def _owner_in(text: str) -> str | None:
    match = _OWNER.search(text)
    if not match:
        return None
    owner = (match.group(1) or match.group(2) or "").strip().rstrip(".")
    return None if owner.lower() in _NO_OWNER else owner


def owed_items(text: str, html: bool = False, body: bool = False) -> list[OwedItem]:
    """Items under Owed sections: each body row of a table, each top-level list item.
    An owner comes from a column headed Owner, or `owner: NAME`, `owned by NAME` or
    `@handle` in the item's text; issue numbers from `#N`."""
    tokens, offset = _parse(text, html, body)
    sections = owed_sections(text, html, body)
    if not sections:
        return []
    out = _owed_table_rows(tokens, offset, sections) + _owed_list_items(tokens, offset, sections)
    out.sort(key=lambda item: item.line)
    return out


class _OwedLookup:
    """The Owed section a line lies in, or None when it lies in none: the outermost one, as
    sections nest or are disjoint (a `### Owed` under a `## Owed` is part of it). The
    outermost ones are disjoint and in page order, so a line is found by bisection: a page
    of thousands of Owed sections and items costs n log n, not n squared."""

    def __init__(self, sections: list[Section]):
        self.outer: list[Section] = []
        for s in sorted(sections, key=lambda s: s.line):
            last = self.outer[-1] if self.outer else None
            if last is not None and (last.end_line == 0 or s.line <= last.end_line):
                continue  # inside the previous outer Owed section
            self.outer.append(s)
        self.starts = [s.line for s in self.outer]

    def __call__(self, line: int) -> Section | None:
        at = bisect.bisect_left(self.starts, line) - 1  # the last section starting above the line
        if at < 0:
            return None
        s = self.outer[at]
        return s if s.end_line == 0 or line <= s.end_line else None


def _owed_table_rows(tokens, offset: int, sections: list[Section]) -> list[OwedItem]:
    """Each body row of a table under an Owed section, its cells joined by ` | `."""
    out: list[OwedItem] = []
    headers: list[str] = []
    section_of = _OwedLookup(sections)
    for _, row, line, cells in _rows(tokens, offset):
        texts = [_plain(c).strip() for c in cells]
        if row == 0:
            headers = [t.lower() for t in texts]
            continue
        section = section_of(line)
        if section is None:
            continue
        joined = " | ".join(texts)
        issues = tuple(int(n) for n in _ISSUE.findall(joined))
        out.append(OwedItem(line, joined, _row_owner(headers, texts, joined), issues, section.title))
    return out


def _row_owner(headers: list[str], texts: list[str], joined: str) -> str | None:
    """A table row's owner: its Owner column's cell when the table has one (even when empty,
    so a mention elsewhere in the row is not taken for the owner), else one named in the row."""
    for col, header in enumerate(headers):
        if header in _OWNER_HEADERS and col < len(texts):
            return None if texts[col].lower() in _NO_OWNER else texts[col]
    return _owner_in(joined)


def _owed_list_items(tokens, offset: int, sections: list[Section]) -> list[OwedItem]:
    """Each top-level list item under an Owed section, with the text of its nested items."""
    out: list[OwedItem] = []
    depth = 0
    section_of = _OwedLookup(sections)
    for i, tok in enumerate(tokens):
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif tok.type == "list_item_open" and depth == 1:
            line = _line(tok, offset)
            section = section_of(line)
            if section is None:
                continue
            item_text = _list_item_text(tokens, i)
            out.append(
                OwedItem(
                    line,
                    item_text,
                    _owner_in(item_text),
                    tuple(int(n) for n in _ISSUE.findall(item_text)),
                    section.title,
                )
            )
    return out


def _list_item_text(tokens, start: int) -> str:
    """The text of the list item opened at `tokens[start]`: every inline token up to its
    closing tag, nested lists included."""
    parts = []
    level = tokens[start].level
    # By index, not over a slice: a slice copies the rest of the page for every item.
    for j in range(start + 1, len(tokens)):
        later = tokens[j]
        if later.type == "list_item_close" and later.level == level:
            break
        if later.type == "inline":
            parts.append(_plain(later))
    return " ".join(p.strip() for p in parts if p.strip())


# -- quoted figures ----------------------------------------------------------------------

_NUM = r"\d+(?:\.\d+)?"
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
# A unit: a ratio (`x`, `×`, `-fold`, ` fold`), a percentage or a duration.
_UNIT = r"\s?(?:x|×|%|ms|µs|us|ns|s)(?![\w/])|[-\s]fold\b"
_FIGURE = re.compile(rf"(?<![\w.,/-])([~≈]\s?)?({_NUMBER})({_UNIT})")
# Ranges and slash lists (`9.14-9.67x`, `9.14x/9.67x`, `9 to 10 s`): every number is a figure,
# with its own unit or the unit that ends the list.
_INNER_UNIT = r"\s?(?:x|×|%|ms|µs|us|ns|s)(?!\w)|[-\s]fold\b"
_LIST = re.compile(
    rf"(?<![\w.,/-])(?:[~≈]\s?)?(?:{_NUMBER})(?:{_INNER_UNIT})?"
    rf"(?:\s*(?:-|–|—|/|to)\s*[~≈]?\s?(?:{_NUMBER})(?:{_INNER_UNIT})?)*"
    rf"\s*(?:-|–|—|/|to)\s*[~≈]?\s?(?:{_NUMBER})(?:{_UNIT})"
)
_LIST_ITEM = re.compile(rf"([~≈]\s?)?({_NUMBER})({_INNER_UNIT})?")
_RATIO_UNITS = frozenset({"x", "×", "fold"})


def _unit_of(raw: str | None) -> str:
    unit = (raw or "").strip().lstrip("-").strip()
    return "x" if unit in _RATIO_UNITS else unit


def definitional(value: float, unit: str) -> bool:
    """The base of a ratio (`1.00x`) or of an efficiency (`100%`): a definition, not a measurement."""
    return (unit == "x" and value == 1.0) or (unit == "%" and value == 100.0)


_SPREADS = (
    re.compile(rf"({_NUM})(?:\s*(?:-|–|to)\s*({_NUM}))?\s*%\s+spread"),
    re.compile(rf"\bspread(?:s)?\s+(?:of\s+|is\s+|was\s+)?({_NUM})(?:\s*(?:-|–|to)\s*({_NUM}))?\s*%", re.IGNORECASE),
)
_PLUS_MINUS = re.compile(rf"±\s*({_NUM})\s*%")
#: The mark site.escape.quotation puts around text a generated page quotes from a record.
QUOTE_OPEN = '<span class="ledger-quote">'
_ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")


def significant_digits(number: str) -> int:
    """Significant digits of a number as written: `9.14` has 3, `0.05` has 1, `120` has 2."""
    digits = number.replace(",", "").lstrip("+-")
    if "." in digits:
        whole, frac = digits.split(".", 1)
        stripped = (whole + frac).lstrip("0")
        return max(len(stripped), 1)
    return max(len(digits.lstrip("0").rstrip("0")), 1)


def _block_spread(text: str) -> tuple[float | None, list[tuple[int, int]]]:
    """The widest spread stated in a block, in percent, and the spans that state it."""
    spread: float | None = None
    spans: list[tuple[int, int]] = []
    for pattern in _SPREADS:
        for m in pattern.finditer(text):
            values = [float(g) for g in m.groups() if g]
            spread = max([spread or 0.0, *values])
            spans.append(m.span())
    for m in _PLUS_MINUS.finditer(text):
        spread = max(spread or 0.0, 2 * float(m.group(1)))  # ±w% is a spread of 2w%
        spans.append(m.span())
    return spread, spans


def _figure(m_number: str, unit: str, approx: bool, text: str, line, spread, ids) -> Figure:
    return Figure(
        line=line,
        text=text,
        value=float(m_number.replace(",", "")),
        unit=unit,
        digits=significant_digits(m_number),
        approximate=approx,
        spread_percent=spread,
        ids=ids,
    )


def _figures_in(
    text: str, line: int, spread: float | None, skip: list[tuple[int, int]], ids: tuple[str, ...]
) -> list[Figure]:
    out = []
    taken: list[tuple[int, int]] = []
    for m in _LIST.finditer(text):
        if any(a <= m.start() < b for a, b in skip):
            continue
        items = list(_LIST_ITEM.finditer(m.group(0)))
        units = [_unit_of(i.group(3)) for i in items]
        # A bare number takes the unit of the next number that has one (`9.14-9.67x`).
        for k in range(len(units) - 2, -1, -1):
            units[k] = units[k] or units[k + 1]
        for item, unit in zip(items, units, strict=True):
            out.append(_figure(item.group(2), unit, bool(item.group(1)), item.group(0).strip(), line, spread, ids))
        taken.append(m.span())
    for m in _FIGURE.finditer(text):
        if any(a <= m.start(2) < b for a, b in skip + taken):
            continue
        out.append(_figure(m.group(2), _unit_of(m.group(3)), bool(m.group(1)), m.group(0).strip(), line, spread, ids))
    return out


def record_ids(text: str) -> list[str]:
    """Record ids (ULIDs) a page names anywhere in its body, link targets included."""
    _, body, _ = split(text)
    return list(dict.fromkeys(_ULID.findall(body)))


_CLAUSE_END = re.compile(r";|[.!?](?=\s)")


def _clauses(text: str) -> list[tuple[int, int]]:
    """Spans of a block's clauses: split at `;` and at a sentence's end."""
    out, start = [], 0
    for m in _CLAUSE_END.finditer(text):
        out.append((start, m.end()))
        start = m.end()
    out.append((start, len(text)))
    return [(a, b) for a, b in out if text[a:b].strip()]


def _bound_figures(text: str, line: int, outer: float | None, ids: tuple[str, ...]) -> list[Figure]:
    """The figures of a block, each with the spread that qualifies it: a spread binds to the
    figures of its own clause (`~9x, 21-23% spread; the render takes 2681 s` binds nothing to
    2681 s); a spread stated in a clause of its own (`The spread was 21-23%.`) qualifies the
    whole block; `outer` (the row's Spread column) qualifies what no clause's spread does."""
    block_spread, _ = _block_spread(text)
    per: list[tuple[float | None, list[Figure]]] = []
    for a, b in _clauses(text):
        sub = text[a:b]
        spread, spans = _block_spread(sub)
        per.append((spread, [replace(f, clause=sub) for f in _figures_in(sub, line, spread, spans, ids)]))
    bound = any(spread is not None and figs for spread, figs in per)
    out: list[Figure] = []
    for spread, figs in per:
        if bound:
            own = spread if spread is not None else outer
        else:
            own = max((v for v in (block_spread, outer) if v is not None), default=None)
        out.extend(replace(f, spread_percent=own) for f in figs)
    return out


#: A header's unit: its last word (`Median s`, `Speedup, x`, `Efficiency (%)`), or the quantity.
_HEADER_UNITS = {"x": "x", "×": "x", "%": "%", "s": "s", "ms": "ms", "us": "us", "µs": "µs", "ns": "ns"}
_HEADER_QUANTITIES = {"speedup": "x", "efficiency": "%"}
_BARE_NUMBER = re.compile(rf"\s*([~≈]\s?)?({_NUMBER})\s*")


def header_unit(header: str) -> str:
    """The unit a column's header gives its bare numbers ("" when none)."""
    words = [w for w in re.split(r"[\s,()\[\]/:;]+", header.lower()) if w]
    if not words:
        return ""
    if words[-1] in _HEADER_UNITS and len(words) > 1:
        return _HEADER_UNITS[words[-1]]
    return next((_HEADER_QUANTITIES[w] for w in words if w in _HEADER_QUANTITIES), "")


def _header_name(header: str) -> str:
    """A header without its unit word: `min s` -> `min`."""
    words = [w for w in re.split(r"[\s,()\[\]/:;]+", header.lower()) if w]
    if len(words) > 1 and words[-1] in _HEADER_UNITS:
        words = words[:-1]
    return " ".join(words)


def quoted_figures(
    text: str, spread_column: str | None = None, columns: tuple[str, ...] = (), html: bool = False
) -> list[Figure]:
    """Figures with a unit (x, ×, -fold, %, s, ms, µs, ns) in paragraphs, list items, headings and
    table rows, each with the spread stated in its own paragraph or table row: `21-23% spread`,
    `spread of 5%`, `±2%` (a spread of 4%), or the row's cell under a column headed Spread.
    Code spans are literal text and are skipped."""
    tokens, offset = _parse(text, html)
    out: list[Figure] = []
    in_table = False
    for tok in tokens:
        if tok.type == "table_open":
            in_table = True
        elif tok.type == "table_close":
            in_table = False
        elif tok.type == "inline" and not in_table:
            plain = _plain(tok, code=False, quotations=False)
            ids = tuple(dict.fromkeys(_ULID.findall(plain + " " + " ".join(_hrefs(tok)))))
            out.extend(_bound_figures(plain, _line(tok, offset), None, ids))
    headers: list[str] = []
    for _, row, line, cells in _rows(tokens, offset):
        texts = [_plain(c, code=False, quotations=False).strip() for c in cells]
        if row == 0:
            headers = [t.lower() for t in texts]
            continue
        spread_cols = {i for i, h in enumerate(headers) if "spread" in h}
        ends = _range_ends([_header_name(h) for h in headers], texts)
        declared = spread_column is not None and any(h == spread_column.lower() for h in headers)
        shown = declared and any(
            h == str(spread_column).lower() and i < len(texts) and re.search(_NUM, texts[i])
            for i, h in enumerate(headers)
        )
        spread = None
        for col in spread_cols:
            if col < len(texts):
                values = [float(v) for v in re.findall(_NUM, texts[col])]
                if values:
                    spread = max([spread or 0.0, *values])
        observed = _observed_spread([_header_name(h) for h in headers], texts, ends)
        if shown and observed is not None and (spread is None or spread < 0.95 * observed):
            # A declared Spread cell that understates the row's own min-max range (0.1% beside
            # 0.2024 .. 0.2534 around 0.2234, which is 22.8%) does not let the figures stand:
            # they are judged against the range the row shows.
            shown, spread = False, observed
        joined_hrefs = " ".join(h for c in cells for h in _hrefs(c))
        ids = tuple(dict.fromkeys(_ULID.findall(" ".join(texts) + " " + joined_hrefs)))
        for col, cell_text in enumerate(texts):
            if col in spread_cols:
                continue
            header = headers[col] if col < len(headers) else ""
            unit = header_unit(header)
            bare = _BARE_NUMBER.fullmatch(cell_text) if unit else None
            if bare is not None:
                # `9.14` under a `Speedup, x` header is the figure 9.14x.
                found = [_figure(bare.group(2), unit, bool(bare.group(1)), cell_text.strip(), line, spread, ids)]
            else:
                found = _bound_figures(cell_text, line, spread, ids)
            if ends is not None and (col in ends[0] or _header_name(header) in _CENTRES):
                # The ends, and the median between them: ledger prints a median at least to the
                # digits of its min and max, so it never reads outside them.
                centre = col not in ends[0]
                found = [replace(f, resolution=ends[1], centre=centre) for f in found]
            beside = shown and (
                not columns
                or _header_name(header) in {c.lower() for c in columns}
                or header in {c.lower() for c in columns}
            )
            row_cells = tuple(zip(headers, texts, strict=False))
            out.extend(replace(f, in_table=True, beside_spread=bool(beside), row=row_cells) for f in found)
    out.sort(key=lambda f: f.line)
    return out


_EXTREMES = {"min": 0, "minimum": 0, "max": 1, "maximum": 1}
_CENTRES = {"median", "mean"}


def _observed_spread(names: list[str], texts: list[str], ends: tuple[set[int], float] | None) -> float | None:
    """A row's own spread in percent, (max - min) / median, when it shows all three."""
    if ends is None:
        return None
    for i, name in enumerate(names):
        if name in _CENTRES and i < len(texts):
            found = re.findall(_NUMBER, texts[i])
            centre = float(found[0].replace(",", "")) if found else 0.0
            return 100.0 * ends[1] / centre if centre > 0 else None
    return None


def _range_ends(headers: list[str], texts: list[str]) -> tuple[set[int], float] | None:
    """The columns of a row's observed range (headed Min and Max) and its width, when both
    cells hold a number and they differ: the ends of a range are observations, quoted at the
    leading place of max - min so they stay apart, not estimates held to the median's spread."""
    cols: dict[int, int] = {}
    for i, h in enumerate(headers):
        if h in _EXTREMES and _EXTREMES[h] not in cols.values():
            cols[i] = _EXTREMES[h]
    if len(cols) != 2 or max(cols) >= len(texts):
        return None
    values = {}
    for i, end in cols.items():
        found = re.findall(_NUMBER, texts[i])
        if not found:
            return None
        values[end] = float(found[0].replace(",", ""))
    width = abs(values[1] - values[0])
    return (set(cols), width) if width > 0 else None


# -- keyed rows --------------------------------------------------------------------------


@dataclass(frozen=True)
class KeyedRow:
    table: str  # which table: its section heading, header row and ordinal, e.g. "Specs | Accelerator | TFLOPS #1"
    key: str  # rendered text of the key cell
    line: int  # 1-based line in the full text
    raw: str  # the row's source line, byte for byte (trailing newline removed)


def keyed_rows(text: str, key: str | int | None = None) -> list[KeyedRow]:
    """Body rows of the page's keyed tables, each with its key and its source line.

    `key` names the key column by its header text (case-insensitive); tables without such a
    column are not keyed. An int is a 1-based column number; None keys every table by its first
    column. A table is named by the heading it sits under and its header row, so inserting a
    new table elsewhere does not rename it."""
    tokens, offset = _parse(text)
    lines = text.splitlines()
    heads = [(s.line, s.title) for s in _sections(tokens, offset)]
    head_lines = [line for line, _ in heads]
    out: list[KeyedRow] = []
    seen: dict[tuple[str, str], int] = {}
    column: int | None = None
    name = ""
    for _, row, line, cells in _rows(tokens, offset):
        texts = [_plain(c).strip() for c in cells]
        if row == 0:
            column = None
            if key is None:
                column = 0
            elif isinstance(key, int):
                column = key - 1 if 0 < key <= len(texts) else None
            else:
                wanted = str(key).strip().lower()
                column = next((i for i, t in enumerate(texts) if t.lower() == wanted), None)
            above = bisect.bisect_left(head_lines, line)  # headings above the table's header row
            heading = heads[above - 1][1] if above else ""
            header = " | ".join(texts)
            n = seen.get((heading, header), 0) + 1
            seen[(heading, header)] = n
            name = f"{heading} | {header}" + (f" #{n}" if n > 1 else "")
            continue
        if column is None or column >= len(texts):
            continue
        raw = lines[line - 1] if 0 < line <= len(lines) else ""
        out.append(KeyedRow(name, texts[column], line, raw))
    return out
