"""What every page renderer reads: the ledger's records loaded once, indexed, and linked.

A record is *cited* when another record, a spec page or an index page points at it; each
cited record gets a page of its own. The rest are listed on grouped pages (by kind, month
and chunk), so a ledger of 100k records still builds in a bounded number of pages.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from markupsafe import Markup

from ..analysis.eligibility import Judge
from ..analysis.figures import measurement_uncertainty, quote_of
from ..analysis.metrics import audit_of, contract_audits
from ..analysis.stopping_point import Row, current_contract, stopping_point, trusted_time
from ..schema.envelope import Envelope
from ..schema.kinds import Contract
from ..store.ids import is_id
from .escape import cell, clip, md_inline, quotation
from .forge import Forge

#: Kinds shown on an index page (decisions, hypotheses, sandwiches, contracts, audits,
#: issues): each of their records gets a page.
INDEXED_KINDS = frozenset({"decision", "hypothesis", "sandwich", "contract", "flop-audit", "issue", "ceiling"})
#: Records per grouped listing page.
LISTING_CHUNK = 500


@dataclass(frozen=True)
class Page:
    """One generated Markdown file: its path under the docs folder and its text."""

    path: str
    text: str
    #: A section index with nothing in it yet (no sandwich, sweep, memory profile or
    #: finding): built, but left out of the navigation until it has content.
    empty: bool = False


@dataclass
class Spec:
    """A spec page: Markdown with YAML front matter, from the ledger's specs folder."""

    name: str
    source: str  # path relative to the ledger root
    front: dict[str, Any]
    body: str
    body_line: int  # 1-based line of the body's first line in the source


