"""What every importer shares: drafts, the all-or-nothing import, and precise parse errors."""

from __future__ import annotations

import functools
import importlib
import json
import math
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from ..git import Git
from ..schema.envelope import Envelope
from ..store.add import Batch, Stamping
from ..store.decode import GZIP_MAGIC, NESTED, GzipProblem, OutOfRange, inflate_stream, json_float, json_int
from ..store.inputs import Item
from ..store.ledger import Ledger
from ..store.limits import MAX_INFLATED_BYTES, MAX_INPUT_BYTES, Limits
from . import FORMATS


@dataclass
class Draft:
    """One record an importer wants to write, with where in the file it came from.

    `handle` names the draft so another draft can point at it before ids exist;
    `refs` maps a field (dotted for nested, e.g. `extra.runs`) to one handle or a list.
    """

    kind: str
    data: dict[str, Any]
    file: str
    line: int | None = None
    handle: str | None = None
    refs: dict[str, str | list[str]] = field(default_factory=dict)
    #: What the file calls this result (a benchmark, a test suite), named in every problem.
    label: str | None = None
    #: Record field -> the key path in the file it came from, so a problem names the file's key.
    keys: dict[str, str] = field(default_factory=dict)


@dataclass
class ImportOptions:
    """What the command line adds to every imported record."""

    contract: str | None = None  # record id of the contract the results were measured under
    source_sha: str | None = None  # fills a provenance gap explicitly; never overrides the file
    allocation: str | None = None
    topology: str | None = None
    tags: list[str] = field(default_factory=list)
    # Gates only: what a result file does not hold.
    exit_code: int | None = None
    load_avg: list[float] = field(default_factory=list)
    command: str | None = None
    #: The repository the files' commits belong to (URL or name); see `sources:` in ledger.yaml.
    source_repo: str | None = None
    #: Filled by the importers: files skipped, and what the user should know (printed by the command).
    notes: list[str] = field(default_factory=list)
    #: Filled by the importers: the repository a format's files name (asv.conf.json, a project name).
    found_repo: str | None = None


@dataclass
class ImportResult:
    fmt: str
    records: list[Envelope]
    written: bool
    notes: list[str] = field(default_factory=list)
    #: Repository -> commits of the records that do not resolve in the ledger's own source checkout.
    foreign: dict[str, list[str]] = field(default_factory=dict)


#: Most characters of a file's value a refusal quotes (a track_* result can be megabytes).
QUOTE_CHARS = 200


def shown(value: Any, limit: int = QUOTE_CHARS) -> str:
    """`repr(value)`, cut to `limit` characters with how long it was."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def fail(file: str | Path, where: str, message: str, fix: str) -> InputError:
    """The error for a file that is not the format it claims. Raise it; nothing is written.
    A message longer than a few hundred characters (a value quoted whole) is cut."""
    if len(message) > 3 * QUOTE_CHARS:
        message = f"{message[: 3 * QUOTE_CHARS]}... ({len(message):,} characters)"
    return InputError(
        f"{file} is not a valid file of this format; nothing was written", [Problem(str(file), where, message, fix)]
    )


#: Most bytes an import reads from one file, and most a compressed one inflates to (rule
#: `parse-limits`, max_input_bytes and max_inflated_bytes): import_files sets them from the
#: ledger's config while the importer parses (`input_limit`).
INPUT_LIMIT: ContextVar[tuple[int, int]] = ContextVar("INPUT_LIMIT", default=(MAX_INPUT_BYTES, MAX_INFLATED_BYTES))


@contextmanager
def input_limit(limit: int, inflated: int = MAX_INFLATED_BYTES) -> Iterator[None]:
    """Read input files up to `limit` bytes, inflating compressed ones up to `inflated` bytes,
    within the block (then the limits before it)."""
    token = INPUT_LIMIT.set((limit, inflated))
    try:
        yield
    finally:
        INPUT_LIMIT.reset(token)


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed when it is gzip (pyperf and pyperformance write `.json.gz`).

    The file may not exceed the input limit, nor what it inflates to the lower of the inflate
    limit and the input limit, counted as the bytes come (`inflate_stream`): a small gzip that inflates to gigabytes is refused at
    the cap, never read whole."""
    limit, inflated = INPUT_LIMIT.get()

    def raise_it(setting: str, value: int) -> str:
        return (
            f"raise `rules: {{parse-limits: {{{setting}: N}}}}` in ledger.yaml if the file is genuine "
            f"(now {value:,} bytes)"
        )

    try:
        with open(path, "rb") as handle:
            if handle.read(2) == GZIP_MAGIC:
                handle.seek(0)
                # What it inflates to is input too: never more than either cap.
                cap, setting = (inflated, "max_inflated_bytes") if inflated <= limit else (limit, "max_input_bytes")
                try:
                    return inflate_stream(handle, cap, read_limit=limit)
                except GzipProblem as exc:
                    if exc.compressed:
                        raise fail(
                            path, "", f"is larger than {limit:,} bytes", raise_it("max_input_bytes", limit)
                        ) from None
                    if exc.too_big:
                        raise fail(
                            path,
                            "",
                            f"decompresses to more than {cap:,} bytes, the cap on what a compressed file "
                            f"inflates to (rule parse-limits, {setting})",
                            raise_it(setting, cap),
                        ) from None
                    raise fail(
                        path,
                        "",
                        f"is gzip but does not decompress: {exc}",
                        "give the .gz file the tool wrote, complete (`gzip -t FILE` checks it)",
                    ) from None
            handle.seek(0)
            raw = handle.read(limit + 1)
    except FileNotFoundError:
        raise InputError("no such file", [Problem(str(path), "", "no such file", "check the path")]) from None
    except IsADirectoryError:
        raise InputError(
            "a folder", [Problem(str(path), "", "is a folder, not a file", "give the result file itself")]
        ) from None
    if len(raw) > limit:
        raise fail(path, "", f"is larger than {limit:,} bytes", raise_it("max_input_bytes", limit))
    return raw


