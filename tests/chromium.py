"""Debian's chromium for the site tests, driven by Playwright's async API: one browser per
test, several pages loading at once (a page waits about half a second for the network to go
idle, and those waits overlap), every page watched for console errors, dialogs and requests
off the host.

    from chromium import NEEDS_CHROMIUM, each, needs_chromium, run

`NEEDS_CHROMIUM` (a module's `pytestmark`) and `@needs_chromium` (one test) mark tests
`browser` and skip them before any fixture runs when /usr/bin/chromium is missing (a skip
after a site build wastes the build).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
NEEDS_CHROMIUM = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="/usr/bin/chromium is not installed (apt-get install chromium); scripts/setup.sh --test installs it",
    ),
]


def needs_chromium(test):
    """Mark one test as NEEDS_CHROMIUM does a module."""
    for mark in reversed(NEEDS_CHROMIUM):
        test = mark(test)
    return test


#: Pages of one context loading at once. Two cores run about three pages' rendering while
#: the others wait for their network to go idle.
PARALLEL = 3
#: A page's actions time out after this long (ms): eight engineers share the two cores.
TIMEOUT_MS = 90_000

T = TypeVar("T")
R = TypeVar("R")


async def each(
    context,
    items: Iterable[T],
    visit: Callable[[Any, T], Awaitable[R]],
    *,
    parallel: int = PARALLEL,
    on_page: Callable[[Any], None] | None = None,
) -> list[R]:
    """`visit(page, item)` for every item, on up to `parallel` pages of `context` at once (each
    page visits its items one after another); the results in the items' order. `on_page(page)`
    is called once for each page opened (to watch it)."""
    todo = list(enumerate(items))
    results: dict[int, R] = {}

    async def worker() -> None:
        page = await context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        if on_page:
            on_page(page)
        try:
            while todo:
                i, item = todo.pop(0)
                results[i] = await visit(page, item)
        finally:
            await page.close()

    await asyncio.gather(*(worker() for _ in range(min(parallel, len(todo)) or 0)))
    return [results[i] for i in sorted(results)]


async def launch(playwright):
    return await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)


def run(main: Callable[[Any], Awaitable[R]]) -> R:
    """`main(browser)` with one chromium launched for it, closed after."""
    from playwright.async_api import async_playwright

    async def go() -> R:
        async with async_playwright() as p:
            browser = await launch(p)
            try:
                return await main(browser)
            finally:
                await browser.close()

    return asyncio.run(go())
