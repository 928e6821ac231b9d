"""Turn input items into sealed records and append them: validate everything, then write."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..errors import InputError, Problem
from ..schema.envelope import ENVELOPE_FIELDS, GENERATED_FIELDS, Allocation, Envelope, Source
from ..schema.registry import KINDS
from .canonical import NotCanonical, canonical_bytes, seal, sha_line, with_hash
from .ids import new_id
from .inputs import Item
from .limits import Limits, canonical_too_deep
from .staged import Staged
from .stamps import AllocationOverrides, detect_allocation, source_stamp, tool_stamp

if TYPE_CHECKING:  # Ledger.batch() makes the Batch below; the Ledger is named here for types only
    from .ledger import Ledger


@dataclass
class Stamping:
    """How to stamp new records. Anything left None is detected."""

    source_path: Path | None = None
    source: Source | None = None
    allocation: Allocation | None = None
    overrides: AllocationOverrides = field(default_factory=AllocationOverrides)
    no_source: bool = False


def _fix_for(err: Mapping[str, Any], kind: str) -> str:
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
        place = item.where_of(loc)
        where = f"{place}, field {loc}" if place else f"field {loc}"
        msg = str(err["msg"]).removeprefix("Value error, ")
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
    if kind not in KINDS:
        raise InputError(
            f"unknown kind {kind!r}",
            [Problem("<command line>", "KIND", f"unknown kind {kind!r}", "use one of: " + ", ".join(KINDS))],
        )
    model = KINDS[kind]
    problems: list[Problem] = []
    stamps = _Stamps(ledger, stamping or Stamping(), problems)
    tool = tool_stamp().model_dump(mode="json")
    created = now or datetime.now(UTC)
    out: list[Envelope] = []
    for number, item in enumerate(items, start=1):
        problem = _shape_problem(item, number, kind)
        if problem is not None:
            problems.append(problem)
            continue
        body = stamps.apply(_body_of(item.data))
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


def _shape_problem(item: Item, number: int, kind: str) -> Problem | None:
    """Why an item cannot be a record of `kind` at all: not a mapping, or another kind."""
    data = item.data
    if not isinstance(data, dict):
        # Items of a JSON array carry no line: name the record by its place instead.
        return Problem(
            item.file,
            item.where or f"record {number}",
            f"a record is a mapping of fields, not {type(data).__name__}",
            "give one JSON object or YAML mapping per record",
        )
    given_kind = data.get("kind", kind)
    if given_kind != kind:
        return Problem(
            item.file,
            f"{item.where}, field kind" if item.where else "field kind",
            f"record is a {given_kind!r} but the command adds {kind!r}",
            f"run `ledger add {given_kind}`, or fix the kind field",
        )
    return None


def _body_of(data: dict[str, Any]) -> dict[str, Any]:
    """The fields a user gives. `ledger show --format json` output comes back with a fresh id
    and fresh stamps, so a reprinted record's own id, hash, source and allocation are dropped."""
    body = {k: v for k, v in data.items() if k not in GENERATED_FIELDS}
    if "id" in data and "sha256" in data:
        body.pop("source", None)
        body.pop("allocation", None)
    return body


class _Stamps:
    """Source and allocation stamps of one batch: given, or detected once and shared by every
    record (as plain dicts, dumped once: pydantic serialisation per record cost a quarter of a
    bulk add). A source that cannot be stamped is reported once, beside the records' problems."""

    def __init__(self, ledger: Ledger, stamping: Stamping, problems: list[Problem]) -> None:
        self.ledger = ledger
        self.stamping = stamping
        self.problems = problems
        self._source: dict[str, Any] | None = None
        self._source_failed = False
        self._allocation: dict[str, Any] | None = None

    def apply(self, body: dict[str, Any]) -> dict[str, Any]:
        stamping = self.stamping
        if stamping.source is not None or (
            "source" not in body and not stamping.no_source and not body.get("source_unknown")
        ):
            body["source"] = self.source()
        if stamping.allocation is not None or "allocation" not in body:
            body["allocation"] = self.allocation()
        elif isinstance(body["allocation"], dict):
            alloc = dict(body["allocation"])
            if stamping.overrides.id:
                alloc["id"] = stamping.overrides.id
            if stamping.overrides.topology:
                alloc["topology"] = stamping.overrides.topology
            body["allocation"] = alloc
        return body

    def source(self) -> dict[str, Any] | None:
        if self._source is None and not self._source_failed:
            stamping = self.stamping
            if stamping.source is not None:
                self._source = stamping.source.model_dump(mode="json", exclude_none=True)
                return self._source
            try:
                self._source = source_stamp(
                    stamping.source_path or (self.ledger.root / self.ledger.config.source),
                    exclude=self.ledger.records_dir,
                ).model_dump(mode="json", exclude_none=True)
            except InputError as exc:
                self._source_failed = True
                self.problems.extend(exc.problems)
        return self._source

    def allocation(self) -> dict[str, Any]:
        if self._allocation is None:
            stamping = self.stamping
            given = stamping.allocation or detect_allocation(overrides=stamping.overrides)
            self._allocation = given.model_dump(mode="json", exclude_none=True)
        return self._allocation


