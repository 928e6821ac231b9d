"""The campaign's state in one structure: what `ledger status` prints and the home page shows.

A `Status` is plain data: the current contract (and the rule that chose it) and a list of
`Section`s, each a titled table whose columns carry an importance, so a narrow terminal or
a phone drops detail columns first and never the verdict. Sections come from the builders
in `SECTIONS`, in order; a new section (re-gates owed, sweeps) is one more builder:

    def my_section(ctx: StatusContext) -> Section | None: ...
    SECTIONS.append(my_section)

Every figure is quoted through `ledger.analysis.figures`, so text and JSON agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..schema.envelope import Envelope
from ..schema.kinds import Contract, Decision, Gate, Hypothesis, Measurement, Mutation
from .figures import quote_of
from .guidance import Guidance
from .keyed import issue_closed, issue_owner, owner_of, settled
from .metrics import flop_rate_gflops, flop_utilisation_percent, mfu_under_peaks, peak_label
from .stopping_point import ContractChoice, Row, choose_contract, stopping_point, trusted_time
from .sweep import sweep_rows, sweeps

#: How many decisions the status shows (newest first).
NEWEST_DECISIONS = 8


#: Column roles whose cells never wrap: ids, figures, dates and short SHAs.
NO_WRAP_ROLES = frozenset({"id", "figure", "date", "commit"})


@dataclass(frozen=True)
class Column:
    """A column of a section's table. `importance` 1 is kept longest; higher drop first."""

    key: str
    title: str
    importance: int = 2
    #: "id" (a unique prefix in the terminal, a link on the site), "figure" (never wraps),
    #: "verdict" (a status word, coloured on the site), "date" and "commit" (a short SHA;
    #: both never wrap), "text".
    role: str = "text"

    @property
    def wraps(self) -> bool:
        return self.role not in NO_WRAP_ROLES


@dataclass
class Section:
    key: str
    title: str
    columns: list[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: Shown instead of the table when there are no rows.
    empty: str = ""
    notes: list[str] = field(default_factory=list)
    #: Section-specific data beside the table (a sweep's stopping point).
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "title": self.title,
            "columns": [asdict(c) for c in self.columns],
            "rows": self.rows,
            "empty": self.empty,
            "notes": self.notes,
            **({"extra": self.extra} if self.extra else {}),
        }


@dataclass
class OwedEntry:
    """An owed item from a spec page (the caller reads the pages; see `ledger.pages`)."""

    text: str
    owner: str | None
    issues: list[int]
    spec: str


@dataclass
class StatusContext:
    """What section builders read."""

    records: list[Envelope]
    choice: ContractChoice
    stopping_rows: list[Row]
    owed: list[OwedEntry]
    by_id: dict[str, Envelope]
    superseded: set[str]
    #: Re-gates, eligibility, pending decisions and rejected families (ledger.analysis.guidance).
    guidance: Guidance | None = None

    def regate_of(self, topology: str):
        if self.guidance is None or self.choice.contract is None:
            return None
        return self.guidance.regate(self.choice.contract.id, topology)


@dataclass
class Status:
    contract: dict[str, Any] | None
    contract_rule: str
    sections: list[Section]
    records: int

    def section(self, key: str) -> Section | None:
        return next((s for s in self.sections if s.key == key), None)

    def as_dict(self) -> dict[str, Any]:
        return {
            "contract": self.contract,
            "contract_rule": self.contract_rule,
            "records": self.records,
            "sections": [s.as_dict() for s in self.sections],
        }


def verdict_rest(verdict: str, qualifier: str | None) -> str:
    """What follows the verdict word: `; 4x only`, or ` or timing-neutral` when the qualifier
    already starts with the verdict (never `rejected; rejected or timing-neutral`)."""
    if not qualifier:
        return ""
    q = qualifier.strip()
    if q.lower().startswith(verdict.lower()):
        rest = q[len(verdict) :]
        return rest if rest[:1] in (" ", ",", ";", ":") else f"; {q}"
    return f"; {q}"


def verdict_phrase(verdict: str, qualifier: str | None) -> str:
    """`accepted; 4x only`, `rejected or timing-neutral`: the verdict and its qualifier, said once."""
    return verdict + verdict_rest(verdict, qualifier)


