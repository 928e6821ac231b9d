"""Importers: results other tools wrote, brought into the ledger with their provenance.

One module per format. Each parses files into drafts (record dicts with the file and
line or key they came from); :func:`ledger.importers.base.import_files` validates every
draft, then writes all of them or none.

Provenance is taken from the file, never from the ledger's own checkout: a commit id the
file carries becomes the record's `source`; a missing or empty one is a provenance gap
written into the record (`extra.provenance_gaps`), not filled in. Machine details become
the allocation (hosts) and environment fields; the file's dates become `observed_at`.
"""

from __future__ import annotations

#: format name -> module under ledger.importers (imported only when used).
FORMATS: dict[str, str] = {
    "mlperf": "ledger.importers.mlperf",
    "pytest-benchmark": "ledger.importers.pytest_benchmark",
    "pyperf": "ledger.importers.pyperf",
    "hyperfine": "ledger.importers.hyperfine",
    "asv": "ledger.importers.asv",
    "junit": "ledger.importers.junit",
    "ctest": "ledger.importers.ctest",
}

__all__ = ["FORMATS"]
