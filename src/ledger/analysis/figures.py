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

from ..numbers import TYPED_DIGITS, as_recorded
from .sandwich import leaning

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


# -- the one digit policy every surface quotes through ---------------------------------------
#
# Site, `show`, `list`, `compare`, `status` and the demo summary all write a figure with
# `quote`: with a known uncertainty, to the digits it supports; without one, as recorded
# (trailing zeros kept when the record says how many decimals it was given with). JSON
# output carries the same text beside the exact value, so the two never disagree.


def _join(text: str, unit: str) -> str:
    if not unit:
        return text
    return f"{text}{unit}" if unit in ("%", "x", "×") else f"{text} {unit}"


def _percent(number: float, text: str, unit: str) -> str:
    """A percentage never reads 100 unless it is 100 (96.7% to one figure is "97%", not "100%",
    and 99.96% is "99.96%"): the digits are widened until the shown figure is not the bound."""
    if unit != "%" or not math.isfinite(number) or abs(number) == 100.0:
        return text
    try:
        shown = abs(float(text))
    except ValueError:
        return text
    if shown != 100.0:
        return text
    for decimals in range(0, 13):
        widened = f"{round(number, decimals):.{decimals}f}"
        if abs(float(widened)) != 100.0:
            return ("+" + widened) if text.startswith("+") and number > 0 else widened
    return text  # pragma: no cover (a value within 1e-12 of 100 reads as 100)


def percent_digits(value: float, digits: int) -> int:
    """The significant figures a percentage `value` is quoted with when its spread supports
    `digits`: more where those would read 100 and it is not 100 (96.7% to one figure: two)."""
    text = _percent(float(value), _to_digits(float(value), digits), "%") if value and math.isfinite(value) else ""
    return max(digits, significant_figures(text)) if text else digits


def significant_figures(text: str) -> int:
    """The significant figures of a figure as written: "5.1015" 5, "0.5276" 4, "2681" 4,
    "100" 1 (trailing zeros of a whole number are not known to be significant)."""
    digits = text.lstrip("+-").split("e")[0]
    if "." in digits:
        return max(len(digits.replace(".", "").lstrip("0")), 1)
    return max(len(digits.lstrip("0").rstrip("0")), 1)


#: A figure derived from measurements with fewer runs than this supports no more than
#: `FEW_RUNS_DIGITS` significant figures (a two-run pair of n = 3 says "9.7x", not 9.669257x).
FEW_RUNS = 5
FEW_RUNS_DIGITS = 2


def derived_digits(*measurements) -> int:
    """Significant figures a value computed from `measurements` (a ratio, a rate) supports when
    none of them has a spread: the fewest any of their headlines was recorded with, at most
    `MAX_DIGITS`, and at most `FEW_RUNS_DIGITS` when one of them has n < `FEW_RUNS`."""
    digits = MAX_DIGITS
    for m in measurements:
        value = getattr(m, "headline", None) if getattr(m, "kind", None) == "measurement" else None
        if value is not None:
            digits = min(digits, significant_figures(as_recorded(float(value))))
        n = getattr(m, "n", None)
        if isinstance(n, int) and n < FEW_RUNS:
            digits = min(digits, FEW_RUNS_DIGITS)
    return max(digits, MIN_DIGITS)


def _to_digits(number: float, digits: int) -> str:
    trimmed = trim(number, digits)
    magnitude = math.floor(math.log10(abs(trimmed))) + 1 if trimmed else 1
    return f"{trimmed:.{max(digits - magnitude, 0)}f}"


