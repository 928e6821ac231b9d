"""Turn input items into sealed records and append them: validate everything, then write."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import InputError, Problem
from ..schema.envelope import ENVELOPE_FIELDS, GENERATED_FIELDS, Allocation, Envelope, Source
from ..schema.registry import KINDS
from .canonical import NotCanonical, canonical_bytes, seal, sha_line
from .ids import new_id
from .inputs import Item
from .ledger import Ledger
from .limits import Limits, canonical_too_deep
from .stamps import AllocationOverrides, detect_allocation, source_stamp, tool_stamp


@dataclass
class Stamping:
    """How to stamp new records. Anything left None is detected."""

    source_path: Path | None = None
    source: Source | None = None
    allocation: Allocation | None = None
    overrides: AllocationOverrides = field(default_factory=AllocationOverrides)
    no_source: bool = False


def _fix_for(err: dict[str, Any], kind: str) -> str:
    kinds = {
        "missing": "add this field",
        "extra_forbidden": f"remove it or fix its spelling; `ledger schema show {kind}` lists the fields",
        "literal_error": "use one of the allowed values",
        "string_pattern_mismatch": "fix the value's format",
        "greater_than_equal": "give a value in range",
        "greater_than": "give a value in range",
    }
    return kinds.get(err["type"], f"see `ledger schema show {kind}`")


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def validation_problems(exc: ValidationError, item: Item, kind: str) -> list[Problem]:
    problems = []
    for err in exc.errors():
        loc = _loc(err["loc"]) or "record"
        where = f"{item.where}, field {loc}" if item.where else f"field {loc}"
        msg = err["msg"].removeprefix("Value error, ")
        # Named by the rule `ledger check` would report it under, so add and check agree.
        problems.append(Problem(item.file, where, f"schema-valid: {msg}", _fix_for(err, kind)))
    return problems


def prepare(
    ledger: Ledger,
    kind: str,
    items: list[Item],
    stamping: Stamping | None = None,
    *,
    now: datetime | None = None,
) -> list[Envelope]:
    """Validate items as records of `kind` and seal them. Raises InputError listing every problem."""
    stamping = stamping or Stamping()
    if kind not in KINDS:
        raise InputError(
            f"unknown kind {kind!r}",
            [Problem("<command line>", "KIND", f"unknown kind {kind!r}", "use one of: " + ", ".join(KINDS))],
        )
    model = KINDS[kind]
    problems: list[Problem] = []
    # Stamps are computed once per batch: every record of one `add` shares them.
    # ... as plain dicts, dumped once (pydantic serialisation per record cost a quarter of a bulk add).
    detected_source: dict[str, Any] | None = None
    detected_alloc: dict[str, Any] | None = None
    given_source: dict[str, Any] | None = None
    source_problem: InputError | None = None
    given_alloc: dict[str, Any] | None = None
    tool = tool_stamp().model_dump(mode="json")
    created = now or datetime.now(UTC)
    out: list[Envelope] = []
    for number, item in enumerate(items, start=1):
        data = item.data
        if not isinstance(data, dict):
            # Items of a JSON array carry no line: name the record by its place instead.
            problems.append(
                Problem(
                    item.file,
                    item.where or f"record {number}",
                    f"a record is a mapping of fields, not {type(data).__name__}",
                    "give one JSON object or YAML mapping per record",
                )
            )
            continue
        given_kind = data.get("kind", kind)
        if given_kind != kind:
            problems.append(
                Problem(
                    item.file,
                    f"{item.where}, field kind" if item.where else "field kind",
                    f"record is a {given_kind!r} but the command adds {kind!r}",
                    f"run `ledger add {given_kind}`, or fix the kind field",
                )
            )
            continue
        # `ledger show --format json` output comes back with a fresh id and fresh stamps.
        reprinted = "id" in data and "sha256" in data
        body = {k: v for k, v in data.items() if k not in GENERATED_FIELDS}
        if reprinted:
            body.pop("source", None)
            body.pop("allocation", None)
        if stamping.source is not None:
            if given_source is None:
                given_source = stamping.source.model_dump(mode="json", exclude_none=True)
            body["source"] = given_source
        elif "source" not in body and not stamping.no_source and not body.get("source_unknown"):
            if detected_source is None and source_problem is None:
                try:
                    detected_source = source_stamp(
                        stamping.source_path or (ledger.root / ledger.config.source), exclude=ledger.records_dir
                    ).model_dump(mode="json", exclude_none=True)
                except InputError as exc:
                    # Reported once, beside whatever is wrong with the records themselves.
                    source_problem = exc
                    problems.extend(exc.problems)
            body["source"] = detected_source
        if stamping.allocation is not None:
            if given_alloc is None:
                given_alloc = stamping.allocation.model_dump(mode="json", exclude_none=True)
            body["allocation"] = given_alloc
        elif "allocation" not in body:
            if detected_alloc is None:
                detected_alloc = detect_allocation(overrides=stamping.overrides).model_dump(
                    mode="json", exclude_none=True
                )
            body["allocation"] = detected_alloc
        else:
            alloc = dict(body["allocation"]) if isinstance(body["allocation"], dict) else body["allocation"]
            if isinstance(alloc, dict):
                if stamping.overrides.id:
                    alloc["id"] = stamping.overrides.id
                if stamping.overrides.topology:
                    alloc["topology"] = stamping.overrides.topology
            body["allocation"] = alloc
        body["kind"] = kind
        body["id"] = new_id(created)
        body["created_at"] = created.isoformat().replace("+00:00", "Z")
        body["tool"] = tool
        body["sha256"] = "0" * 64
        try:
            record = model.model_validate(body)
        except ValidationError as exc:
            problems.extend(validation_problems(exc, item, kind))
            continue
        except RecursionError:
            problems.append(_item_problem(item, "", "nests deeper than any record may (rule parse-limits)", _FLATTEN))
            continue
        problems.extend(supersedes_problems(record, item))
        out.append(record)
    if problems:
        raise InputError(f"{len(problems)} problem(s); nothing was written", problems)
    return out


_FLATTEN = "flatten the record; records are a few levels deep"
_SHA_LINE = len(sha_line("0" * 64)) - 1


def _item_problem(item: Item, field: str, message: str, fix: str, number: int | None = None) -> Problem:
    place = item.where or (f"record {number}" if number else "")
    where = ", ".join(part for part in (place, f"field {field}" if field else "") if part)
    return Problem(item.file, where, message, fix)


def supersedes_problems(record: Envelope, item: Item) -> list[Problem]:
    """A correction names each record it corrects once, and never itself (rule supersedes-chain)."""
    out = []
    seen: set[str] = set()
    for i, ref in enumerate(record.supersedes):
        if ref == record.id:
            out.append(
                _item_problem(
                    item,
                    f"supersedes[{i}]",
                    "a record cannot supersede itself (rule supersedes-chain)",
                    "remove its id",
                )
            )
        elif ref in seen:
            out.append(
                _item_problem(
                    item,
                    f"supersedes[{i}]",
                    f"lists {ref} twice (rule supersedes-chain)",
                    "name each superseded record once",
                )
            )
        seen.add(ref)
    return out


def seal_record(record: Envelope) -> dict[str, Any]:
    """The dict written to disk: JSON-mode dump without empty optionals, plus its hash.
    Raises NotCanonical when the record has no canonical form (see `seal_records`)."""
    try:
        data = record.model_dump(mode="json", exclude_none=True)
    except ValueError as exc:  # pydantic's serialisation depth cap
        raise NotCanonical(f"cannot be serialised: {exc}", "", _FLATTEN) from None
    data.pop("sha256", None)
    return seal(data)


def seal_records(records: list[Envelope], items: list[Item], limits: Limits | None = None) -> list[dict[str, Any]]:
    """Seal records, refusing (InputError, nothing written) any that the canonical form cannot
    hold or that would break the parsing limits every reader applies: larger than
    `record-size`, deeper than `parse-limits.max_depth`."""
    limits = limits or Limits()
    problems: list[Problem] = []
    sealed: list[dict[str, Any]] = []
    for number, (record, item) in enumerate(zip(records, items), start=1):
        try:
            data = record.model_dump(mode="json", exclude_none=True)
            data.pop("sha256", None)
            raw = canonical_bytes(data)
        except NotCanonical as exc:
            problems.append(_item_problem(item, exc.field, f"{exc.message} (rule canonical-bytes)", exc.fix, number))
            continue
        except ValueError:  # pydantic's serialisation depth cap
            problems.append(
                _item_problem(item, "", "nests deeper than any record may (rule parse-limits)", _FLATTEN, number)
            )
            continue
        if canonical_too_deep(raw, limits.max_depth):
            problems.append(
                _item_problem(
                    item,
                    "",
                    f"nests deeper than {limits.max_depth} levels (rule parse-limits, max_depth)",
                    _FLATTEN,
                    number,
                )
            )
            continue
        size = len(raw) + _SHA_LINE
        if size > limits.max_record_bytes:
            problems.append(
                _item_problem(
                    item,
                    "",
                    f"would be a {size:,}-byte record file, over the {limits.max_record_bytes:,}-byte cap "
                    "(rule record-size)",
                    "keep the summary and per-step samples; move the bulk to the tracker and link it",
                    number,
                )
            )
            continue
        data["sha256"] = hashlib.sha256(raw).hexdigest()
        sealed.append(data)
    if problems:
        raise InputError(f"{len(problems)} problem(s); nothing was written", problems)
    return sealed


def check_references(ledger: Ledger, records: list[Envelope], items: list[Item]) -> None:
    problems: list[Problem] = []
    batch = {r.id for r in records}
    known: dict[str, bool] = {}
    for record, item in zip(records, items):
        for where, ref in record.references():
            if ref in batch:
                continue
            if ref not in known:
                known[ref] = ledger.exists(ref)
            if not known[ref]:
                loc = f"{item.where}, field {where}" if item.where else f"field {where}"
                problems.append(
                    Problem(
                        item.file,
                        loc,
                        f"reference-resolves: refers to record {ref}, which is not in the ledger",
                        "add that record first, or fix the id (`ledger list` shows ids)",
                    )
                )
    if problems:
        raise InputError(f"{len(problems)} dangling reference(s); nothing was written", problems)


def add(
    ledger: Ledger,
    kind: str,
    items: list[Item],
    stamping: Stamping | None = None,
    *,
    durable: bool = True,
    now: datetime | None = None,
) -> list[Envelope]:
    """Validate, check references, seal and write. All or nothing."""
    records = prepare(ledger, kind, items, stamping, now=now)
    check_references(ledger, records, items)
    sealed = seal_records(records, items, Limits.of(ledger.config.rules))
    final = [record.model_copy(update={"sha256": data["sha256"]}) for record, data in zip(records, sealed)]
    ledger.write(sealed, durable=durable, models=final, origins=[(item.file, item.where or "") for item in items])
    return final


def add_one(ledger: Ledger, kind: str, data: dict[str, Any], stamping: Stamping | None = None, **kw: Any) -> Envelope:
    """API convenience: add one record given as a dict."""
    return add(ledger, kind, [Item(data, "<api>", None)], stamping, **kw)[0]


__all__ = [
    "Stamping",
    "add",
    "add_one",
    "prepare",
    "seal_record",
    "seal_records",
    "check_references",
    "ENVELOPE_FIELDS",
]