def stopping_row(row: Row) -> dict[str, Any]:
    """One stopping-point row as plain data: figures quoted by the digit policy, exact values beside them."""
    m: Any = row.measurement  # read only where `ok` says it is there
    ok = m is not None and m.outcome == "ok" and m.median is not None
    convention = None
    if row.mfu is not None:
        convention = (
            row.flop_audit.peak.name
            if row.flop_audit is not None and row.mfu_recomputed is not None
            else (m.peak_convention if m else None)
        )
    return {
        "topology": row.topology,
        "status": row.status,
        "reasons": list(row.reasons),
        # The headline: a tool's score (MLPerf's) where the record has one, else the median.
        "median": quote_of(m, getattr(m, m.headline_field), m.unit, field=m.headline_field) if ok else "no valid step",
        "median_value": getattr(m, m.headline_field) if ok else None,
        "unit": m.unit if m else None,
        "throughput": quote_of(
            m, row.throughput, m.throughput_unit or "", field=None if row.throughput_recomputed else "throughput"
        )
        if ok and row.throughput is not None
        else "–",
        "throughput_value": row.throughput if ok else None,
        "mfu": quote_of(m, row.mfu, "%", field=None if row.mfu_recomputed is not None else "mfu_percent")
        if ok and row.mfu is not None
        else "–",
        "mfu_value": row.mfu if ok else None,
        "peak_convention": convention,
        "peak_tflops": row.flop_audit.peak.tflops_per_gpu
        if row.mfu is not None and row.flop_audit is not None and row.mfu_recomputed is not None
        else None,
        # MFU under every other peak the audit names (the campaign's vendor 2,500 beside its house 2,450).
        "mfu_peaks": [
            {k: p[k] for k in ("peak", "tflops_per_gpu", "text", "value")}
            for p in mfu_under_peaks(m, row.flop_audit)[1:]
        ]
        if ok and row.mfu_recomputed is not None
        else [],
        "batch": row.batch,
        "rate": ", ".join(quote_of(m, r.value, r.unit) for r in m.rates) if ok and m.rates else "–",
        "gflops": quote_of(m, flop_rate_gflops(m), "GFLOP/s") if ok and flop_rate_gflops(m) is not None else "–",
        "utilisation": quote_of(m, flop_utilisation_percent(m), "%")
        if ok and flop_utilisation_percent(m) is not None
        else "–",
        "peak": m.peak_flops.name if m and m.peak_flops else None,
        # Latency percentiles as recorded (a training step's p99 from 20 samples is noise, not a figure).
        "percentiles": ", ".join(f"{k} {quote_of(m, v, m.unit)}" for k, v in m.percentiles.items()) if ok else "",
        "metric": m.metric if m else None,
        "parameters": ", ".join(f"{k}={v}" for k, v in sorted(m.parameters.items())) if m else "",
        "measurement": m.id if m else None,
        "commit": m.source.sha[:9] if m and m.source else None,
    }


def _peak_notes(rows: list[dict[str, Any]], columns: list[Column]) -> list[str]:
    """One MFU column per other peak the rows' FLOP audits name, right after the MFU column
    (added to `columns` and to each row); the notes that name every peak with its figure."""
    extra: dict[str, float] = {}
    for r in rows:
        for p in r["mfu_peaks"]:
            extra.setdefault(p["peak"], p["tflops_per_gpu"])
            r[f"mfu@{p['peak']}"] = p["text"]
    at = next((i + 1 for i, c in enumerate(columns) if c.key == "mfu"), len(columns))
    for offset, name in enumerate(extra):
        columns.insert(at + offset, Column(f"mfu@{name}", f"MFU, {name}", 3, "figure"))
    conventions = sorted({r["peak_convention"] for r in rows if r["peak_convention"]})
    tflops = {r["peak_convention"]: r["peak_tflops"] for r in rows if r["peak_convention"] and r["peak_tflops"]}
    named = [peak_label(c, tflops[c]) if c in tflops else c for c in conventions]
    notes = [f"MFU under the peak convention {'; '.join(named)}."] if conventions else []
    if extra:
        notes.append(
            "Also under "
            + "; ".join(peak_label(n, t) for n, t in extra.items())
            + ": the same runs against the other peaks their FLOP audit names."
        )
    return notes