def quote(
    value: float | None,
    uncertainty_pct: float | None = None,
    unit: str = "",
    *,
    decimals: int | None = None,
    missing: str = "–",
    digits: int | None = None,
) -> str:
    """`value` as every surface prints it: to the digits `uncertainty_pct` (percent of the
    value) supports, else as recorded. `quote(1.23456, 0.5, "s") == "1.23 s"`.

    `digits` is what a computed value with no known uncertainty supports (`derived_digits`):
    such a value has no recorded digits to keep, so its float tail is never printed
    (9.669257x from two n = 3 runs reads "9.7x").
    A percentage never reads 100% unless it is 100."""
    if value is None:
        return missing
    if isinstance(value, bool):
        return str(value).lower()
    number = float(value)
    if uncertainty_pct and number and math.isfinite(number):
        text = format_figure(number, abs(number) * uncertainty_pct / 100.0)
    elif digits is not None and decimals is None and number and math.isfinite(number):
        text = _to_digits(number, digits)
    else:
        text = as_recorded(number, decimals)
    return _join(_percent(number, text, unit), unit)


def measurement_uncertainty(m) -> float | None:
    """A measurement's uncertainty in percent of its median (see `uncertainty_percent`)."""
    if getattr(m, "kind", None) != "measurement":
        return None
    return uncertainty_percent(m.samples, m.median, m.min, m.max)


def quote_of(m, value: float | None, unit: str = "", *, field: str | None = None) -> str:
    """`value` of (or derived from) measurement `m`, quoted to the digits `m`'s spread supports."""
    decimals = None
    if field is not None:
        decimals = (getattr(m, "extra", None) or {}).get("decimals", {}).get(field)
        decimals = decimals if isinstance(decimals, int) else None
    if field == "score" and decimals is not None:
        # A tool's score is quoted at the digits the tool publishes it, whatever the runs' spread.
        return quote(value, None, unit, decimals=decimals)
    # A value computed from `m` (a rate, a recomputed MFU) when `m` has no spread: the digits
    # its recorded figures support, never the float's sixteen.
    # A typed-looking value passed without its field is taken for a recorded one (a chart's
    # median), kept as recorded.
    computed = value is not None and not isinstance(value, bool) and not _typed(float(value))
    # Only where the runs are known to be few (n < FEW_RUNS): a measurement transcribed with no
    # spread and no count (a campaign's 0.707865914 s) keeps its derived figures at the digits
    # the campaign printed them (40.810314% MFU), as recorded.
    few = isinstance(getattr(m, "n", None), int) and m.n < FEW_RUNS
    derived = (
        derived_digits(m) if few and field is None and computed and getattr(m, "kind", None) == "measurement" else None
    )
    return quote(value, measurement_uncertainty(m), unit, decimals=decimals, digits=derived)


#: Measurement fields quoted to the digits the measurement's spread supports.
SPREAD_FIELDS = frozenset({"median", "min", "max", "mean"})


def quote_field(m, field: str, value: float | None, unit: str = "") -> str:
    """A measurement's spread field as every surface quotes it: the ends of its min-max range
    at the leading place of the range's width, so they stay apart (0.708 and 0.712 s, not
    0.71 and 0.71 beside a 0.71 median: they are observations, not estimates); the rest to
    the digits the measurement's spread supports.

    A median (or mean) keeps at least the digits of its min and max as they are shown, and
    where its own finer digits would fall outside them it is rounded at their place: rounding
    at one place keeps the order, so a median is never printed outside its own printed min
    and max ("Median 1 s" beside "Min 1.03 s" was)."""
    low, high = getattr(m, "min", None), getattr(m, "max", None)
    if low is None or high is None or not high > low or value is None or field not in ("min", "max", "median", "mean"):
        return quote_of(m, value, unit, field=field)
    if field in ("min", "max"):
        return quote_at(value, high - low, unit)
    place = _place_of(high - low)
    text = quote_of(m, value, unit, field=field)
    shown = text.removesuffix(unit).strip()
    ends = (float(quote_at(low, high - low)), float(quote_at(high, high - low)))
    if _shown_place(shown) > place or not ends[0] <= float(shown) <= ends[1]:
        return _at(value, place, unit)
    return text


def _shown_place(text: str) -> int:
    """The decimal place of a shown figure's last digit: "1.03" -2, "2681" 0, "100" 2."""
    digits = text.strip().lstrip("+-").split(" ")[0].rstrip("%x×")
    if "e" in digits:
        mantissa, exponent = digits.split("e")
        return _shown_place(mantissa) + int(exponent)
    if "." in digits:
        return -len(digits.split(".")[1])
    stripped = digits.rstrip("0")
    return len(digits) - len(stripped) if stripped else 0


