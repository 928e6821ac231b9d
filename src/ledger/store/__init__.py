"""The store: append records atomically, read them back, and stamp them with source and allocation."""

from .add import Batch, Stamping, add, add_one, prepare, seal_record
from .canonical import canonical_bytes, content_hash, seal
from .ids import is_id, new_id
from .inputs import Item, parse_items, read_items
from .ledger import Ledger, shard_of
from .stamps import AllocationOverrides, detect_allocation, source_stamp, tool_stamp

__all__ = [
    "Batch",
    "Stamping",
    "add",
    "add_one",
    "prepare",
    "seal_record",
    "canonical_bytes",
    "content_hash",
    "seal",
    "is_id",
    "new_id",
    "Item",
    "parse_items",
    "read_items",
    "Ledger",
    "shard_of",
    "AllocationOverrides",
    "detect_allocation",
    "source_stamp",
    "tool_stamp",
]
