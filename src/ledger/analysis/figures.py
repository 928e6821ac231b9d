"""How many significant figures a measurement supports, decided from its spread.

The rule follows `torch.utils.benchmark.Measurement.significant_figures`: the digits a
figure may carry are floor(log10(median / uncertainty)), at least 1 and at most 4. torch
takes the uncertainty as a 90% confidence interval of the interquartile samples
(1.645 * std / sqrt(n)); when only a spread is known (a quoted `21-23%`, or max - min),
the spread itself is the uncertainty. So `9.14x` from a 21-23% spread supports one
figure: `~9x`. Written here without torch so `ledger check` never imports it.

    supported_digits(median, spread)       -> int, 1..4
    supported_digits_relative(percent)     -> int, 1..4 (spread as percent of the median)
    supported_digits_from_samples(samples) -> int, 1..4 (torch's interquartile estimate)
    trim(value, digits)                    -> float rounded to `digits` significant figures
    format_figure(value, spread, unit="")  -> str such as "9" or "2.04"
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

#: torch.utils.benchmark's bounds: never fewer than 1, never more than 4 figures.
MIN_DIGITS = 1
MAX_DIGITS = 4
#: torch's floor on the confidence interval (seconds), so a perfectly flat run is not infinitely precise.
MIN_CONFIDENCE_INTERVAL = 25e-9


def _clamp(digits: int) -> int:
    return min(max(digits, MIN_DIGITS), MAX_DIGITS)


def supported_digits(median: float, spread: float) -> int:
    """Significant figures `median` supports given an absolute `spread` in the same unit."""
    median = abs(float(median))
    spread = abs(float(spread))
    if median == 0:
        return MIN_DIGITS
    if spread == 0:
        return MAX_DIGITS
    return _clamp(math.floor(math.log10(median / spread)))


def supported_digits_relative(spread_percent: float) -> int:
    """Significant figures a figure supports when its spread is `spread_percent` of it."""
    return supported_digits(100.0, spread_percent)


def confidence_interval(samples: Sequence[float]) -> float:
    """torch.utils.benchmark's uncertainty of a median: the 90% confidence interval of the
    interquartile samples, 1.645 * std / sqrt(n), never below 25 ns."""
    ordered = sorted(float(s) for s in samples)
    n = len(ordered)
    lower, upper = n // 4, math.ceil(3 * n / 4)
    middle = ordered[lower:upper] or ordered
    m = len(middle)
    # Population std in floats, as torch computes it (`std(unbiased=False)`); the statistics
    # module's exact Fraction arithmetic cost more than validating the record.
    mean = math.fsum(middle) / m
    std = math.sqrt(math.fsum((x - mean) ** 2 for x in middle) / m) if m > 1 else 0.0
    return max(1.645 * std / math.sqrt(m), MIN_CONFIDENCE_INTERVAL)


def supported_digits_from_samples(samples: Sequence[float]) -> int:
    """torch.utils.benchmark's estimate: the interquartile samples' 90% confidence interval."""
    if not samples:
        return MIN_DIGITS
    return supported_digits(statistics.median(samples), confidence_interval(samples))


def uncertainty_percent(
    samples: Sequence[float] | None, median: float | None, low: float | None = None, high: float | None = None
) -> float | None:
    """A measurement's uncertainty in percent of its median, the one both the checker and the
    site use to decide digits: with raw samples, torch's confidence interval (20 samples of a
    stable run support more digits than their range suggests); with only a quoted range
    (min and max), the whole range, as the users' `21-23% spread` was read; else unknown."""
    if not median:
        return None
    if samples and len(samples) >= 2:
        return 100.0 * confidence_interval(samples) / abs(median)
    if low is not None and high is not None:
        return 100.0 * (high - low) / abs(median)
    return None


def trim(value: float, digits: int) -> float:
    """`value` rounded to `digits` significant figures (torch's trim_sigfig): 3.14159, 2 -> 3.1."""
    if value == 0 or not math.isfinite(value):
        return value
    magnitude = math.floor(math.log10(abs(value))) + 1
    scale = 10.0 ** (magnitude - digits)
    return round(value / scale) * scale


def format_figure(value: float, spread: float, unit: str = "") -> str:
    """`value` written with only the figures `spread` supports: format_figure(9.14, 2.1, "x") == "9x"."""
    digits = supported_digits(value, spread)
    trimmed = trim(value, digits)
    magnitude = math.floor(math.log10(abs(trimmed))) + 1 if trimmed else 1
    decimals = max(digits - magnitude, 0)
    return f"{trimmed:.{decimals}f}{unit}"
