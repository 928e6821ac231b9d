"""User text never becomes live Markdown or HTML."""

from __future__ import annotations

import markdown
import pytest

from ledger.site.escape import md_block, md_code, md_inline, md_url

CORPUS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    '{: onclick="alert(1)"}',
    "`</code><script>alert(1)</script>`",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "# heading\n- item\n1. one\n    code",
    "a | b | c",
    "*emph* __strong__ [ref]: http://x",
]


def _html(md_text: str) -> str:
    return markdown.markdown(md_text, extensions=["tables", "toc", "attr_list", "admonition"])


@pytest.mark.parametrize("text", CORPUS)
def test_inline_text_renders_as_typed(text):
    html = _html(f"| a |\n|---|\n| {md_inline(text)} |\n")
    assert (
        "<script" not in html
        and "<img" not in html
        and "href" not in html
        and "onclick=" not in html.replace("onclick=&quot;", "")
    )
    assert "<td>" in html and html.count("<td>") == 1  # the pipe did not open a column


@pytest.mark.parametrize("text", CORPUS)
def test_block_text_renders_as_plain_paragraphs(text):
    html = _html(str(md_block(text)))
    assert "<script" not in html and "<img" not in html and "href" not in html
    assert "<h1" not in html and "<li>" not in html and "<pre>" not in html


def test_code_span_keeps_backticks_and_html_inert():
    html = _html(f"x {md_code('a `b` <script>alert(1)</script>')} y")
    assert "<code>a `b` &lt;script&gt;alert(1)&lt;/script&gt;</code>" in html


def test_only_http_urls_become_links():
    assert "href" not in _html(str(md_url("javascript:alert(1)")))
    assert 'href="https://example.invalid/a%28b%29"' in _html(str(md_url("https://example.invalid/a(b)")))
