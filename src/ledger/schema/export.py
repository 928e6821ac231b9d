"""JSON Schema export: one schema per kind, for other tools (check-jsonschema, editors)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .registry import KINDS


def schema_for(kind: str) -> dict[str, Any]:
    model = KINDS[kind]
    schema = model.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"ledger:{kind}"
    return schema


def export_schemas(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for kind in KINDS:
        path = directory / f"{kind}.schema.json"
        path.write_text(json.dumps(schema_for(kind), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        out.append(path)
    return out
