"""Record pages (one per cited record) and grouped listings (everything else)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from markupsafe import Markup

from ..analysis.figures import SPREAD_FIELDS, as_recorded, quote_field, readable_duration
from ..schema.envelope import ENVELOPE_FIELDS
from .context import Page, SiteData
from .escape import clip, md_code, md_inline, md_url, quotation
from .forge import Forge
from .lead import exact, lead

INDEX = "records/index.md"
#: Body fields shown as a code block of their own rather than in the fields table.
BLOCK_FIELDS = frozenset(
    {
        "samples",
        "command",
        "notes",
        "body",
        "derivation",
        "description",
        "skipped_names",
        "gpus",
        "extra",
        "itemised",
        "env_flags",
        "shape",
        "mechanism",
        "where_to_continue",
        "statement",
    }
)
#: Long text fields shown as prose blocks rather than code.
SHORT_FIELD_LIMIT = 120
#: Record links a cell shows before it counts the rest ("and 14 more").
EVIDENCE_SHOWN = 6


def _value(data: SiteData, page: str, name: str, value: Any, ref_fields: tuple[str, ...], record: Any = None) -> Markup:
    if name in ref_fields:
        ids = [value] if isinstance(value, str) else list(value.values()) if isinstance(value, dict) else list(value)
        # Every one is a row of Related records above; the field counts past the first few.
        return data.links(ids, page, limit=EVIDENCE_SHOWN, more="#related-records")
    if isinstance(value, bool):
        return Markup("yes" if value else "no")
    if name.endswith("_bytes") and isinstance(value, int):
        return exact(value)
    if isinstance(value, (int, float)) and (name.endswith("_s") or name.endswith("_seconds")):
        exact_text = f"{as_recorded(value)} s"
        return Markup(f'<abbr class="ledger-exact" title="{exact_text}">{readable_duration(value)}</abbr>')
    if isinstance(value, float):
        if record is not None and record.kind == "measurement" and name in SPREAD_FIELDS:
            return md_inline(quote_field(record, name, value))
        return md_inline(as_recorded(value))
    if isinstance(value, (dict, list)):
        return md_code(json.dumps(value, ensure_ascii=False, sort_keys=True))
    # The record's own words (a finding's claim, a decision's mechanism): quoted, not claimed.
    return quotation(md_inline(value)) if isinstance(value, str) else md_inline(value)


def _numbered(text: str, url: str | None) -> Markup:
    """`#1630`, a link to the forge when `site.forge` names one."""
    return md_url(url, text) if url else md_inline(text)


def _links(record, forge: Forge | None = None) -> list[tuple[str, Markup]]:

    links = record.links
    out: list[tuple[str, Markup]] = []
    for run in links.tracker_runs:
        out.append(("tracker run", md_code(clip(run))))
    if links.issue is not None:
        out.append(("issue", _numbered(f"#{links.issue}", forge.issue(links.issue) if forge else None)))
    if links.pr is not None:
        out.append(("pull request", _numbered(f"#{links.pr}", forge.pull(links.pr) if forge else None)))
    for closed in links.closed_prs:
        shown = _numbered(f"#{closed}", forge.pull(closed) if forge else None)
        if links.pr is not None:
            shown += Markup(" ") + md_inline(f"(superseded by #{links.pr})")
        out.append(("closed pull request", shown))
    for job in links.jobs:
        out.append(("job", md_code(clip(job))))
    for url in links.urls:
        out.append(("URL", md_url(url)))
    return out


def record_page(data: SiteData, env, record, file: str) -> Page:
    page, _ = data.record_path(record.id)  # type: ignore[misc]
    raw = record.model_dump(mode="json", exclude_none=True)
    ref_fields = type(record).REFERENCE_FIELDS
    fields, blocks = [], []
    for name, value in raw.items():
        if name in ENVELOPE_FIELDS or value in ([], {}, ""):
            continue
        if name in BLOCK_FIELDS and name not in ref_fields:
            if name == "samples" and isinstance(value, list):
                text = "\n".join(as_recorded(v) for v in value)
            elif isinstance(value, (dict, list)):
                text = json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
            else:
                text = str(value)
            if isinstance(value, str) and len(value) <= SHORT_FIELD_LIMIT and "\n" not in value:
                fields.append((name, quotation(md_inline(value))))
            else:
                blocks.append((name, text))
            continue
        if isinstance(value, str) and name not in ref_fields and (len(value) > SHORT_FIELD_LIMIT or "\n" in value):
            blocks.append((name, value))
            continue
        if (
            isinstance(value, (dict, list))
            and name not in ref_fields
            and len(json.dumps(value, ensure_ascii=False)) > SHORT_FIELD_LIMIT
        ):
            blocks.append((name, json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)))
            continue
        if record.kind == "issue" and name == "number" and data.forge is not None:
            fields.append((name, _numbered(f"#{value}", data.forge.issue(value))))
            continue
        fields.append((name, _value(data, page, name, value, ref_fields, record)))
    env_record = None
    env_id = getattr(record, "environment", None)
    if isinstance(env_id, str) and env_id in data.by_id:
        env_record = data.by_id[env_id]
    elif record.kind == "environment":
        env_record = None
    superseded = data.superseded_by.get(record.id)
    text = env.get_template("record.md.j2").render(
        data=data,
        page=page,
        record=record,
        file=file,
        fields=fields,
        blocks=blocks,
        links=_links(record, data.forge),
        refs=[(w, r) for w, r in record.references()],
        cited_by=sorted(set(data.cited_by.get(record.id, []))),
        superseded_by=Markup(", ").join(data.link(i, page) for i in superseded) if superseded else None,
        environment=env_record,
        lead=lead(data, page, record),
    )
    return Page(page, text)


def render(data: SiteData, env, file_of) -> Iterator[Page]:
    """`file_of(record)` gives the record's file relative to the ledger root."""
    for rid in sorted(data.cited):
        record = data.by_id[rid]
        yield record_page(data, env, record, file_of(record))
    listing = env.get_template("listing.md.j2")
    kinds = []
    for kind in sorted(data.by_kind):
        pages = data.listing_pages.get(kind, {})
        listings = []
        for page, records in pages.items():
            label = page.rsplit("/", 1)[-1][:-3]
            yield Page(page, listing.render(data=data, page=page, kind=kind, label=label, records=records))
            listings.append({"label": label, "href": page.removeprefix("records/")})
        own = sorted((r for r in data.by_kind[kind] if r.id in data.cited), key=lambda r: (r.when, r.id), reverse=True)
        kinds.append(
            {"kind": kind, "count": len(data.by_kind[kind]), "pages": len(own), "listings": listings, "own": own}
        )
    yield Page(INDEX, env.get_template("records_index.md.j2").render(data=data, page=INDEX, kinds=kinds))
