"""The demo's site and the project's own site in Debian's chromium, opened from disk (file://)
and through `ledger site serve`: every navigation link clicked, no page wider than its column
at 1,400 and 390 px, no console error, no request off the host, and search finding a decision
by a word of its family. The demo's home page at 1,400 px is the README's screenshot
(LEDGER_UPDATE_SCREENSHOT=1 rewrites docs/img/demo-home.png)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import GIT_ENV, LEDGER_BIN, ROOT, run_ledger

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-sync"]
WIDTHS = (1400, 390)
SCREENSHOT = ROOT / "docs" / "img" / "demo-home.png"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dash") / "demo"
    result = run_ledger(root.parent, "demo", str(root))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return root


@pytest.fixture(scope="module")
def own_root(tmp_path_factory) -> Path:
    """A copy of this repository's docs, ledger and configuration, built as its own site."""
    root = tmp_path_factory.mktemp("own") / "repo"
    root.mkdir()
    for name in ("docs", "ledger"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("evidence", "__pycache__"))
    for name in ("mkdocs.yml", "ledger.yaml", "README.md"):
        shutil.copy2(ROOT / name, root / name)
    result = run_ledger(root, "site", "build", "--strict")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return root


def family_word(root: Path) -> tuple[str, str]:
    """A distinctive word of a decision's family, and that decision's id."""
    from ledger.store import Ledger

    decision = Ledger.open(root).records("decision")[0]
    words = sorted(re.findall(r"[A-Za-z][A-Za-z]{4,}", decision.family), key=len, reverse=True)
    return words[0], decision.id


class Watch:
    """Console errors, failed requests and requests off the host, across every page."""

    def __init__(self, page, origin: str):
        self.errors: list[str] = []
        self.off_host: list[str] = []
        self.failed: list[str] = []
        scheme = urlsplit(origin).scheme
        host = urlsplit(origin).hostname

        def local(url: str) -> bool:
            parts = urlsplit(url)
            if parts.scheme in ("data", "blob", "about"):
                return True
            return parts.scheme == "file" if scheme == "file" else parts.hostname == host

        page.on("console", lambda m: self.errors.append(f"{page.url}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"{page.url}: {e}"))
        # ERR_ABORTED is a load the next navigation cancelled (a favicon), not a missing file.
        page.on(
            "requestfailed",
            lambda r: (
                self.failed.append(f"{r.url}: {r.failure}")
                if local(r.url) and "ERR_ABORTED" not in str(r.failure)
                else None
            ),
        )

        def route(r) -> None:
            if local(r.request.url):
                r.continue_()
            else:
                self.off_host.append(r.request.url)
                r.abort()

        page.context.route("**/*", route)


def overflow(page) -> list[str]:
    """What sticks out of the main column: the column itself, or any table or image in it."""
    return page.evaluate("""() => {
        const main = document.querySelector('.md-content');
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


def walk(site: Path, origin: str, word: str, decision_id: str, shots: Path, name: str) -> dict[str, list[str]]:
    """Click every nav link, check widths on every page reached, search; return what went wrong."""
    from playwright.sync_api import sync_playwright

    problems: dict[str, list[str]] = {"nav": [], "overflow": [], "search": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 900})
            page = context.new_page()
            watch = Watch(page, origin)
            home = origin + "index.html"
            page.goto(home, wait_until="networkidle")
            hrefs = page.eval_on_selector_all(
                "nav.md-nav--primary a.md-nav__link[href]", "els => [...new Set(els.map(e => e.getAttribute('href')))]"
            )
            assert len(hrefs) >= 8, hrefs
            reached: list[str] = []
            for href in hrefs:
                page.goto(home, wait_until="networkidle")
                link = page.locator(f'nav.md-nav--primary a.md-nav__link[href="{href}"]').first
                # A link inside a collapsed section is clicked as a reader's click would be.
                with page.expect_navigation(wait_until="networkidle"):
                    link.evaluate("a => a.click()")
                if page.locator("article h1").count() != 1:
                    problems["nav"].append(f"{href} -> {page.url}")
                reached.append(page.url)
            # Deep pages the nav does not list: a record, a chart, a contract's stopping point.
            for pattern in (
                "records/measurement/*.html",
                "charts/*.html",
                "contracts/*.html",
                "records/sandwich/*.html",
            ):
                for found in sorted(site.rglob(pattern))[:1]:
                    reached.append(origin + found.relative_to(site).as_posix())
            for width in WIDTHS:
                page.set_viewport_size({"width": width, "height": 900})
                for url in dict.fromkeys(reached):
                    page.goto(url, wait_until="networkidle")
                    for issue in overflow(page):
                        problems["overflow"].append(f"{width}px {url}: {issue}")
                    if url == home:
                        page.screenshot(path=str(shots / f"{name}-home-{width}.png"), full_page=False)
            # Search, from disk as well as served: a word of a decision's family finds it.
            page.set_viewport_size({"width": 1400, "height": 900})
            page.goto(home, wait_until="networkidle")
            page.locator(".md-search__input").click()
            page.keyboard.type(word)
            page.wait_for_function(
                "() => document.querySelectorAll('.md-search-result__item').length > 0", timeout=60000
            )
            results = page.eval_on_selector_all(".md-search-result__item a", "els => els.map(e => e.href)")
            if not any(decision_id in r for r in results):
                problems["search"].append(f"{word!r}: {results[:8]}")
            problems["console"] = watch.errors
            problems["off_host"] = watch.off_host
            problems["failed"] = watch.failed
        finally:
            browser.close()
    return problems


def _needs_chromium() -> None:
    if not CHROMIUM.exists():
        pytest.skip(
            "/usr/bin/chromium is not installed (apt-get install chromium); scripts/setup.sh --test installs it"
        )


@pytest.mark.parametrize("which", ["demo", "own"])
@pytest.mark.parametrize("how", ["file", "serve"])
def test_site_works_wherever_opened_and_fits(which, how, request, tmp_path):
    _needs_chromium()
    root = request.getfixturevalue("demo_root" if which == "demo" else "own_root")
    site = root / "site"
    word, decision_id = family_word(root)
    proc = None
    if how == "file":
        origin = site.as_uri() + "/"
    else:
        proc, origin = serve(root)
    try:
        problems = walk(site, origin, word, decision_id, tmp_path, which)
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=10)
    assert problems == {"nav": [], "overflow": [], "search": [], "console": [], "off_host": [], "failed": []}
    if which == "demo" and how == "file":
        shot = tmp_path / "demo-home-1400.png"
        assert shot.stat().st_size > 20_000
        if os.environ.get("LEDGER_UPDATE_SCREENSHOT"):
            SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(shot, SCREENSHOT)
        assert SCREENSHOT.is_file(), "run with LEDGER_UPDATE_SCREENSHOT=1 to write the README's screenshot"