def read_text(path: Path) -> str:
    raw = read_bytes(path)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        with open(path, "rb") as handle:
            what = "its decompressed text" if handle.read(2) == GZIP_MAGIC else "the file"
        raise InputError(
            "not UTF-8",
            [
                Problem(
                    str(path),
                    f"byte {exc.start}",
                    f"{what} is not UTF-8 text",
                    "give the file the tool wrote, unchanged",
                )
            ],
        ) from None


def read_json(path: Path, fmt: str, *, allow_nan: bool = False) -> Any:
    """Parse a JSON result file; a syntax error names its line and column."""
    text = read_text(path)

    def _constant(token: str) -> float:
        raise ValueError(token)

    try:
        if allow_nan:
            return json.loads(text, parse_int=json_int, parse_float=json_float)
        return json.loads(text, parse_constant=_constant, parse_int=json_int, parse_float=json_float)
    except json.JSONDecodeError as exc:
        raise fail(
            path,
            f"line {exc.lineno}, column {exc.colno}",
            f"does not parse as JSON: {exc.msg}",
            f"give the JSON file {fmt} wrote, unchanged",
        ) from None
    except OutOfRange as exc:
        at = text.find(exc.token)
        where = f"line {text.count(chr(10), 0, at) + 1}" if at >= 0 else ""
        raise fail(path, where, f"holds {exc}", f"{fmt} does not write such a number; give the file it wrote") from None
    except ValueError as exc:
        at = text.find(str(exc))
        where = f"line {text.count(chr(10), 0, at) + 1}" if at >= 0 else ""
        raise fail(
            path, where, f"holds the non-number {exc}", f"{fmt} does not write {exc}; give the file it wrote"
        ) from None
    except RecursionError:
        fix = f"{fmt} does not nest its JSON that deep; give the file it wrote"
        raise fail(path, f"line {deep_line(text)}", NESTED, fix) from None


_JSON_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|[\[\]{}]')


def deep_line(text: str, depth: int = 500) -> int:
    """The line where JSON text first nests `depth` lists or objects deep (1 when it never does)."""
    level = 0
    for token in _JSON_TOKEN.finditer(text):
        kind = token.group()
        if kind in "[{":
            level += 1
            if level >= depth:
                return text.count("\n", 0, token.start()) + 1
        elif kind in "]}":
            level -= 1
    return 1