@dataclass
class SiteData:
    title: str
    records: list[Envelope]
    specs: list[Spec] = field(default_factory=list)
    contract_name: str | None = None
    # Records of every kind: typed Any, since each page reads the fields of its own kinds.
    by_id: dict[str, Any] = field(default_factory=dict)
    by_kind: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))
    cited_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    superseded_by: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    cited: set[str] = field(default_factory=set)
    listing: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (page, anchor)
    listing_pages: dict[str, dict[str, list[Envelope]]] = field(default_factory=dict)  # kind -> page -> records
    #: recorded commit SHA -> (position in the measured source's order, commit date); see site.commit_order.
    commit_order: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: Re-gates, eligibility, pending decisions, rejected families (ledger.analysis.guidance).
    guidance: Any = None
    #: contract id -> its stopping-point rows, computed once a build (`stopping_rows`).
    _stopping: dict[str, list[Row]] = field(default_factory=dict, repr=False)
    #: contract id -> its live FLOP audit, once a build (`audit_of`).
    _audits: dict[str, Any] | None = field(default=None, repr=False)
    _judge: Judge | None = field(default=None, repr=False)
    #: Where issue and pull-request numbers link (`site.forge`); None: they stay text.
    forge: Forge | None = None
    #: The widest cell the page rules let a generated table carry (`cell-width`'s max_chars).
    cell_limit: int = 220

    @classmethod
    def build(
        cls,
        title: str,
        records: list[Envelope],
        specs: list[Spec],
        contract_name: str | None = None,
        extra_cited: set[str] | None = None,
    ) -> SiteData:
        data = cls(title=title, records=records, specs=specs, contract_name=contract_name)
        for record in records:
            data.by_id[record.id] = record
            data.by_kind[record.kind].append(record)
        for record in records:
            for where, ref in record.references():
                data.cited_by[ref].append(record.id)
                if where.startswith("supersedes"):
                    data.superseded_by[ref].append(record.id)
                data.cited.add(ref)
                if record.supersedes:
                    data.cited.add(record.id)
            if record.kind in INDEXED_KINDS:
                data.cited.add(record.id)
        for spec in specs:
            for ref in spec_references(spec):
                data.cited.add(ref)
        data.cited.update(extra_cited or ())
        # Only ids that are in the ledger get pages; a dangling reference is the checker's.
        data.cited &= set(data.by_id)
        data._assign_listings()
        return data

    def cite(self, ids: set[str]) -> None:
        """Give these records pages of their own too (ids not in the ledger are left out)."""
        added = (ids & set(self.by_id)) - self.cited
        if added:
            self.cited |= added
            self.listing, self.listing_pages = {}, {}
            self._assign_listings()

    def stopping_rows(self, contract: Contract) -> list[Row]:
        """The stopping-point rows of `contract`, judged by the guidance: once a build."""
        if contract.id not in self._stopping:
            judge = self.guidance.judge if self.guidance is not None else None
            self._stopping[contract.id] = stopping_point(self.records, contract=contract, judge=judge)[1]
        return self._stopping[contract.id]

    def _assign_listings(self) -> None:
        for kind, records in sorted(self.by_kind.items()):
            months: dict[str, list[Envelope]] = defaultdict(list)
            for record in records:
                if record.id not in self.cited:
                    months[record.when.strftime("%Y-%m")].append(record)
            pages: dict[str, list[Envelope]] = {}
            for month, group in sorted(months.items()):
                for start in range(0, len(group), LISTING_CHUNK):
                    suffix = "" if start == 0 else f"-{start // LISTING_CHUNK + 1}"
                    page = f"records/{kind}/{month}{suffix}.md"
                    chunk = group[start : start + LISTING_CHUNK]
                    pages[page] = chunk
                    for record in chunk:
                        self.listing[record.id] = (page, f"r-{record.id.lower()}")
            if pages:
                self.listing_pages[kind] = pages

    # -- links ---------------------------------------------------------------------------

    def record_path(self, record_id: str) -> tuple[str, str] | None:
        """(page, anchor) where a record is shown; anchor is '' for its own page."""
        record = self.by_id.get(record_id)
        if record is None:
            return None
        if record_id in self.cited:
            return f"records/{record.kind}/{record_id}.md", ""
        return self.listing[record_id]

    def related_href(self, record_id: str, from_page: str) -> str | None:
        """Where a record's page lists every record it names (its Related records), from
        `from_page`; None for a record shown in a listing, which has no such list."""
        target = self.record_path(record_id)
        if target is None or target[1]:
            return None
        return relative(from_page, target[0]) + "#related-records"

    def link(self, record_id: str, from_page: str, text: Any = None) -> Markup:
        """A relative Markdown link to a record, or the id as plain code when it is unknown."""
        target = self.record_path(record_id)

        label = md_inline(clip(text, 100)) if text is not None else Markup(f"`{short_id(record_id)}`")
        if target is None:
            return Markup(f"`{record_id}` (not in the ledger)")
        page, anchor = target
        href = relative(from_page, page) + (f"#{anchor}" if anchor else "")
        return Markup(f"[{label}]({href})")

    def links(self, record_ids, from_page: str, limit: int | None = None, more: str | None = None) -> Markup:
        """Comma-separated links to records; an en dash when there are none. Past `limit`
        the rest is counted, "and 14 more" (a link to `more`, where all are listed): a cell of
        twenty ids is wider than any table column a reader can scan."""
        ids = list(record_ids or ())
        if not ids:
            return Markup("–")
        shown = ids if limit is None or len(ids) <= limit + 1 else ids[:limit]
        out = Markup(", ").join(self.link(i, from_page) for i in shown)
        rest = len(ids) - len(shown)
        if rest:
            label = f"and {rest} more"
            out += Markup(", ") + (Markup(f"[{label}]({more})") if more else Markup(label))
        return out

    def spread_percent(self, record_id: str) -> float | None:
        """A measurement's uncertainty in percent, as `ledger check` takes it (figures.uncertainty_percent)."""
        return measurement_uncertainty(self.by_id.get(record_id))

    def readings(self, m: Any) -> list[str] | None:
        """Why measurement `m`'s allocation is not a baseline (its environment records'
        readings, as the stopping point judges them), [] when nothing says so; None when the
        site was built without guidance (a measurement is then judged by its recorded health)."""
        if self.guidance is None:
            return None
        return list(self.guidance.judge.measurement(m).readings)

    @property
    def judge(self) -> Judge:
        """Eligibility judged from the allocations' environments: the guidance's, else one of the records."""
        if self.guidance is not None:
            return self.guidance.judge
        if self._judge is None:
            self._judge = Judge(self.records)
        return self._judge

    def health(self, m: Any) -> tuple[str, list[str]]:
        """Measurement `m`'s health from its allocation's environments (`Judge.health`)."""
        return self.judge.health(m)

    def audit_of(self, m: Any) -> Any:
        """The FLOP audit measurement `m`'s MFU is derived from (its own, else its contract's)."""
        if self._audits is None:
            self._audits = contract_audits(self.records)
        return audit_of(m, self.by_id, self._audits)

    def quote(self, record_id: str, value: float | None, unit: str = "", field: str | None = None) -> str:
        """`value` (of or derived from a measurement) by the one digit policy (`figures.quote_of`)."""
        return quote_of(self.by_id.get(record_id), value, unit, field=field)

    def summary(self, record: Any) -> str:
        """A record's one-line summary, its figures trimmed to what their spread supports."""
        if record.kind == "measurement" and not record.title:
            field = record.headline_field
            if record.outcome != "ok" or getattr(record, field) is None:
                return record.summary()
            value = self.quote(record.id, getattr(record, field), record.unit, field=field)
            return f"{record.metric} {record.headline_label} {value}"
        return record.summary()

    def quotes_itself(self, record: Any) -> bool:
        """Whether `summary(record)` is the record's own words (a title, a finding, a body)
        rather than a figure ledger derived: a page quoting a record is not claiming what
        the record says, and the figures rule judges the record at add, not its quotations."""
        return not (record.kind == "measurement" and not record.title)

    def summary_cell(self, record: Any) -> Markup:
        """`summary(record)` as a table cell, marked as a quotation where it is the record's own words."""
        return quotation(cell(self.summary(record)), self.quotes_itself(record))

    def summary_link(self, record: Any, from_page: str, prefix: str = "") -> Markup:
        """A link to `record` labelled with its summary, marked as a quotation as `summary_cell`."""
        label = prefix + (self.summary(record) or record.id)
        return quotation(self.link(record.id, from_page, label), self.quotes_itself(record))

    def current_contract(self) -> Envelope | None:

        return current_contract(self.records, self.contract_name)

    def newest(self, limit: int) -> list[Envelope]:
        now = datetime.now(UTC)  # a record dated in the future (forged) is never the newest
        return sorted(self.records, key=lambda r: (trusted_time(r, now, written=True), r.id), reverse=True)[:limit]

    def latest_time(self) -> datetime | None:
        return max((r.created_at for r in self.records), default=None)


def short_id(record_id: str) -> str:
    # Ten characters are the millisecond timestamp; the last six are random and tell
    # records of one millisecond apart, as git's abbreviated SHAs do.
    return record_id[:4] + "…" + record_id[-6:]


def relative(from_page: str, to_page: str) -> str:
    """A link from one docs page to another, relative, as MkDocs wants it."""
    return posixpath.relpath(to_page, posixpath.dirname(from_page) or ".")


def spec_references(spec: Spec) -> list[str]:
    """Record ids a spec's front matter names (evidence lists of owed items, hypotheses, gates)."""

    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            if is_id(node):
                found.append(node)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec.front)
    return found
