"""`ledger demo` dates (issue 28 item 7): the LTX-2 demo's decisions, report and chart axes are
dated from the campaign's data (2026-07-21/22), not the day the demo runs; only a record
page's "Written" stamp and the home's "What changed lately" (its column is "Written") say
when it was entered."""

from __future__ import annotations

import re
from datetime import UTC, datetime


def test_the_demo_is_dated_by_its_campaign(demo_ltx2) -> None:
    target, _, _ = demo_ltx2
    docs = target / ".ledger-build" / "docs"
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert sorted(p.name for p in (docs / "report").glob("*.md")) == ["2026-07.md", "index.md"]
    for page in docs.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        if page == docs / "index.md":  # "What changed lately" is by the time written, and says so
            head, _, rest = text.partition("## What changed lately")
            text = head + rest.partition("\n## ")[2]
        stray = [line for line in text.splitlines() if today in line and not line.startswith("| Written |")]
        assert not stray, (page, stray[:3])
    home = (docs / "index.md").read_text(encoding="utf-8")
    newest = home.split("## Newest decisions", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"2026-\d\d-\d\d", newest)) <= {"2026-07-21", "2026-07-22"}, newest
    for svg in (target / "site").rglob("*.svg"):
        assert today not in svg.read_text(encoding="utf-8"), svg
