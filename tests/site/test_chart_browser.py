"""The demo's charts in Debian's chromium (issue 26 item 2): at 390 px the phone drawing is
shown, fits the column and keeps its labels readable; in the dark scheme its text takes the
page's light colour on no white panel; every point carries a hover `<title>` and links to a
record page that exists; the full-size SVG link resolves. Uses the run's one `ledger demo`
(tests/conftest.py), no build of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from chromium import NEEDS_CHROMIUM
from chromium import run as in_browser

pytestmark = [*NEEDS_CHROMIUM, pytest.mark.slow]

PROBE = """() => {
  const fig = document.querySelector('figure.ledger-chart');
  const shown = [...fig.querySelectorAll('svg')].filter(s => s.getBoundingClientRect().width > 0);
  const svg = shown[0];
  const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
  const sizes = texts.map(t => t.getBoundingClientRect().height);
  const links = [...svg.querySelectorAll('a')];
  const full = fig.querySelector('figcaption a');
  return {
    shown: shown.map(s => s.getAttribute('class')),
    width: svg.getBoundingClientRect().width,
    column: document.querySelector('.md-content').getBoundingClientRect().width,
    scroll: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    smallest: Math.min(...sizes),
    fill: getComputedStyle(texts[0]).fill,
    page: getComputedStyle(document.querySelector('.md-typeset')).color,
    background: getComputedStyle(svg).backgroundColor,
    links: links.map(a => a.href.baseVal || a.getAttribute('xlink:href')),
    titles: links.map(a => (a.querySelector('title') || {}).textContent || ''),
    full: full && full.href,
  };
}"""


def chart_pages(site: Path) -> list[Path]:
    pages = sorted((site / "charts").glob("*.html"))
    return [p for p in pages if p.name != "index.html"]


def test_charts_fit_a_phone_read_in_the_dark_and_name_every_point(demo_ltx2):
    site = demo_ltx2[0] / "site"
    pages = chart_pages(site)
    assert any(p.name.startswith("sandwiches-") for p in pages), pages

    async def main(browser):
        found = {}
        for width, scheme in ((390, "dark"), (1400, "light")):
            context = await browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
            page = await context.new_page()
            for path in pages:
                await page.goto(path.as_uri())
                found[(width, path.name)] = await page.evaluate(PROBE)
            await context.close()
        return found

    for (width, name), got in in_browser(main).items():
        where = f"{name} at {width} px"
        assert len(got["shown"]) == 1 and got["shown"][0].endswith("-n" if width == 390 else "-w"), where
        assert got["width"] <= got["column"] + 1 and got["scroll"] <= got["viewport"], (where, got)
        # Labels stay readable on a phone (they were 4 px when the wide drawing shrank).
        assert got["smallest"] >= (9 if width == 390 else 8), (where, got["smallest"])
        assert got["background"] in ("rgba(0, 0, 0, 0)", "transparent"), where  # no panel
        if width == 390:  # dark: the text is the page's colour, not black
            assert got["fill"] == got["page"] and got["fill"] != "rgb(0, 0, 0)", (where, got["fill"])
        assert got["links"] and len(got["titles"]) == len(got["links"]), where
        for href, title in zip(got["links"], got["titles"], strict=True):
            assert "record " in title and "commit " in title, (where, title)
            target = (site / "charts" / href.split("#")[0]).resolve()
            assert target.is_file(), (where, href)
        assert got["full"] and got["full"].endswith(".svg"), where
