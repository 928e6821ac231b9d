"""What every importer shares: drafts, the all-or-nothing import, and precise parse errors."""

from __future__ import annotations

import importlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from ..schema.envelope import Envelope
from ..store.add import Stamping, check_references, prepare, seal_record
from ..store.inputs import Item
from ..store.ledger import Ledger


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


@dataclass
class ImportResult:
    fmt: str
    records: list[Envelope]
    written: bool


def fail(file: str | Path, where: str, message: str, fix: str) -> InputError:
    """The error for a file that is not the format it claims. Raise it; nothing is written."""
    return InputError(
        f"{file} is not a valid file of this format; nothing was written", [Problem(str(file), where, message, fix)]
    )


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", [Problem(str(path), "", "no such file", "check the path")]) from None
    except IsADirectoryError:
        raise InputError(
            "a folder", [Problem(str(path), "", "is a folder, not a file", "give the result file itself")]
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            "not UTF-8",
            [Problem(str(path), f"byte {exc.start}", "is not UTF-8 text", "give the file the tool wrote, unchanged")],
        ) from None


def read_json(path: Path, fmt: str, *, allow_nan: bool = False) -> Any:
    """Parse a JSON result file; a syntax error names its line and column."""
    text = read_text(path)

    def _constant(token: str) -> float:
        raise ValueError(token)

    try:
        if allow_nan:
            return json.loads(text)
        return json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise fail(
            path,
            f"line {exc.lineno}, column {exc.colno}",
            f"does not parse as JSON: {exc.msg}",
            f"give the JSON file {fmt} wrote, unchanged",
        ) from None
    except ValueError as exc:
        at = text.find(str(exc))
        where = f"line {text.count(chr(10), 0, at) + 1}" if at >= 0 else ""
        raise fail(
            path, where, f"holds the non-number {exc}", f"{fmt} does not write {exc}; give the file it wrote"
        ) from None


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


def utc(dt: datetime) -> str:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse_date(value: Any, path: Path, where: str) -> str | None:
    """A tool's date (ISO text, or epoch seconds/milliseconds) as UTC ISO text; naive means UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000.0 if value > 1e11 else float(value)
        return utc(datetime.fromtimestamp(seconds, tz=UTC))
    if isinstance(value, str):
        try:
            return utc(datetime.fromisoformat(value.strip().replace("Z", "+00:00")))
        except ValueError:
            pass
    raise fail(path, where, f"{value!r} is not a date", "give the file the tool wrote, unchanged")


def import_files(
    ledger: Ledger,
    fmt: str,
    paths: Sequence[Path | str],
    options: ImportOptions | None = None,
    *,
    dry_run: bool = False,
) -> ImportResult:
    """Parse FILES as `fmt`, validate every record, then write all of them or none."""
    from . import FORMATS

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
    drafts: list[Draft] = module.parse([Path(p) for p in paths], options)
    if not drafts:
        raise InputError(
            "nothing to import",
            [Problem(str(paths[0]), "", "holds no result", f"give a {fmt} file with at least one result")],
        )
    if options.contract:
        options.contract = ledger.resolve_id(options.contract)
    records = _build(ledger, drafts, options)
    if not dry_run:
        ledger.write([seal_record(r) for r in records])
    return ImportResult(fmt, records, written=not dry_run)


def _build(ledger: Ledger, drafts: list[Draft], options: ImportOptions) -> list[Envelope]:
    created = datetime.now(UTC)
    ids: dict[str, str] = {}
    records: list[Envelope | None] = [None] * len(drafts)
    items: list[Item | None] = [None] * len(drafts)
    problems: list[Problem] = []
    pending = list(range(len(drafts)))
    # Drafts are prepared once what they point at has an id; importers only nest one or two deep.
    while pending:
        ready = [i for i in pending if all(_handles_known(v, ids) for v in drafts[i].refs.values())]
        if not ready:
            raise RuntimeError("importer drafts refer to each other in a cycle")  # a bug, not bad input
        for i in ready:
            draft = drafts[i]
            data = _finish(draft, ids, options)
            item = Item(data, draft.file, draft.line)
            try:
                record = prepare(ledger, draft.kind, [item], Stamping(no_source=True), now=created)[0]
            except InputError as exc:
                problems.extend(exc.problems)
                record = None
            records[i], items[i] = record, item
            if record is not None and draft.handle:
                ids[draft.handle] = record.id
            elif draft.handle:
                ids[draft.handle] = "0" * 26  # placeholder so dependants still report their own problems
        pending = [i for i in pending if i not in ready]
    if problems:
        raise InputError(f"{len(problems)} problem(s); nothing was written", problems)
    final = [r for r in records if r is not None]
    check_references(ledger, final, [it for it in items if it is not None])
    return final


def _handles_known(value: str | list[str], ids: dict[str, str]) -> bool:
    return all(h in ids for h in ([value] if isinstance(value, str) else value))


def _finish(draft: Draft, ids: dict[str, str], options: ImportOptions) -> dict[str, Any]:
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
