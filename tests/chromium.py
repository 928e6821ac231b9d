"""Debian's chromium for the site tests, driven by Playwright's async API: one browser per
test, several pages loading at once (a page waits about half a second for the network to go
idle, and those waits overlap), every page watched for console errors, dialogs and requests
off the host.

    from chromium import NEEDS_CHROMIUM, Watch, each, needs_chromium, planted_site, run, serving

`NEEDS_CHROMIUM` (a module's `pytestmark`) and `@needs_chromium` (one test) mark tests
`browser` and skip them before any fixture runs when /usr/bin/chromium is missing (a skip
after a site build wastes the build).

The XSS walks (tests/site/test_browser.py, tests/security/test_site_xss.py) share their
setup here: `xss_site` is the site tests' campaign with corpora (`PLANTED`) in every
free-text field, built once per run (`planted_site`); `serving` serves a built site on
127.0.0.1, and `Watch` collects what a page must never do (console errors, dialogs, failed
loads, requests off the host).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

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


def planted_site(tmp_path_factory, name: str, corpus: str, refused: Callable[[Any, Any], None] | None = None) -> Path:
    """The site tests' campaign (tests/site/conftest.py: build_campaign) with `corpus` planted
    in every free-text field, built once per run through the real `ledger site build
    --strict` (tests/conftest.py: shared_build, whichever pytest-xdist worker asks first).
    Returns the built site; read only. When the strict build is expected to refuse the
    corpus, `refused(campaign, result)` asserts the refusal and repairs the campaign, and the
    build is run again."""
    from tests.conftest import run_ledger, shared_build
    from tests.site.conftest import build_campaign

    def make(folder: Path) -> None:
        root = folder / "campaign"
        campaign = build_campaign(root, text=corpus)
        result = run_ledger(root, "site", "build", "--strict")
        if refused is not None:
            refused(campaign, result)
            result = run_ledger(root, "site", "build", "--strict")
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        assert "open " in result.stdout

    return shared_build(tmp_path_factory, name, make) / "campaign" / "site"


#: Host the corpora try to fetch from.
EVIL = "zz.test"
#: Script and markup that must never act: the first corpus (tests/site/test_browser.py).
XSS = (
    '</title><script>alert("t")</script> <img src=x onerror=alert("i")> [x](javascript:alert("l")) '
    '{: onclick="alert(\'a\')"} `` </code><script>alert("c")</script> "><svg onload=alert("s")> '
    '&lt;script&gt;alert("e")&lt;/script&gt; | <a href="javascript:alert(\'h\')">h</a>'
)
#: The second corpus (tests/security/test_site_xss.py), aimed at what the first does not
#: cover: each payload tries to fetch from EVIL or run script by another route.
FETCH_MARKDOWN = " ".join(
    [
        f"![p](https://{EVIL}/m.png)",
        f"![r][r]\n\n[r]: https://{EVIL}/r.png",
        f"<https://{EVIL}/a>",
        f'{{: style="background:url(https://{EVIL}/t.png)" }}',
        f'<img src="https://{EVIL}/i.png">',
    ]
)
FETCH_HTML = " ".join(
    [
        f'<link rel="stylesheet" href="https://{EVIL}/x.css">',
        f'<iframe src="https://{EVIL}/f"></iframe>',
        f'<meta http-equiv="refresh" content="0;url=https://{EVIL}/">',
        f'<base href="https://{EVIL}/">',
        f'<object data="https://{EVIL}/o"></object>',
        f"<style>@import url(https://{EVIL}/s.css);body{{background:url(//{EVIL}/b.png)}}</style>",
    ]
)
SCRIPT = " ".join(
    [
        "<svg><script>window.__pwned=1</script></svg>",
        '<a href="&#106;avascript:window.__pwned=2">entity</a>',
        "<a href=' javascript:window.__pwned=3'>space</a>",
        '<details open ontoggle="window.__pwned=4">',
        '<body onload="window.__pwned=5">',
        "{{ 7*7 }} {% if true %}jinja{% endif %} {# c #}",
        "${7*7} <%= 7*7 %>",
        "\u202e\u0000control",
    ]
)
#: The corpora planted together in one site build each. A record title holds at most 500
#: characters, so not every corpus fits in one text: the first corpus goes with the short
#: FETCH_MARKDOWN (each its own paragraph where a field is rendered as Markdown, so one
#: corpus' open code span or link cannot swallow the other's). A payload that acts is found
#: whichever corpus it came with. Three builds (and one refused first try) serve every XSS
#: test, where a build per corpus cost five.
PLANTED = {
    "xss-fetch-markdown": XSS + "\n\n" + FETCH_MARKDOWN,
    "fetch-html": FETCH_HTML,
    "script": SCRIPT,
}


def _refuses_the_remote_image(campaign, result) -> None:
    """A spec page's body is Markdown its author wrote, rendered as Markdown: an image from
    another host there is refused by the strict build's link check, by name. That corpus is
    taken out of that body (the others stay), and the build runs again."""
    assert result.returncode == 1, result.stdout[-2000:] + result.stderr[-2000:]
    assert "specs/decode-speed.html" in result.stderr and "from another host" in result.stderr
    spec = campaign.ledger.specs_dir / "decode-speed.md"
    front, body = spec.read_text(encoding="utf-8").split("\n---\n", 1)
    assert FETCH_MARKDOWN in body
    spec.write_text(front + "\n---\n" + body.replace(FETCH_MARKDOWN, ""), encoding="utf-8")


def xss_site(tmp_path_factory, group: str = "xss-fetch-markdown") -> Path:
    """The site tests' campaign with the corpora of `group` (PLANTED) in every free-text
    field, built once per run through the real `ledger site build --strict` (`planted_site`),
    refused first for the remote image in a spec body when FETCH_MARKDOWN is planted. Read
    only; a positive control page may be added under `xss-control/`
    (tests/security/test_site_xss.py), which no other test reads."""
    text = PLANTED[group]
    refused = _refuses_the_remote_image if FETCH_MARKDOWN in text else None
    return planted_site(tmp_path_factory, f"xss-{group}", text, refused)


@contextmanager
def serving(site: Path) -> Iterator[str]:
    """`site` served on 127.0.0.1 by ledger's own server (what `ledger site serve` runs), in a
    thread of this process; yields its base URL."""
    from ledger.site.serve import server

    httpd = server(site, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


class Watch:
    """What no page may do, across every page it watches: console errors and uncaught
    exceptions (`errors`), dialogs (`dialogs`, each dismissed), loads of its own host that
    failed (`failed`; with `http_errors`, responses of 400 and above too), and requests off
    the host (`off_host`, each aborted by `context`'s route). `origin` is the site's base URL
    (http://127.0.0.1:PORT/ or file:///...)."""

    def __init__(self, origin: str, *, http_errors: bool = False):
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.failed: list[str] = []
        self.off_host: list[str] = []
        self.scheme = urlsplit(origin).scheme
        self.host = urlsplit(origin).hostname
        self.http_errors = http_errors

    def local(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return True
        return parts.scheme == "file" if self.scheme == "file" else parts.hostname == self.host

    def clear(self) -> None:
        for seen in (self.errors, self.dialogs, self.failed, self.off_host):
            seen.clear()

    async def context(self, context) -> None:
        """Abort, and keep, every request of `context` off the host."""

        async def route(r) -> None:
            if self.local(r.request.url):
                await r.continue_()
            else:
                self.off_host.append(r.request.url)
                await r.abort()

        await context.route("**/*", route)

    def page(self, page) -> None:
        """Watch `page` (an `on_page` for `each`)."""

        async def on_dialog(dialog) -> None:
            self.dialogs.append(dialog.message)
            await dialog.dismiss()

        page.on("console", lambda m: self.errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"{page.url}: {e}"))
        page.on("dialog", on_dialog)
        # ERR_ABORTED is a load the next navigation cancelled (a favicon), not a missing file.
        page.on(
            "requestfailed",
            lambda r: (
                self.failed.append(f"{r.url}: {r.failure}")
                if self.local(r.url) and "ERR_ABORTED" not in str(r.failure)
                else None
            ),
        )
        if self.http_errors:
            page.on("response", lambda r: self.failed.append(f"{r.url}: HTTP {r.status}") if r.status >= 400 else None)
