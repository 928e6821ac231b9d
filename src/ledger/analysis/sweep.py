"""Sweeps: a contract's swept parameter (threads, batch, sequence length...), its points,
speedup and efficiency against a named base value, and the sweep's stopping point.

    sweeps(records, contract)          -> [Sweep] (one per swept parameter of the contract)
    sweep_rows(sweep)                  -> [dict] figures quoted by the digit policy

A point's spread is its measurement's uncertainty (torch's confidence interval with
samples, the recorded min-max range without). A ratio of two medians carries both
uncertainties (their relative sizes add), so `9.14x` against a 23% spread is quoted `9x`.

The stopping point of a sweep is the best configuration that is distinguishable from its
neighbours: the best median, and every point whose range overlaps the best's range is a
plateau the best is not distinguishable from. When the plateau holds more than one point
the sweep says so, and names the cheapest point of the plateau (the smallest value).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..schema.envelope import Envelope
from ..schema.kinds import Contract, Measurement, SweptParameter
from .figures import derived_digits, measurement_uncertainty, quote, quote_field


@dataclass
class SweepPoint:
    value: Any
    measurement: Measurement
    runs: int  # measurements taken at this value (the newest is shown)

    @property
    def median(self) -> float:
        return float(self.measurement.median)  # type: ignore[arg-type]

    @property
    def low(self) -> float:
        m = self.measurement
        return float(m.min if m.min is not None else m.median)  # type: ignore[arg-type]

    @property
    def high(self) -> float:
        m = self.measurement
        return float(m.max if m.max is not None else m.median)  # type: ignore[arg-type]

    @property
    def ranged(self) -> bool:
        """Whether the point records a min and max (its samples give them), so overlap means something."""
        return self.measurement.min is not None and self.measurement.max is not None

    @property
    def uncertainty(self) -> float | None:
        return measurement_uncertainty(self.measurement)

    @property
    def spread_percent(self) -> float | None:
        m = self.measurement
        if m.min is None or m.max is None or not m.median:
            return None
        return 100.0 * (m.max - m.min) / m.median


@dataclass
class Sweep:
    contract: Contract
    parameter: SweptParameter
    points: list[SweepPoint] = field(default_factory=list)
    base: SweepPoint | None = None
    lower_is_better: bool = True
    unit: str = "s"
    metric: str = "step_time"
    failed: list[Measurement] = field(default_factory=list)

    def speedup(self, point: SweepPoint) -> float | None:
        if self.base is None or not point.median or not self.base.median:
            return None
        ratio = self.base.median / point.median
        return ratio if self.lower_is_better else 1.0 / ratio

    def efficiency(self, point: SweepPoint) -> float | None:
        """Speedup over the ideal (value / base) in percent, for linearly scaling parameters."""
        speedup = self.speedup(point)
        if speedup is None or self.parameter.ideal != "linear" or self.base is None:
            return None
        try:
            ideal = float(point.value) / float(self.base.value)
        except (TypeError, ValueError, ZeroDivisionError):
            return None
        return 100.0 * speedup / ideal if ideal else None

    def ratio_uncertainty(self, point: SweepPoint) -> float | None:
        """Percent uncertainty of a ratio to the base: the two relative uncertainties added."""
        if self.base is None:
            return None
        parts = [point.uncertainty, self.base.uncertainty]
        known = [p for p in parts if p is not None]
        if not known:
            return None
        return sum(known) if point is not self.base else known[0]

    def best(self) -> SweepPoint | None:
        if not self.points:
            return None
        key = (lambda p: p.median) if self.lower_is_better else (lambda p: -p.median)
        return min(self.points, key=key)

    def plateau(self) -> list[SweepPoint]:
        """The best point and every point whose range overlaps it: what the best is not distinguishable from."""
        best = self.best()
        if best is None:
            return []
        return [p for p in self.points if p is best or (p.low <= best.high and best.low <= p.high)]

    def stopping_point(self) -> dict[str, Any]:
        """The sweep's stopping point as data: the configuration, whether it is distinguishable, and why."""
        best = self.best()
        name = self.parameter.name
        if best is None:
            return {"value": None, "distinguishable": False, "text": f"no valid point in the {name} sweep yet"}
        plateau = self.plateau()
        unranged = [p for p in [best, *_neighbours(self.points, best)] if not p.ranged]
        if len(plateau) == 1 and unranged:
            # No min or max recorded: a range of one point overlaps nothing, which says nothing.
            missing = ", ".join(f"{name}={p.value}" for p in unranged)
            return {
                "value": best.value,
                "distinguishable": False,
                "plateau": [best.value],
                "measurement": best.measurement.id,
                "text": f"{name}={best.value}: the best median; whether it is distinguishable from its neighbours "
                f"is not known ({missing} recorded no min or max)",
            }
        if len(plateau) == 1:
            neighbours = _neighbours(self.points, best)
            beside = ", ".join(f"{name}={p.value}" for p in neighbours)
            return {
                "value": best.value,
                "distinguishable": True,
                "plateau": [best.value],
                "measurement": best.measurement.id,
                "text": f"{name}={best.value}: the best median, distinguishable from its neighbours"
                + (f" ({beside}): their ranges do not overlap" if beside else ""),
            }
        others = [p for p in plateau if p is not best]
        cheapest = min(plateau, key=lambda p: _order_key(p.value))
        text = (
            f"{name}={best.value} has the best median but is not distinguishable from "
            + ", ".join(f"{name}={p.value}" for p in others)
            + " (their min-max ranges overlap): the sweep plateaus there"
        )
        if cheapest is not best:
            text += f"; the smallest configuration on the plateau is {name}={cheapest.value}"
        return {
            "value": cheapest.value,
            "distinguishable": False,
            "plateau": [p.value for p in sorted(plateau, key=lambda p: _order_key(p.value))],
            "best_median": best.value,
            "measurement": cheapest.measurement.id,
            "text": text,
        }


