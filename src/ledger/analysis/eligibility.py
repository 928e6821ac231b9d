"""Whether an allocation may serve as a baseline, derived from its measured health.

"Clocks/power were degraded, so baseline-ineligible": the readings of the environment
records taken on an allocation (SM clock against the device maximum under load, power
limit against the board default, clock-event (throttle) reasons, uncorrected ECC errors,
temperature) decide it, with thresholds from `rules: baseline-eligibility:` in
`ledger.yaml`. A verdict recorded without readings (historical evidence) counts as
recorded. Every ineligible judgement names the reading that made it so.

A decision scoped to a class of allocation ("4x only until a healthy-class 8x pair
re-gates it") is pending until a record of its family exists on an allocation of that
class: `pending`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..schema.envelope import Envelope
from ..schema.kinds import Decision, Environment, GpuState, Measurement, Sandwich
from ..schema.readings import high, low
from ..schema.readings import text as reading_text
from .families import norm

#: Defaults of the `baseline-eligibility` rule's parameters (ledger.yaml `rules:` overrides them).
DEFAULT_THRESHOLDS: dict[str, Any] = {
    # Under load, an SM clock below this fraction of the device maximum is degraded. The
    # campaign's degraded-class GB200 pair ran at 1,965 MHz; healthy H200s under a dense
    # bf16 load hold their maximum.
    "min_sm_clock_fraction": 0.97,
    # A power limit below this fraction of the board's default limit is a capped board.
    "min_power_limit_fraction": 0.99,
    # sw_power_cap on a board drawing at least this fraction of its default limit is the
    # board spending its full budget as designed, not a degraded allocation.
    "power_budget_fraction": 0.95,
    # Clock-event reasons that do not mean the GPU was held back from its work.
    "benign_clock_reasons": ["gpu_idle", "display_clock_setting"],
    "max_ecc_uncorrected": 0,
    "max_temperature_c": 90.0,
    # Maximum-clock bins per device, e.g. GB200 trays at 2,062 MHz (healthy class) and 1,965 MHz
    # (degraded class): [{gpu: GB200, healthy: [2062], degraded: [1965]}]. None by default.
    "max_clock_bins": [],
    # CPU campaigns: the load average a core may carry beside the measured work's own, e.g.
    # 0.1. Unset, a CPU box's load is recorded and shown, not judged.
    "max_load_per_core": None,
}

THRESHOLD_DOCS: dict[str, str] = {
    "min_sm_clock_fraction": "Under load, the lowest SM clock as a fraction of the device maximum.",
    "min_power_limit_fraction": "The lowest power limit as a fraction of the board's default limit.",
    "power_budget_fraction": "Draw (fraction of the limit) at which sw_power_cap is the board's normal operating point.",
    "benign_clock_reasons": "Clock-event (throttle) reasons that do not make an allocation ineligible.",
    "max_ecc_uncorrected": "Most uncorrected ECC errors an eligible GPU may report.",
    "max_temperature_c": "Highest GPU temperature (degrees C) of an eligible allocation.",
    "max_clock_bins": "Per device, its maximum-SM-clock bins, e.g. [{gpu: GB200, healthy: [2062], degraded: [1965]}]: "
    "a GPU whose name contains the gpu text is ineligible unless its maximum SM clock is a healthy bin.",
    "max_load_per_core": "CPU campaigns: the most load average a core may carry beside the measured work's own "
    "(the environment's `work_cores`), e.g. 0.1; unset (null), load is recorded and shown, not judged.",
}


def load_limit_problems(value: Any) -> list[tuple[str, str]]:
    """What is wrong with a `max_load_per_core` value; [] when it is valid (a number > 0, or null)."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool) and value > 0):
        return []
    return [
        ("", f"must be a load a core may carry beside the work, a number above 0 (e.g. 0.1), or null, not {value!r}")
    ]


def load_reading(env: Environment, th: dict[str, Any]) -> str | None:
    """Why a CPU box's load average makes it ineligible, or None: the highest load recorded,
    less the cores the measured work itself kept busy, per core, above `max_load_per_core`."""
    limit = th.get("max_load_per_core")
    if limit is None or not env.load_avg or not env.cpu_count:
        return None
    other = max(env.load_avg) - (env.work_cores or 0.0)
    if other / env.cpu_count <= limit:
        return None
    own = f" beside the measured work's {env.work_cores:g} cores" if env.work_cores else ""
    return (
        f"load average up to {max(env.load_avg):g} on {env.cpu_count} cores{own}: "
        f"{other / env.cpu_count:.2f} a core, above {limit:g}"
    )