def _no_row_because(ctx: StatusContext) -> str:
    """Why a contract's stopping point has no row: no measurement names it, or those that do
    are each kept out for a reason said here (the count agrees with home's contracts table)."""
    assert ctx.choice.contract is not None
    under = [
        m
        for m in ctx.records
        if isinstance(m, Measurement) and m.contract == ctx.choice.contract.id and m.id not in ctx.superseded
    ]
    if not under:
        return "No measurement under this contract yet."
    why = sorted(
        {
            f"not comparable: {m.non_comparable_reason.rstrip('.')}"
            if not m.comparable and m.non_comparable_reason
            else "not comparable"
            if not m.comparable
            else f"outcome {m.outcome}"
            for m in under
        }
    )
    return (
        f"No stopping-point row: {len(under)} measurement(s) under this contract, none a baseline ({'; '.join(why)})."
    )


def stopping_section(ctx: StatusContext) -> Section:
    columns = [
        Column("topology", "Topology", 1),
        Column("status", "Status", 1, "verdict"),
        Column("mfu", "MFU", 1, "figure"),
        Column("median", "Median step", 2, "figure"),
        Column("throughput", "Throughput", 3, "figure"),
        Column("batch", "Local/global batch", 4),
        Column("measurement", "Measurement", 3, "id"),
    ]
    rows = [stopping_row(r) for r in ctx.stopping_rows]
    # Under a sweep, the best median may sit inside its neighbours' spread: the row says so
    # rather than presenting a 0.1% difference inside a 21-23% spread as a winner.
    for sweep in sweeps(ctx.records, ctx.choice.contract):
        stop = sweep.stopping_point()
        if stop.get("distinguishable") or len(stop.get("plateau") or []) < 2:
            continue
        on_plateau = {p.measurement.id: p.value for p in sweep.plateau()}
        name = sweep.parameter.name
        for row in rows:
            if row["measurement"] in on_plateau:
                own = on_plateau[row["measurement"]]
                others = ", ".join(f"{name}={v}" for v in stop["plateau"] if v != own)
                row["reasons"] = [*row["reasons"], f"not distinguishable from {others}: see the {name} sweep"]
    # Training words only where they apply: no MFU, batch or samples/s columns on an inference
    # or CPU campaign whose records carry none.
    if not any(r["mfu_value"] is not None for r in rows):
        columns = [c for c in columns if c.key != "mfu"]
    if not any(r["batch"] not in ("-", "", None) for r in rows):
        columns = [c for c in columns if c.key != "batch"]
    if not any(r["throughput_value"] is not None for r in rows):
        columns = [c for c in columns if c.key != "throughput"]
    if any(r["metric"] not in (None, "step_time") for r in rows):
        columns = [Column(c.key, "Median", c.importance, c.role) if c.key == "median" else c for c in columns]
    if any(r["parameters"] for r in rows):
        columns.insert(2, Column("parameters", "Configuration", 1))
    # Rates of any campaign: tokens/s, frames/s, GFLOP/s, FLOP utilisation against a named peak.
    for key, title, importance in (
        ("rate", "Rate", 3),
        ("gflops", "GFLOP/s", 3),
        ("utilisation", "FLOP utilisation", 2),
        ("percentiles", "Percentiles", 4),
    ):
        if any(r[key] not in ("–", "", None) for r in rows):
            columns.insert(len(columns) - 1, Column(key, title, importance, "figure"))
    for row in rows:
        state = ctx.regate_of(row["topology"])
        row["regate"] = state.state if state else None
        row["holds_at"] = state.valid_at[:9] if state and state.valid_at else None
        row["regated"] = bool(state and state.carried_by)
    notes = _peak_notes(rows, columns)
    peaks = sorted({r["peak"] for r in rows if r["peak"] and r["utilisation"] != "–"})
    if peaks:
        notes.append(f"FLOP utilisation against the named peak {', '.join(peaks)}.")
    empty = (
        _no_row_because(ctx)
        if ctx.choice.contract is not None
        else "No contract record yet: `ledger add contract` names what must match."
    )
    extra: dict[str, Any] = {}
    held = {r["holds_at"] for r in rows if r["regated"]}
    if len(rows) > 1 and len(held) == 1 and all(r["regated"] for r in rows):
        # Said once under the table, not in every row's status.
        extra["regated_at"] = held.pop()
        notes.append(f"Every row re-gated at {extra['regated_at']}; Re-gates says whether it holds at the head.")
    return Section("stopping_point", "Stopping point", columns, rows, empty, notes, extra)


