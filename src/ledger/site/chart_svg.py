"""What every chart of the site shares: matplotlib's settings, titles that wrap rather than
clip, a hover text (`<title>`) and a record link on every point, colours that follow the
page's light or dark scheme, and the two ways a chart is shown.

matplotlib draws; this module only rewrites its SVG text afterwards. matplotlib has no
`<title>` per marker and no colour that is not a literal, so (as matplotlib's own "SVG
tooltip" example does) the drawing marks what to rewrite:

- every point is drawn with the URL `ledger:K` (`set_urls` / `set_url`), and `finish`
  turns `<a xlink:href="ledger:K">` into that point's record link with its `<title>`
  (value, spread, commit, record): a reader asks "which run is that?" by hovering, with no
  script;
- text, axes, ticks and grid are drawn in the colour `FG`, legend faces in `BG`; `finish`
  writes `currentColor` and Material's `--md-default-bg-color` in their place, so a chart
  inlined in a page takes the page's colours in both schemes. The standalone file (the
  full-size link, the thumbnails) carries a style of its own for both schemes.

`inline` makes the markup a page embeds: no XML prologue, ids prefixed (a page holds a wide
and a narrow drawing), matplotlib's global `*{...}` style scoped to the chart.
"""

from __future__ import annotations

import html
import posixpath
import re
import textwrap
from collections.abc import Sequence

from markupsafe import Markup

#: Sentinel colours matplotlib writes literally and `finish` replaces.
FG = "#0b0c0d"
BG = "#fdfcfb"
SVG_RC = {
    "svg.hashsalt": "ledger",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.alpha": 0.3,
    # User text (metric, contract, topology names) is drawn literally: `$...$` is not
    # mathtext (a bad expression raised and stopped the whole site build) and no TeX runs.
    "text.parse_math": False,
    "text.usetex": False,
    # Foreground and background as sentinels (see the module doc), never white panels.
    "text.color": FG,
    "axes.edgecolor": FG,
    "axes.labelcolor": FG,
    "xtick.color": FG,
    "ytick.color": FG,
    "grid.color": FG,
    "axes.facecolor": "none",
    "figure.facecolor": "none",
    "savefig.facecolor": "none",
    "savefig.edgecolor": "none",
    "legend.facecolor": BG,
    "legend.edgecolor": FG,
    "legend.framealpha": 0.9,
}
#: Colour-blind-safe series colours (Okabe-Ito without its black, which is the foreground
#: here), in topology order; each reads on Material's light and slate backgrounds.
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", FG, "#F0E442")
#: The drawing shown on a phone (below `NARROW_BELOW` px of viewport): drawn at about the
#: width of a 390 px screen's content column, so its 8-9 pt labels stay 10-12 px.
NARROW_WIDTH_IN = 3.9
NARROW_BELOW = 700
#: The style of the standalone file: the page's variables are not there, so both schemes
#: are spelled out (a thumbnail `<img>` takes the embedding page's `color-scheme`).
FILE_STYLE = (
    "svg{color:#1f2125;--md-default-bg-color:#ffffff;color-scheme:light dark}"
    "@media (prefers-color-scheme: dark){svg{color:#dfe2e8;--md-default-bg-color:#1e2129}}"
)

