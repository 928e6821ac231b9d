"""Record rules: schema validity, an intact content hash, unique ids and keys, and every
SHA and record reference resolving. `inspect_file` checks one file's bytes on its own
(it runs in worker processes for whole-ledger checks); the cross-record rules run on the
small `Info` it returns."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson
from pydantic import ValidationError

from ..analysis.figures import uncertainty_percent
from ..redact import find_secrets
from ..schema.migrate import FormatError, upgrade
from ..schema.registry import validate_record
from ..store.canonical import NotCanonical, canonical_bytes, content_hash, hash_of_file
from ..store.ids import id_seconds
from ..store.ledger import shard_of
from ..store.limits import MAX_DEPTH, MAX_INFLATED_BYTES, MAX_INPUT_BYTES, MAX_YAML_ALIASES, canonical_too_deep
from .artifacts import binary_reason, find_conflicts, readable
from .comparability import verdict_problem
from .derived import figures_of
from .derived import record_problems as derived_problems
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
        "Keys that must be unique across the ledger are: issue numbers, contract names. "
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
        ERROR,
        "Records name commits of another repository (source.repo) that `sources:` in ledger.yaml "
        "does not declare, and that do not resolve in the source checkout: nothing can verify them, "
        "so a made-up SHA labelled as another repository's would pass. An error, reported once per "
        "repository. A declared repository is verified in its clone (sha-resolves).",
        "Declare the repository in ledger.yaml, `sources: {REPO: PATH-OF-A-CLONE}`; `ledger check` "
        "then verifies its commits there whenever the clone is present.",
    ),
    Rule(
        "sha-unverified",
        "records",
        ERROR,
        "Records name commits of a repository that `sources:` in ledger.yaml declares, but its "
        "clone is not at the declared path here (a CI clone without it), so they cannot be verified "
        "in this checkout: an error, so that a made-up SHA behind a declared path that does not exist "
        "never passes a push or CI. Reported once per repository; where the clone is present they are "
        "verified (sha-resolves). Accepting unverified evidence is a recorded choice: lower the "
        "severity with a `ledger-config` note that names `sha-unverified` and `warning`.",
        "Clone the repository at the path `sources:` names (CI: check it out beside this one) so "
        "`ledger check` verifies its commits.",
    ),
    Rule(
        "canonical-bytes",
        "records",
        ERROR,
        "A record file's bytes are exactly the canonical serialisation of what they parse to "
        "(docs/guide/records.md): sorted keys, two-space indent, no duplicate keys, no `\\u` "
        "escapes of printable text, integers within 64 bits, finite numbers. Otherwise two readers "
        "can see two contents (a duplicate key: one keeps the first value, another the last) and "
        "an escaped token slips past the secret scan.",
        "Records are written by `ledger add` only: restore the file as written (`git checkout -- FILE`), "
        "or write the record again with `ledger add`.",
    ),
    Rule(
        "parse-limits",
        "records",
        ERROR,
        "A record nests deeper than `max_depth` levels; `ledger add` also refuses input larger "
        "than `max_input_bytes` and YAML that expands aliases more than `max_yaml_aliases` times; "
        "`ledger import` refuses a compressed file that inflates to more than `max_inflated_bytes`. "
        "No honest record comes near these limits; a hostile file must be reported, not crash a reader.",
        "Flatten the record (records are a few levels deep), or raise the limit under `rules: parse-limits:`.",
        {
            "max_depth": MAX_DEPTH,
            "max_input_bytes": MAX_INPUT_BYTES,
            "max_yaml_aliases": MAX_YAML_ALIASES,
            "max_inflated_bytes": MAX_INFLATED_BYTES,
        },
        {
            "max_depth": "Deepest nesting of objects and arrays in a record.",
            "max_input_bytes": "Largest input `ledger add` reads, in bytes.",
            "max_yaml_aliases": "Most alias uses a YAML input document may expand.",
            "max_inflated_bytes": "Most bytes a compressed import file (`.json.gz`) may inflate to.",
        },
    ),
    Rule(
        "supersedes-chain",
        "records",
        ERROR,
        "A correction chain is a chain: a record never supersedes itself, names a record once, "
        "and no chain of `supersedes` comes back to where it started (a cycle would leave no current record).",
        "Write a new correcting record with `ledger add` whose `supersedes` lists each corrected id once.",
    ),
    Rule(
        "correction-fork",
        "records",
        ERROR,
        "A record has at most one live correction: two records that both correct it (list it, or a "
        "correction of it, in `supersedes`) and that no record supersedes in turn fork it, so "
        "`ledger list`, `status` and the site would each pick one. Of any kind; two jobs that "
        "correct one measurement at the same moment are the usual cause.",
        "Write one correction that supersedes both live ones: a new record whose `supersedes` lists "
        "both ids, holding the figures that stand.",
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
    Rule(
        "record-time",
        "records",
        ERROR,
        "A record's times agree: the time in its id (a ULID) is its `created_at` within "
        "`id_skew_seconds`; `created_at` and `observed_at` are not before `earliest`, not after "
        "now (nor `observed_at` after `created_at`) by more than `future_seconds`; and on a push "
        "or --base, `created_at` is at most `future_seconds` after the commit that adds the record "
        "and at most `max_age_days` before it. Forged times (a record dated 2099 or 1970) would "
        "otherwise reorder the ledger and steer what the site calls current.",
        "Write records with `ledger add`, which sets the id and `created_at` from one clock; "
        "for old evidence keep `created_at` as the time of writing and put the time of the "
        "measurement in `observed_at`. Check the clock of the machine that wrote it.",
        {"id_skew_seconds": 60.0, "future_seconds": 86400.0, "earliest": "2000-01-01", "max_age_days": 365.0},
        {
            "id_skew_seconds": "Largest difference between the id's time and `created_at`.",
            "future_seconds": "Clock skew allowed: how far a time may lie after now or after the adding commit.",
            "earliest": "No `created_at` or `observed_at` before this date (ISO 8601).",
            "max_age_days": "Longest time between writing a record and committing it (push and --base).",
        },
        param_looser={"earliest": "lower"},
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


def _parse_problem(exc: Exception) -> tuple[str, str]:
    """(rule, message) for bytes orjson refuses."""
    text = str(exc)
    if "depth" in text or "ecursion" in text:
        return "parse-limits", "nests deeper than any JSON reader is asked to follow (over 1,024 levels)"
    if "infinity" in text:
        return "canonical-bytes", "holds a number that overflows a double (such as 1e999), which is not finite"
    if "surrogate" in text:
        return "canonical-bytes", "holds a lone UTF-16 surrogate escape, which is not Unicode text"
    return "schema-valid", f"is not JSON: {getattr(exc, 'msg', text)}"


def noncanonical_reason(raw: bytes, canonical: bytes) -> tuple[str, int | None]:
    """Why bytes differ from their canonical form, and the line (the failure path only)."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in items:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
        return dict(items)

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except _Duplicate as dup:
        hits = [m.start() for m in re.finditer(re.escape(json.dumps(dup.key).encode()) + rb"\s*:", raw)][:2]
        line = raw.count(b"\n", 0, hits[1]) + 1 if len(hits) > 1 else None
        message = f"repeats the key {dup.key!r} in one object: one JSON reader keeps the first value, another the last"
        return message, line
    except (ValueError, RecursionError):
        pass
    raw_lines, canon_lines = raw.split(b"\n"), canonical.split(b"\n")
    line = next(
        (n for n, (a, b) in enumerate(zip(raw_lines, canon_lines), start=1) if a != b),
        min(len(raw_lines), len(canon_lines)),
    )
    text = raw_lines[line - 1] if line - 1 < len(raw_lines) else b""

    if re.search(rb"(?:^|[:\[,]\s*)-?[0-9]{20,}\s*,?\s*$", text):
        return "writes an integer beyond 64 bits, which not every JSON reader reads exactly (write a float)", line
    if b"\\u" in text or b"\\/" in text:
        return "writes text as a `\\u` or `\\/` escape where the canonical form writes the character itself", line
    return "differs from the canonical serialisation (whitespace, key order, escapes or number form)", line