def need(obj: Any, key: str, typ: type | tuple[type, ...], path: Path, where: str, fmt: str) -> Any:
    """obj[key], checked to be of `typ`; otherwise an error naming the key path."""
    here = f"key {where}.{key}" if where else f"key {key}"
    if not isinstance(obj, dict):
        raise fail(
            path,
            f"key {where or '(top level)'}",
            f"is {type(obj).__name__}, expected an object",
            f"this is not a {fmt} file",
        )
    if key not in obj:
        raise fail(path, here, "is missing", f"this is not a {fmt} file, or it was cut short")
    value = obj[key]
    if (
        not isinstance(value, typ)
        or isinstance(value, bool)
        and bool not in (typ if isinstance(typ, tuple) else (typ,))
    ):
        names = " or ".join(t.__name__ for t in (typ if isinstance(typ, tuple) else (typ,)))
        raise fail(path, here, f"is {type(value).__name__}, expected {names}", f"this is not a {fmt} file")
    return value


def source_from_commit(commit: Any, *, dirty: bool | None = None, what: str) -> tuple[dict[str, Any] | None, list[str]]:
    """A `source` stamp from a commit id a file carries, or the provenance gap saying why not."""
    if commit is None or (isinstance(commit, str) and not commit.strip()):
        return None, [f"{what} is missing or empty: the measured commit is unknown"]
    text = str(commit).strip().lower()
    if not all(c in "0123456789abcdef" for c in text) or not 7 <= len(text) <= 40:
        return None, [f"{what} {str(commit)[:60]!r} is not a git commit id: the measured commit is unknown"]
    source: dict[str, Any] = {"sha": text}
    if dirty:
        # The tool recorded uncommitted changes but not their diff.
        source["dirty"] = True
    return source, []


def measurement_draft(
    path: Path,
    data: dict[str, Any],
    extra: dict[str, Any],
    gaps: list[str],
    observed: str | None,
    source: dict[str, Any] | None,
    environment: str,
) -> Draft:
    """A benchmark result as a measurement draft: extra (with any provenance gaps), the
    time it was taken and its commit, pointing at the environment draft `environment`."""
    if gaps:
        extra = {**extra, "provenance_gaps": gaps}
    data["extra"] = {k: v for k, v in extra.items() if v is not None}
    if observed:
        data["observed_at"] = observed
    if source:
        data["source"] = source
    return Draft("measurement", data, str(path), None, refs={"environment": environment})


@dataclass
class Run:
    """What every result of one file shares: the environment draft it points at (by handle),
    its allocation, the measured commit and the provenance gaps, and when it ran if the file says."""

    handle: str
    allocation: dict[str, Any]
    source: dict[str, Any] | None
    gaps: list[str]
    observed: str | None = None


def environment_draft(path: Path, env: dict[str, Any], handle: str) -> Draft:
    """The environment draft of a file's machine, leaving out what the file does not say."""
    return Draft("environment", {k: v for k, v in env.items() if v is not None}, str(path), None, handle=handle)


