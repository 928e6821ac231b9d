"""Compare two measurements, or two sets of measurements, honestly.

The difference of medians, a Mann-Whitney U test on the raw samples (as asv does), an
effect size (Cliff's delta and the Hodges-Lehmann shift), every figure trimmed to what
its spread supports (:mod:`ledger.analysis.figures`). A comparison across contracts, metrics or
units is refused. One across allocations is refused unless asked for, and then it is
labelled not attributable: the users' records show a cross-allocation delta attributed
to a code change, when the machine had changed.

One measurement contributes its raw samples; a set contributes one value per
measurement (its headline: the median, or the mean its `statistic` names), so a set
compares run-to-run variation.

A measurement imported without raw samples keeps the spread its tool recorded
(`extra.spread`: asv's 99% confidence interval and quartiles, pytest-benchmark's
quartiles). Two such sides are judged as asv's own compare judges them: a difference
counts only when the 99% intervals do not overlap. A side with one value and no spread
says so, and gets no p-value and no effect size.
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import LedgerError, Problem
from ..schema.envelope import same_allocation_key
from .figures import MIN_CONFIDENCE_INTERVAL, quote, quote_delta

#: Exact U distribution when there are no ties and the sides are this small together.
EXACT_LIMIT = 200
#: Pairs above which the Hodges-Lehmann shift is computed on quantiles of each side.
HL_PAIR_LIMIT = 1_000_000


class Refused(LedgerError):
    """The two sides must not be compared (other contract, metric, unit or allocation)."""


@dataclass
class Side:
    ids: list[str]
    values: list[float]
    basis: str  # "samples", "one value per measurement", "summary only"
    metric: str
    unit: str
    median: float
    n: int
    allocation: str | None
    contract: str | None
    median_text: str = ""
    statistic: str = "median"
    #: What the side's spread is: samples, a tool's interval or quartiles, or none.
    spread: str = ""
    #: The tool's 99% confidence interval of a side without samples (asv), if it recorded one,
    #: or the recorded min-max range of a summary-only measurement (`interval_kind` says which).
    interval: list[float] | None = None
    interval_kind: str = "99% interval"


@dataclass
class UTest:
    u: float
    p: float | None
    method: str  # "exact", "normal approximation", "not testable"
    min_p: float | None = None
    note: str | None = None


@dataclass
class Comparison:
    a: Side
    b: Side
    difference: float
    difference_text: str
    percent: float | None
    percent_text: str | None
    ratio: float | None
    test: UTest
    cliffs_delta: float | None
    cliffs_magnitude: str | None
    hodges_lehmann: float | None
    hodges_lehmann_text: str | None
    alpha: float
    verdict: str
    attributable: bool
    label: str
    contract: str | None
    lower_is_better: bool
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- statistics -----------------------------------------------------------------------------
# Hand-written because scipy is not a dependency, and one rank test does not justify it.


def _ranks_with_ties(a: Sequence[float], b: Sequence[float]) -> tuple[float, list[int]]:
    """U of `b` over `a` (pairs b > a, ties count one half) and the sizes of tie groups."""
    sa = sorted(a)
    u = 0.0
    for y in b:
        lo, hi = bisect_left(sa, y), bisect_right(sa, y)
        u += lo + 0.5 * (hi - lo)
    pooled = sorted([*a, *b])
    ties, i = [], 0
    while i < len(pooled):
        j = i
        while j + 1 < len(pooled) and pooled[j + 1] == pooled[i]:
            j += 1
        if j > i:
            ties.append(j - i + 1)
        i = j + 1
    return u, ties


def _u_distribution(m: int, n: int) -> list[int]:
    """Counts of arrangements for U = 0..m*n: coefficients of the Gaussian binomial [m+n, m]_q."""
    coeffs = [1]
    for i in range(1, m + 1):
        # multiply by (1 - q^(n+i)), then divide exactly by (1 - q^i)
        grown = coeffs + [0] * (n + i)
        for k in range(len(grown) - 1, n + i - 1, -1):
            grown[k] -= grown[k - n - i]
        for k in range(i, len(grown)):
            grown[k] += grown[k - i]
        coeffs = grown[: m * n + 1] if len(grown) > m * n + 1 else grown
    return coeffs[: m * n + 1]


def mann_whitney_u(a: Sequence[float], b: Sequence[float]) -> UTest:
    """Two-sided Mann-Whitney U test: exact without ties on small sides, else the normal
    approximation with tie and continuity corrections."""
    m, n = len(a), len(b)
    if m == 0 or n == 0:
        return UTest(0.0, None, "not testable", note="a side has no values")
    u, ties = _ranks_with_ties(a, b)
    total = math.comb(m + n, m)
    min_p = min(1.0, 2.0 / total)
    if not ties and m + n <= EXACT_LIMIT:
        dist = _u_distribution(m, n)
        k = int(round(u))
        lower = sum(dist[: k + 1]) / total
        upper = sum(dist[k:]) / total
        return UTest(u, min(1.0, 2.0 * min(lower, upper)), "exact", min_p)
    big_n = m + n
    tie_term = sum(t**3 - t for t in ties) / (big_n * (big_n - 1)) if big_n > 1 else 0.0
    var = m * n / 12.0 * ((big_n + 1) - tie_term)
    if var <= 0:
        return UTest(u, 1.0, "normal approximation", min_p, "all values are equal")
    z = max(abs(u - m * n / 2.0) - 0.5, 0.0) / math.sqrt(var)
    return UTest(u, math.erfc(z / math.sqrt(2.0)), "normal approximation", min_p)


def cliffs_delta(a: Sequence[float], b: Sequence[float]) -> float:
    """P(b > a) - P(b < a), from -1 to 1."""
    sa = sorted(a)
    more = less = 0
    for y in b:
        less += len(sa) - bisect_right(sa, y)  # a > y
        more += bisect_left(sa, y)  # a < y
    return (more - less) / (len(a) * len(b))


def cliffs_magnitude(delta: float) -> str:
    # Thresholds of Romano et al. (2006), the ones commonly quoted with Cliff's delta.
    d = abs(delta)
    return "negligible" if d < 0.147 else "small" if d < 0.33 else "medium" if d < 0.474 else "large"


def _quantiles(values: Sequence[float], k: int) -> list[float]:
    ordered = sorted(values)
    if len(ordered) <= k:
        return ordered
    return [ordered[round(i * (len(ordered) - 1) / (k - 1))] for i in range(k)]


def hodges_lehmann(a: Sequence[float], b: Sequence[float]) -> float:
    """Median of all pairwise differences b - a: a shift estimate robust to outliers."""
    if len(a) * len(b) > HL_PAIR_LIMIT:
        a, b = _quantiles(a, 1000), _quantiles(b, 1000)
    return statistics.median(y - x for y in b for x in a)


def uncertainty(values: Sequence[float]) -> float | None:
    """A 90% confidence half-width of the median, estimated from the interquartile values.

    The same estimate ledger.analysis.figures uses to decide digits (torch.utils.benchmark's), so a
    difference's digits follow the same rule as each side's; None with fewer than 2 values.
    """
    ordered = sorted(values)
    if len(ordered) < 2:
        return None
    lower, upper = len(ordered) // 4, math.ceil(3 * len(ordered) / 4)
    middle = ordered[lower:upper] or ordered
    std = statistics.pstdev(middle) if len(middle) > 1 else 0.0
    return 1.645 * std / math.sqrt(len(middle))


# -- the comparison ---------------------------------------------------------------------------


def _headline(rec: Any) -> float:
    value = getattr(rec, "headline", None)
    return rec.median if value is None else value


def _tool_spread(rec: Any) -> tuple[str, list[float] | None]:
    """The spread a tool recorded beside a value without samples, as text and a 99% interval."""
    spread = (getattr(rec, "extra", None) or {}).get("spread")
    if not isinstance(spread, dict):
        if rec.iqr is not None and rec.iqr > 0:
            return f"IQR {rec.iqr:g}", None
        return "none: one value", None
    method = spread.get("method", "the tool")
    ci = spread.get("ci_99")
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, (int, float)) for x in ci):
        return f"99% interval {ci[0]:.4g} to {ci[1]:.4g} ({method})", [float(ci[0]), float(ci[1])]
    quartiles = [spread.get(k) for k in ("q_25", "q_75")] if "q_25" in spread else [spread.get(k) for k in ("q1", "q3")]
    if all(isinstance(q, (int, float)) for q in quartiles):
        return f"quartiles {quartiles[0]:.4g} to {quartiles[1]:.4g} ({method}, no interval)", None
    return f"none recorded ({method})", None


def _side(records: list[Any], label: str) -> Side:
    first = records[0]
    spread, interval = "", None
    if len(records) == 1:
        rec = first
        values = list(rec.samples) if rec.samples else [_headline(rec)]
        basis = "samples" if rec.samples else "summary only"
        if rec.samples:
            spread = f"{len(values)} samples"
        else:
            spread, interval = _tool_spread(rec)
            if interval is None and rec.min is not None and rec.max is not None and rec.max > rec.min:
                # A summary with its min and max (the users' tables: n, min, median, max) has a
                # spread: the recorded range, judged as a range, never as a confidence interval.
                runs = f", n = {rec.n}" if rec.n else ""
                spread, interval = f"recorded range {rec.min:g} to {rec.max:g}{runs}", [float(rec.min), float(rec.max)]
    else:
        values = [_headline(r) for r in records]
        basis = "one value per measurement"
        spread = f"{len(values)} values"
    allocs = {r.allocation.id if r.allocation else None for r in records}
    contracts = {r.contract for r in records}
    if len(contracts) > 1:
        raise Refused(
            f"set {label} mixes contracts",
            [
                Problem(
                    label,
                    "contract",
                    f"the measurements of {label} name different contracts: {sorted(map(str, contracts))}",
                    "compare within one contract",
                )
            ],
        )
    statistic = first.statistic if len(records) == 1 else "median"
    median = statistics.fmean(values) if statistic in ("mean", "olympic-average") else statistics.median(values)
    side = Side(
        ids=[r.id for r in records],
        values=values,
        basis=basis,
        metric=first.metric,
        unit=first.unit,
        median=median,
        n=len(values),
        allocation=allocs.pop() if len(allocs) == 1 else "several: " + ", ".join(sorted(a or "none" for a in allocs)),
        contract=first.contract,
        statistic=statistic,
        spread=spread,
        interval=interval,
    )
    if interval is not None and spread.startswith("recorded range"):
        side.interval_kind = "min-max range"
    # The one digit policy (ledger.analysis.figures.quote): to the digits the spread supports.
    digits_spread = uncertainty(values)
    if digits_spread is None and side.interval_kind == "min-max range" and interval:
        digits_spread = interval[1] - interval[0]
    side.median_text = quote(
        median,
        100.0 * max(digits_spread, MIN_CONFIDENCE_INTERVAL) / abs(median)
        if digits_spread is not None and median
        else None,
    )
    return side


def _spread_of(side: Side) -> float | None:
    """A side's 90% half-width: from its values, or from its tool's 99% interval (normal scale)."""
    if side.basis == "summary only" and side.interval:
        if side.interval_kind == "min-max range":
            return (side.interval[1] - side.interval[0]) / 2
        return (side.interval[1] - side.interval[0]) / 2 / 2.576 * 1.645
    return uncertainty(side.values)


def check_comparable(a: list[Any], b: list[Any]) -> list[str]:
    """Refuse what must not be compared; return warnings for what may be, with care."""
    problems: list[Problem] = []
    warnings: list[str] = []
    for label, recs in (("A", a), ("B", b)):
        for r in recs:
            if r.kind != "measurement":
                problems.append(
                    Problem(
                        r.id,
                        "kind",
                        f"is a {r.kind}, not a measurement",
                        "compare measurement records (`ledger list --kind measurement` lists them)",
                    )
                )
                continue
            if r.outcome != "ok":
                problems.append(
                    Problem(
                        r.id,
                        "outcome",
                        f"outcome is {r.outcome}: there is no valid value to compare",
                        "compare runs that produced a value",
                    )
                )
            if not r.comparable:
                problems.append(
                    Problem(
                        r.id,
                        "comparable",
                        f"is a non-comparable diagnostic: {r.non_comparable_reason}",
                        "compare runs measured under the contract",
                    )
                )
            if r.health == "degraded":
                warnings.append(
                    f"{label}: {r.id} ran on a degraded allocation ({'; '.join(r.health_reasons) or 'no reason recorded'})"
                )
    if problems:
        raise Refused("not comparable", problems)
    every = [*a, *b]
    for name in ("metric", "unit", "lower_is_better"):
        values = {getattr(r, name) for r in every}
        if len(values) > 1:
            problems.append(
                Problem("A vs B", name, f"differs: {sorted(map(str, values))}", f"compare measurements of one {name}")
            )
    contracts = {r.contract for r in every}
    if len(contracts) > 1:
        problems.append(
            Problem(
                "A vs B",
                "contract",
                f"the sides were measured under different contracts ({', '.join(sorted(c or 'none' for c in contracts))})",
                "compare within one contract; a changed contract needs its own baseline",
            )
        )
    if problems:
        raise Refused("not comparable", problems)
    if contracts == {None}:
        warnings.append("no contract named on either side: that the two were measured alike is not established")
    return warnings


def compare(a: list[Any], b: list[Any], *, allow_cross_allocation: bool = False, alpha: float = 0.05) -> Comparison:
    """Compare measurement records `a` against `b` (B relative to A)."""
    _require_two_sides(a, b)
    warnings = check_comparable(a, b)
    sa, sb = _side(a, "A"), _side(b, "B")
    attributable, label = _allocation_label(a, b, allow_cross_allocation)
    lower_is_better = a[0].lower_is_better
    diff = sb.median - sa.median
    ua, ub = _spread_of(sa), _spread_of(sb)
    diff_unc = math.hypot(ua, ub) if ua is not None and ub is not None else None
    percent = 100.0 * diff / sa.median if sa.median else None
    ratio = sb.median / sa.median if sa.median else None
    test = mann_whitney_u(sa.values, sb.values)
    summary_only = sa.basis == "summary only" or sb.basis == "summary only"
    delta: float | None = cliffs_delta(sa.values, sb.values)
    hl: float | None = hodges_lehmann(sa.values, sb.values)
    if summary_only:
        # One value per side is not a distribution: no rank test, no effect size from it.
        delta = hl = None
        test, verdict = _verdict_from_summaries(sa, sb, diff, lower_is_better, test)
        for name, side in (("A", sa), ("B", sb)):
            if side.basis == "summary only" and side.interval is None:
                warnings.append(f"{name} has no spread ({side.spread}): a difference cannot be judged against it")
    else:
        verdict = _verdict_from_samples(test, diff, lower_is_better, alpha)
    if diff_unc is None and not summary_only:
        warnings.append("spread unknown on a side with one value: figures are not trimmed by spread")
    return Comparison(
        a=sa,
        b=sb,
        difference=diff,
        # Differences are rounded at their uncertainty's leading digit (figures.quote_delta), so
        # the text and the JSON's *_text fields are the same string.
        difference_text=quote_delta(diff, diff_unc, sa.unit),
        percent=percent,
        percent_text=quote_delta(percent, 100.0 * diff_unc / abs(sa.median) if diff_unc and sa.median else None, "%")
        if percent is not None
        else None,
        ratio=ratio,
        test=test,
        cliffs_delta=delta,
        cliffs_magnitude=cliffs_magnitude(delta) if delta is not None else None,
        hodges_lehmann=hl,
        hodges_lehmann_text=quote_delta(hl, diff_unc, sa.unit) if hl is not None else None,
        alpha=alpha,
        verdict=verdict,
        attributable=attributable,
        label=label,
        contract=a[0].contract,
        lower_is_better=lower_is_better,
        warnings=warnings,
    )


def _require_two_sides(a: list[Any], b: list[Any]) -> None:
    """Refuse a comparison with an empty side, or with one measurement on both sides."""
    if not a or not b:
        raise Refused(
            "nothing to compare",
            [
                Problem(
                    "<command line>",
                    "A B",
                    "both sides need at least one measurement",
                    "give two ids, or two comma-separated lists",
                )
            ],
        )
    shared = {r.id for r in a} & {r.id for r in b}
    if shared:
        raise Refused(
            "a record on both sides",
            [Problem("<command line>", "A B", f"{sorted(shared)[0]} is on both sides", "give each measurement once")],
        )


def _allocation_label(a: list[Any], b: list[Any], allow_cross_allocation: bool) -> tuple[bool, str]:
    """Whether the difference is attributable to the change (every measurement on one known
    allocation), and the label that says so. Across allocations it is refused unless allowed."""
    allocs = {same_allocation_key(r.allocation) for r in [*a, *b]}
    if len(allocs) == 1 and None not in allocs:
        return True, f"one allocation ({allocs.pop()})"
    where = ", ".join(sorted(x or "unknown" for x in allocs))
    if not allow_cross_allocation:
        raise Refused(
            "cross-allocation comparison refused",
            [
                Problem(
                    "A vs B",
                    "allocation",
                    f"the measurements ran on different or unknown allocations ({where}); a difference could be the machine, not the change",
                    "measure A, candidate and B on one allocation (`ledger sandwich`), or pass --allow-cross-allocation for a comparison labelled not attributable",
                )
            ],
        )
    return (
        False,
        f"NOT ATTRIBUTABLE: different or unknown allocations ({where}); the difference may be the machine, not the change",
    )


def _verdict_from_summaries(sa: Side, sb: Side, diff: float, lower_is_better: bool, test: UTest) -> tuple[UTest, str]:
    """The test and verdict when a side kept only a summary: its interval or recorded range
    overlaps the other side's or not; without an interval on both sides, not testable."""
    if sa.interval and sb.interval:
        overlap = sa.interval[0] <= sb.interval[1] and sb.interval[0] <= sa.interval[1]
        kinds = {sa.interval_kind, sb.interval_kind}
        if kinds == {"99% interval"}:
            method = "99% interval overlap"
            note = "the sides' 99% confidence intervals " + ("overlap" if overlap else "do not overlap")
            note += " (the tool's own rule, as asv compare judges results without samples)"
        else:
            method = "range overlap"
            note = (
                "the sides' recorded ranges (min to max; a tool's interval where one was kept) "
                + ("overlap" if overlap else "do not overlap")
                + ": no rank test or effect size without samples"
            )
        judged = UTest(0.0, None, method, None, note)
        if overlap:
            return judged, "no significant difference"
        return judged, "B better" if (diff < 0) == lower_is_better else "B worse"
    bare = [n for n, side in (("A", sa), ("B", sb)) if side.basis == "summary only" and not side.interval]
    untestable = UTest(
        test.u,
        None,
        "not testable",
        None,
        f"{' and '.join(bare)} {'has' if len(bare) == 1 else 'have'} one value and no interval "
        "(the source file kept only a summary)"
        if bare
        else "no raw samples on one side (the source file kept only summaries)",
    )
    return untestable, "not testable"


def _verdict_from_samples(test: UTest, diff: float, lower_is_better: bool, alpha: float) -> str:
    """The verdict of the rank test on samples; notes on `test` when its sizes cannot reach `alpha`."""
    if test.min_p is not None and test.min_p > alpha:
        test.note = f"too few values: the smallest p these sizes allow is {test.min_p:.2g}, above alpha {alpha}"
    if test.p is None or (test.min_p is not None and test.min_p > alpha):
        return "not testable"
    if test.p < alpha:
        better = (diff < 0) == lower_is_better
        return "B better" if better else "B worse"
    return "no significant difference"


def load_side(ledger: Any, text: str) -> list[Any]:
    """Records for one side: an id (or unique prefix), or a comma-separated list of them."""
    ids = [t.strip() for t in text.split(",") if t.strip()]
    if not ids:
        raise Refused(
            "empty side",
            [
                Problem(
                    "<command line>", "A B", f"{text!r} names no record", "give an id or a comma-separated list of ids"
                )
            ],
        )
    return [ledger.get(i) for i in ids]
