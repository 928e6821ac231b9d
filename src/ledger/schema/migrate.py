"""Upgrade records written by older versions of ledger to the current format.

Each entry of MIGRATIONS takes a record dict at version N and returns it at N + 1.
Files on disk are never rewritten (the ledger is append-only): records are upgraded in
memory every time they are read, and their content hash is checked against the bytes
as written. To change the format: bump FORMAT_VERSION, add the N -> N + 1 function
here, and add a fixture of the old format under tests/schema/formats/.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .envelope import FORMAT_VERSION

Migration = Callable[[dict[str, Any]], dict[str, Any]]

#: version N -> function upgrading a version-N record to version N + 1.
MIGRATIONS: dict[int, Migration] = {}


class FormatError(ValueError):
    """A record whose format version this ledger cannot read."""


def upgrade(data: dict[str, Any]) -> dict[str, Any]:
    """Return `data` at FORMAT_VERSION, applying migrations in order."""
    version = data.get("format_version", 1)
    if not isinstance(version, int) or version < 1:
        raise FormatError(f"format_version must be a positive integer, not {version!r}")
    if version > FORMAT_VERSION:
        raise FormatError(
            f"format_version {version} is newer than this ledger reads ({FORMAT_VERSION}); upgrade ledger"
        )
    while version < FORMAT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise FormatError(f"no migration from format_version {version}")
        data = step(dict(data))
        version += 1
        data["format_version"] = version
    return data
