"""ledger: an evidence ledger and static report generator for performance engineering.

The public API: open a ledger, add records, read them back.

    >>> import ledger
    >>> book = ledger.Ledger.open(".")
    >>> rec = ledger.add_one(book, "note", {"body": "clocks looked low on node 3"})
"""

from .errors import InputError, LedgerError, NotFound, Problem, WriteError
from .schema import FORMAT_VERSION, KINDS, Envelope
from .store import Item, Ledger, Stamping, add, add_one, read_items
from .version import __version__

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
