"""Issue 22, item 8: the `supersedes` graph is walked once. Before, each record walked its whole
chain back, so 1,200 notes each superseding the one before took 720,600 lookups and 13.5 s of
`check --all` (benchmarks/bounds_bench.py measures it); now one walk (Tarjan's components)
looks each record up at most once and still finds every cycle through a record it judges."""

from __future__ import annotations

from ledger.checks.info import Info
from ledger.checks.records import supersedes_cycles


def note(rid: str, *supersedes: str) -> Info:
    refs = tuple((f"supersedes[{n}]", ref) for n, ref in enumerate(supersedes))
    return Info(
        f"ledger/records/note/{rid}.json",
        rid,
        "note",
        (),
        refs,
        None,
        None,
        None,
        None,
        False,
        (),
        (),
        None,
        None,
        None,
    )


class Counting:
    def __init__(self, infos: list[Info]):
        self.by_id = {i.id: i for i in infos}
        self.calls = 0

    def __call__(self, rid: str) -> Info | None:
        self.calls += 1
        return self.by_id.get(rid)


def test_a_long_chain_is_walked_once() -> None:
    chain = [note("N0000")] + [note(f"N{n:04d}", f"N{n - 1:04d}") for n in range(1, 1200)]
    lookup = Counting(chain)
    assert supersedes_cycles(chain, lookup) == []
    assert lookup.calls == 0  # every record was among those judged
    # judged one at a time from the newest, as a push of the last correction is
    lookup = Counting(chain)
    assert supersedes_cycles([chain[-1]], lookup) == []
    assert lookup.calls == 1199  # each older record looked up once, not once per later one


def test_every_cycle_through_a_judged_record_is_reported_once() -> None:
    records = [
        note("SELF", "SELF"),  # supersedes itself
        note("A", "B", "C"),  # two cycles sharing A: A -> B -> A, A -> C -> A
        note("B", "A"),
        note("C", "A"),
        note("R", "X", "Y"),  # Y lies on R -> Y -> X -> R, reached through a cross edge
        note("X", "R"),
        note("Y", "X"),
        note("TAIL", "A"),  # points into a cycle, is on none
        note("OLD1", "OLD2"),  # a cycle among records not judged: not this check's
        note("OLD2", "OLD1"),
    ]
    judged = records[:8]
    found = supersedes_cycles(judged, Counting(records))
    heads = [info.id for info, _ in found]
    assert heads == ["SELF", "A", "R"]
    by_head = {info.id: cycle for info, cycle in found}
    assert by_head["SELF"] == ["SELF"]
    for head, cycle in by_head.items():
        # each reported cycle is real: every record supersedes the next, the last the first
        ring = [*cycle, cycle[0]]
        for a, b in zip(ring, ring[1:]):
            assert b in {ref for _, ref in next(r for r in records if r.id == a).refs}, (head, cycle)
    assert "TAIL" not in {m for cycle in by_head.values() for m in cycle}
    assert not {"OLD1", "OLD2"} & {m for cycle in by_head.values() for m in cycle}