class _Duplicate(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _canonical_rules(display: str, raw: bytes, data: dict, rules: FileRules, out: list[Violation]) -> tuple[bool, bool]:
    """canonical-bytes and parse-limits on parsed bytes: (bytes are canonical, stop here).

    The bytes must be the canonical serialisation of what they parse to: one dumps of the
    parsed dict and a bytes compare (the hash then comes from the bytes, not a second dumps)."""
    try:
        canonical: bytes | None = canonical_bytes(data)
    except NotCanonical as exc:
        canonical = None
        if rules.on("canonical-bytes"):
            out.append(_v(rules, "canonical-bytes", display, exc.message, field=exc.field or None, fix=exc.fix))
        if "nests" in exc.message:
            return False, True
    is_canonical = canonical == raw
    if canonical is not None and not is_canonical:
        if rules.on("canonical-bytes"):
            message, line = noncanonical_reason(raw, canonical)
            out.append(_v(rules, "canonical-bytes", display, message, line=line))
        if rules.on("secrets"):
            # What a parser reads, escapes decoded: an escaped token is still a token.
            seen = {v.message for v in out if v.rule == "secrets"}
            for what, _ in find_secrets(canonical):
                if f"holds what looks like a {what}" not in seen:
                    out.append(_v(rules, "secrets", display, f"holds what looks like a {what} (written with escapes)"))
    max_depth = rules.params.get("parse-limits", {}).get("max_depth", MAX_DEPTH)
    if is_canonical and canonical_too_deep(raw, max_depth):
        if rules.on("parse-limits"):
            out.append(_v(rules, "parse-limits", display, f"nests deeper than {max_depth} levels"))
        return True, True
    return is_canonical, False


def inspect_file(path: str, raw: bytes, rules: FileRules) -> tuple[list[Violation], Info | None]:
    """Check one record file's bytes on their own. `path` is relative to the records folder
    (KIND/SHARD/ID.json) for the unique-id placement check."""
    display = rules.prefix + path
    out = inspect_artifact(display, raw, rules)
    if not path.endswith(".json"):
        return out, None  # an attachment: artifact rules only
    if any(v.rule == "record-size" for v in out):
        return out, None  # over the cap: not parsed at all
    data = _parse_object(display, raw, rules, out)
    if data is None:
        return out, None
    is_canonical, stop = _canonical_rules(display, raw, data, rules, out)
    if stop:
        return out, None
    if rules.on("content-hash"):
        _content_hash_rule(display, raw, data, is_canonical, rules, out)
    record = _validate_record(display, data, rules, out)
    kind = str(data.get("kind", ""))
    placement_rules(path, display, raw, data, kind, rules, out)
    if record is None:
        return out, None
    record_rules(display, record, kind, rules, out)
    return out, info_of(display, record)


def _parse_object(display: str, raw: bytes, rules: FileRules, out: list[Violation]) -> dict | None:
    """A record file's bytes parsed to a JSON object, or None when they are not one (reported once)."""
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        rule, message = _parse_problem(exc)
        if rules.on(rule):
            line = getattr(exc, "lineno", None) if rule == "schema-valid" else None
            out.append(_v(rules, rule, display, message, line=line))
        return None
    if not isinstance(data, dict):
        if rules.on("schema-valid"):
            out.append(_v(rules, "schema-valid", display, "is not a JSON object"))
        return None
    return data


def _content_hash_rule(
    display: str, raw: bytes, data: dict, is_canonical: bool, rules: FileRules, out: list[Violation]
) -> None:
    """content-hash: the record's `sha256` is the hash of its canonical content."""
    given = data.get("sha256")
    # Canonical bytes are hashed as they lie, without a second serialisation (the hot path);
    # other bytes, or a sha256 line out of its place, are hashed from the parsed record.
    actual = hash_of_file(raw, given) if is_canonical else None
    if actual is None:
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


def _validate_record(display: str, data: dict, rules: FileRules, out: list[Violation]) -> Any:
    """schema-valid: the record its kind's schema reads from `data` (upgraded to this ledger's
    format), or None when it does not validate."""
    try:
        return validate_record(upgrade(data))
    except FormatError as exc:
        if rules.on("schema-valid"):
            out.append(_v(rules, "schema-valid", display, str(exc), field="format_version", fix="upgrade ledger"))
    except ValidationError as exc:  # only what the schema says of the data: a bug in it raises
        if rules.on("schema-valid"):
            for err in exc.errors():
                out.append(
                    _v(
                        rules,
                        "schema-valid",
                        display,
                        str(err["msg"]).removeprefix("Value error, "),
                        field=_loc(tuple(err["loc"])) or None,
                    )
                )
    return None


def placement_rules(
    path: str, display: str, raw: bytes, data: dict, kind: str, rules: FileRules, out: list[Violation]
) -> None:
    """local-path and unique-id, on the parsed fields: they hold for a record that does not validate too."""
    if rules.on("local-path"):
        for where, text in local_paths(data, raw):
            out.append(_v(rules, "local-path", display, f"names a folder of one machine: {text!r}", field=where))
    if rules.on("unique-id"):
        record_id = str(data.get("id", ""))
        expected = f"{kind}/{shard_of(record_id) if record_id else '??'}/{record_id}.json"
        if path.split("/")[-3:] != expected.split("/"):
            out.append(
                _v(
                    rules,
                    "unique-id",
                    display,
                    f"a {kind or 'record'} with id {record_id or '(none)'} must be at {expected} under the records folder",
                    field="id",
                )
            )


def record_rules(display: str, record: Any, kind: str, rules: FileRules, out: list[Violation]) -> None:
    """The rules on a valid record's own fields: its supersedes chain, its times, a sandwich's verdict."""
    if rules.on("supersedes-chain") and record.supersedes:
        out.extend(_chain_problems(display, record, rules))
    if rules.on("record-time"):
        out.extend(_time_problems(rules, display, record))
    if kind == "sandwich" and rules.on("sandwich-verdict"):
        problem = verdict_problem(record)
        if problem:
            out.append(_v(rules, "sandwich-verdict", display, problem, field="verdict"))
    derived_problems(display, record, kind, rules, out)


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
        status=getattr(record, "status", None) if kind == "issue" else None,
        spread_percent=_spread(record) if kind == "measurement" else None,
        n=_runs(record) if kind == "measurement" else None,
        repo=source.repo if source is not None else None,
        family=getattr(record, "family", None),
        mechanism=getattr(record, "mechanism", None),
        verdict=getattr(record, "verdict", None) if kind in ("decision", "sandwich") else None,
        tried=tuple(getattr(record, "tried", ()) or ()) if kind == "decision" else (),
        evidence=tuple(getattr(record, "evidence", ()) or ()) if kind == "decision" else (),
        topology=record.allocation.topology if record.allocation is not None else None,
        comparable=bool(getattr(record, "comparable", True)),
        regate=bool(getattr(record, "regate", False)),
        health=getattr(record, "health", None) if kind == "measurement" else None,
        environment=getattr(record, "environment", None) if kind == "measurement" else None,
        when=record.when.isoformat(),
        created=record.created_at.timestamp(),
        tags=tuple(record.tags),
        figures=figures_of(record),
        parameters=_parameters(record, kind),
        name=getattr(record, "name", None) if kind == "contract" else None,
    )


