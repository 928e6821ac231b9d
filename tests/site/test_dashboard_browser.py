"""The demo's site and the project's own site in Debian's chromium, opened from disk (file://)
and through `ledger site serve`: every navigation link clicked, no page wider than its column
at 1,400 and 390 px and in the dark scheme, no console error, no request off the host, and
search finding a decision by a word of its family. The demo's home page at 1,400 px is the
README's screenshot (LEDGER_UPDATE_SCREENSHOT=1 rewrites docs/img/demo-home.png).

Each site is built once (the run's `ledger demo`, tests/conftest.py; the project's own site,
tests/site/conftest.py: own_site, shared with the docs test); both origins are walked at once in one browser, several pages at a time
(tests/chromium.py)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from chromium import NEEDS_CHROMIUM, Watch, each
from chromium import run as in_browser

from tests.conftest import GIT_ENV, LEDGER_BIN, ROOT

WIDTHS = (1400, 390)
SCREENSHOT = ROOT / "docs" / "img" / "demo-home.png"
CLEAN = {
    "nav": [],
    "overflow": [],
    "words": [],
    "scheme": [],
    "search": [],
    "console": [],
    "off_host": [],
    "failed": [],
    "dialogs": [],
}

pytestmark = [*NEEDS_CHROMIUM, pytest.mark.slow]


def family_word(root: Path) -> tuple[str, str]:
    """A distinctive word of a decision's family, and that decision's id."""
    from ledger.store import Ledger

    decision = Ledger.open(root).records("decision")[0]
    words = sorted(re.findall(r"[A-Za-z][A-Za-z]{4,}", decision.family), key=len, reverse=True)
    return words[0], decision.id


async def overflow(page) -> list[str]:
    """What sticks out of the main column: the column itself, or any table or image in it."""
    return await page.evaluate("""() => {
        const main = document.querySelector('.md-content');
        if (!main) return [`no .md-content at ${location.href}`];
        const out = [];
        if (main.scrollWidth > main.clientWidth) out.push(`main ${main.scrollWidth} > ${main.clientWidth}`);
        const right = main.getBoundingClientRect().right + 1;
        for (const el of main.querySelectorAll('table, img, svg, pre')) {
            if (el.closest('pre') && el.tagName !== 'PRE') continue;
            const r = el.getBoundingClientRect();
            if (r.width && r.right > right) out.push(`${el.tagName} right ${Math.round(r.right)} > ${Math.round(right)}`);
            // A table whose wrapper scrolls is still wider than the column.
            if (el.tagName === 'TABLE' && el.parentElement.scrollWidth > el.parentElement.clientWidth + 1)
                out.push(`table scrolls ${el.parentElement.scrollWidth} > ${el.parentElement.clientWidth}`);
        }
        return out;
    }""")


#: What stays whole on a phone too: the headings of a table of up to four columns (not
#: "O|w|n|e|r" down a column; a wider one may break them rather than scroll), the keys of a
#: record page's stamps, links and fields ("contr|act"), and the page title with its id.
PHONE_WHOLE = (
    ".md-content table:not(:has(tr > :nth-child(5))) th, .md-content .ledger-keys tr > :first-child, .md-content h1"
)


async def broken_words(page, where: str = ".md-content td, .md-content th") -> list[str]:
    """Words of a table that the layout broke across two lines (`confirm|ed`, `21:01:|52`, a
    SHA, a path). A word may break where the line-breaking rules allow it (after a hyphen, as
    type always has, or a `?`); never elsewhere inside it."""
    return await page.evaluate(
        """(where) => {
        const out = [];
        for (const cell of document.querySelectorAll(where)) {
            const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                for (const m of node.data.matchAll(/\\S+/g)) {
                    if (/[-?]/.test(m[0])) continue;
                    const range = document.createRange();
                    range.setStart(node, m.index);
                    range.setEnd(node, m.index + m[0].length);
                    const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
                    if (tops.size > 1) out.push(m[0]);
                }
            }
        }
        return out;
    }""",
        where,
    )


async def walk(browser, site: Path, origin: str, word: str, decision_id: str, shots: Path, name: str, every: bool):
    """Click the nav links (`every`: all of them; otherwise the first of each section), check
    the width of every page reached at 1,400 px (light) and 390 px (dark: the scheme must
    follow the reader's preference), search; return what went wrong."""
    problems: dict[str, list[str]] = {key: [] for key in CLEAN}
    watch = Watch(origin)
    home = origin + "index.html"

    async def context(width: int, scheme: str):
        made = await browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)
        await watch.context(made)
        return made

    async def settle(page, what: str) -> None:
        # Loaded (styles applied, scripts run), then no request for half a second: a busy
        # machine can report the network idle while the page is still parsing.
        try:
            await page.wait_for_load_state("networkidle")
        except Exception as exc:  # a static page that never goes quiet is a finding, not a crash
            problems["nav"].append(f"{what}: {type(exc).__name__}: {str(exc)[:200]}")

    async def goto(page, url: str) -> None:
        await page.goto(url, wait_until="load")
        await settle(page, url)

    async def fits(page, label: str) -> None:
        for issue in await overflow(page):
            problems["overflow"].append(f"{label} {page.url}: {issue}")
        # On a phone a word longer than the column may break inside a cell, never a heading,
        # a record page's key or the title's id.
        whole = PHONE_WHOLE if label == f"{WIDTHS[1]}px" else ".md-content td, .md-content th"
        for word_ in await broken_words(page, whole):
            problems["words"].append(f"{label} {page.url}: {word_!r}")
        if page.url == home:
            await page.screenshot(path=str(shots / f"{name}-home-{label}.png"), full_page=False)

    light = await context(WIDTHS[0], "light")
    first = await light.new_page()
    watch.page(first)
    await goto(first, home)
    targets = await first.eval_on_selector_all(
        "nav.md-nav--primary a.md-nav__link[href]", "els => [...new Set(els.map(e => e.href))]"
    )
    assert len(targets) >= 8, targets
    if not every:
        # One page of each top-level section (guide/, reference/, evidence/...), home's own
        # links included: the same files as the full walk reads, through this origin.
        sections: dict[str, str] = {}
        for target in targets:
            rel = target.removeprefix(origin)
            sections.setdefault(rel.split("/", 1)[0] if "/" in rel else "", target)
        targets = list(sections.values())
    started: set[int] = set()

    async def click(page, target: str) -> str:
        # Each page starts at home, then goes from link to link through the nav of the page it
        # is on, as a reader does (a link inside a collapsed section is clicked as a reader's
        # click would be).
        if id(page) not in started:
            started.add(id(page))
            await goto(page, home)
        found = await page.evaluate(
            """target => {
                const link = [...document.querySelectorAll('nav.md-nav--primary a.md-nav__link[href]')]
                    .find(a => a.href === target);
                return link ? link.getAttribute('href') : null;
            }""",
            target,
        )
        if found is None:
            problems["nav"].append(f"{page.url}: no nav link to {target}")
            await goto(page, target)
        else:
            async with page.expect_navigation(wait_until="load"):
                await page.locator(f'nav.md-nav--primary a.md-nav__link[href="{found}"]').first.evaluate(
                    "a => a.click()"
                )
            await settle(page, f"click {found} on {target}")
        if await page.locator("article h1").count() != 1:
            problems["nav"].append(f"{target} -> {page.url}")
        await fits(page, f"{WIDTHS[0]}px")
        return page.url

    async def search(page) -> None:
        # Search, from disk as well as served: a word of a decision's family finds it. The
        # word is typed key by key and search answers every prefix ("St" finds "stamps"), so
        # the first results shown may be a prefix's: wait for the decision among them, and
        # only when it never comes, report what is shown.
        await page.locator(".md-search__input").click()
        from playwright.async_api import TimeoutError as NeverCame

        await page.keyboard.type(word)
        try:
            await page.wait_for_function(
                """id => [...document.querySelectorAll('.md-search-result__item a')].some(a => a.href.includes(id))""",
                arg=decision_id,
                timeout=60000,
            )
        except NeverCame:  # say what search did show
            results = await page.eval_on_selector_all(".md-search-result__item a", "els => els.map(e => e.href)")
            typed = await page.locator(".md-search__input").input_value()
            problems["search"].append(f"{word!r} (typed {typed!r}): {results[:8]}")

    clicked, _ = await asyncio.gather(each(light, targets, click, on_page=watch.page), search(first))
    # Deep pages the nav does not list: a record, a chart, a contract's stopping point.
    deep = [
        origin + found.relative_to(site).as_posix()
        for pattern in (
            "records/measurement/*.html",
            "charts/*.html",
            "contracts/*.html",
            "records/sandwich/*.html",
            "report/2*.html",
            "records/*/2*.html",
        )
        for found in sorted(site.rglob(pattern))[:1]
    ]

    async def wide(page, url: str) -> None:
        await goto(page, url)
        await fits(page, f"{WIDTHS[0]}px")

    async def narrow_dark(page, url: str) -> None:
        await goto(page, url)
        scheme = await page.evaluate("() => document.body && document.body.getAttribute('data-md-color-scheme')")
        if scheme != "slate":
            problems["scheme"].append(f"{page.url}: {scheme}")
        await fits(page, f"{WIDTHS[1]}px")

    reached = list(dict.fromkeys([home, *clicked, *deep]))
    await asyncio.gather(
        each(light, [u for u in reached if u not in clicked], wide, on_page=watch.page),
        each(await context(WIDTHS[1], "dark"), reached, narrow_dark, on_page=watch.page),
    )
    problems["console"] = watch.errors
    problems["off_host"] = watch.off_host
    problems["failed"] = watch.failed
    problems["dialogs"] = watch.dialogs
    return problems


