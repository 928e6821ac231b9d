"""ledger: an evidence ledger and static report generator for performance engineering.

The public API: open a ledger, add records, read them back.

    >>> import ledger
    >>> book = ledger.Ledger.open(".")
    >>> rec = ledger.add_one(book, "note", {"body": "clocks looked low on node 3"})
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import InputError, LedgerError, NotFound, Problem, WriteError
from .version import __version__

if TYPE_CHECKING:
    from .schema import FORMAT_VERSION, KINDS, Envelope
    from .store import Item, Ledger, Stamping, add, add_one, read_items

#: Names imported on first use (PEP 562): every `ledger` command imports this package, and
#: the schema and the store cost 0.3 s of CPU that `ledger --version`, `hook` or the CLI's
#: own start need not pay (many writers start a `ledger push` per job).
_LAZY = {
    "FORMAT_VERSION": "schema",
    "KINDS": "schema",
    "Envelope": "schema",
    "Item": "store",
    "Ledger": "store",
    "Stamping": "store",
    "add": "store",
    "add_one": "store",
    "read_items": "store",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ledger' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "FORMAT_VERSION",
    "KINDS",
    "Envelope",
    "InputError",
    "Item",
    "Ledger",
    "LedgerError",
    "NotFound",
    "Problem",
    "Stamping",
    "WriteError",
    "__version__",
    "add",
    "add_one",
    "read_items",
]
