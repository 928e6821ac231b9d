"""The site under hostile text: a second XSS corpus (tests/chromium.py: FETCH_MARKDOWN,
FETCH_HTML, SCRIPT), aimed at what tests/site/test_browser.py's does not cover (payloads that
make the browser fetch from elsewhere, template injection, entity and scheme tricks),
planted with the first in every free-text field of the site tests' campaign
(tests/site/conftest.build_campaign). Every page of the built site is opened in Chromium:
no script runs, no dialog opens, and no request leaves 127.0.0.1.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from chromium import EVIL, PLANTED, Watch, each, needs_chromium, serving, xss_site
from chromium import run as in_browser

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", params=sorted(PLANTED))
def built(request, tmp_path_factory) -> Path:
    """The campaign's site with one group of corpora planted (tests/chromium.py: PLANTED;
    this file's three and tests/site/test_browser.py's), built once per run through the real
    command. Read only."""
    return xss_site(tmp_path_factory, request.param)


class _Live(HTMLParser):
    """Markup that would act in a browser: handlers, scripts with the payload, off-host fetches."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs) -> None:
        for name, value in attrs:
            value = (value or "").strip().lower()
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}>")
            if value.startswith("javascript:"):
                self.found.append(f"<{tag} {name}={value[:60]}>")
            # A link is followed only when clicked; what a page loads by itself is src, data, style...
            fetched = urlsplit(value).hostname == EVIL if name == "href" and tag == "a" else EVIL in value
            if name in ("src", "href", "data", "action", "content", "style", "srcset", "poster") and fetched:
                self.found.append(f"<{tag} {name}={value[:60]}>")
        if tag in ("iframe", "object", "base", "embed"):
            self.found.append(f"<{tag}>")
        self._in_script = tag in ("script", "style")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and ("__pwned" in data or EVIL in data):
            self.found.append(f"script/style text: {data[:60]}")


def test_the_built_html_holds_the_corpus_as_text_only(built: Path) -> None:
    pages = [p for p in built.rglob("*.html") if "xss-control" not in str(p)]
    assert len(pages) > 10
    for html in pages:
        parser = _Live()
        parser.feed(html.read_text(encoding="utf-8"))
        assert parser.found == [], (html, parser.found)
    # Template syntax typed by a user is shown as typed, never evaluated by Jinja2.
    decisions = (built / "decisions" / "index.html").read_text(encoding="utf-8")
    if "7*7" in decisions:
        assert "{{ 7*7 }}" in decisions and " 49 " not in decisions


@pytest.fixture(scope="module")
def served(built: Path):
    with serving(built) as url:
        yield url


# Skipped before its site is built when chromium is missing (tests/chromium.py).
@needs_chromium
def test_every_page_runs_no_script_and_requests_nothing_off_host(built: Path, served: str) -> None:
    # Non-directory URLs (the offline plugin): every page is its own .html file.
    paths = sorted(str(p.relative_to(built)) for p in built.rglob("*.html") if "xss-control" not in str(p))
    # Positive control: a page that does what the corpus tries, so a blind watcher fails. It
    # lives in its own folder of the shared build, which no other test reads.
    control = built / "xss-control" / "index.html"
    control.parent.mkdir(exist_ok=True)
    control.write_text(
        f'<img src="https://{EVIL}/c.png"><script>window.__pwned = "control"; alert("control")</script>',
        encoding="utf-8",
    )
    # Dialogs, and requests off 127.0.0.1 (aborted).
    watch = Watch(served)

    async def visit(page, rel: str) -> list[str]:
        await page.goto(served + rel, wait_until="networkidle")
        pwned = [rel] if await page.evaluate("() => window.__pwned || null") is not None else []
        # Open every <details> and hover nothing: handlers would fire now if any were live
        # (a toggle event is queued: let it run before looking).
        await page.evaluate(
            "() => { document.querySelectorAll('details').forEach(d => d.open = !d.open);"
            " return new Promise(done => setTimeout(done, 50)); }"
        )
        if await page.evaluate("() => window.__pwned || null") is not None:
            pwned.append(rel)
        return pwned

    async def main(browser) -> tuple[tuple, list[str]]:
        context = await browser.new_context()
        await watch.context(context)
        seen = (
            await each(context, ["xss-control/"], visit, on_page=watch.page),
            list(watch.dialogs),
            list(watch.off_host),
        )
        watch.clear()
        # Every page, several at once (tests/chromium.py: each).
        found = await each(context, paths, visit, on_page=watch.page)
        return seen, [rel for hits in found for rel in hits]

    seen, pwned = in_browser(main)
    assert seen == ([["xss-control/", "xss-control/"]], ["control"], [f"https://{EVIL}/c.png"])
    assert len(paths) > 10
    assert pwned == []
    assert watch.dialogs == []
    assert watch.off_host == []