def _parameters(record: Any, kind: str) -> tuple[tuple[str, Any], ...]:
    if kind == "measurement":
        return tuple(sorted(record.parameters.items()))
    if kind == "contract":
        swept = tuple((p.name, p.base) for p in record.sweep)
        return swept + tuple((f"unit:{p.name}", p.unit) for p in record.sweep if p.unit)
    return ()


def _earliest(text: str) -> float:
    when = datetime.fromisoformat(text)
    return (when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp()


def stamp_time(seconds: float) -> str:
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    except (OverflowError, OSError, ValueError):
        return f"{seconds:.0f} s since 1970"


def _time_problems(rules: FileRules, path: str, record: Any) -> list[Violation]:
    """`record-time` on one record's own fields, against the id and the clock."""
    params = rules.params["record-time"]
    out: list[Violation] = []
    created = record.created_at.timestamp()
    observed = record.observed_at.timestamp() if record.observed_at is not None else None
    skew, future = float(params["id_skew_seconds"]), float(params["future_seconds"])
    from_id = id_seconds(record.id)
    if from_id is not None and abs(from_id - created) > skew:
        out.append(
            _v(
                rules,
                "record-time",
                path,
                f"the id's time {stamp_time(from_id)} and created_at {stamp_time(created)} differ by "
                f"{abs(from_id - created):,.0f} s (more than {skew:g} s)",
                field="created_at",
            )
        )
    try:
        floor = _earliest(str(params["earliest"]))
    except ValueError:
        floor = _earliest("2000-01-01")
    limit = time.time() + future
    for name, value in (("created_at", created), ("observed_at", observed)):
        if value is None:
            continue
        if value < floor:
            out.append(
                _v(rules, "record-time", path, f"{name} {stamp_time(value)} is before {params['earliest']}", field=name)
            )
        elif value > limit:
            out.append(_v(rules, "record-time", path, f"{name} {stamp_time(value)} is in the future", field=name))
    if observed is not None and observed > created + future:
        out.append(
            _v(
                rules,
                "record-time",
                path,
                f"observed_at {stamp_time(observed)} is after created_at {stamp_time(created)}: evidence is observed before it is written",
                field="observed_at",
            )
        )
    return out


def _runs(record: Any) -> int | None:
    if getattr(record, "n", None) is not None:
        return int(record.n)
    return len(record.samples) if record.samples else None


def _spread(record: Any) -> float | None:
    return uncertainty_percent(record.samples, record.median, record.min, record.max)


def _chain_problems(display: str, record: Any, rules: FileRules) -> list[Violation]:
    """A record that supersedes itself or lists an id twice (cycles are cross-record: `supersedes_cycle`)."""
    out = []
    seen: set[str] = set()
    for i, ref in enumerate(record.supersedes):
        if ref == record.id or ref in seen:
            what = "names the record itself" if ref == record.id else f"lists {ref} twice"
            out.append(_v(rules, "supersedes-chain", display, f"supersedes {what}", field=f"supersedes[{i}]"))
        seen.add(ref)
    return out


def supersedes_cycles(starts: list[Info], lookup) -> list[tuple[Info, list[str]]]:
    """Every `supersedes` cycle reachable from `starts`, once each: (the first of `starts` on
    it, the ids of the cycle from that record). Records `lookup` does not know end a chain.

    One walk of the graph (Tarjan's strongly connected components, iterative), so a chain of
    n corrections costs n steps. Before, each record walked its whole chain back: a ledger of
    1,200 notes each superseding the one before took 720,600 steps and 13.5 s of `check --all`."""
    known: dict[str, Info] = {}
    for info in starts:
        known.setdefault(info.id, info)

    def info_of(rid: str) -> Info | None:
        if rid not in known:
            found = lookup(rid)
            if found is None:
                return None
            known[rid] = found
        return known[rid]

    def refs_of(rid: str) -> list[str] | None:
        info = info_of(rid)
        return None if info is None else _superseded(info)

    # Nearly every record supersedes nothing, so it closes no cycle and starts no walk.
    components = _components([info.id for info in starts if _superseded(info)], refs_of)
    order = {info.id: n for n, info in reversed(list(enumerate(starts)))}
    out = []
    for component in components:
        members = set(component)
        head = min((m for m in component if m in order), key=order.__getitem__, default=None)
        if head is None:
            continue
        cycle = _cycle_through(head, members, info_of)
        if cycle:
            out.append((known[head], cycle))
    out.sort(key=lambda found: order[found[0].id])
    return out


def _components(roots: list[str], refs_of) -> list[list[str]]:
    """The strongly connected components reachable from `roots` (Tarjan's, iterative): a
    record `refs_of` does not know (None) is no node."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def enter(rid: str, refs: list[str]) -> tuple[str, Iterator[str]]:
        index[rid] = low[rid] = len(index)
        stack.append(rid)
        on_stack.add(rid)
        return rid, iter(refs)

    for root in roots:
        if root in index:
            continue
        work = [enter(root, refs_of(root) or [])]
        while work:
            node, refs = work[-1]
            nxt = next(refs, None)
            if nxt is not None:
                if nxt not in index:
                    later = refs_of(nxt)
                    if later is not None:
                        work.append(enter(nxt, later))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while not component or component[-1] != node:
                    component.append(stack.pop())
                    on_stack.discard(component[-1])
                components.append(component)
    return components


def _cycle_through(head: str, members: set[str], info_of) -> list[str]:
    """The ids of a shortest `supersedes` cycle from `head` back to it within one component
    (breadth first), or [] when the component is one record that does not supersede itself."""
    parent: dict[str, str] = {}
    frontier = [head]
    while frontier:
        later = []
        for node in frontier:
            info = info_of(node)
            for ref in _superseded(info) if info is not None else ():
                if ref == head:
                    path = [node]
                    while path[-1] != head:
                        path.append(parent[path[-1]])
                    return path[::-1]
                if ref in members and ref not in parent:
                    parent[ref] = node
                    later.append(ref)
        frontier = later
    return []


def _superseded(info: Info) -> list[str]:
    return [ref for where, ref in info.refs if where.startswith("supersedes[")]


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
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    for rel in paths:
        # The walk saw a regular file; O_NOFOLLOW refuses one swapped for a link since.
        try:
            fd = os.open(os.path.join(root, rel), flags)
        except OSError:
            batch.append((rel, b""))  # swapped for a link or removed since the walk: not read, refused
            continue
        try:
            with os.fdopen(fd, "rb", closefd=False) as fh:
                batch.append((rel, fh.read()))
        finally:
            os.close(fd)
    return inspect_batch(batch, rules)
