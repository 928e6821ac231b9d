"""Record rules: schema validity, an intact content hash, unique ids and keys, and every
SHA and record reference resolving. `inspect_file` checks one file's bytes on its own
(it runs in worker processes for whole-ledger checks); the cross-record rules run on the
small `Info` it returns."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..analysis.figures import uncertainty_percent
from ..redact import find_secrets
from ..schema.migrate import FormatError, upgrade
from ..schema.registry import record_adapter
from ..store.canonical import content_hash
from ..store.ledger import shard_of
from .artifacts import binary_reason, find_conflicts, readable
from .comparability import verdict_problem
from .info import Info
from .provenance import local_paths
from .result import ERROR, WARNING, Violation
from .rule import Rule

#: The rules of this family, as data (ledger.checks.registry lists the families).
RULES: tuple[Rule, ...] = (
    Rule(
        "schema-valid",
        "records",
        ERROR,
        "Every record parses as JSON and validates against its kind's schema "
        "(`ledger schema show KIND`), at the format version this ledger reads.",
        "Records are append-only: do not edit this one; write a corrected record with "
        "`ledger add KIND` that lists this id in `supersedes`.",
    ),
    Rule(
        "content-hash",
        "records",
        ERROR,
        "A record's `sha256` is the hash of its canonical content. A mismatch means the file "
        "was edited after it was written.",
        "Restore the file as written (`git checkout -- FILE`); a correction is a new record that supersedes it.",
    ),
    Rule(
        "unique-id",
        "records",
        ERROR,
        "Every record id is unique across the ledger and the file is named by its id, under "
        "its kind's folder and shard (records/KIND/SHARD/ID.json).",
        "Write records with `ledger add`, which names and places them; never copy a record file.",
    ),
    Rule(
        "unique-key",
        "records",
        ERROR,
        "Keys that must be unique across the ledger are: issue numbers, contract names, finding ids. "
        "Two branches that each add issue #N merge cleanly in git and are refused here. A record "
        "that corrects the key's record (lists it in `supersedes`) may repeat the key; two "
        "corrections of one record fork the key and are refused.",
        "To correct the record holding the key, list its id in `supersedes`; a new record takes "
        "a free key (`ledger list --kind KIND` shows each kind's keys).",
    ),
    Rule(
        "reference-resolves",
        "records",
        ERROR,
        "Every record id a record points at (contract, evidence, arms, supersedes...) is a record in the ledger.",
        "Add the referenced record in the same push, or fix the id (`ledger list` shows ids).",
    ),
    Rule(
        "sha-resolves",
        "records",
        ERROR,
        "The source commit a record is stamped with resolves in the measured checkout "
        "(config `source`). Evidence at a SHA no clone can resolve cannot be reproduced.",
        "Push the measured commit to a branch or tag of the source repository, or stamp the "
        "record with a commit that exists (`ledger add --source PATH`).",
    ),
    Rule(
        "sha-foreign",
        "records",
        WARNING,
        "Imported records name commits of another repository (source.repo) that `sources:` in "
        "ledger.yaml does not map to a clone, so they cannot be verified. Reported once per repository; "
        "never an error, so it does not block a push.",
        "Map the repository to a clone in ledger.yaml (`sources: {REPO: PATH}`); `ledger check` then "
        "verifies the commits there (sha-resolves).",
    ),
    Rule(
        "sha-abbreviated",
        "records",
        WARNING,
        "The source SHA is abbreviated (declared historical evidence, `source.abbreviated`; "
        "resolvable or not), or historical: it resolves here but no branch or tag contains it, "
        "so a fresh clone will not have it. A full SHA that does not resolve is `sha-resolves`.",
        "Prefer the full 40-hex SHA of a commit on a pushed branch; for historical evidence state "
        "why the measurement transfers to a commit that resolves.",
    ),
)


@dataclass(frozen=True)
class FileRules:
    """The per-file rules that are on, with their severities and parameters (picklable)."""

    severity: dict[str, str] = field(default_factory=dict)
    params: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: What to do, per rule id (the rule's fix).
    fix: dict[str, str] = field(default_factory=dict)
    #: Prefix that turns a records-folder path into the path reported (the records folder).
    prefix: str = ""

    def on(self, rule_id: str) -> bool:
        return rule_id in self.severity


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _v(
    rules: FileRules,
    rule_id: str,
    path: str,
    message: str,
    *,
    line: int | None = None,
    field: str | None = None,
    fix: str | None = None,
) -> Violation:
    return Violation(
        path, line, field, rule_id, rules.severity[rule_id], message, fix if fix is not None else rules.fix[rule_id]
    )


def inspect_artifact(path: str, raw: bytes, rules: FileRules, *, text_page: bool = False) -> list[Violation]:
    """Artifact rules on any file of the records folder, and secrets/conflicts on pages."""
    out: list[Violation] = []
    if not text_page and rules.on("record-size"):
        cap = rules.params["record-size"]["max_bytes"]
        if len(raw) > cap:
            out.append(_v(rules, "record-size", path, f"is {len(raw):,} bytes, over the {cap:,}-byte cap"))
    if not text_page and rules.on("binary-content"):
        reason = binary_reason(raw, rules.params["binary-content"]["max_base64_chars"])
        if reason:
            out.append(_v(rules, "binary-content", path, reason[0], line=reason[1]))
    if rules.on("secrets"):
        for what, line in find_secrets(readable(raw)[0]):
            out.append(_v(rules, "secrets", path, f"holds what looks like a {what}", line=line))
    if rules.on("conflict-markers"):
        for line in find_conflicts(raw):
            out.append(_v(rules, "conflict-markers", path, "holds a merge-conflict marker", line=line))
    return out


def _loads(raw: bytes) -> Any:
    """orjson (a third of the standard library's time on a record); json for what orjson
    refuses but JSON allows (integers beyond 64 bits), so the verdict never depends on it."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def inspect_file(path: str, raw: bytes, rules: FileRules) -> tuple[list[Violation], Info | None]:  # noqa: C901
    """Check one record file's bytes on their own. `path` is relative to the records folder
    (KIND/SHARD/ID.json) for the unique-id placement check."""
    display = rules.prefix + path
    out = inspect_artifact(display, raw, rules)
    if not path.endswith(".json"):
        return out, None  # an attachment: artifact rules only
    try:
        data = _loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        if rules.on("schema-valid"):
            line = getattr(exc, "lineno", None)
            out.append(_v(rules, "schema-valid", display, f"is not JSON: {getattr(exc, 'msg', exc)}", line=line))
        return out, None
    if not isinstance(data, dict):
        if rules.on("schema-valid"):
            out.append(_v(rules, "schema-valid", display, "is not a JSON object"))
        return out, None
    if rules.on("content-hash"):
        given = data.get("sha256")
        try:
            actual = content_hash(data)
        except ValueError:
            actual = None
        if given != actual:
            out.append(
                _v(
                    rules,
                    "content-hash",
                    display,
                    f"sha256 is {given!r} but the content hashes to {actual}",
                    field="sha256",
                )
            )
    try:
        record = record_adapter().validate_python(upgrade(data))
    except FormatError as exc:
        if rules.on("schema-valid"):
            out.append(_v(rules, "schema-valid", display, str(exc), field="format_version", fix="upgrade ledger"))
        record = None
    except Exception as exc:  # pydantic.ValidationError; imported lazily with pydantic
        if rules.on("schema-valid"):
            errors = getattr(exc, "errors", None)
            for err in errors() if callable(errors) else [{"loc": (), "msg": str(exc)}]:
                out.append(
                    _v(
                        rules,
                        "schema-valid",
                        display,
                        str(err["msg"]).removeprefix("Value error, "),
                        field=_loc(tuple(err["loc"])) or None,
                    )
                )
        record = None

    if rules.on("local-path"):
        for where, text in local_paths(data, raw):
            out.append(_v(rules, "local-path", display, f"names a folder of one machine: {text!r}", field=where))
    record_id = str(data.get("id", ""))
    kind = str(data.get("kind", ""))
    if rules.on("unique-id"):
        parts = path.split("/")
        expected = f"{kind}/{shard_of(record_id) if record_id else '??'}/{record_id}.json"
        if parts[-3:] != expected.split("/"):
            out.append(
                _v(
                    rules,
                    "unique-id",
                    display,
                    f"a {kind or 'record'} with id {record_id or '(none)'} must be at {expected} under the records folder",
                    field="id",
                )
            )
    if record is None:
        return out, None
    if kind == "sandwich" and rules.on("sandwich-verdict"):
        problem = verdict_problem(record)
        if problem:
            out.append(_v(rules, "sandwich-verdict", display, problem, field="verdict"))
    return out, info_of(display, record)


def info_of(path: str, record: Any) -> Info:
    keys = tuple((name, json.dumps(getattr(record, name), sort_keys=True)) for name in record.UNIQUE_KEYS)
    source = record.source
    kind = record.kind
    return Info(
        path=path,
        id=record.id,
        kind=kind,
        keys=keys,
        refs=tuple(record.references()),
        sha=source.sha if source is not None else None,
        allocation=record.allocation.id if record.allocation is not None else None,
        contract=getattr(record, "contract", None) if kind in ("measurement", "sandwich", "flop-audit") else None,
        flop_audit=getattr(record, "flop_audit", None),
        mfu=getattr(record, "mfu_percent", None) is not None,
        arms=tuple((a, getattr(record, a)) for a in ("control_a", "candidate", "control_b") if getattr(record, a, None))
        if kind == "sandwich"
        else (),
        attachments=tuple(record.attachments.items()),
        owner=getattr(record, "owner", None) if kind == "issue" else None,
        number=getattr(record, "number", None) if kind == "issue" else None,
        spread_percent=_spread(record) if kind == "measurement" else None,
        repo=source.repo if source is not None else None,
    )


def _spread(record: Any) -> float | None:
    return uncertainty_percent(record.samples, record.median, record.min, record.max)


def inspect_batch(batch: list[tuple[str, bytes]], rules: FileRules) -> tuple[list[Violation], list[Info]]:
    violations: list[Violation] = []
    infos: list[Info] = []
    for path, raw in batch:
        found, info = inspect_file(path, raw, rules)
        violations.extend(found)
        if info is not None:
            infos.append(info)
    return violations, infos


def inspect_paths(root: str, paths: list[str], rules: FileRules) -> tuple[list[Violation], list[Info]]:
    """Worker entry for whole-ledger checks: read and inspect files under `root`."""

    batch = []
    for rel in paths:
        with open(os.path.join(root, rel), "rb") as fh:
            batch.append((rel, fh.read()))
    return inspect_batch(batch, rules)
