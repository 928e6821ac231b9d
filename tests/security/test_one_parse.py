"""Issue 22, item 7: one Markdown parse, one truth. The page rules, `ledger status` and the
site read a spec page through one parser (`ledger.pages.markdown.body_tokens`, raw HTML
off), and the site renders those very tokens. Before, the checker parsed with HTML on: an
unclosed `<!--` made the rest of the page one HTML block that no page rule and no `ledger
status` saw, while the site (HTML off) showed all of it.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from checks.check_helpers import commit, hook_push, page
from conftest import cli, git

from ledger import pages
from ledger.site.context import Spec
from ledger.site.specs import body_html

#: Raw HTML a page's author can open and never close (CommonMark's seven HTML block kinds),
#: a closed comment, and inline HTML: each hid what follows it from the checker, or itself.
OPENERS = {
    "unclosed comment": "<!-- draft, not for the rules",
    "closed comment": "<!-- 7.4321x said nowhere -->",
    "comment then text": "<!-- x --> the rest 3.4567x",
    "script": "<script>",
    "pre": "<pre>",
    "style": "<style>",
    "processing instruction": "<?php",
    "declaration": "<!DOCTYPE x",
    "cdata": "<![CDATA[",
    "div": "<div>",
    "custom tag": "<made-up-tag>",
    "inline span": 'a <span class="x">5.4321x</span> b',
}


def spec_page(opener: str) -> str:
    return (
        "---\ntitle: Decode\n---\n# Decode\n\nThe plan.\n\n"
        f"{opener}\n\n"
        "At 20 workers the decode is 9.1234x faster, 21-23% spread.\n\n"
        "| arm | speedup |\n|---|---|\n| fused | 2.3456x |\n\n"
        "## 7. Owed\n\n- the per-site dispatch test\n"
    )


def visible_text(fragment: str) -> str:
    """What a reader of the rendered HTML sees: the text between the tags, one block a line."""
    text = re.sub(r"</(p|li|h\d|td|th|pre)>", "\n\n", fragment)
    return html.unescape(re.sub(r"<[^>]+>", " ", text))


@pytest.mark.parametrize("name", sorted(OPENERS))
def test_what_the_site_renders_is_what_the_page_rules_judge(name: str) -> None:
    text = spec_page(OPENERS[name])
    fm = pages.front_matter(text)
    rendered = body_html(Spec("decode", "ledger/specs/decode.md", dict(fm.data), fm.body, fm.body_line + 1))
    shown = visible_text(rendered)
    judged = {f.text for f in pages.quoted_figures(text)}
    seen = set(re.findall(r"\d+\.\d+x", shown))
    assert judged == seen, (name, judged, seen, rendered)
    assert {"9.1234x", "2.3456x"} <= judged
    assert [i.text for i in pages.owed_items(text)] == ["the per-site dispatch test"]
    assert "the per-site dispatch test" in shown
    # the figure after the opener is judged at its own line
    line = text.splitlines().index("At 20 workers the decode is 9.1234x faster, 21-23% spread.") + 1
    assert any(f.line == line for f in pages.quoted_figures(text) if f.text == "9.1234x")


def test_a_figure_after_an_unclosed_comment_is_refused_at_push_shown_by_status_and_built(pushed: Path) -> None:
    """Through the real commands: the push through the installed hook is refused with the rule,
    the file and the fix; `ledger status` lists the owed item below the comment; the site
    (a real MkDocs build) shows the figure the rules judged."""
    page(pushed, "decode.md", spec_page(OPENERS["unclosed comment"]))
    commit(pushed, "spec page with an unclosed comment")
    refused = hook_push(pushed)
    assert refused.returncode != 0, refused.stderr
    report = refused.stderr
    assert "ledger/specs/decode.md" in report
    assert "error[figures-spread]" in report and "9.1234x carries 5 significant figures" in report
    assert "error[owed-high-water]" in report and "the per-site dispatch test" in report
    assert "fix: Quote only the supported figures" in report
    assert git(pushed, "rev-parse", "origin/main").stdout != git(pushed, "rev-parse", "HEAD").stdout

    status = json.loads(cli(pushed, "status", "--format", "json").stdout)
    assert "the per-site dispatch test" in json.dumps(status)

    built = cli(pushed, "site", "build")
    assert built.returncode == 0, built.stdout + built.stderr
    page_html = (pushed / "site" / "specs" / "decode.html").read_text()
    assert "9.1234x" in page_html and "the per-site dispatch test" in page_html
    assert "&lt;!-- draft" in page_html


def test_a_body_that_opens_with_a_fence_is_one_page_to_the_rules_status_and_site(tmp_path: Path) -> None:
    """A body whose first line is `---` again: the readers that get the body (status, the
    site's owed lists) used to split it as front matter a second time and lose what it held."""
    text = "---\ntitle: Decode\n---\n---\n## Owed\n\n- the hidden owed item\n\n---\n\nMore.\n"
    (tmp_path / "decode.md").write_text(text)
    judged = [i.text for i in pages.owed_items(text)]
    listed, unreadable = pages.read_spec_owed(tmp_path)
    assert judged == [o.text for o in listed] == ["the hidden owed item"] and not unreadable
    fm = pages.front_matter(text)
    spec = Spec("decode", "ledger/specs/decode.md", dict(fm.data), fm.body, fm.body_line + 1)
    assert "the hidden owed item" in body_html(spec)
    assert [i.text for i in pages.owed_items(spec.body, body=True)] == judged


def test_a_guarded_document_hides_nothing_behind_raw_html(repo: Path) -> None:
    """A `guard:` document outside the specs folder (MkDocs renders it, raw HTML live) is read
    the same way: text after an unclosed `<!--` is judged, not skipped."""
    config = repo / "ledger.yaml"
    assert "guard: []" in config.read_text()
    config.write_text(config.read_text().replace("guard: []", "guard: [docs/*.md]"))
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text(spec_page(OPENERS["unclosed comment"]))
    report = json.loads(cli(repo, "check", "--all", "--format", "json").stdout)
    found = {(v["rule"], v["file"]) for v in report["violations"] if v["severity"] == "error"}
    assert ("figures-spread", "docs/guide.md") in found, report
