"""Loading every record holds Python's cycle collector off and gives it back as it was."""

from __future__ import annotations

import gc

from ledger.schema.registry import KINDS
from ledger.store import Ledger
from ledger.store.add import seal_record
from ledger.store.init import init
from ledger.store.ledger import without_cycle_collection


def test_records_load_with_the_collector_held_off_and_restored(tmp_path) -> None:
    init(tmp_path)
    ledger = Ledger.open(tmp_path)
    ids = ["01KQGDRC5072TECMQ49PKZ57H6", "01KQGDRC5072TECMQ49PKZ57H7"]
    notes = [
        {
            "id": i,
            "kind": "note",
            "created_at": f"2026-05-01T00:0{n}:00+00:00",
            "sha256": "0" * 64,
            "tool": {"name": "ledger", "version": "test"},
            "body": f"note {n}",
        }
        for n, i in enumerate(ids)
    ]
    ledger.write([seal_record(KINDS["note"].model_validate(n)) for n in notes], durable=False)
    assert [r.id for r in Ledger.open(tmp_path).records()] == ids
    assert gc.isenabled()  # on before, on after
    with without_cycle_collection():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with without_cycle_collection():
            pass
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()