_BYTE_UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB")


def readable_bytes(n: int | float | None) -> str:
    """52022503936 -> '48.4 GiB' (binary units, three significant figures)."""
    if n is None:
        return "–"
    size = float(n)
    for unit in _BYTE_UNITS:
        if abs(size) < 1024 or unit == _BYTE_UNITS[-1]:
            if unit == "bytes":
                return f"{int(size)} bytes"
            return f"{size:.3g} {unit}" if abs(size) < 1000 else f"{size:.0f} {unit}"
        size /= 1024
    return f"{n} bytes"  # pragma: no cover


def transcribed_bytes(n: int | None) -> str:
    """A byte count as it was transcribed: the shortest binary-unit figure that gives back
    exactly these bytes (10737418 -> '0.01 GiB', never '10.2 MiB'), else `readable_bytes`.
    A transcription's digits are the observation's precision: neither added nor dropped."""
    if n is None:
        return "–"
    if abs(n) < 1024:
        return readable_bytes(n)
    best: tuple[int, int, str] | None = None
    for power, unit in ((3, "GiB"), (2, "MiB"), (1, "KiB")):
        scale = 1024**power
        for digits in range(1, 7):
            text = f"{abs(n) / scale:.{digits}g}"
            if "e" not in text and round(float(text) * scale) == abs(n):
                if best is None or digits < best[0]:
                    best = (digits, -power, f"{'-' if n < 0 else ''}{text} {unit}")
                break
    return best[2] if best else readable_bytes(n)