def serve(root: Path):
    env = {**os.environ, **GIT_ENV}
    env.pop("LEDGER_DIR", None)
    proc = subprocess.Popen(
        [str(LEDGER_BIN), "-C", str(root), "site", "serve", "--no-build", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    line = proc.stdout.readline()
    match = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
    assert match, line + proc.stderr.read() if proc.poll() is not None else line
    return proc, match.group(1)


@pytest.mark.parametrize("which", ["demo", "own"])
def test_site_works_wherever_opened_and_fits(which, request, tmp_path):
    """Opened from disk and through `ledger site serve`, both walked at once. From disk every
    nav link is clicked; served, the same bytes are read through the server, so one page of
    each section (with the deep pages and search) shows what serving changes: how a URL
    resolves and what the server answers."""
    root = request.getfixturevalue("demo_ltx2")[0] if which == "demo" else request.getfixturevalue("own_site")
    site = root / "site"
    word, decision_id = family_word(root)
    proc, served = serve(root)
    origins = {"file": site.as_uri() + "/", "serve": served}
    shots = {how: tmp_path / how for how in origins}
    for folder in shots.values():
        folder.mkdir()

    async def both(browser):
        walks = [
            walk(browser, site, origin, word, decision_id, shots[how], which, every=how == "file")
            for how, origin in origins.items()
        ]
        return dict(zip(origins, await asyncio.gather(*walks), strict=True))

    try:
        problems = in_browser(both)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)  # waits, and closes its pipes
    assert problems == {"file": CLEAN, "serve": CLEAN}, problems
    if which == "demo":
        shot = shots["file"] / "demo-home-1400px.png"
        assert shot.stat().st_size > 20_000
        if os.environ.get("LEDGER_UPDATE_SCREENSHOT"):
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(shot, SCREENSHOT)
        assert SCREENSHOT.is_file(), "run with LEDGER_UPDATE_SCREENSHOT=1 to write the README's screenshot"
        # The README's picture is what the demo renders now, give or take the run's own ids
        # and times: it cannot go stale unnoticed.
        changed = differs(shot, SCREENSHOT)
        assert changed is None, f"{changed}; rerun with LEDGER_UPDATE_SCREENSHOT=1 to refresh {SCREENSHOT.name}"


#: Share of pixels that may differ between the README's screenshot and this run's (two runs:
#: 0.06%, their record ids; the picture before issue 26 against the demo after: 3.8%).
SCREENSHOT_TOLERANCE = 0.005


def differs(new: Path, committed: Path) -> str | None:
    """Why `new` is not `committed` at SCREENSHOT_TOLERANCE, or None."""
    from PIL import Image, ImageChops

    a, b = Image.open(new).convert("L"), Image.open(committed).convert("L")
    if a.size != b.size:
        return f"the screenshot is {a.size}, the committed one {b.size}"
    diff = ImageChops.difference(a, b).point(lambda v: 255 if v > 32 else 0)
    share = sum(diff.histogram()[255:]) / (a.size[0] * a.size[1])
    if share > SCREENSHOT_TOLERANCE:
        return f"{share:.1%} of the pixels differ from the committed screenshot (tolerance {SCREENSHOT_TOLERANCE:.1%})"
    return None