_FLATTEN = "flatten the record; records are a few levels deep"
_SHA_LINE = len(sha_line("0" * 64)) - 1


def _item_problem(item: Item, field: str, message: str, fix: str, number: int | None = None) -> Problem:
    place = (item.where_of(field) if field else item.where) or (f"record {number}" if number else "")
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
    return [data for data, _ in seal_encoded(records, items, limits)]


def seal_encoded(
    records: list[Envelope], items: list[Item], limits: Limits | None = None
) -> list[tuple[dict[str, Any], bytes]]:
    """`seal_records`, each sealed dict with the bytes of its file: every record is
    encoded once, for its hash and its file."""
    limits = limits or Limits()
    problems: list[Problem] = []
    sealed: list[tuple[dict[str, Any], bytes]] = []
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
        digest = hashlib.sha256(raw).hexdigest()
        file_bytes = with_hash(data, raw, digest)
        data["sha256"] = digest
        sealed.append((data, file_bytes))
    if problems:
        raise InputError(f"{len(problems)} problem(s); nothing was written", problems)
    return sealed


def check_references(ledger: Ledger, records: list[Envelope], items: list[Item]) -> None:
    """Every reference of `records` resolves to one of them or to a record in the ledger."""
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


class Batch:
    """Records staged for one all-or-nothing write; made by `Ledger.batch()`.

    `add` validates and stamps records (raising InputError, with nothing staged, when any
    is wrong) and gives them their ids, so later records of the batch can point at them.
    `commit` (called when the `with` block ends) checks every reference, seals the records
    and writes them in one atomic `Ledger.write`; afterwards `records` are the sealed
    records and `paths` their files.
    """

    def __init__(self, ledger: Ledger, stamping: Stamping | None = None, *, now: datetime | None = None) -> None:
        self.ledger = ledger
        self.stamping = stamping or Stamping()
        self.now = now
        self.records: list[Envelope] = []
        self.items: list[Item] = []
        self.paths: list[Path] = []
        self.written = False

    def add(self, kind: str, items: list[Item], stamping: Stamping | None = None) -> list[Envelope]:
        """Validate and stamp ITEMS as records of KIND; they are written when the batch commits."""
        records = prepare(self.ledger, kind, items, stamping or self.stamping, now=self.now)
        self.records.extend(records)
        self.items.extend(items)
        return records

    def add_one(self, kind: str, data: dict[str, Any], where: str = "<api>") -> Envelope:
        return self.add(kind, [Item(data, where, None)])[0]

    def commit(self, *, durable: bool = True, dry_run: bool = False) -> list[Envelope]:
        if self.written:
            raise RuntimeError("this batch was already written")
        check_references(self.ledger, self.records, self.items)
        # Refused here, nothing written: no canonical form, deeper or larger than readers accept.
        sealed = seal_encoded(self.records, self.items, Limits.of(self.ledger.config.rules))
        self.records = [r.model_copy(update={"sha256": d["sha256"]}) for r, (d, _) in zip(self.records, sealed)]
        if not dry_run:
            staged = [
                Staged(data, raw, model, (item.file, item.where or ""))
                for (data, raw), model, item in zip(sealed, self.records, self.items)
            ]
            self.paths = self.ledger.write_staged(staged, durable=durable, references_checked=True)
        self.written = True
        return self.records


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
    with ledger.batch(stamping, now=now, durable=durable) as batch:
        batch.add(kind, items)
    return batch.records


def add_one(ledger: Ledger, kind: str, data: dict[str, Any], stamping: Stamping | None = None, **kw: Any) -> Envelope:
    """API convenience: add one record given as a dict."""
    return add(ledger, kind, [Item(data, "<api>", None)], stamping, **kw)[0]


__all__ = [
    "Batch",
    "Stamping",
    "add",
    "add_one",
    "prepare",
    "seal_record",
    "seal_records",
    "seal_encoded",
    "check_references",
    "ENVELOPE_FIELDS",
]
