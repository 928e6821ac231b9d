"""The sweep a guarded page names as the evidence of its figures (`figures: {sweep: NAME}`).

A table of a sweep (threads, batch, workers) quotes each point's median, speedup and
efficiency; the records behind a row are the contract's measurements at that row's swept
value, and a ratio (speedup, efficiency) is taken against the base point, so it carries both
points' spreads (`analysis.sweep` derives the same figures the same way). A row finds its
value in the column headed by the parameter (its name, its unit, or the page's
`sweep_column`); a figure in prose or in a cell finds it in its own clause ("9.14x at 20
workers", "~9x at 16-20 threads", a range naming every measured point inside it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..pages import Figure
from .info import Info


@dataclass(frozen=True)
class SweepEvidence:
    contract: str  # the contract's name
    parameter: str
    words: frozenset[str]  # what names the swept value in a header or after a number
    base: float | None
    points: dict[float, tuple[str, ...]] = field(default_factory=dict)  # value -> measurement ids

    def ids_for(self, fig: Figure) -> tuple[str, ...]:
        """The measurements a figure of this sweep's table or text quotes: its point's, and the
        base point's for a ratio (x, %)."""
        values = self.values_of(fig)
        out = [i for v in values for i in self.points.get(v, ())]
        if out and fig.unit in ("x", "%") and self.base is not None and any(v != self.base for v in values):
            out.extend(self.points.get(self.base, ()))
        return tuple(dict.fromkeys(out))

    def values_of(self, fig: Figure) -> list[float]:
        for header, text in fig.row:
            if _header_words(header) & self.words:
                numbers = [float(n) for n in _NUMBER.findall(text)]
                if numbers:
                    return self._inside(numbers)
        for m in _VALUE.finditer(fig.clause):
            if m.group(3).lower().rstrip("s") in self.words:
                low = float(m.group(1))
                high = float(m.group(2)) if m.group(2) else low
                return self._inside([low, high])
        return []

    def _inside(self, numbers: list[float]) -> list[float]:
        low, high = min(numbers), max(numbers)
        return [v for v in sorted(self.points) if low <= v <= high]


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
#: "20 workers", "16-20 threads", "16 to 20 GPUs": a value or a range, then a word.
_VALUE = re.compile(r"(\d+(?:\.\d+)?)(?:\s*(?:-|–|to)\s*(\d+(?:\.\d+)?))?\s*-?\s*([A-Za-z_]+)")


def _header_words(header: str) -> set[str]:
    return {w.rstrip("s") for w in re.split(r"[\s,()\[\]/:;]+", header.lower()) if w}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


def sweep_evidence(
    ref: str, contracts: Iterable[Info], measurements: Iterable[Info], column: str | None = None
) -> SweepEvidence | None:
    """The sweep of the contract named `ref` (its name or id), from the check's infos of the
    contracts and of that contract's measurements; None when no live contract of that name
    sweeps a parameter."""
    contracts = list(contracts)
    superseded = {r for i in contracts for where, r in i.refs if where.startswith("supersedes")}
    live = [c for c in contracts if (c.name == ref or c.id == ref) and c.id not in superseded]
    if not live:
        return None
    contract = max(live, key=lambda c: c.id)
    swept = [(n, b) for n, b in contract.parameters if not n.startswith("unit:")]
    if not swept:
        return None
    name, base = swept[0]
    unit = dict(contract.parameters).get(f"unit:{name}")
    measurements = [m for m in measurements if m.contract == contract.id]
    gone = {r for m in measurements for where, r in m.refs if where.startswith("supersedes")}
    points: dict[float, list[str]] = {}
    for m in measurements:
        value = _number(dict(m.parameters).get(name))
        if value is None or m.id in gone or not m.comparable:
            continue
        points.setdefault(value, []).append(m.id)
    words = {w.lower().rstrip("s") for w in (name, unit, column) if w}
    base_value = _number(base) if base is not None else (min(points) if points else None)
    return SweepEvidence(
        contract=contract.name or contract.id,
        parameter=name,
        words=frozenset(words),
        base=base_value,
        points={v: tuple(ids) for v, ids in points.items()},
    )