def decisions_section(ctx: StatusContext) -> Section:
    decisions = [d for d in ctx.records if isinstance(d, Decision) and d.id not in ctx.superseded]
    now = datetime.now(UTC)
    # Newest by the time a decision may be ordered by: a forged future date never tops the list.
    decisions.sort(key=lambda d: (trusted_time(d, now), d.created_at, d.id), reverse=True)
    rows = [
        {
            "verdict": d.verdict,
            "family": d.family,
            "qualifier": d.qualifier,
            "where_to_continue": d.where_to_continue,
            "when": d.when.strftime("%Y-%m-%d"),
            "id": d.id,
        }
        for d in decisions[:NEWEST_DECISIONS]
    ]
    notes = (
        [f"{len(decisions) - NEWEST_DECISIONS} older decision(s) not shown."]
        if len(decisions) > NEWEST_DECISIONS
        else []
    )
    columns = [
        Column("verdict", "Verdict", 1, "verdict"),
        Column("family", "Family", 1),
        Column("when", "Date", 3, "date"),
        Column("where_to_continue", "Where to continue", 4),
        Column("id", "Record", 2, "id"),
    ]
    return Section("decisions", "Newest decisions", columns, rows, "No decision recorded yet.", notes)


#: "(owner: X)" or "(owned by X)" in an owed item's text, with the space before it.
_OWNER_ASIDE = re.compile(r"\s*\((?:owner\s*[:=]|owned\s+by)\s*[^()]*\)", re.IGNORECASE)


def owed_section(ctx: StatusContext) -> Section:
    # An item's owner is its own, else the owner of the live record of an issue it names: the
    # rule `ledger check` counts unowned items by, so the site, status and check agree.
    lookup = issue_owner(ctx.records)
    # An item tied to issues that are all closed is owed no more.
    closed = issue_closed(ctx.records)
    rows: list[dict[str, Any]] = [
        {
            # The owner has its own column: "(owner: X)" in the item's text is not said twice.
            "item": _OWNER_ASIDE.sub("", o.text) if o.owner else o.text,
            "owner": owner_of(o.owner, o.issues, lookup) or "unowned",
            "issues": ", ".join(f"#{n}" for n in o.issues),
            "where": f"spec {o.spec}",
            "id": None,
        }
        for o in ctx.owed
        if not settled(o.issues, closed)
    ]
    for h in ctx.records:
        if isinstance(h, Hypothesis) and h.status == "open" and h.id not in ctx.superseded:
            rows.append(
                {
                    "item": f"open hypothesis: {h.statement}",
                    "owner": h.owner or "unowned",
                    "issues": "",
                    "where": h.settled_by or "",
                    "id": h.id,
                }
            )
    gates = {g.id: g for g in ctx.records if isinstance(g, Gate)}
    for m in owed_mutations(ctx.records):
        issues = (m.links.issue,) if m.links.issue is not None else ()
        gate = gates.get(m.gate or "")
        rows.append(
            {
                "item": f"survived mutation: {m.mutation} (built, exit 0, detected by nothing)",
                "owner": owner_of(None, issues, lookup) or "unowned",
                "issues": ", ".join(f"#{n}" for n in issues),
                "where": f"gate {gate.title or gate.command or gate.id}" if gate else "",
                "id": m.id,
            }
        )
    for g in gates.values():
        # An armed check that passed proves nothing: the check it controls is not armed.
        if g.expect == "fail" and not g.as_expected and g.id not in ctx.superseded:
            rows.append(
                {
                    "item": f"not armed: {g.title or g.command or 'a gate'} ({g.outcome} where it must fail)",
                    "owner": "unowned",
                    "issues": "",
                    "where": "gate",
                    "id": g.id,
                }
            )
    if ctx.guidance is not None and ctx.choice.contract is not None:
        for state in ctx.guidance.regates.get(ctx.choice.contract.id, []):
            if state.owed:
                rows.insert(
                    0,
                    {
                        "item": f"re-gate owed: {state.topology} of {ctx.choice.contract.name}",
                        "owner": "unowned",
                        "issues": "",
                        "where": state.reason,
                        "id": state.anchor,
                    },
                )
    columns = [
        Column("item", "Owed", 1),
        Column("owner", "Owner", 2),
        Column("issues", "Issues", 3),
        Column("where", "Where", 4),
        Column("id", "Record", 3, "id"),
    ]
    return Section(
        "owed",
        "Owed",
        columns,
        rows,
        "Nothing owed: no owed item in a spec page, no open hypothesis, no mutation that survived.",
    )


