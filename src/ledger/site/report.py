"""The chronological report: every record, newest first, grouped by day, one page per month
(split when a month holds more than REPORT_CHUNK records)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from markupsafe import Markup

from ..analysis import chronicle
from ..analysis.figures import sandwich_figures
from ..analysis.gates import gate_result
from ..analysis.status import Column
from ..analysis.stopping_point import NO_VALID_STEP
from ..schema.kinds import Contract
from .context import Page, SiteData
from .escape import clip, md_inline
from .tables import table, verdict, verdict_cell

INDEX = "report/index.md"
REPORT_CHUNK = 1000
#: Decisions a month's summary lists on the index (the month's page lists them all).
DECISIONS_SHOWN = 12

STANDING = [
    Column("topology", "Topology", 1),
    Column("status", "Status", 1, "verdict"),
    Column("headline", "Median", 2, "figure"),
    Column("mfu", "MFU", 3, "figure"),
    Column("measurement", "Measurement", 3, "id"),
    Column("change", "This month", 2),
]
DECISIONS = [
    Column("verdict", "Verdict", 1, "verdict"),
    Column("family", "Family", 1),
    Column("when", "Date", 3, "date"),
]


def _verdict(record, spread_of=None) -> str:
    # Rejections and refutations are said out loud in the report, not only on the record page.
    if record.kind == "decision":
        return record.verdict
    if record.kind == "hypothesis":
        return record.status
    if record.kind == "sandwich":
        return f"{record.verdict} {sandwich_figures(record, spread_of)['delta_percent']}"
    if record.kind == "measurement" and record.outcome != "ok":
        return record.outcome
    if record.kind == "gate":
        # An armed check or positive control must fail: its failing is green ("armed").
        return gate_result(record)
    return ""


def render(data: SiteData, env) -> Iterator[Page]:
    months: dict[str, list] = defaultdict(list)
    for record in data.records:
        months[record.when.strftime("%Y-%m")].append(record)
    index_rows: dict[str, list] = {}
    template = env.get_template("report_month.md.j2")
    for month in sorted(months, reverse=True):
        records = sorted(months[month], key=lambda r: (r.when, r.id), reverse=True)
        parts = []
        for n, start in enumerate(range(0, len(records), REPORT_CHUNK)):
            chunk = records[start : start + REPORT_CHUNK]
            name = month if n == 0 else f"{month}-{n + 1}"
            page = f"report/{name}.md"
            label = month if len(records) <= REPORT_CHUNK else f"{month} part {n + 1}"
            days: dict[str, list] = defaultdict(list)
            for r in chunk:
                days[r.when.strftime("%Y-%m-%d")].append(r)
            said = {r.id: _verdict(r, data.spread_percent) for r in chunk}
            verdicts = {r.id: (verdict(said[r.id]) + Markup(" ")) if said[r.id] else Markup("") for r in chunk}
            yield Page(
                page, template.render(data=data, page=page, label=label, days=list(days.items()), verdicts=verdicts)
            )
            parts.append({"label": label if len(records) > REPORT_CHUNK else month, "href": f"{name}.md"})
        index_rows[month] = parts
    current = data.current_contract()
    contract = current if isinstance(current, Contract) else None
    final = data.stopping_rows(contract) if contract is not None else None
    summary = chronicle.months(data.records, contract, data.judge, final)
    yield Page(
        INDEX,
        env.get_template("report_index.md.j2").render(
            data=data,
            page=INDEX,
            contract=contract,
            months=[(m, index_rows[m.month]) for m in summary],
            tables={m.month: _month_tables(data, m) for m in summary},
            limit=DECISIONS_SHOWN,
        ),
    )


def _unbroken_topology(col, row) -> Markup | None:
    # `8x GB200` never breaks across lines (the figures beside it do not either).
    if col.key == "topology":
        # Clipped as every other cell is (tables.cell): unbroken, a long one would be wider than the rule allows.
        return Markup('<span class="ledger-fig">') + md_inline(clip(row["topology"])) + Markup("</span>")
    return None


def _month_tables(data: SiteData, month: chronicle.Month) -> dict[str, Markup]:
    standing = [
        {
            **s.__dict__,
            # The status says "no valid step" already; the figure columns stay empty for it.
            "headline": s.headline if s.headline != NO_VALID_STEP else None,
            "change": {"new": "new row", "moved": "moved", "": "as before"}[s.change],
        }
        for s in month.standing
    ]
    decisions = [
        {
            "id": d.id,
            "verdict": d.verdict,
            "qualifier": d.qualifier,
            "family": d.family,
            "when": d.when.strftime("%Y-%m-%d"),
        }
        for d in month.decisions[:DECISIONS_SHOWN]
    ]

    def render(col, row):
        if col.key == "verdict":
            mark = Markup(" (superseded)") if data.superseded_by.get(row["id"]) else Markup("")
            return verdict_cell(row["verdict"], row.get("qualifier")) + mark
        if col.key == "family":
            return data.link(row["id"], INDEX, row["family"])
        return None

    return {
        "standing": table(data, INDEX, STANDING, standing, _unbroken_topology) if standing else Markup(""),
        "decisions": table(data, INDEX, DECISIONS, decisions, render) if decisions else Markup(""),
    }
