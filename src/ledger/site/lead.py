"""What a record page leads with: the result. A measurement's value with its spread, its
status and MFU, and its samples as a strip; a sandwich's verdict, delta and arms; a
decision's verdict. Stamps and links follow on the page."""

from __future__ import annotations

import html
from typing import Any

from markupsafe import Markup

from ..analysis.figures import (
    exact_bytes,
    interquartile,
    quote_of,
    readable_bytes,
    result_line,
    sandwich_figures,
    sandwich_result,
)
from ..analysis.gates import gate_load, gate_result, margin_share, mutation_result
from ..analysis.metrics import derived_facts
from ..analysis.sandwich import arm_rounds
from ..schema.kinds import Decision, Environment, Gate, Measurement, Mutation, Sandwich
from .context import SiteData
from .escape import md_inline, quotation
from .tables import verdict

STRIP_W, STRIP_H = 600, 64


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def exact(n: int | None) -> Markup:
    """A byte count in readable units; the exact count in its tooltip."""
    if n is None:
        return Markup("–")
    return Markup(f'<abbr class="ledger-exact" title="{_e(exact_bytes(n))}">{_e(readable_bytes(n))}</abbr>')


def strip(samples: list[float], unit: str, median: float | None) -> Markup:
    """The samples as a strip: one tick each, the interquartile box, the median. Inline SVG,
    drawn by hand (deterministic, no script), scaled to the column."""
    if len(samples) < 2:
        return Markup("")
    lo, hi = min(samples), max(samples)
    span = hi - lo or abs(hi) or 1.0
    left, right = 12, STRIP_W - 12

    def x(v: float) -> float:
        return round(left + (v - lo) / span * (right - left), 2)

    q1, q3 = interquartile(samples)
    # The ends as the axis labels write them (six figures), for a screen reader too: the raw
    # float's seventeen digits are noise, not precision.
    low, high = f"{lo:g} {unit}".strip(), f"{hi:g} {unit}".strip()
    parts = [
        f'<svg class="ledger-strip" viewBox="0 0 {STRIP_W} {STRIP_H}" width="{STRIP_W}" height="{STRIP_H}" '
        f'role="img" aria-label="{len(samples)} samples from {_e(low)} to {_e(high)}">',
        f'<rect x="{x(q1)}" y="10" width="{max(round(x(q3) - x(q1), 2), 1)}" height="26" fill="#0072B2" fill-opacity="0.15"/>',
    ]
    for v in sorted(samples):
        parts.append(f'<line x1="{x(v)}" x2="{x(v)}" y1="14" y2="32" stroke="#0072B2" stroke-opacity="0.6"/>')
    if median is not None and lo <= median <= hi:
        parts.append(f'<line x1="{x(median)}" x2="{x(median)}" y1="6" y2="40" stroke="#D55E00" stroke-width="2"/>')
    parts.append(f'<text x="{left}" y="56" font-size="11" fill="currentColor">{_e(low)}</text>')
    parts.append(f'<text x="{right}" y="56" font-size="11" fill="currentColor" text-anchor="end">{_e(high)}</text>')
    parts.append(
        f'<text x="{STRIP_W / 2}" y="56" font-size="11" fill="currentColor" text-anchor="middle">'
        f"{len(samples)} samples · box: interquartile range · red: median</text></svg>"
    )
    return Markup("".join(parts))


def measurement_status(data: SiteData, m: Measurement) -> str:
    if m.outcome != "ok":
        return f"no valid step: {'OOM' if m.outcome == 'oom' else 'failed'}"
    # The stopping point's judgement: the allocation's environments and the recorded health.
    health, readings = data.health(m)
    if health == "degraded":
        reasons = "; ".join(readings)
        return "baseline-ineligible: degraded allocation" + (f" ({reasons})" if reasons else "")
    if not m.comparable:
        return f"not comparable: {m.non_comparable_reason}"
    verdicts = sorted(
        {data.by_id[c].verdict for c in data.cited_by.get(m.id, []) if isinstance(data.by_id.get(c), Decision)}
    )
    health = {"healthy": "healthy allocation", "unknown": "allocation health unknown"}[health]
    return ", ".join([*(f"{v} by a decision" for v in verdicts), health])