def clock_bin_problems(value: Any) -> list[tuple[str, str]]:
    """(where inside `max_clock_bins`, what is wrong) for each malformed entry; [] when it is valid."""
    if not isinstance(value, list):
        return [("", f"must be a list of bins, not {type(value).__name__}")]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, entry in enumerate(value):
        at = f"[{i}]"
        if not isinstance(entry, dict):
            out.append((at, "must be a mapping with gpu, healthy and degraded"))
            continue
        unknown = sorted(set(entry) - {"gpu", "healthy", "degraded"})
        if unknown:
            out.append((f"{at}.{unknown[0]}", f"a bin has no key {unknown[0]!r} (its keys: gpu, healthy, degraded)"))
        gpu = entry.get("gpu")
        if not isinstance(gpu, str) or not gpu.strip():
            out.append((f"{at}.gpu", "must name the device as its GPU name contains it, e.g. GB200"))
        elif gpu.casefold() in seen:
            out.append((f"{at}.gpu", f"{gpu!r} has bins already; list each device once"))
        else:
            seen.add(gpu.casefold())
        lists: dict[str, list[float]] = {}
        for key in ("healthy", "degraded"):
            clocks = entry.get(key, [])
            if not isinstance(clocks, list) or not all(
                isinstance(c, int | float) and not isinstance(c, bool) and c > 0 for c in clocks
            ):
                out.append((f"{at}.{key}", "must be a list of maximum SM clocks in MHz, e.g. [2062]"))
                continue
            lists[key] = clocks
        if "healthy" in lists and not lists["healthy"]:
            out.append((f"{at}.healthy", "names no clock: a device with no healthy bin is never a baseline"))
        both = set(lists.get("healthy", [])) & set(lists.get("degraded", []))
        if both:
            out.append((f"{at}.degraded", f"{_mhz(sorted(both))} MHz is listed as healthy and degraded"))
    return out