def owed_mutations(records: list[Envelope]) -> list[Mutation]:
    """Mutations owed as work: built and passed the gate (exit 0), detected by nothing, not
    superseded. A defect nothing detects is a gap in the gate until a test catches it. One that
    links an issue is owned by the issue's owner and settled when it closes."""
    superseded = {s for r in records for s in r.supersedes}
    closed = issue_closed(records)
    out = []
    for m in records:
        if not (isinstance(m, Mutation) and m.built and m.exit_code == 0 and not m.detected_by):
            continue
        issues = (m.links.issue,) if m.links.issue is not None else ()
        if m.id in superseded or settled(issues, closed):
            continue
        out.append(m)
    return out


def sweep_sections(ctx: StatusContext) -> list[Section]:
    """One section per swept parameter of the current contract: the points, speedup and
    efficiency against the named base, and the sweep's stopping point."""
    out = []
    for sweep in sweeps(ctx.records, ctx.choice.contract):
        name = sweep.parameter.name
        columns = [
            Column("value", name.replace("_", " ").capitalize(), 1),
            Column("median", "Median", 1, "figure"),
            Column("speedup", "Speedup", 1, "figure"),
            Column("efficiency", "Efficiency", 3, "figure"),
            Column("spread", "Spread", 2, "figure"),
            # The ranges carry the stopping point's argument ("their min-max ranges overlap"):
            # they stay on a phone, where efficiency (speedup over the value) can go.
            Column("min", "Min", 2, "figure"),
            Column("max", "Max", 2, "figure"),
            Column("runs", "n", 4),
            Column("measurement", "Measurement", 3, "id"),
        ]
        if sweep.parameter.ideal != "linear":
            columns = [c for c in columns if c.key != "efficiency"]
        stop = sweep.stopping_point()
        notes = [f"Stopping point: {stop['text']}."]
        if sweep.base is not None:
            notes.append(
                f"Speedup{' and efficiency' if sweep.parameter.ideal == 'linear' else ''} against "
                f"{name}={sweep.base.value}; digits within each point's spread and the base's."
            )
        if sweep.failed:
            notes.append(f"{len(sweep.failed)} point(s) without a valid measurement (OOM or failed).")
        orders = sorted({o for p in sweep.points for o in p.measurement.sweep_order})
        if orders:
            notes.append(f"Runs taken in {' and '.join(orders)} order of {name}.")
        section = Section(
            f"sweep:{name}",
            f"Sweep over {name} ({sweep.metric}, {sweep.unit})",
            columns,
            sweep_rows(sweep),
            f"No measurement under this contract carries `parameters.{name}` yet.",
            notes,
            {"stopping_point": stop, "parameter": name, "base": sweep.base.value if sweep.base else None},
        )
        out.append(section)
    return out


