"""Hypotheses (open, supported, refuted, unverified), owed items from spec pages, issues."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from .. import pages
from ..analysis.keyed import issue_owner, owner_of
from .context import Page, SiteData
from .specs import page_of

PAGE = "hypotheses/index.md"
ORDER = ("open", "unverified", "supported", "refuted")


def owed(data: SiteData) -> list[dict]:
    """Owed items from the spec pages' bodies (the checker's parser) and front matter."""

    lookup = issue_owner(data.records)
    out = []
    for spec in data.specs:
        href = posixpath.relpath(page_of(spec), posixpath.dirname(PAGE))
        for item in pages.owed_items(spec.body, body=True):
            out.append(
                {
                    "text": item.text,
                    "owner": owner_of(item.owner, item.issues, lookup) or "unowned",
                    "issues": ", ".join(f"#{n}" for n in item.issues),
                    "spec": spec.name,
                    "href": href,
                }
            )
        front = spec.front.get("owed") or []
        for entry in front if isinstance(front, list) else [front]:
            entry = entry if isinstance(entry, dict) else {"item": entry}
            issue = entry.get("issue")
            numbers = [int(issue)] if isinstance(issue, int) or (isinstance(issue, str) and issue.isdigit()) else []
            out.append(
                {
                    "text": entry.get("item") or entry.get("text") or "",
                    "owner": owner_of(entry.get("owner"), numbers, lookup) or "unowned",
                    "issues": f"#{issue}" if issue else "",
                    "spec": spec.name,
                    "href": href,
                }
            )
    return out


def render(data: SiteData, env) -> Iterator[Page]:
    hyps = data.by_kind.get("hypothesis", [])
    groups = []
    for status in ORDER:
        group = sorted((h for h in hyps if h.status == status), key=lambda h: (h.when, h.id), reverse=True)
        if group:
            groups.append((status, group))
    issues = sorted(data.by_kind.get("issue", []), key=lambda i: i.number)
    yield Page(
        PAGE,
        env.get_template("hypotheses.md.j2").render(
            data=data, page=PAGE, groups=groups, owed=owed(data), issues=issues
        ),
    )
