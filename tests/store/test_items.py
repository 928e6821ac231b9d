"""Where a problem is: a line of a file, or the place of a record that has no line."""

from __future__ import annotations

import pytest

from ledger.errors import InputError
from ledger.schema import Source
from ledger.store import Item, Stamping, add


def test_a_record_without_a_line_is_named_by_its_place(book) -> None:
    """A collector's second record is "record 2", never "line record 2" (cli/collect.py once passed
    the place where the line number goes)."""
    items = [Item({"body": "fine"}, "<collect>", None, "record 1"), Item({}, "<collect>", None, "record 2")]
    with pytest.raises(InputError) as caught:
        add(book, "note", items, Stamping(source=Source(sha="a" * 40)))
    [problem] = caught.value.problems
    assert (problem.file, problem.where) == ("<collect>", "record 2, field body")
    assert str(problem).startswith("<collect>:record 2, field body: ")


def test_a_line_wins_over_a_place() -> None:
    assert Item({}, "f.jsonl", 3, "record 1").where == "line 3"
    assert Item({}, "f.jsonl", None).where == ""