def regates_section(ctx: StatusContext) -> Section | None:
    """Where each stopping-point row holds, against the measured source's head."""
    if ctx.guidance is None or ctx.choice.contract is None:
        return None
    states = ctx.guidance.regates.get(ctx.choice.contract.id, [])
    if not states:
        return None
    # Rows that say the same thing are one row naming every topology it covers: "unknown,
    # because..." once, not once per topology.
    # (Each row's own record is a click away in the stopping point; a merged row names its
    # record only when it is the same one.)
    grouped: dict[tuple, dict[str, Any]] = {}
    for s in states:
        key = (s.state, s.valid_at[:9] if s.valid_at else None, s.reason)
        if key in grouped:
            grouped[key]["topology"] += f", {s.topology}"
            if grouped[key]["id"] != s.anchor:
                grouped[key]["id"] = None
            continue
        grouped[key] = {"topology": s.topology, "state": key[0], "holds_at": key[1], "reason": key[2], "id": s.anchor}
    rows = list(grouped.values())
    source = ctx.guidance.source
    notes = []
    if len(rows) == 1 and len(states) > 1:
        rows[0]["topology"] = f"every row ({rows[0]['topology']})"
    if source is not None and source.head:
        notes.append(f"The measured source (`source:` in ledger.yaml) is at {source.head[:9]}.")
    elif source is not None and source.problem:
        notes.append(f"{source.problem[0].upper()}{source.problem[1:]}.")
    columns = [
        Column("topology", "Topology", 1),
        Column("state", "Re-gate", 1),
        Column("holds_at", "Holds at", 2, "commit"),
        Column("reason", "Why", 3),
        Column("id", "Record", 4, "id"),
    ]
    return Section("regates", "Re-gates", columns, rows, "", notes)


def pending_section(ctx: StatusContext) -> Section | None:
    """Decisions scoped to a class of allocation that no record on that class has settled."""
    if ctx.guidance is None or not ctx.guidance.pending:
        return None
    rows = [
        {
            "family": p.decision.family,
            "verdict": p.decision.verdict,
            "needs": p.needs,
            "why_not_yet": "; ".join(f"{r.id[:10]}: {why}" for r, why in p.near_misses)
            or "no record on that class yet",
            "id": p.decision.id,
        }
        for p in ctx.guidance.pending
    ]
    columns = [
        Column("family", "Decision family", 1),
        Column("needs", "Pending until", 1),
        Column("why_not_yet", "Not yet, because", 3),
        Column("verdict", "Verdict", 4, "verdict"),
        Column("id", "Record", 2, "id"),
    ]
    return Section("pending", "Pending decisions", columns, rows)


def families_section(ctx: StatusContext) -> Section | None:
    """Rejected families and what was tried in them since."""
    if ctx.guidance is None or not ctx.guidance.rejected:
        return None
    rows = []
    for fam in ctx.guidance.rejected:
        tried = fam.tried_since
        repeats = sum(1 for _, new in tried if not new)
        rows.append(
            {
                "family": fam.decision.family,
                "tried_since": ", ".join(f"{r.id[:10]} ({'new mechanism' if new else 'repeat'})" for r, new in tried)
                or "nothing",
                "repeats": repeats,
                "id": fam.decision.id,
            }
        )
    columns = [
        Column("family", "Rejected family", 1),
        Column("repeats", "Repeats", 1),
        Column("tried_since", "Tried since", 2),
        Column("id", "Decision", 3, "id"),
    ]
    notes = ["Do not repeat without a new mechanism: a record names its `family` and the `mechanism` it tries."]
    return Section("rejected_families", "Rejected families", columns, rows, "", notes)


def outside_section(ctx: StatusContext) -> Section | None:
    """Measurements under no contract (none named, or one no contract record has): no
    stopping point can hold them, so they are listed here rather than vanishing."""
    contracts = {r.id for r in ctx.records if isinstance(r, Contract)}
    rows = [
        {
            "what": m.title or m.metric.replace("_", " "),
            "contract": m.contract or "none named",
            "topology": m.allocation.topology if m.allocation and m.allocation.topology else "–",
            "when": m.when.strftime("%Y-%m-%d"),
            "id": m.id,
        }
        for m in ctx.records
        if isinstance(m, Measurement)
        and m.id not in ctx.superseded
        and (m.contract is None or m.contract not in contracts)
    ]
    if not rows:
        return None
    total = len(rows)
    rows = sorted(rows, key=lambda r: (r["when"], r["id"]), reverse=True)[:NEWEST_DECISIONS]
    columns = [
        Column("what", "Measurement", 1),
        Column("contract", "Contract", 2),
        Column("topology", "Topology", 3),
        Column("when", "Date", 4, "date"),
        Column("id", "Record", 2, "id"),
    ]
    notes = [
        "No stopping point compares these: add the contract they were measured under "
        "(`ledger add contract`), then a measurement that names it (`contract:`)."
    ]
    if total > len(rows):
        notes.insert(0, f"The newest {len(rows)} of {total}; `ledger list --kind measurement` lists every one.")
    return Section("outside_contract", "Outside any contract", columns, rows, "", notes)


