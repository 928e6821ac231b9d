"""What a writer hands the store: records staged for one write, and the write-time check
(`Admission`) the store runs on them before anything is written."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..schema.envelope import Envelope

if TYPE_CHECKING:  # the Ledger calls the admission; named here for types only
    from .ledger import Ledger


@dataclass(frozen=True)
class Staged:
    """A record about to be written: its sealed dict, the bytes its file will hold, the
    validated model (None when the writer gave only the dict) and where it came from
    (input file, place), for naming a refused record."""

    data: dict[str, Any]
    raw: bytes
    model: Envelope | None = None
    origin: tuple[str, str] | None = None


class Admission(Protocol):
    """The write-time check `Ledger.write` runs on every batch before anything is written
    (`ledger.checks.admission.admit` installs the checker's rules)."""

    def admit(self, ledger: Ledger, batch: Sequence[Staged], *, references_checked: bool) -> None:
        """Raise InputError to refuse the whole batch. `references_checked`: the writer has
        already refused a reference that resolves neither in the batch nor in the ledger."""
        ...