_MARK = re.compile(r'<a xlink:href="ledger:(\d+)"[^>]*>')
_TEXT = re.compile(r"(<text\b[^>]*>)([^<]*)</text>")
_PROLOGUE = re.compile(r"^.*?(?=<svg\b)", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')
_REF = re.compile(r'(url\(#|xlink:href="#)([^)"]+)')


def wrap(text: str, width_in: float, fontsize: float) -> list[str]:
    """`text` in lines that fit `width_in` inches at `fontsize` points (DejaVu Sans averages
    about 0.6 em a character): a chart title is wrapped, never clipped."""
    chars = max(12, int(width_in * 72 / (fontsize * 0.6)))
    return textwrap.wrap(text, chars, break_long_words=True, break_on_hyphens=False) or [""]


def lines_height_in(lines: int, fontsize: float) -> float:
    """Inches that `lines` lines of text at `fontsize` points take."""
    return lines * fontsize * 1.3 / 72


def html_href(from_dir: str, page_md: str, anchor: str = "", directory_urls: bool = False) -> str:
    """The URL a built HTML file in docs folder `from_dir` links to docs page `page_md` by
    (raw HTML: MkDocs does not rewrite it)."""
    base = page_md[:-3] if page_md.endswith(".md") else page_md
    if directory_urls:
        target = posixpath.dirname(base) if posixpath.basename(base) == "index" else base
        href = posixpath.relpath(target or ".", from_dir or ".") + "/"
    else:
        href = posixpath.relpath(base + ".html", from_dir or ".")
    return href + (f"#{anchor}" if anchor else "")


def finish(raw: bytes, marks: Sequence[tuple[str, str]]) -> bytes:
    """matplotlib's SVG with each `ledger:K` link made `marks[K]` = (href, hover text), the
    sentinel colours made the page's, and the standalone style added."""
    text = raw.decode("utf-8")

    def mark(match: re.Match) -> str:
        href, title = marks[int(match.group(1))]
        # Quotes escaped too: user text (a topology, a label) in a title is never markup-like.
        return f'<a xlink:href="{html.escape(href)}"><title>{html.escape(title)}</title>'

    text = _MARK.sub(mark, text)
    # Text drawn from user text (a title wraps anywhere, so a line may open with `href="`):
    # quotes as entities, so no line of it reads as an attribute once inlined in a page.
    text = _TEXT.sub(lambda m: m.group(1) + m.group(2).replace('"', "&quot;") + "</text>", text)
    text = text.replace(FG, "currentColor").replace(BG, "var(--md-default-bg-color, #fff)")
    text = text.replace("<defs>", f"<defs>\n  <style>{FILE_STYLE}</style>", 1)
    return text.encode("utf-8")


def inline(svg: bytes, prefix: str, *, up: str = "", label: str = "") -> str:
    """The standalone SVG as markup to embed in a page: ids prefixed with `prefix`, relative
    record links prefixed with `up` (the page sits that much deeper than the file), the
    file's own scheme style dropped (the page's colours apply), `aria-label` set."""
    text = _PROLOGUE.sub("", svg.decode("utf-8"), count=1)
    text = text.replace(f"<style>{FILE_STYLE}</style>", "")
    text = text.replace("*{stroke-linejoin", f".{prefix} *{{stroke-linejoin", 1)
    text = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', text)
    text = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", text)
    if up:
        text = re.sub(r'<a xlink:href="(?![#/]|[a-z]+:)', f'<a xlink:href="{up}', text)
    attrs = f'class="{prefix}" role="img"' + (f' aria-label="{html.escape(label)}"' if label else "")
    text = text.replace("<svg ", f"<svg {attrs} ", 1)
    # A blank line would end Markdown's raw HTML block.
    return "\n".join(line for line in text.splitlines() if line.strip())


#: What a chart's caption says its marks tell on hover (`figure_html`'s `hover`).
HOVER_POINTS = "hover a point for its value, spread, commit and record; click it for the record"
HOVER_BARS = "hover a bar for its figure as recorded; click it for the record"


def figure_html(
    slug: str, wide: bytes, narrow: bytes, label: str, full: str, up: str = "", hover: str = HOVER_POINTS
) -> Markup:
    """The `<figure>` a page embeds: both drawings inlined (CSS shows the narrow one below
    `NARROW_BELOW` px), then the link to the full-size file `full`. Left out of the site's
    search index (tick labels are not prose). The chart itself is not wrapped in a link:
    each of its points links to its own record."""
    return Markup(
        f'<figure class="ledger-chart" data-search-exclude markdown="0">\n'
        f'<div class="ledger-chart-wide">\n{inline(wide, f"ledger-svg-{slug}-w", up=up, label=label)}\n</div>\n'
        f'<div class="ledger-chart-narrow">\n{inline(narrow, f"ledger-svg-{slug}-n", up=up, label=label)}\n</div>\n'
        f'<figcaption><a href="{html.escape(full)}">Full-size chart (SVG)</a>: {hover}.</figcaption>\n</figure>'
    )
