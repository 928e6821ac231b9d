"""What `ledger demo` reports: the stopping point, the decision index, the check and the site."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from ..analysis.guidance import Guidance
from ..analysis.status import ledger_status, stopping_row
from ..analysis.stopping_point import stopping_point
from ..checks import run_check
from ..checks.registry import ledger_guidance
from ..pages import read_spec_owed
from ..schema.kinds import Decision
from ..site.builder import build_site
from . import DemoResult


@dataclass
class StoppingRow:
    topology: str
    batch: str
    median_s: float | None
    throughput: float | None
    mfu_percent: float | None
    recorded_mfu_percent: float | None
    status: str
    measurement: str | None
    # The same figures as text, quoted by the one digit policy (ledger.analysis.figures), so
    # the printed table and the JSON say the same thing.
    median_text: str = "–"
    throughput_text: str = "–"
    mfu_text: str = "–"


@dataclass
class DemoSummary:
    root: str
    counts: dict[str, int]
    contract: str | None
    peak: str | None
    stopping_point: list[StoppingRow]
    decisions: list[dict[str, Any]]
    check: dict[str, Any] | None = None
    site: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    campaign: str = "ltx2"
    #: `ledger status` of the campaign (sections as data), what the terminal shows for it.
    status: dict[str, Any] | None = None

    @property
    def exit_code(self) -> int:
        return int(self.check["exit_code"]) if self.check else 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(demo: DemoResult, *, build_site: bool = True) -> DemoSummary:
    records = demo.ledger.records()
    guidance = ledger_guidance(demo.ledger, records)  # ledger.yaml's thresholds, as `ledger status` judges
    contract, rows = stopping_point(records, demo.ledger.config.contract, judge=guidance.judge)
    peak = rows[0].flop_audit.peak if rows and rows[0].flop_audit else None
    summary = DemoSummary(
        root=str(demo.root),
        counts=dict(sorted(Counter(r.kind for r in records).items())),
        contract=contract.name if contract else None,
        peak=f"{peak.name}: {peak.tflops_per_gpu:g} TFLOP/s per GPU" if peak else None,
        stopping_point=[
            StoppingRow(
                topology=row.topology,
                batch=row.batch,
                median_s=row.measurement.median if row.measurement and row.measurement.outcome == "ok" else None,
                throughput=row.throughput,
                mfu_percent=row.mfu,
                recorded_mfu_percent=row.measurement.mfu_percent if row.measurement else None,
                status=row.status,
                measurement=row.measurement.id if row.measurement else None,
                median_text=text["median"],
                throughput_text=text["throughput"],
                mfu_text=text["mfu"],
            )
            for row, text in ((row, stopping_row(row)) for row in rows)
        ],
        decisions=[
            {
                "family": d.family,
                "verdict": d.verdict,
                "qualifier": d.qualifier,
                "where_to_continue": d.where_to_continue,
                "id": d.id,
            }
            for d in records
            if isinstance(d, Decision)
        ],
    )
    summary.campaign = demo.campaign
    summary.status = _status(demo, records, guidance)
    summary.check = _check(demo)
    if build_site:
        summary.site = _site(demo)
    return summary


def _status(demo: DemoResult, records, guidance: Guidance) -> dict[str, Any]:
    owed_items, _ = read_spec_owed(demo.ledger.specs_dir)
    return ledger_status(records, demo.ledger.config.contract, owed_items=owed_items, guidance=guidance).as_dict()


def _check(demo: DemoResult) -> dict[str, Any] | None:
    result = run_check(demo.ledger, mode="all")
    return {
        "exit_code": result.exit_code,
        "errors": len(result.errors),
        "warnings": len(result.warnings),
        "messages": [
            f"{v.file}{f':{v.line}' if v.line else ''}: {v.rule} [{v.severity}] {v.message}" for v in result.violations
        ][:20],
    }


def _site(demo: DemoResult) -> dict[str, Any] | None:
    result = build_site(demo.ledger)
    index = getattr(result, "site_dir", None)
    return {
        "site_dir": str(index) if index else None,
        "index": str(index / "index.html") if index else None,
        "pages": getattr(result, "pages", None),
    }