def _order_key(value: Any) -> tuple:
    return (0, float(value), "") if isinstance(value, int | float) else (1, 0.0, str(value))


def _neighbours(points: list[SweepPoint], point: SweepPoint) -> list[SweepPoint]:
    i = points.index(point)
    return [p for p in (points[i - 1] if i else None, points[i + 1] if i + 1 < len(points) else None) if p]


def sweeps(records: Iterable[Envelope], contract: Contract | None) -> list[Sweep]:
    """The sweeps of `contract`: for each swept parameter, the newest valid measurement at each value
    (superseded and non-comparable ones left out; failed ones listed apart)."""
    if contract is None or not contract.sweep:
        return []
    records = list(records)
    superseded = {s for r in records for s in r.supersedes}
    ms = [
        m
        for m in records
        if isinstance(m, Measurement) and m.contract == contract.id and m.id not in superseded and m.comparable
    ]
    out = []
    for param in contract.sweep:
        at: dict[Any, list[Measurement]] = {}
        failed = []
        for m in ms:
            if param.name not in m.parameters:
                continue
            if m.outcome != "ok" or m.median is None:
                failed.append(m)
                continue
            at.setdefault(m.parameters[param.name], []).append(m)
        points = [
            SweepPoint(value, max(group, key=lambda m: (m.when, m.created_at, m.id)), len(group))
            for value, group in sorted(at.items(), key=lambda kv: _order_key(kv[0]))
        ]
        sweep = Sweep(contract, param, points, failed=failed)
        if points:
            first = points[0].measurement
            sweep.lower_is_better, sweep.unit, sweep.metric = first.lower_is_better, first.unit, first.metric
            base_value = param.base if param.base is not None else points[0].value
            sweep.base = next((p for p in points if p.value == base_value), None)
        out.append(sweep)
    return out


def sweep_rows(sweep: Sweep) -> list[dict[str, Any]]:
    """One row per point, every figure quoted to the digits its spread supports, exact values beside."""
    rows = []
    for p in sweep.points:
        m = p.measurement
        speedup = sweep.speedup(p)
        efficiency = sweep.efficiency(p)
        ru = sweep.ratio_uncertainty(p)
        # A ratio with no spread on either side: the digits both medians were recorded with.
        rd = derived_digits(m, sweep.base.measurement) if sweep.base is not None else derived_digits(m)
        is_base = p is sweep.base
        rows.append(
            {
                "value": p.value,
                "runs": m.n if m.n is not None else None,
                # The ends are observations, quoted at the range's own width so they stay
                # apart (0.21 and 0.26 s, where the median's one digit read 0.2 and 0.3).
                "min": quote_field(m, "min", m.min, sweep.unit),
                # At least the digits of its own min and max, so it never reads outside them.
                "median": quote_field(m, "median", m.median, sweep.unit),
                "max": quote_field(m, "max", m.max, sweep.unit),
                "spread": f"{p.spread_percent:.1f}%" if p.spread_percent is not None else "–",
                # The base is a definition, exactly 1x and 100%, never a measured figure.
                "speedup": "1x (base)"
                if is_base
                else (quote(speedup, ru, "x", digits=rd) if speedup is not None else "–"),
                "efficiency": "100% (base)"
                if is_base and sweep.parameter.ideal == "linear"
                else (quote(efficiency, ru, "%", digits=rd) if efficiency is not None else "–"),
                "median_value": m.median,
                "min_value": m.min,
                "max_value": m.max,
                "spread_value": p.spread_percent,
                "speedup_value": speedup,
                "efficiency_value": efficiency,
                "measurement": m.id,
            }
        )
    return rows