def measurement(data: SiteData, m: Measurement) -> Markup:

    lines: list[Markup] = []
    if m.outcome == "ok" and getattr(m, m.headline_field) is not None:
        value = quote_of(m, getattr(m, m.headline_field), m.unit, field=m.headline_field)
        detail = result_line(m).split(", ", 1)[1] if ", " in result_line(m) else ""
        head = f"{m.headline_label} {m.metric.replace('_', ' ')}" + (
            f" · {detail.replace(', ', ' · ')}" if detail else ""
        )
        lines.append(Markup(f'<p class="ledger-result">{_e(value)} <small>{_e(head)}</small></p>'))
    else:
        lines.append(Markup(f'<p class="ledger-result">{_e(result_line(m))}</p>'))
    facts: list[Markup] = [Markup("**Status:** ") + verdict(measurement_status(data, m))]
    for label, text in derived_facts(m, data.audit_of(m)):
        facts.append(Markup(f"**{label}:** ") + md_inline(text))
    if m.peak_allocated_bytes is not None or m.peak_reserved_bytes is not None:
        facts.append(
            Markup("**Peak memory:** ")
            + exact(m.peak_allocated_bytes)
            + Markup(" allocated, ")
            + exact(m.peak_reserved_bytes)
            + Markup(" reserved")
        )
    if m.allocation and m.allocation.topology:
        facts.append(Markup("**Topology:** ") + md_inline(m.allocation.topology))
    lines.append(Markup("  \n").join(facts))
    svg = strip(list(m.samples), m.unit, m.median)
    if svg:
        lines.append(svg)
    return Markup("\n\n").join(lines)


def sandwich(data: SiteData, page: str, s: Sandwich) -> Markup:

    f = sandwich_figures(s, data.spread_percent)
    arms = [data.by_id.get(r) if r else None for r in (s.control_a, s.candidate, s.control_b)]
    rounds = arm_rounds(arms) if all(isinstance(m, Measurement) for m in arms) else None
    result, detail = sandwich_result(s, f, rounds)
    head = Markup(f'<p class="ledger-result">{_e(result)} <small>{_e(detail)}</small></p>')
    rows = [
        ("A (baseline)", f["a"], s.control_a),
        ("Candidate", f["candidate"], s.candidate),
        ("B (baseline again)", f["b"] if not s.is_pair else "not run: a pair", s.control_b),
        ("Midpoint of A and B" if not s.is_pair else "Baseline (A alone)", f["midpoint"], None),
    ]
    table = ["| Arm | Value | Record |", "|---|---:|---|"]
    for name, value, rid in rows:
        link = data.link(rid, page) if rid else Markup("–")
        table.append(f"| {name} | {md_inline(value)} | {link} |")
    table.append(f"| Delta | {md_inline(f['delta'])} ({md_inline(f['delta_percent'])}) | – |")
    label = Markup("**Candidate:** ") + md_inline(s.candidate_label or "not labelled")
    return Markup("\n\n").join([head, Markup("**Verdict:** ") + verdict(s.verdict), label, Markup("\n".join(table))])


def decision(data: SiteData, page: str, d: Decision) -> Markup:

    # The qualifier is the record's own words: quoted, as generated pages quote record text.
    head = (
        Markup("**Verdict:** ")
        + verdict(d.verdict)
        + (Markup("; ") + quotation(md_inline(d.qualifier)) if d.qualifier else Markup(""))
    )
    parts = [head, Markup("**Family:** ") + md_inline(d.family)]
    if d.evidence:
        parts.append(Markup("**Evidence:** ") + data.links(d.evidence, page))
    return Markup("  \n").join(parts)


def environment(data: SiteData, env: Environment) -> Markup:
    """An environment's health as the stopping point judges it from its readings."""
    health, readings = data.judge.environment(env)
    text = {"healthy": "healthy by its readings", "unknown": "health unknown (not sampled under load)"}.get(
        health, "baseline-ineligible: " + "; ".join(readings)
    )
    return Markup("**Allocation health:** ") + verdict(text) + Markup("\n")


def gate(g: Gate) -> Markup:
    """A gate's result against the one it must have, and its goldens against their tolerance,
    the closest to failing first."""
    parts = [Markup("**Result:** ") + verdict(gate_result(g))]
    load = gate_load(g)
    if load:
        parts.append(Markup("**Machine:** ") + md_inline(load))
    margins = sorted(g.margins, key=lambda m: m.fraction, reverse=True)
    if margins:
        parts.append(Markup("**Margins:**"))
        return (
            Markup("  \n").join(parts)
            + Markup("\n\n")
            + Markup("\n").join(Markup("- ") + md_inline(margin_share(m)) for m in margins)
            + Markup("\n")
        )
    return Markup("  \n").join(parts)


def lead(data: SiteData, page: str, record) -> Markup:
    if isinstance(record, Gate):
        return gate(record)
    if isinstance(record, Mutation):
        return Markup("**Result:** ") + verdict(mutation_result(record))
    if isinstance(record, Environment):
        return environment(data, record)
    if isinstance(record, Measurement):
        return measurement(data, record)
    if isinstance(record, Sandwich):
        return sandwich(data, page, record)
    if isinstance(record, Decision):
        return decision(data, page, record)
    return Markup("")
