"""Issue 22, item 10: ESC/OSC sequences in a record are printed escaped by `show`, `list`,
`status` and `check`, never raw (a terminal can be driven by them: retitled, cleared, sent
keystrokes, given a hyperlink). One filter, `ledger.cli.output.visible`, through the real
commands."""

from __future__ import annotations

import json
from pathlib import Path

from checks.check_helpers import add, commit
from conftest import cli

EVIL = "\x1b]0;owned\x07\x1b[2J\x1b]8;;https://evil.invalid\x1b\\click\x1b]8;;\x1b\\\x9b31m\r"


def test_control_sequences_in_a_record_print_escaped(repo: Path) -> None:
    rid = add(repo, "note", {"body": f"before {EVIL} after"})
    add(repo, "issue", {"number": 3, "title": f"issue {EVIL}", "owner": "ana"})
    commit(repo, "records with control characters")
    for args in (("show", rid), ("list",), ("status",), ("list", "--kind", "issue"), ("check", "--all")):
        result = cli(repo, *args, env={"COLUMNS": "400"})
        out = result.stdout + result.stderr
        for raw in ("\x1b", "\x07", "\x9b", "\r"):
            assert raw not in out, (args, json.dumps(out))
    shown = cli(repo, "show", rid, env={"COLUMNS": "400"}).stdout
    assert "\\x1b]0;owned" in shown
    # Machines still get the exact value, JSON-escaped (\u001b), never raw.
    printed = cli(repo, "show", rid, "--format", "json").stdout
    assert "\x1b" not in printed and "\\u001b]0;owned" in printed


def test_bidi_and_zero_width_characters_print_escaped(repo: Path) -> None:
    """Hostile round: U+202E in a decision's title made `list`, `show` and `status` print
    "verdict: \\u202edetcejer\\u202c" as "verdict: rejected" (Trojan Source); bidi controls and
    zero-width characters are now shown as `\\u202e`, like control characters."""
    title = "verdict: \u202edetcejer\u202c ok\u200b\u2066x\u2069"
    rid = add(repo, "decision", {"title": title, "family": "fp8", "verdict": "accepted"})
    commit(repo, "a decision with bidi controls")
    for args in (("show", rid), ("list",), ("status",)):
        out = cli(repo, *args, env={"COLUMNS": "400"}).stdout
        for raw in ("\u202e", "\u202c", "\u200b", "\u2066", "\u2069"):
            assert raw not in out, (args, json.dumps(out))
    assert "\\u202edetcejer\\u202c" in cli(repo, "show", rid, env={"COLUMNS": "400"}).stdout


def test_bidi_and_zero_width_characters_are_escaped_on_the_site(repo: Path) -> None:
    """The same characters reached the site's HTML raw (titles, nav, search index): the
    site writes them escaped from the same definition (ledger.text)."""
    from ledger.site.builder import build_site
    from ledger.store.ledger import Ledger

    title = "verdict: \u202edetcejer\u202c ok\u200b\u2066x\u2069"
    add(repo, "decision", {"title": title, "family": "fp8 \u202efamily", "verdict": "accepted"})
    commit(repo, "a decision with bidi controls")
    site = repo / "built"
    build_site(Ledger.open(repo), out=site, strict=False)
    texts = {p: p.read_text(encoding="utf-8") for p in site.rglob("*") if p.suffix in (".html", ".json", ".md")}
    for path, text in texts.items():
        for raw in ("\u202e", "\u202c", "\u200b", "\u2066", "\u2069"):
            assert raw not in text, (path, raw)
    assert any("\\u202edetcejer\\u202c" in text for text in texts.values())
