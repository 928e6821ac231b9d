"""Markdown pages read the way they render: front matter, table cells and their widths,
prose paragraphs, Owed sections and their items, and quoted figures.

Markdown is parsed with markdown-it-py (CommonMark plus GFM tables), never with
regexes, so `## 7. Owed` is an Owed section and a `|` inside a code span is not a
column. Every function takes the page's full text (front matter included) and reports
1-based line numbers in that text.

    from ledger import pages
    pages.front_matter(text)        -> FrontMatter(data, body, body_line)
    pages.tables(text)              -> [Cell(line, row, column, header, text, width)]
    pages.prose_paragraphs(text)    -> [Paragraph(line, text)]
    pages.owed_sections(text)       -> [Section(line, level, title)]
    pages.owed_items(text)          -> [OwedItem(line, text, owner, issues, section)]
    pages.quoted_figures(text)      -> [Figure(line, text, value, unit, digits, approximate, spread_percent, ids, resolution)]
    pages.keyed_rows(text, key)     -> [KeyedRow(table, key, line, raw)]
    pages.rendered_width(plain)     -> int (East Asian wide characters count 2)
    pages.read_spec_owed(specs_dir) -> ([SpecOwed(text, owner, issues, spec)], [unreadable paths])
"""

from .frontmatter import FrontMatter, front_matter
from .markdown import (
    Cell,
    Figure,
    KeyedRow,
    OwedItem,
    Paragraph,
    Section,
    definitional,
    keyed_rows,
    owed_items,
    owed_sections,
    prose_paragraphs,
    quoted_figures,
    record_ids,
    rendered_width,
    tables,
)
from .owed import SpecOwed, read_spec_owed, spec_owed

__all__ = [
    "FrontMatter",
    "front_matter",
    "Cell",
    "Figure",
    "KeyedRow",
    "keyed_rows",
    "OwedItem",
    "Paragraph",
    "Section",
    "definitional",
    "owed_items",
    "owed_sections",
    "prose_paragraphs",
    "quoted_figures",
    "record_ids",
    "rendered_width",
    "tables",
    "SpecOwed",
    "read_spec_owed",
    "spec_owed",
]
