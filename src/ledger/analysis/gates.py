"""What a gate says, in words: its outcome against the one it must have (an armed check or a
positive control must fail), and its goldens as a share of their tolerance."""

from __future__ import annotations

from ..schema.kinds import Gate, Margin, Mutation


def gate_result(gate: Gate) -> str:
    """`pass`; `fail, as it must (an armed check)`; or what is wrong with it."""
    counts = f" ({gate.passed} of {gate.executed} passed)" if gate.executed else ""
    if gate.expect == "fail":
        if gate.outcome == "fail":
            return f"armed: failed, as it must{counts}"
        return f"not armed: {gate.outcome} where it must fail{counts}"
    return f"{gate.outcome}{counts}"


def gate_load(gate: Gate) -> str | None:
    """The machine's load while the gate ran, beside its cores: "load 82-94 on 20 cores"."""
    if not gate.load_avg:
        return None
    low, high = min(gate.load_avg), max(gate.load_avg)
    load = f"{low:g}" if low == high else f"{low:g}-{high:g}"
    return f"load {load}" + (f" on {gate.cpu_count} cores" if gate.cpu_count else " (cores not recorded)")


def margin_share(m: Margin) -> str:
    """A golden against its tolerance as the investigation writes it: `56% of tolerance`."""
    percent = 100.0 * m.fraction
    share = "<1%" if 0 < percent < 1 else f"{percent:.0f}%"
    return f"{m.name}: {m.value:g} against {m.tolerance:g}, {share} of tolerance"


def worst_margin(gate: Gate) -> Margin | None:
    return max(gate.margins, key=lambda m: m.fraction, default=None)


def mutation_result(m: Mutation) -> str:
    """What a mutation established: caught (by what), survived (owed), or nothing (unbuilt)."""
    if not m.built:
        return "did not build: establishes nothing"
    if m.exit_code == 0 and not m.detected_by:
        return "survived: built, exit 0, detected by nothing (owed until a test catches it)"
    code = f"exit {m.exit_code}" if m.exit_code is not None else "exit code not recorded"
    return f"detected: {code}, by {m.detected_by}" if m.detected_by else f"detected: {code}"
