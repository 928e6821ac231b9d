"""The chronological report: every record, newest first, grouped by day, one page per month
(split when a month holds more than REPORT_CHUNK records)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from markupsafe import Markup

from ..analysis.figures import sandwich_figures
from .context import Page, SiteData
from .tables import verdict

INDEX = "report/index.md"
REPORT_CHUNK = 1000


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
        return record.outcome
    return ""


def render(data: SiteData, env) -> Iterator[Page]:
    months: dict[str, list] = defaultdict(list)
    for record in data.records:
        months[record.when.strftime("%Y-%m")].append(record)
    index_rows = []
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
            parts.append({"label": label if len(records) > REPORT_CHUNK else "page", "href": f"{name}.md"})
        index_rows.append((month, len(records), parts))
    yield Page(INDEX, env.get_template("report_index.md.j2").render(data=data, page=INDEX, months=index_rows))