def utc(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


#: Zone names that say UTC; any other trailing letters (IST, CET, PDT...) are an abbreviation
#: whose offset the text does not determine (IST is India, Ireland or Israel).
_UTC_NAMES = {"Z", "UTC", "GMT", "UT"}
_TRAILING_ZONE = re.compile(r"^(?P<body>.*\d)\s*(?P<zone>[A-Za-z]{1,5})$")


@dataclass
class When:
    """A time as a tool wrote it: the UTC instant when its zone is known, else the wall clock."""

    observed_at: str | None  # UTC ISO text, only when the instant is known
    measured_at: dict[str, Any] | None  # {"local": ..., "zone": "unknown" | abbreviation, "why": ...}


def parse_time(
    value: Any, path: Path, where: str, *, naive: str, tool: str, writes: str = "a date, or seconds since 1970"
) -> When:
    """A tool's time: epoch seconds or milliseconds, or text with or without a zone.

    `naive` says what the tool's documentation or code makes a time without a zone:
    "utc" (pytest-benchmark's `utcnow()`), or "local" (pyperf, pytest's and TestNG's
    timestamps: the measuring machine's wall clock, zone not recorded). A local time is
    kept as written with `zone: unknown` and never stored as UTC. `writes` says what the
    tool writes there, for the error when the value is none of these.
    """
    if value is None or value == "":
        return When(None, None)
    fix = f"{tool} writes {writes} there; give the file {tool} wrote, unchanged"
    if isinstance(value, str) and _EPOCH_TEXT.fullmatch(value.strip()):
        # Epoch seconds or milliseconds written as text (Playwright's junit reporter: "1641057782965").
        value = float(value.strip())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = shown(value, 40)
        try:
            if math.isfinite(value):
                return _epoch_time(value)
        except (OverflowError, OSError, ValueError):  # past the year 9999, or beyond a float
            raise fail(path, where, f"is {number}, a time outside the years 1 to 9999", fix) from None
        raise fail(path, where, f"is {number}, not a time", fix)
    if not isinstance(value, str):
        raise fail(path, where, f"is {shown(value)}, expected a date", fix)
    text = value.strip()
    dt, zone = _read_date_text(text)
    if dt is None:
        raise fail(path, where, f"{shown(value)} is not a date", fix)
    try:
        return _instant_or_wall_clock(dt, zone, text, naive=naive, tool=tool)
    except OverflowError:
        raise fail(path, where, f"{value!r} is a time after the year 9999 in UTC", fix) from None


#: A time written as a bare number: epoch seconds or milliseconds (never a year alone: 9+ digits).
_EPOCH_TEXT = re.compile(r"[0-9]{9,}(?:\.[0-9]+)?")


def _epoch_time(value: float) -> When:
    """Epoch seconds, or milliseconds when the number is too large to be seconds; 0 or less is no time."""
    if value <= 0:
        return When(None, None)
    seconds = value / 1000.0 if value > 1e11 else float(value)
    return When(utc(datetime.fromtimestamp(seconds, tz=UTC)), None)


def _read_date_text(text: str) -> tuple[datetime | None, str | None]:
    """The date a text holds and the zone name written after it, if any: ISO 8601, ISO followed
    by a zone abbreviation (TestNG's `... IST`), or an e-mail date (`12 Aug 2023 07:42:36 GMT`)."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text), None
    except ValueError:
        pass
    zone = None
    dt = None
    match = _TRAILING_ZONE.match(text)
    if match:
        zone = match.group("zone").upper()
        try:
            dt = datetime.fromisoformat(match.group("body").strip())
        except ValueError:
            dt = None
    if dt is None:
        try:
            dt = parsedate_to_datetime(text)  # Java's toGMTString
            zone = None if dt.tzinfo is not None else zone
        except (TypeError, ValueError, IndexError):
            dt = None
    return dt, zone


def _instant_or_wall_clock(dt: datetime, zone: str | None, text: str, *, naive: str, tool: str) -> When:
    """A read date as a UTC instant when its zone is known, else as the wall clock it was written in."""
    if dt.year <= 1:
        # Go's zero time (gotestsum writes 0001-01-01T00:00:00Z): no time was recorded.
        return When(None, {"as_written": text, "zone": "none", "why": "year 1 is Go's zero time: no time recorded"})
    if dt.tzinfo is not None:
        return When(utc(dt), None)
    if zone in _UTC_NAMES:
        return When(utc(dt.replace(tzinfo=UTC)), None)
    if zone is not None:
        return When(
            None,
            {
                "local": dt.isoformat(),
                "zone": f"unknown ({zone}: an abbreviation whose offset the file does not determine)",
                "as_written": text,
            },
        )
    if naive == "utc":
        return When(utc(dt.replace(tzinfo=UTC)), None)
    return When(
        None,
        {
            "local": dt.isoformat(),
            "zone": "unknown",
            "why": f"{tool} writes the measuring machine's local time without its zone",
        },
    )


def parse_date(
    value: Any, path: Path, where: str, *, tool: str = "the tool", writes: str = "a date, or seconds since 1970"
) -> str | None:
    """A date with a known zone (epoch, or ISO text with an offset) as UTC ISO text; naive means UTC."""
    return parse_time(value, path, where, naive="utc", tool=tool, writes=writes).observed_at


def place_time(data: dict[str, Any], when: When) -> None:
    """Put a parsed time on a record: observed_at when the instant is known, else extra.measured_at."""
    if when.observed_at:
        data["observed_at"] = when.observed_at
    elif when.measured_at:
        data.setdefault("extra", {})["measured_at"] = when.measured_at


# -- paths ----------------------------------------------------------------------------------

_HOME = os.path.expanduser("~")


@functools.lru_cache(maxsize=4096)
def record_path(path: str | Path) -> str:
    """A file's path as a record may hold it: relative to the working folder, never an
    absolute path of the importing machine (outside the working folder: its last three parts)."""
    p = Path(path)
    if not p.is_absolute():
        return p.as_posix()
    try:
        return p.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):
        return "/".join(p.parts[-3:])


def scrub_paths(value: Any, cwd: str | None = None) -> Any:
    """Replace the importing machine's working folder and home folder in strings by `.` and `~`."""
    if cwd is None:
        cwd = os.getcwd()
    kind = type(value)
    if kind is float or kind is int or kind is bool or value is None:
        return value
    if kind is str:
        if cwd != "/" and cwd in value:
            value = value.replace(cwd + os.sep, "./").replace(cwd, ".")
        if _HOME not in ("", "/") and _HOME in value:
            value = value.replace(_HOME, "~")
        return value
    if kind is dict:
        return {k: scrub_paths(v, cwd) for k, v in value.items()}
    if kind is list:
        if value and all(type(v) is float for v in value):
            return value  # samples
        return [scrub_paths(v, cwd) for v in value]
    return value


# -- foreign provenance ------------------------------------------------------------------------


def foreign_labels(ledger: Ledger, shas: list[str], options: ImportOptions, fmt: str) -> dict[str, str]:
    """sha -> the repository it belongs to, for imported commits that are not the ledger's own.

    A commit that resolves in the ledger's source checkout (config `source`) is the ledger's
    own and gets no label. Any other belongs to the repository given with --source-repo, or
    the one the files name, or `unknown:FORMAT`; `source.repo` records it, and `ledger check`
    verifies it against `sources:` in ledger.yaml or reports it, once, as unverifiable.
    """

    shas = sorted(set(shas))
    if not shas:
        return {}
    if options.source_repo:
        return {sha: options.source_repo for sha in shas}
    resolved: dict[str, str | None] = {}
    own = Git((ledger.root / ledger.config.source).resolve())
    if own.is_repo():
        resolved = own.resolve_commits(shas)
    label = options.found_repo or f"unknown:{fmt}"
    return {sha: label for sha in shas if not resolved.get(sha)}


def import_files(
    ledger: Ledger,
    fmt: str,
    paths: Sequence[Path | str],
    options: ImportOptions | None = None,
    *,
    dry_run: bool = False,
) -> ImportResult:
    """Parse FILES as `fmt`, validate every record, then write all of them or none."""

    options = options or ImportOptions()
    if fmt not in FORMATS:
        raise InputError(
            f"unknown format {fmt!r}",
            [Problem("<command line>", "FORMAT", f"unknown format {fmt!r}", "use one of: " + ", ".join(FORMATS))],
        )
    if not paths:
        raise InputError(
            "no file", [Problem("<command line>", "FILE", "no file given", f"give one or more {fmt} files")]
        )
    module = importlib.import_module(FORMATS[fmt])
    limits = Limits.of(ledger.config.rules)
    with input_limit(limits.max_input_bytes, limits.max_inflated_bytes):
        drafts: list[Draft] = module.parse([Path(p) for p in paths], options)
    if not drafts:
        raise InputError(
            "nothing to import",
            [Problem(str(paths[0]), "", "holds no result", f"give a {fmt} file with at least one result")],
        )
    if all(d.kind == "environment" for d in drafts):
        # An empty benchmark list: the machine alone is no result (and a record nothing points at).
        raise InputError(
            "nothing to import",
            [
                Problem(
                    d.file,
                    "",
                    "holds no result, only the machine it ran on",
                    f"give the {fmt} file of a run that measured",
                )
                for d in drafts
            ],
        )
    if options.contract:
        options.contract = ledger.resolve_id(options.contract)
    shas = [d.data["source"]["sha"] for d in drafts if isinstance(d.data.get("source"), dict)]
    if options.source_sha:
        shas.append(options.source_sha.strip().lower())
    labels = foreign_labels(ledger, shas, options, fmt)
    # Refused like `ledger add` when the batch commits: no canonical form (integers beyond 64
    # bits), too deep, too large; sealed (and so checked) on a dry run too.
    with ledger.batch(Stamping(no_source=True), now=datetime.now(UTC), dry_run=dry_run) as batch:
        _stage(batch, drafts, options, labels)
    records = batch.records
    foreign: dict[str, list[str]] = {}
    for r in records:
        if r.source is not None and r.source.repo and r.source.sha in labels:
            foreign.setdefault(r.source.repo, [])
            if r.source.sha not in foreign[r.source.repo]:
                foreign[r.source.repo].append(r.source.sha)
    return ImportResult(fmt, records, written=not dry_run, notes=list(options.notes), foreign=foreign)


def _stage(batch: Batch, drafts: list[Draft], options: ImportOptions, labels: dict[str, str]) -> None:
    """Add every draft to the batch, each once what it points at has an id; every problem of
    every draft is reported together."""
    cwd = os.getcwd()  # local paths under it are scrubbed from what the importers read
    ids: dict[str, str] = {}
    problems: list[Problem] = []
    pending = list(range(len(drafts)))
    # Drafts are prepared once what they point at has an id; importers only nest one or two deep.
    while pending:
        ready = [i for i in pending if all(_handles_known(v, ids) for v in drafts[i].refs.values())]
        if not ready:
            raise RuntimeError("importer drafts refer to each other in a cycle")  # a bug, not bad input
        for i in ready:
            draft = drafts[i]
            data = _finish(draft, ids, options, labels, cwd)
            try:
                [record] = batch.add(draft.kind, [Item(data, draft.file, draft.line)])
            except InputError as exc:
                problems.extend(_in_file_terms(draft, p) for p in exc.problems)
                record = None
            if record is not None and draft.handle:
                ids[draft.handle] = record.id
            elif draft.handle:
                ids[draft.handle] = "0" * 26  # placeholder so dependants still report their own problems
        pending = [i for i in pending if i not in ready]
    if problems:
        problems = list(dict.fromkeys(problems))  # one problem once, however many drafts share it
        raise InputError(f"{len(problems)} problem(s); nothing was written", problems)


def _handles_known(value: str | list[str], ids: dict[str, str]) -> bool:
    return all(h in ids for h in ([value] if isinstance(value, str) else value))


_FIELD_RE = re.compile(r"(?:field )?(?P<field>[A-Za-z_]+)(?P<rest>(?:\[\d+\]|\.[A-Za-z_]+)*)")


def _in_file_terms(draft: Draft, problem: Problem) -> Problem:
    """A record-level problem restated in the file's terms: its key path and the result's name."""
    where = problem.where
    match = _FIELD_RE.fullmatch(where.strip()) if where else None
    if match and match.group("field") in draft.keys:
        where = f"key {draft.keys[match.group('field')]}{match.group('rest')}"
    elif draft.line and not where.startswith("line"):
        where = f"line {draft.line}" + (f", {where}" if where else "")
    message = f"{draft.label}: {problem.message}" if draft.label else problem.message
    return Problem(draft.file, where, message, problem.fix or "give the file the tool wrote, unchanged")


def _finish(
    draft: Draft, ids: dict[str, str], options: ImportOptions, labels: dict[str, str], cwd: str
) -> dict[str, Any]:
    data = json.loads(json.dumps(draft.data))  # a private copy: drafts stay as parsed
    for dotted, handle in draft.refs.items():
        target = data
        *parents, last = dotted.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[last] = ids[handle] if isinstance(handle, str) else [ids[h] for h in handle]
    if "source" not in data and options.source_sha:
        data["source"] = {"sha": options.source_sha}
        gaps = data.get("extra", {}).get("provenance_gaps")
        if gaps:
            data["extra"]["provenance_gaps"] = [g + " (filled from --source-sha)" for g in gaps]
    source = data.get("source")
    if isinstance(source, dict) and str(source.get("sha", "")).strip().lower() in labels:
        source["repo"] = labels[str(source["sha"]).strip().lower()]
    if draft.kind in ("measurement", "gate") and isinstance(data.get("extra", {}), dict):
        data.setdefault("extra", {})["imported_from"] = record_path(draft.file)
    data = scrub_paths(data, cwd)
    alloc = data.get("allocation")
    if isinstance(alloc, dict):
        if options.allocation:
            alloc["id"] = options.allocation
        if options.topology:
            alloc["topology"] = options.topology
    elif options.allocation:
        data["allocation"] = {
            "id": options.allocation,
            "scheduler": "import",
            **({"topology": options.topology} if options.topology else {}),
        }
    data.setdefault("allocation", None)
    if options.contract and draft.kind == "measurement":
        data["contract"] = options.contract
    if options.tags:
        data["tags"] = sorted(set(data.get("tags", [])) | set(options.tags))
    return data