def clock_bin(name: str, bins: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first `max_clock_bins` entry whose `gpu` the device name contains (case-insensitive)."""
    folded = name.casefold()
    return next((b for b in bins if str(b["gpu"]).casefold() in folded), None)


def _mhz(values: Iterable[float]) -> str:
    return ", ".join(f"{v:g}" for v in values) or "none"


def bin_reading(gpu: GpuState, bins: list[dict[str, Any]]) -> str | None:
    """Why a GPU's maximum SM clock puts it outside its device's healthy class, or None.

    The campaign's GB200 trays come in two maximum-clock bins, 2,062 MHz (healthy class) and
    1,965 MHz (degraded class, baseline-ineligible even when working); `max_clock_bins`
    names them per device. A maximum in no listed bin is not called healthy either."""
    entry = clock_bin(gpu.name, bins)
    sm_max = gpu.sm_clock_max_mhz
    if entry is None or sm_max is None:
        return None
    healthy, degraded = entry.get("healthy", []), entry.get("degraded", [])
    if sm_max in healthy:
        return None
    where = f"GPU {gpu.index}: {sm_max:g} MHz maximum SM clock"
    if sm_max in degraded:
        return f"{where}, the degraded max-clock bin of {entry['gpu']} (healthy: {_mhz(healthy)} MHz)"
    return f"{where}, in no max-clock bin of {entry['gpu']} (healthy: {_mhz(healthy)}; degraded: {_mhz(degraded)} MHz)"


def gpu_readings(env: Environment, th: dict[str, Any]) -> list[str]:
    """The readings of one environment record that make its allocation ineligible.

    A reading may be a range (a report's "1.4-1.8 GHz"): a clock is judged by its lowest
    value, a temperature by its highest, and a board whose draw reaches its budget anywhere
    in the range is at budget (its clocks are set by the cap)."""
    out: list[str] = []
    if env.health.verdict == "degraded":
        # The recorded verdict and its reasons stand beside any per-GPU readings: a reading that
        # looks fine does not erase what the engineer saw (a 1,965 MHz clock bin, say).
        why = "; ".join(env.health.reasons) or "no reason given"
        out.append(f"recorded degraded{'' if env.gpus else ', no per-GPU readings'}: {why}")
    loaded = load_reading(env, th)
    if loaded:
        out.append(loaded)
    if not env.gpus:
        return out
    benign = set(th["benign_clock_reasons"])
    bins = th.get("max_clock_bins") or []
    for gpu in env.gpus:
        tag = f"GPU {gpu.index}"
        limit, default, draw = gpu.power_limit_w, gpu.power_default_limit_w, high(gpu.power_draw_w)
        reasons = list(gpu.clock_event_reasons)
        binned = bin_reading(gpu, bins)
        if binned:
            out.append(binned)
        # A board spending its full power budget at its default limit: clocks set by the cap
        # (GB200s at 1.4-1.8 GHz of 2,062 MHz, reported with or without sw_power_cap) are healthy.
        at_budget = (
            limit is not None
            and default is not None
            and draw is not None
            and limit >= default * th["min_power_limit_fraction"]
            and draw >= th["power_budget_fraction"] * limit
        )
        held = [r for r in reasons if r not in benign and not (r == "sw_power_cap" and at_budget)]
        if held:
            out.append(f"{tag}: clocks held back by {', '.join(held)}")
        if limit is not None and default and limit < default * th["min_power_limit_fraction"]:
            out.append(f"{tag}: power limit {limit:g} W, below the board default {default:g} W")
        if gpu.ecc_errors_uncorrected is not None and gpu.ecc_errors_uncorrected > th["max_ecc_uncorrected"]:
            out.append(f"{tag}: {gpu.ecc_errors_uncorrected} uncorrected ECC errors")
        hottest = high(gpu.temperature_c)
        if hottest is not None and hottest > th["max_temperature_c"]:
            out.append(f"{tag}: {reading_text(gpu.temperature_c)} C, above {th['max_temperature_c']:g} C")
        idle = "gpu_idle" in reasons or high(gpu.utilization_percent) == 0
        sm, sm_max = low(gpu.sm_clock_mhz), gpu.sm_clock_max_mhz
        if env.under_load and not idle and not at_budget and sm is not None and sm_max:
            if sm < th["min_sm_clock_fraction"] * sm_max:
                out.append(
                    f"{tag}: SM clock {reading_text(gpu.sm_clock_mhz)} MHz under load, {sm / sm_max:.1%} of its "
                    f"{sm_max:g} MHz maximum (below {th['min_sm_clock_fraction']:.0%})"
                )
    return out


def judged(env: Environment, th: dict[str, Any] | None = None) -> bool:
    """Whether an environment record holds enough to call its allocation healthy: GPUs read
    under load, a recorded verdict, or a CPU box's load judged by `max_load_per_core`."""
    if env.gpus:
        return bool(env.under_load) or env.health.verdict == "healthy"
    if th is not None and th.get("max_load_per_core") is not None and env.load_avg and env.cpu_count:
        return True
    return env.health.verdict in ("healthy", "degraded")


@dataclass
class Eligibility:
    eligible: bool
    #: The readings that made it ineligible (empty when eligible).
    readings: list[str] = field(default_factory=list)
    #: True when some reading or recorded verdict says the allocation was healthy.
    known_healthy: bool = False


class Judge:
    """Eligibility of measurements and allocations in one ledger, under one set of thresholds."""

    def __init__(self, records: Iterable[Envelope], thresholds: dict[str, Any] | None = None):
        self.th = {**DEFAULT_THRESHOLDS, **(thresholds or {})}
        self.by_id: dict[str, Envelope] = {}
        self.envs_on: dict[str, list[Environment]] = {}
        superseded = set()
        records = list(records)
        for r in records:
            superseded.update(r.supersedes)
        for r in records:
            self.by_id[r.id] = r
            # An environment on an `unknown` allocation describes only the records that cite it.
            if (
                isinstance(r, Environment)
                and r.id not in superseded
                and r.allocation is not None
                and r.allocation.known
            ):
                self.envs_on.setdefault(r.allocation.id, []).append(r)
        self._cache: dict[str, Eligibility] = {}

    def environments(self, record: Envelope) -> list[Environment]:
        """Environment records about the allocation a record ran on (its own `environment`, and
        every environment stamped with the same allocation id)."""
        out: list[Environment] = []
        ref = getattr(record, "environment", None)
        env = self.by_id.get(ref) if ref else None
        if isinstance(env, Environment):
            out.append(env)
        if record.allocation is not None and record.allocation.known:
            out.extend(e for e in self.envs_on.get(record.allocation.id, []) if e not in out)
        return out

    def environment(self, env: Environment) -> tuple[str, list[str]]:
        """One environment record's health as judged from its readings (and recorded verdict):
        ("degraded", the readings), ("healthy", []) when it holds enough to say so, else
        ("unknown", []). Its own recorded verdict alone does not make readings healthy."""
        found = gpu_readings(env, self.th)
        if found:
            return "degraded", found
        return ("healthy" if judged(env, self.th) else "unknown"), []

    def measurement(self, m: Measurement) -> Eligibility:
        if m.id in self._cache:
            return self._cache[m.id]
        readings: list[str] = []
        known = m.health == "healthy"
        for env in self.environments(m):
            found = gpu_readings(env, self.th)
            readings.extend(r for r in found if r not in readings)
            known = known or (judged(env, self.th) and not found)
        if m.health == "degraded":
            why = "; ".join(m.health_reasons) or "no reason given"
            if not readings:  # the environment's readings, when there are any, say it better
                readings.append(f"recorded degraded: {why}")
        result = Eligibility(not readings, readings, known and not readings)
        self._cache[m.id] = result
        return result

    def health(self, m: Measurement) -> tuple[str, list[str]]:
        """A measurement's health as every surface says it, judged from its allocation's
        environments (and its own recorded health): ("degraded", the readings and recorded
        reasons), ("healthy", []) when a reading or recorded verdict says so, else ("unknown", [])."""
        e = self.measurement(m)
        if not e.eligible:
            return "degraded", list(e.readings)
        return ("healthy" if e.known_healthy else "unknown"), []

    def record(self, record: Envelope) -> Eligibility:
        """Any measurement or sandwich: a sandwich is judged by its allocation and its arms."""
        if isinstance(record, Measurement):
            return self.measurement(record)
        readings: list[str] = []
        known = False
        for env in self.environments(record):
            found = gpu_readings(env, self.th)
            readings.extend(r for r in found if r not in readings)
            known = known or (judged(env, self.th) and not found)
        if isinstance(record, Sandwich):
            for arm in (record.control_a, record.candidate, record.control_b):
                m = self.by_id.get(arm) if arm else None
                if isinstance(m, Measurement):
                    e = self.measurement(m)
                    readings.extend(r for r in e.readings if r not in readings)
                    known = known or e.known_healthy
        return Eligibility(not readings, readings, known and not readings)


def _topology(record: Envelope) -> str:
    return norm(record.allocation.topology) if record.allocation and record.allocation.topology else ""


@dataclass
class Pending:
    decision: Decision
    #: What the decision waits for, in words ("a record of its family on a healthy-class 8x GB200 allocation").
    needs: str
    #: Records on that topology that do not count, each with why.
    near_misses: list[tuple[Envelope, str]] = field(default_factory=list)


def pending(
    records: Iterable[Envelope], judge: Judge | None = None
) -> tuple[list[Pending], list[tuple[Decision, Envelope]]]:
    """Decisions scoped to a class of allocation: (still pending, settled with the record that settled them)."""
    records = list(records)
    judge = judge or Judge(records)
    superseded = {s for r in records for s in r.supersedes}
    waiting: list[Pending] = []
    settled: list[tuple[Decision, Envelope]] = []
    for d in records:
        if not isinstance(d, Decision) or d.pending_on is None or d.id in superseded:
            continue
        scope = d.pending_on
        family = norm(d.family)
        wanted = norm(scope.topology)
        health = "healthy-class " if scope.health == "healthy" else ""
        needs = f"a measurement or sandwich of this family on a {health}{scope.topology} allocation"
        misses: list[tuple[Envelope, str]] = []
        found: Envelope | None = None
        for r in records:
            if not isinstance(r, Measurement | Sandwich) or r.id in superseded:
                continue
            if norm(getattr(r, "family", None)) != family and r.id not in d.evidence:
                continue
            if _topology(r) != wanted:
                continue
            if isinstance(r, Measurement) and r.outcome != "ok":
                misses.append((r, f"outcome {r.outcome}"))
                continue
            if scope.health == "healthy":
                e = judge.record(r)
                if not e.eligible:
                    misses.append((r, "; ".join(e.readings)))
                    continue
                if not e.known_healthy:
                    misses.append((r, "no environment or health record says its allocation was healthy"))
                    continue
            found = r
            break
        if found is not None:
            settled.append((d, found))
        else:
            waiting.append(Pending(d, needs, misses))
    return waiting, settled