def readable_duration(seconds: float | None) -> str:
    """0.000123 -> '123 µs', 95 -> '1 min 35 s', 1560 -> '26 min', 7200 -> '2 h'."""
    if seconds is None:
        return "–"
    s = float(seconds)
    if abs(s) < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if abs(s) < 1:
        return f"{s * 1e3:.3g} ms"
    if abs(s) < 60:
        return f"{s:.3g} s"
    if abs(s) < 3600 - 0.5:
        # Whole seconds first, so 119.6 s is 2 min, never 1 min 60 s; no "0 s" tail.
        minutes, secs = divmod(int(round(s)), 60)
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    hours, minutes = divmod(int(round(s / 60)), 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def exact_bytes(n: int | float) -> str:
    """The exact count with thousands separators: '52,022,503,936 bytes'."""
    return f"{int(n):,} bytes"


def quote_spread(value: float | None, spread: float | None, unit: str = "", *, sign: bool = False) -> str:
    """`value` to the digits an absolute `spread` (same unit) supports; as recorded without one.
    `sign` writes a leading + on positive values (deltas)."""
    if value is None:
        return "–"
    number = float(value)
    if spread and number and math.isfinite(number):
        text = format_figure(number, abs(float(spread)))
    else:
        text = as_recorded(number)
    if sign and number > 0 and not text.startswith("+"):
        text = "+" + text
    return _join(_percent(number, text, unit), unit)


def quote_delta(value: float | None, spread: float | None, unit: str = "") -> str:
    """A difference, rounded at the leading digit of its uncertainty `spread` (same unit),
    signed: +17.8% with a 0.3-point spread, +0.18% with 0.044. A difference is small
    against its parts, so torch's median rule (digits from value / uncertainty) would
    erase it; the uncertainty's own decimal place is where its digits stop meaning."""
    if value is None:
        return "–"
    number = float(value)
    if spread and math.isfinite(number) and math.isfinite(float(spread)):
        place = math.floor(math.log10(abs(float(spread))))
        text = f"{round(number, -place):.{max(0, -place)}f}"
    else:
        text = as_recorded(number)
    if number > 0 and not text.startswith("+"):
        text = "+" + text
    if text in ("+0", "-0") or text.lstrip("+-").strip("0.") == "":
        text = text.lstrip("+-")
    return _join(text, unit)


def quote_at(value: float | None, resolution: float | None, unit: str = "") -> str:
    """`value` rounded at the leading digit of `resolution` (an interval's width, say), so
    the ends of an interquartile range stay apart: 0.7079 to 0.7083 s, not 0.708 to 0.708."""
    if value is None:
        return "–"
    if not resolution or not math.isfinite(float(resolution)):
        return _join(as_recorded(value), unit)
    place = math.floor(math.log10(abs(float(resolution))))
    return _join(_percent(float(value), f"{round(float(value), -place):.{max(0, -place)}f}", unit), unit)


def quote_width(width: float | None, uncertainty_pct: float | None = None, unit: str = "") -> str:
    """An interval's width (an IQR): two significant figures at most, and never more than
    the measured value itself supports (`uncertainty_pct`, percent of that value)."""
    if width is None:
        return "–"
    number = abs(float(width))
    if not number or not math.isfinite(number):
        return _join(as_recorded(number), unit)
    digits = min(2, supported_digits_relative(uncertainty_pct)) if uncertainty_pct else 2
    trimmed = trim(number, digits)
    magnitude = math.floor(math.log10(trimmed)) + 1
    return _join(f"{trimmed:.{max(digits - magnitude, 0)}f}", unit)


def quote_rough(value: float | None, unit: str = "") -> str:
    """A spread or drift: itself a rough figure, quoted to two significant figures."""
    if value is None:
        return "–"
    number = float(value)
    if not number or not math.isfinite(number):
        return _join(as_recorded(number), unit)
    text = (
        format_figure(number, abs(number) / 100.0)
        if abs(number) >= 1
        else f"{trim(number, 2):.{max(2 - (math.floor(math.log10(abs(number))) + 1), 0)}f}"
    )
    return _join(_percent(number, text, unit), unit)


def recorded_resolution(*values: float | None) -> float | None:
    """The place of the last decimal any of `values` was recorded with, read as `as_recorded`
    writes them (so float noise such as 0.30000000000000004 is a computed value's eight
    figures, not a resolution of 1e-17): recorded_resolution(0.707866, 0.7002) == 1e-06;
    None without one."""
    places = []
    for value in values:
        if value is None or not math.isfinite(float(value)):
            continue
        text = as_recorded(float(value))
        if "e" in text:
            mantissa, exponent = text.split("e")
            decimals = len(mantissa.split(".")[1].rstrip("0")) if "." in mantissa else 0
            places.append(decimals - int(exponent))
        else:
            places.append(len(text.split(".")[1].rstrip("0")) if "." in text else 0)
    return 10.0 ** -max(places) if places else None


def _place_of(resolution: float) -> int:
    """The decimal place of `resolution`'s leading digit (0.0456 -> -2)."""
    return math.floor(math.log10(abs(float(resolution))))


def _at(value: float, place: int, unit: str, *, sign: bool = False) -> str:
    """`value` rounded at decimal `place`; a nonzero value never reads 0 (its first nonzero
    digit is kept) and a signed one keeps its sign."""
    number = float(value)
    while True:
        text = f"{round(number, -place):.{max(0, -place)}f}"
        if number == 0 or text.lstrip("+-").strip("0.") != "" or place < -12:
            break
        place -= 1  # +0.034664% against a 1% drift reads +0.03%, never 0%
    if sign and number > 0:
        text = "+" + text
    return _join(_percent(number, text, unit), unit)


def _typed(value: float) -> bool:
    """True when `value` reads as a typed figure (at most TYPED_DIGITS significant figures),
    not a computed one."""
    shortest = repr(float(value))
    return "e" not in shortest and len(shortest.lstrip("-").replace(".", "").lstrip("0")) <= TYPED_DIGITS


def drift_against_a(s) -> str:
    """The control drift against arm A, |A - B| / A, as some campaigns state it beside the
    drift against the midpoint: the recorded `drift_vs_a_percent` as recorded, else derived
    from the arms (a rough figure, two significant figures)."""
    stated = getattr(s, "drift_vs_a_percent", None)
    if stated is not None:
        return _join(as_recorded(float(stated)), "%")
    if s.b_value is None:
        return NOT_MEASURED
    if not s.a_value:
        return "–"
    return quote_rough(100.0 * abs(s.a_value - s.b_value) / s.a_value, "%")


#: What a pair (a sandwich without B) shows for B and for the drift, on every surface.
NOT_MEASURED = "not measured"


def sandwich_figures(s, uncertainty_of=None) -> dict[str, str]:
    """A sandwich's figures as every surface prints them, so a reader recomputes the shown
    delta from the shown arms.

    With a spread (an arm in the ledger with samples or a range): the delta at the leading
    digit of its uncertainty, the drift |A - B| (or the arms' recorded resolution); the arms
    and the midpoint at the same place, and never coarser than an arm's own spread allows;
    the percent to the last place of the drift as shown (two figures). Without any (arms transcribed from a
    report): every figure as recorded, a computed midpoint, delta or percent at the place the
    arms were recorded to. A delta never rounds to zero and never loses its sign; drift and
    floor, themselves spreads, to two significant figures.
    """
    pair = s.b_value is None  # B not run: no drift, the midpoint is A
    b_value = s.a_value if pair else s.b_value
    drift_abs = None if pair else abs(s.a_value - b_value) or None
    recorded = recorded_resolution(s.a_value, b_value, s.candidate_value)
    midpoint = abs(s.midpoint) if s.midpoint else None
    spreads = {
        rid: uncertainty_of(rid) if uncertainty_of and rid else None for rid in (s.control_a, s.candidate, s.control_b)
    }
    spread = any(v for v in spreads.values())
    rough = {
        "drift_percent": NOT_MEASURED if pair else quote_rough(s.drift_percent, "%"),
        "floor_percent": quote_rough(s.floor_percent, "%"),
        "drift_vs_a_percent": drift_against_a(s),
    }
    if not spread:
        # As recorded: the arms are all the evidence there is; derived figures at the place
        # the arms were written to (-1.083% from 0.707866 and 0.7002, never -1.0829733%).
        place = _place_of(recorded) if recorded else None

        def derived(value, unit, *, sign=False, percent=False):
            if _typed(value) and not (percent and place is None):
                text = as_recorded(float(value))
                if sign and float(value) > 0:
                    text = "+" + text
                return _join(text, unit)
            if place is None:
                return _join(as_recorded(float(value)), unit)
            if percent:
                return _at(value, _place_of(10.0**place / midpoint * 100) if midpoint else place, unit, sign=sign)
            # A half-sum needs one decimal more than its terms (0.721165 from 0.72104 and
            # 0.72129), never a zero the arms did not give.
            text = _at(value, place - 1, "", sign=sign)
            if place - 1 < 0 and text.endswith("0") and "." in text:
                text = text[:-1].rstrip(".")
            return _join(text, unit)

        return {
            "a": _join(as_recorded(float(s.a_value)), s.unit),
            "candidate": _join(as_recorded(float(s.candidate_value)), s.unit),
            "b": NOT_MEASURED if pair else _join(as_recorded(float(b_value)), s.unit),
            "midpoint": derived(s.midpoint, s.unit)
            if not _typed(s.midpoint)
            else _join(as_recorded(s.midpoint), s.unit),
            "delta": derived(s.delta, s.unit, sign=True),
            "delta_percent": derived(s.delta_percent, "%", sign=True, percent=True),
            **rough,
        }
    resolution = drift_abs or recorded or abs(s.delta) or 1.0
    place = _place_of(resolution)
    # The arms and the midpoint at the delta's place: the shown delta is the shown candidate
    # minus the shown midpoint, give or take one in its last digit; never coarser than an
    # arm's own spread supports.
    arm_place = place
    for rid, value in ((s.control_a, s.a_value), (s.candidate, s.candidate_value), (s.control_b, b_value)):
        pct = spreads.get(rid)
        if pct and value:
            digits = supported_digits(value, abs(value) * pct / 100.0)
            arm_place = min(arm_place, math.floor(math.log10(abs(value))) + 1 - digits)
    # The percent to the last place of the drift as it is shown (two significant figures):
    # -0.73% beside a 1.5% drift reads -0.7%, not -1%.
    if s.drift_percent:
        percent_place = _place_of(s.drift_percent) - 1
    else:
        percent_place = _place_of(resolution / midpoint * 100) if midpoint else place
    return {
        "a": _at(s.a_value, arm_place, s.unit),
        "candidate": _at(s.candidate_value, arm_place, s.unit),
        "b": NOT_MEASURED if pair else _at(b_value, arm_place, s.unit),
        "midpoint": _at(s.midpoint, arm_place, s.unit),
        "delta": _at(s.delta, place, s.unit, sign=True),
        "delta_percent": _at(s.delta_percent, percent_place, "%", sign=True),
        **rough,
    }


def sandwich_result(s, shown: dict[str, str], rounds: list | None = None) -> tuple[str, str]:
    """What a sandwich leads with, on its record page and in `ledger show`: the verdict and
    the delta, then what they are against (`shown` is `sandwich_figures(s, ...)`). A pair
    (no B) says so, and that its drift is not measured. A neutral sandwich whose candidate
    sat beyond both controls says so beside its verdict (`sandwich.leaning`; `rounds`, the
    arms' per-round values, tell whether it did in every round)."""
    better = "lower" if s.lower_is_better else "higher"
    if s.b_value is None:
        against = "candidate against A (a pair: B was not run, so the drift is not measured)"
        drift = ""
    else:
        against = "candidate against the A, B midpoint"
        drift = f" · drift {shown['drift_percent']} ({shown['drift_vs_a_percent']} against A)"
    detail = f"{against} · {s.metric}, {better} is better{drift} · floor {shown['floor_percent']}"
    lean = leaning(s.a_value, s.candidate_value, s.b_value, s.verdict, s.lower_is_better, rounds)
    return f"{s.verdict} {shown['delta_percent']}" + (f", {lean}" if lean else ""), detail


def interquartile(samples: Sequence[float]) -> tuple[float, float]:
    """(q1, q3) by linear interpolation, as numpy's default."""
    ordered = sorted(float(s) for s in samples)
    n = len(ordered)

    def at(q: float) -> float:
        pos = q * (n - 1)
        lo = math.floor(pos)
        hi = min(lo + 1, n - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

    return at(0.25), at(0.75)


def result_line(m) -> str:
    """A measurement's result as `ledger show` and the record page lead with it:
    `0.708 s median step time, IQR 0.0003 s, n = 5`."""
    field = getattr(m, "headline_field", "median")
    if m.outcome != "ok":
        return f"no valid step: {'OOM' if m.outcome == 'oom' else m.outcome}"
    if getattr(m, field) is None:
        # A run that went fine but whose record keeps no headline (a range transcribed from a
        # report): what it does keep, never "no valid step: ok".
        unit = m.unit
        kept = []
        if m.min is not None and m.max is not None:
            span = f"{as_recorded(m.min)}-{as_recorded(m.max)}" + (unit if unit == "%" else f" {unit}".rstrip())
            kept.append(f"{span} {m.metric.replace('_', ' ')}")
        if m.n:
            kept.append(f"n = {m.n}")
        return ", ".join([f"no {field} recorded", *kept])
    label = getattr(m, "headline_label", m.statistic)
    parts = [f"{quote_of(m, getattr(m, field), m.unit, field=field)} {label} {m.metric.replace('_', ' ')}"]
    pct = measurement_uncertainty(m)
    if len(m.samples) >= 2:
        q1, q3 = interquartile(m.samples)
        parts.append(f"IQR {quote_width(q3 - q1, pct, m.unit)}")
    elif m.min is not None and m.max is not None and m.max > m.min:
        parts.append(f"range {quote_width(m.max - m.min, pct, m.unit)}")
    else:
        parts.append("one sample, no spread: as recorded" if len(m.samples) == 1 else "no spread recorded: as recorded")
    if m.n:
        parts.append(f"n = {m.n}")
    return ", ".join(parts)
