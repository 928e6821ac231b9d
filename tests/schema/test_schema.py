"""Record models: every kind validates, exports a JSON Schema, and the format version is honoured."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import cli

from ledger.schema import KINDS, Measurement, migrate
from ledger.schema.kinds import FlopAudit, Gate, Mutation, summarize
from ledger.store import Ledger


def test_schema_export_writes_one_schema_per_kind_that_accepts_real_records(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "schemas"
    result = cli(repo, "schema", "export", str(out))
    assert result.returncode == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == sorted(f"{k}.schema.json" for k in KINDS)
    rid = cli(repo, "add", "measurement", "-", input="samples: [1.0, 2.0, 4.0]").stdout.strip()
    record = json.loads(cli(repo, "show", rid, "--format", "json").stdout)
    jsonschema.validate(record, json.loads((out / "measurement.schema.json").read_text()))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**record, "outcome": "great"}, json.loads((out / "measurement.schema.json").read_text()))


def test_summary_is_derived_from_samples_and_contradictions_refused() -> None:
    assert summarize([3.0, 1.0, 2.0, 4.0]) == {"n": 4, "min": 1.0, "median": 2.5, "max": 4.0, "iqr": 1.5}
    base = {
        "id": "01K00000000000000000000000",
        "created_at": "2026-01-01T00:00:00Z",
        "tool": {"version": "0"},
        "sha256": "0" * 64,
    }
    m = Measurement.model_validate({**base, "samples": [1.0, 2.0, 3.0]})
    assert (m.n, m.median) == (3, 2.0)
    with pytest.raises(ValueError, match="contradicts the samples"):
        Measurement.model_validate({**base, "samples": [1.0, 2.0, 3.0], "median": 2.5})
    with pytest.raises(ValueError, match="no valid step"):
        Measurement.model_validate({**base, "samples": [1.0], "outcome": "oom"})
    assert not Measurement.model_validate({**base, "median": 1.0, "health": "degraded"}).baseline_eligible


def test_honest_gates_mutations_and_audits() -> None:
    base = {
        "id": "01K00000000000000000000000",
        "created_at": "2026-01-01T00:00:00Z",
        "tool": {"version": "0"},
        "sha256": "0" * 64,
    }
    with pytest.raises(ValueError, match="no-tests"):
        Gate.model_validate({**base, "outcome": "pass", "executed": 0})
    with pytest.raises(ValueError, match="does not build establishes nothing"):
        Mutation.model_validate({**base, "mutation": "T1", "built": False, "detected_by": "golden"})
    peak = {"name": "house-2450", "tflops_per_gpu": 2450}
    with pytest.raises(ValueError, match="does not reconcile"):
        FlopAudit.model_validate(
            {**base, "flop_per_sample": 100, "counted_flop_per_sample": 90, "derivation": "d", "peak": peak}
        )
    audit = FlopAudit.model_validate(
        {
            **base,
            "flop_per_sample": 100,
            "counted_flop_per_sample": 90,
            "itemised": {"flash_attn": 10},
            "derivation": "d",
            "peak": peak,
        }
    )
    assert not audit.exact


def test_format_version_newer_than_ledger_is_refused_and_older_is_migrated(repo: Path, monkeypatch) -> None:
    rid = cli(repo, "add", "note", "-", input="body: x").stdout.strip()
    book = Ledger.open(repo)
    data = book.read_raw(book.find(rid))
    with pytest.raises(migrate.FormatError, match="upgrade ledger"):
        migrate.upgrade({**data, "format_version": 99})
    # The mechanism: a record written at version 1 is upgraded in memory by each registered step.
    monkeypatch.setattr(migrate, "FORMAT_VERSION", 2)
    monkeypatch.setitem(
        migrate.MIGRATIONS, 1, lambda d: {**{k: v for k, v in d.items() if k != "body"}, "text": d["body"]}
    )
    up = migrate.upgrade(dict(data))
    assert up["format_version"] == 2 and up["text"] == "x" and "body" not in up
    monkeypatch.delitem(migrate.MIGRATIONS, 1)
    with pytest.raises(migrate.FormatError, match="no migration from format_version 1"):
        migrate.upgrade(dict(data))