#: Section builders, in the order they are shown: what the reader needs first (the stopping
#: point and its sweeps, what is owed, what is pending, the newest decisions), then the detail
#: behind them (where each row holds, rejected families). A builder returns None to stay silent, or a
#: list of sections (one per sweep).
SECTIONS: list[Callable[[StatusContext], Section | list[Section] | None]] = [
    stopping_section,
    sweep_sections,
    owed_section,
    pending_section,
    decisions_section,
    regates_section,
    families_section,
    outside_section,
]


def contract_summary(contract: Contract | None) -> dict[str, Any] | None:
    if contract is None:
        return None
    return {
        "id": contract.id,
        "name": contract.name,
        "model": contract.model,
        "param_precision": contract.param_precision,
        "optimizer_state_precision": contract.optimizer_state_precision,
        "compute_precision": contract.compute_precision,
    }


def owed_entries(items: Iterable[Any]) -> list[OwedEntry]:
    """The owed items of the spec pages as `ledger.pages` reads them (text, owner, issues,
    spec); the Owed section gives an unowned one the owner of the issue it cites."""
    return [OwedEntry(o.text, o.owner, list(o.issues), o.spec) for o in items]


def ledger_status(
    records: Iterable[Envelope],
    contract: str | None = None,
    *,
    asked: bool = False,
    owed_items: Iterable[Any] = (),
    guidance: Guidance | None = None,
    rows_of: Callable[[Contract], list[Row]] | None = None,
) -> Status:
    """The one status of a ledger that `ledger status`, the site's home page and `ledger demo`
    show: `build_status` with the spec pages' owed items and the guidance judged by
    ledger.yaml (`ledger.checks.registry.ledger_guidance`)."""
    return build_status(
        records, contract, asked=asked, owed=owed_entries(owed_items), guidance=guidance, rows_of=rows_of
    )


def build_status(
    records: Iterable[Envelope],
    contract: str | None = None,
    *,
    asked: bool = False,
    owed: Iterable[OwedEntry] = (),
    guidance: Guidance | None = None,
    rows_of: Callable[[Contract], list[Row]] | None = None,
) -> Status:
    """The status of a ledger under `contract` (a name or id; else the current-contract rule).

    `asked` says the contract came from the user (`--contract`) rather than ledger.yaml.
    `rows_of` gives a contract's stopping-point rows when the caller has them already (the
    site computes each contract's once); else they are computed here, judged by `guidance`.
    """
    records = list(records)
    choice = choose_contract(records, contract, asked=asked)
    judge = guidance.judge if guidance is not None else None
    rows: list[Row] = []
    if choice.contract is not None:
        if rows_of is not None:
            rows = list(rows_of(choice.contract))
        else:
            _, rows = stopping_point(records, contract=choice.contract, judge=judge)
    ctx = StatusContext(
        records=records,
        choice=choice,
        stopping_rows=rows,
        owed=list(owed),
        by_id={r.id: r for r in records},
        superseded={s for r in records for s in r.supersedes},
        guidance=guidance,
    )
    sections: list[Section] = []
    for build in SECTIONS:
        made = build(ctx)
        if isinstance(made, list):
            sections.extend(made)
        elif made is not None:
            sections.append(made)
    return Status(contract_summary(choice.contract), choice.rule, sections, len(records))


def unique_prefixes(ids: Iterable[str], minimum: int = 8) -> dict[str, str]:
    """The shortest prefix of each id (at least `minimum` characters) no other id shares,
    as git abbreviates SHAs; `ledger show PREFIX` resolves it."""
    ordered = sorted(set(ids))
    out: dict[str, str] = {}
    for i, rid in enumerate(ordered):
        need = minimum
        for other in (ordered[i - 1] if i else None, ordered[i + 1] if i + 1 < len(ordered) else None):
            if other is None:
                continue
            common = 0
            for a, b in zip(rid, other, strict=False):
                if a != b:
                    break
                common += 1
            need = max(need, common + 1)
        out[rid] = rid[: min(need, len(rid))]
    return out
