"""Hypotheses (open, supported, refuted, unverified), owed items from spec pages, issues."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from .. import pages
from ..analysis.keyed import issue_closed, issue_owner, live_records, owner_of, settled
from ..analysis.status import owed_mutations
from .context import Page, SiteData
from .specs import page_of

PAGE = "hypotheses/index.md"
ORDER = ("open", "unverified", "supported", "refuted")


def owed(data: SiteData) -> list[dict]:
    """Owed items from the spec pages' bodies (the checker's parser) and front matter, then
    the mutations that survived (`ledger status` lists the same)."""

    lookup = issue_owner(data.records)
    closed = issue_closed(data.records)  # an item whose issues are all closed is owed no more
    out: list[dict[str, Any]] = []
    for spec in data.specs:
        href = posixpath.relpath(page_of(spec), posixpath.dirname(PAGE))
        for item in pages.owed_items(spec.body, body=True):
            if settled(item.issues, closed):
                continue
            out.append(
                {
                    "text": item.text,
                    "owner": owner_of(item.owner, item.issues, lookup) or "unowned",
                    "issues": ", ".join(f"#{n}" for n in item.issues),
                    "spec": spec.name,
                    "href": href,
                    "record": None,
                }
            )
        front = spec.front.get("owed") or []
        for entry in front if isinstance(front, list) else [front]:
            entry = entry if isinstance(entry, dict) else {"item": entry}
            issue = entry.get("issue")
            numbers = [int(issue)] if isinstance(issue, int) or (isinstance(issue, str) and issue.isdigit()) else []
            if settled(numbers, closed):
                continue
            out.append(
                {
                    "text": entry.get("item") or entry.get("text") or "",
                    "owner": owner_of(entry.get("owner"), numbers, lookup) or "unowned",
                    "issues": f"#{issue}" if issue else "",
                    "spec": spec.name,
                    "href": href,
                    "record": None,
                }
            )
    for m in owed_mutations(data.records):
        numbers = [m.links.issue] if m.links.issue is not None else []
        out.append(
            {
                "text": f"survived mutation: {m.mutation} (built, exit 0, detected by nothing)",
                "owner": owner_of(None, numbers, lookup) or "unowned",
                "issues": ", ".join(f"#{n}" for n in numbers),
                "record": m.id,
            }
        )
    return out


def render(data: SiteData, env) -> Iterator[Page]:
    # A superseded hypothesis is history, not open work; a corrected issue is listed once.
    hyps: list[Any] = live_records(data.records, "hypothesis")
    groups = []
    for status in ORDER:
        group = sorted((h for h in hyps if h.status == status), key=lambda h: (h.when, h.id), reverse=True)
        if group:
            groups.append((status, group))
    issues: list[Any] = sorted(live_records(data.records, "issue"), key=lambda i: getattr(i, "number", 0))
    yield Page(
        PAGE,
        env.get_template("hypotheses.md.j2").render(
            data=data, page=PAGE, groups=groups, owed=owed(data), issues=issues
        ),
    )
