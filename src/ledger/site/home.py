"""Home: the stopping-point table (derived, never typed) and what changed lately."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from markupsafe import Markup

from ..analysis.stopping_point import current_contract, stopping_point
from .context import Page, SiteData, relative

PAGE = "index.md"
RECENT = 15


@dataclass
class StopRow:
    topology: str
    batch: str
    median: str
    throughput: str
    mfu: str
    status: str
    evidence: Markup
    measurement_ids: tuple[str, ...] = ()


def stopping_rows(data: SiteData) -> list[StopRow]:
    """Rows of the stopping-point table, derived by `ledger.analysis.stopping_point`."""

    _, rows = stopping_point(data.records, data.contract_name)
    return [_row(data, row) for row in rows]


def _row(data: SiteData, row) -> StopRow:
    m = row.measurement
    status = row.status + (f" ({'; '.join(row.reasons)})" if row.reasons else "")
    ids = [m.id] if m is not None else []
    if m is None or m.outcome != "ok" or m.median is None:
        return StopRow(row.topology, row.batch, "no valid step", "–", "–", status, _links(data, ids), tuple(ids))
    # Every figure in the row carries only what the measurement's spread supports (the
    # checker's figures-spread rule reads this page too).
    median = data.quote(m.id, m.median, m.unit)
    throughput = data.quote(m.id, row.throughput, m.throughput_unit or "")
    mfu = data.quote(m.id, row.mfu, "%") if row.mfu is not None else "–"
    convention = (
        row.flop_audit.peak.name if row.flop_audit is not None and row.mfu_recomputed is not None else m.peak_convention
    )
    if convention and row.mfu is not None:
        mfu += f" ({convention})"
    return StopRow(row.topology, row.batch, median, throughput, mfu, status, _links(data, ids), tuple(ids))


def _links(data: SiteData, ids: list[str]) -> Markup:
    if not ids:
        return Markup("–")
    return Markup(", ").join(data.link(i, PAGE) for i in ids)


def render(data: SiteData, env) -> Iterator[Page]:

    contract = current_contract(data.records, data.contract_name)
    counts = sorted(Counter(r.kind for r in data.records).items())
    text = env.get_template("home.md.j2").render(
        data=data,
        page=PAGE,
        title=data.title,
        total=len(data.records),
        counts=counts,
        latest=data.latest_time(),
        contract=contract,
        contract_link=data.link(contract.id, PAGE, contract.name) if contract else "",
        rows=stopping_rows(data),
        recent=data.newest(RECENT),
        relative=relative,
    )
    yield Page(PAGE, text)


def cited_ids(data: SiteData) -> set[str]:
    """Measurements the stopping-point table cites (they get a page each)."""
    return {rid for row in stopping_rows(data) for rid in row.measurement_ids}
