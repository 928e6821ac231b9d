"""The built site in a real browser (Debian's chromium driven by Playwright), with an XSS
corpus planted in every free-text field of the campaign."""

from __future__ import annotations

from pathlib import Path

import chromium
import pytest
from chromium import Watch, each, needs_chromium, serving
from chromium import run as in_browser

from tests.conftest import cli, run_ledger

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def xss_site(tmp_path_factory) -> Path:
    """The campaign with this file's corpus planted (tests/chromium.py: XSS, with
    FETCH_MARKDOWN), built once per run through the real command and shared with
    tests/security/test_site_xss.py (tests/chromium.py: xss_site). Read only."""
    return chromium.xss_site(tmp_path_factory)


@pytest.fixture(scope="module")
def served(xss_site):
    with serving(xss_site) as url:
        yield url


def _pages(site: Path) -> dict[str, str]:
    # Non-directory URLs (the offline plugin): every page is a PAGE.html file.
    record = next(p for p in (site / "records/measurement").glob("*.html") if len(p.stem) == 26)
    chart = next(p for p in (site / "charts").glob("decode*.html"))
    return {
        "home": "index.html",
        "decisions": "decisions/index.html",
        "record": f"records/measurement/{record.name}",
        "chart": f"charts/{chart.name}",
        "spec": "specs/decode-speed.html",
        "hypotheses": "hypotheses/index.html",
        "report": "report/2026-07.html",
        "sandwiches": "sandwiches/index.html",
        "listing": "records/measurement/2026-07.html",
        "decision": "records/decision/01KXZFFP80000000000000000D.html",
    }


INJECTED = """() => {
    const bad = [];
    for (const el of document.querySelectorAll('*')) {
        for (const attr of el.getAttributeNames()) {
            if (attr.startsWith('on')) bad.push(el.tagName + ' ' + attr);
        }
        const href = el.getAttribute('href') || el.getAttribute('src') || '';
        if (/^\\s*javascript:/i.test(href)) bad.push(el.tagName + ' ' + href);
    }
    for (const s of document.querySelectorAll('script')) {
        if (s.textContent.includes('alert(')) bad.push('script ' + s.textContent.slice(0, 40));
    }
    for (const i of document.querySelectorAll('img[src="x"], svg[onload]')) bad.push(i.outerHTML);
    return bad;
}"""


# Skipped before its site is built when chromium is missing (tests/chromium.py).
@needs_chromium
def test_pages_load_clean_and_run_no_injected_script(served, xss_site, tmp_path):
    # Console errors, dialogs, failed loads and HTTP errors, requests off 127.0.0.1 (aborted).
    watch = Watch(served, http_errors=True)

    async def visit(page, item: tuple[str, str]) -> tuple[str, int, list[str]]:
        name, path = item
        # A late asset cut off by the next navigation is no failure of the site.
        await page.goto(served + path, wait_until="networkidle")
        await page.wait_for_timeout(100)
        headings = await page.locator("article h1").count()
        injected = await page.evaluate(INJECTED)
        await page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=False)
        return name, headings, injected

    async def main(browser):
        context = await browser.new_context()
        await watch.context(context)
        # The pages, several at once (tests/chromium.py: each).
        seen = await each(context, list(_pages(xss_site).items()), visit, on_page=watch.page)
        # The corpus is shown as typed, not swallowed: the reader sees the text.
        page = await context.new_page()
        watch.page(page)
        await page.goto(served + "decisions/index.html", wait_until="networkidle")
        shown = await page.inner_text("article")
        await page.close()
        return seen, shown

    seen, shown = in_browser(main)
    for name, headings, injected in seen:
        assert headings == 1, name
        assert injected == [], f"{name}: {injected}"
    assert len(seen) == len(_pages(xss_site))
    assert '</title><script>alert("t")</script>' in shown
    assert watch.dialogs == []
    assert watch.errors == []
    assert watch.failed == []
    assert watch.off_host == []
    assert (tmp_path / "home.png").stat().st_size > 10_000


def test_built_html_has_no_live_user_markup(xss_site):
    # xss-control/ is test_site_xss's positive control, live on purpose: not the site's.
    for html in (p for p in xss_site.rglob("*.html") if "xss-control" not in str(p)):
        text = html.read_text(encoding="utf-8")
        assert "<script>alert(" not in text, html
        assert "<img src=x" not in text and "<svg onload" not in text, html
        assert 'href="javascript:' not in text, html


def test_strict_build_fails_on_a_broken_link_and_names_it(repo):
    # The link check reads the built pages, whatever records made them: a ledger with no
    # record and one spec page is a build of a few pages, where the campaign's is forty.
    from ledger.store import Ledger

    specs = Ledger.open(repo).specs_dir
    specs.mkdir(parents=True, exist_ok=True)
    (specs / "broken.md").write_text("---\ntitle: Broken\n---\n\nSee [nothing](missing.md).\n", encoding="utf-8")
    result = run_ledger(repo, "site", "build", "--strict")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "specs/broken.html" in result.stderr and "missing" in result.stderr
    relaxed = cli(repo, "site", "build")  # the same build, in this process, without --strict
    assert relaxed.returncode == 0 and "warning:" in relaxed.stderr
