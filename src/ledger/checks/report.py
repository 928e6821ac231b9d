"""Reporters: text grouped by file, JSON, and GitHub workflow annotations. They return
strings; the CLI prints them."""

from __future__ import annotations

import json
from itertools import groupby

from .result import CheckResult


def text(result: CheckResult) -> str:
    lines: list[str] = []
    for file, group in groupby(result.sorted(), key=lambda v: v.file):
        lines.append(file)
        for v in group:
            where = f"{v.where}: " if v.where else ""
            lines.append(f"  {v.severity}[{v.rule}] {where}{v.message}")
            if v.fix:
                lines.append(f"      fix: {v.fix}")
    errors, warnings = len(result.errors), len(result.warnings)
    scope = f"{result.records_checked} record(s), {result.pages_checked} page(s)"
    if result.cached:
        scope += f" ({result.cached} unchanged file(s) verified before)"
    verdict = "refused" if errors else "ok"
    lines.append(
        f"ledger check ({result.mode}): {scope}: {errors} error(s), {warnings} warning(s) in {result.seconds:.2f} s: {verdict}"
    )
    return "\n".join(lines)


def as_json(result: CheckResult) -> str:
    return json.dumps(result.as_dict(), indent=2, ensure_ascii=False)


def _escape(value: str, *, prop: bool = False) -> str:
    # GitHub's workflow-command escaping (toolkit/core/src/command.ts).
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def github(result: CheckResult) -> str:
    """`::error file=F,line=L,title=RULE::message` lines GitHub Actions turns into annotations."""
    lines = []
    for v in result.sorted():
        level = "error" if v.severity == "error" else "warning"
        props = [f"file={_escape(v.file, prop=True)}"]
        if v.line:
            props.append(f"line={v.line}")
        props.append(f"title={_escape(v.rule, prop=True)}")
        field = f"field {v.field}: " if v.field else ""
        fix = f" Fix: {v.fix}" if v.fix else ""
        lines.append(f"::{level} {','.join(props)}::{_escape(field + v.message + '.' + fix)}")
    lines.append(f"ledger check ({result.mode}): {len(result.errors)} error(s), {len(result.warnings)} warning(s)")
    return "\n".join(lines)


RENDERERS = {"text": text, "json": as_json, "github": github}
