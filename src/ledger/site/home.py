"""Home is the stopping point: the current contract's table (derived by
`ledger.analysis.status`, never typed), the newest decisions, what is owed, every other
contract's own stopping-point page, and what changed lately.

The sections are `ledger.analysis.status` sections, so one added there (re-gates owed,
sweeps) shows here and in `ledger status` alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from markupsafe import Markup

from ..analysis.status import Status, ledger_status
from ..pages import spec_owed
from ..schema.kinds import Contract, Measurement
from . import charts
from .context import Page, SiteData, relative
from .escape import clip, md_inline
from .tables import table, verdict, verdict_cell

PAGE = "index.md"
CONTRACTS = "contracts/"
RECENT = 12


def contract_page(contract_id: str) -> str:
    return f"{CONTRACTS}{contract_id}.md"


def status_of(data: SiteData, contract: str | None = None, asked: bool = False) -> Status:
    owed = [o for spec in data.specs for o in spec_owed(spec.name, spec.body, spec.front)]
    return ledger_status(
        data.records,
        contract or data.contract_name,
        asked=asked,
        owed_items=owed,
        guidance=data.guidance,
        rows_of=data.stopping_rows,
    )


@dataclass
class ContractRow:
    contract: Contract
    measurements: int
    newest: str
    current: bool


def contract_rows(data: SiteData, current_id: str | None) -> list[ContractRow]:
    counts: Counter[str] = Counter()
    newest: dict[str, str] = {}
    for m in data.by_kind.get("measurement", []):
        if isinstance(m, Measurement) and m.contract:
            counts[m.contract] += 1
            day = m.when.strftime("%Y-%m-%d")
            newest[m.contract] = max(newest.get(m.contract, ""), day)
    rows = [
        ContractRow(c, counts[c.id], newest.get(c.id, "–"), c.id == current_id)
        for c in data.by_kind.get("contract", [])
        if isinstance(c, Contract)
    ]
    rows.sort(key=lambda r: (not r.current, r.newest == "–", r.newest, r.contract.name), reverse=False)
    current = [r for r in rows if r.current]
    rest = sorted((r for r in rows if not r.current), key=lambda r: (r.newest != "–", r.newest), reverse=True)
    return current + rest


def section_markdown(data: SiteData, page: str, section) -> Markup:
    """A status section as a fitted table: the verdict word marked, its detail in plain text."""
    if not section.rows:
        return Markup(section.empty and f"{section.empty}\n" or "")

    def detail(text: str | None) -> Markup:
        return (Markup(" ") + md_inline(clip(text, 100))) if text else Markup("")

    def render(col, row):
        if section.key == "stopping_point" and col.key == "topology" and row.get("measurement"):
            # The row's topology links to its measurement, so the id column may leave on phones.
            # Never broken across lines (`8x` above `GB200` reads as two things).
            link = data.link(row["measurement"], page, row["topology"])
            return Markup('<span class="ledger-fig">') + link + Markup("</span>")
        if section.key == "stopping_point" and col.key == "status":
            reasons = "; ".join(row.get("reasons") or [])
            cell_ = verdict(row["status"]) + detail(f"({reasons})" if reasons else None)
            if row.get("regate") == "re-gate owed":
                cell_ += Markup(" ") + verdict("re-gate owed")
            elif row.get("regated") and not section.extra.get("regated_at"):
                cell_ += detail(f"· re-gated at {row['holds_at']}")
            return cell_
        if section.key == "regates" and col.key == "reason":
            # The why, whole: it is what makes "unknown" a finding rather than a shrug.
            return md_inline(clip(row["reason"], 200))
        if section.key == "decisions" and col.key == "verdict":
            return verdict_cell(row["verdict"], row.get("qualifier"))
        if section.key == "decisions" and col.key == "family" and row.get("id"):
            return data.link(row["id"], page, row["family"])
        return None

    columns = section.columns
    if section.key == "decisions":
        columns = [c for c in columns if c.key != "id"]
    notes = "".join(f"\n\n{n}\n" for n in section.notes)
    return table(data, page, columns, section.rows, render) + Markup(notes)


def render(data: SiteData, env, all_charts=None) -> Iterator[Page]:
    status = status_of(data)
    current_id = status.contract["id"] if status.contract else None
    contracts = contract_rows(data, current_id)
    counts = sorted(Counter(r.kind for r in data.records).items())
    sections = [(s, section_markdown(data, PAGE, s)) for s in status.sections]
    text = env.get_template("home.md.j2").render(
        data=data,
        page=PAGE,
        title=data.title,
        total=len(data.records),
        counts=counts,
        latest=data.latest_time(),
        status=status,
        contract=data.by_id.get(current_id) if current_id else None,
        contract_page=contract_page(current_id) if current_id else None,
        contracts=contracts,
        contract_page_of=contract_page,
        sections=sections,
        recent=data.newest(RECENT),
        relative=relative,
    )
    yield Page(PAGE, text)
    all_charts = charts.collect(data) if all_charts is None else all_charts
    for row in contracts:
        yield contract_stopping_page(data, env, row.contract, row.current, status.contract_rule, all_charts)


def contract_stopping_page(data: SiteData, env, contract: Contract, current: bool, rule: str, all_charts) -> Page:
    page = contract_page(contract.id)
    status = status_of(data, contract.id, asked=True)
    section = status.section("stopping_point")
    thumbs = [c for c in all_charts if c.contract_id == contract.id]
    text = env.get_template("contract.md.j2").render(
        data=data,
        page=page,
        contract=contract,
        current=current,
        rule=rule,
        table=section_markdown(data, page, section) if section else Markup(""),
        charts=thumbs,
        # Every measurement under the contract, when none makes a row: the table's count
        # on home is then a click away here, never contradicted by an empty page.
        unranked=[
            m for m in data.by_kind.get("measurement", []) if isinstance(m, Measurement) and m.contract == contract.id
        ]
        if section is not None and not section.rows
        else [],
    )
    return Page(page, text)


def cited_ids(data: SiteData) -> set[str]:
    """Measurements a stopping-point table cites, under any contract (they get a page each)."""
    out: set[str] = set()
    for contract in data.by_kind.get("contract", []):
        out.update(r.measurement.id for r in data.stopping_rows(contract) if r.measurement is not None)
    return out
