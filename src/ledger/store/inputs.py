"""Read record input: YAML or JSON for one record, JSON Lines or YAML documents for many.

Every item comes back with where it came from (file and line), so a problem can be
reported at its place.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from ..errors import InputError, Problem
from ..numbers import as_recorded
from .limits import Limits


@dataclass(frozen=True)
class Item:
    data: Any
    file: str
    line: int | None  # 1-based line where the item starts
    #: What the reader should know but that does not stop the record (e.g. text YAML read as a comment).
    warnings: tuple[str, ...] = ()
    #: Where the item is when it has no line: "record 2" of a collector's output, say.
    place: str | None = None
    #: 1-based line of each field of a YAML record, by path as errors name it (`a.b[0]`).
    field_lines: tuple[tuple[str, int], ...] = ()

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.line else (self.place or "")

    def where_of(self, field: str) -> str:
        """Where `field` is: its own line when the YAML said (`titel` on line 6, not the
        record's first line), else the nearest enclosing field's, else the record's."""
        lines = dict(self.field_lines)
        path = field
        while path:
            if path in lines:
                return f"line {lines[path]}"
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return self.where


def read_items(source: str | Path, limits: Limits | None = None) -> list[Item]:
    """Parse FILE (or `-` for standard input) into items, within `limits` (size, depth, aliases)."""
    limits = limits or Limits()
    cap = limits.max_input_bytes
    if str(source) == "-":
        name, text = "<stdin>", sys.stdin.read(cap + 1)
        suffix = ""
        if len(text) > cap:
            raise _too_large(name, cap)
    else:
        path = Path(source)
        name, suffix = str(path), path.suffix.lower()
        try:
            if path.stat().st_size > cap:
                raise _too_large(name, cap)
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError("no such file", [Problem(name, "", "no such file", "check the path")]) from None
        except UnicodeDecodeError as exc:
            raise InputError(
                "not UTF-8", [Problem(name, f"byte {exc.start}", "is not UTF-8 text", "records are UTF-8 JSON or YAML")]
            ) from None
        except IsADirectoryError:
            raise InputError(
                "a folder", [Problem(name, "", "is a folder, not a file", "give a JSON, JSON Lines or YAML file")]
            ) from None
    return parse_items(text, name, suffix, limits)


def _too_large(name: str, cap: int) -> InputError:
    return InputError(
        "input too large",
        [
            Problem(
                name,
                "",
                f"is larger than the {cap:,}-byte input cap (rule parse-limits, max_input_bytes)",
                "split the input into several `ledger add` runs, or raise rules.parse-limits.max_input_bytes",
            )
        ],
    )


def parse_items(text: str, name: str, suffix: str = "", limits: Limits | None = None) -> list[Item]:
    if not text.strip():
        raise InputError(
            "empty input", [Problem(name, "", "is empty", "give one record as JSON or YAML, or many as JSON Lines")]
        )
    if suffix == ".jsonl" or suffix == ".ndjson":
        return _json_lines(text, name)
    if suffix == ".json":
        return _json(text, name)
    if suffix in (".yaml", ".yml"):
        return _yaml(text, name, limits or Limits())
    # Unknown suffix or stdin: JSON, then JSON Lines, then YAML.
    stripped = text.lstrip()
    if stripped[:1] in "{[":
        try:
            return _json(text, name)
        except InputError:
            if stripped[:1] == "{" and "\n{" in text.strip():
                return _json_lines(text, name)
            raise
    return _yaml(text, name, limits or Limits())


class _Refused(ValueError):
    """JSON that parses but that a record cannot hold: `token` locates it in the text."""

    def __init__(self, message: str, token: str, fix: str) -> None:
        super().__init__(message)
        self.token, self.fix = token, fix


def _reject_constant(token: str) -> float:
    raise _Refused(
        f"{token} is not a number a measurement can have", token, "measurements are finite numbers; omit the field"
    )


def _finite(text: str) -> float:
    value = float(text)
    if value - value != 0:  # inf - inf is nan
        raise _Refused(
            f"{text} is not a finite number (it overflows a double)",
            text,
            "measurements are finite numbers; fix the value or omit the field",
        )
    return value


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object, refusing a key given twice (JSON readers disagree on which value wins)."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(
                    f"key {key!r} appears twice in one object (one JSON reader keeps the first value, another the last)",
                    json.dumps(key),
                    "keep one of the two",
                )
            seen.add(key)
    return obj


# -- decimals as recorded ----------------------------------------------------------------------
#
# JSON and YAML numbers lose their trailing zeros (7.2590400 parses to 7.25904). A figure with
# no spread is printed as recorded, so the decimals a measurement's figure was given with are
# kept beside it, in `extra.decimals`, where the written text would otherwise be lost:
# {"median": 7.25904, "extra": {"decimals": {"median": 7}}} prints as 7.2590400 everywhere.

#: Measurement fields whose recorded decimals are kept.
FIGURE_FIELDS = ("median", "min", "max", "mean", "iqr", "throughput", "mfu_percent", "mfu_vs_ceiling_percent")
_MEASUREMENT_KEYS = frozenset({"samples", "median", "min", "max"})


class _Literal(float):
    """A JSON number with the text it was written as (only while parsing)."""

    text: str

    def __new__(cls, text: str) -> _Literal:
        _finite(text)
        value = super().__new__(cls, text)
        value.text = text
        return value


def lost_decimals(value: float, decimals: int) -> bool:
    """True when printing `value` as recorded would drop decimals its text had (trailing zeros)."""

    return decimals > 0 and as_recorded(value) != f"{value:.{decimals}f}"


def _decimals_of_text(text: str) -> int | None:
    body = text.strip().lstrip("+-")
    if "e" in body.lower() or "." not in body:
        return None
    return len(body.split(".", 1)[1])


def _keep_decimals(data: dict[str, Any], decimals: dict[str, int]) -> dict[str, Any]:
    kind = data.get("kind")
    if not decimals or (kind not in (None, "measurement")) or not (_MEASUREMENT_KEYS & set(data)):
        return data
    extra = data.get("extra")
    if extra is None:
        extra = data["extra"] = {}
    if isinstance(extra, dict) and not isinstance(extra.get("decimals"), dict):
        extra["decimals"] = dict(sorted(decimals.items()))
    return data


def _plain_json(node: Any) -> Any:
    if isinstance(node, _Literal):
        return float(node)
    if isinstance(node, list):
        return [_plain_json(v) for v in node]
    return node


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    _unique(pairs)
    decimals: dict[str, int] = {}
    out: dict[str, Any] = {}
    for key, value in pairs:
        if isinstance(value, _Literal) and key in FIGURE_FIELDS:
            places = _decimals_of_text(value.text)
            if places is not None and lost_decimals(float(value), places):
                decimals[key] = places
        out[key] = _plain_json(value)
    return _keep_decimals(out, decimals)


#: A figure field written with a trailing zero after the point (the only case worth the slower parse).
_TRAILING_ZERO = re.compile(r'"(?:' + "|".join(FIGURE_FIELDS) + r')"\s*:\s*-?\d+\.\d*0(?![\deE.])')


def _loads(text: str) -> Any:
    # Duplicate keys, NaN/Infinity and numbers that overflow to infinity are refused here;
    # nesting deeper than Python's recursion limit is a RecursionError the callers report.
    if not _TRAILING_ZERO.search(text):
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite, object_pairs_hook=_unique)
    return _plain_json(
        json.loads(text, parse_constant=_reject_constant, parse_float=_Literal, object_pairs_hook=_pairs)
    )


def _deep(name: str, where: str) -> InputError:
    return InputError(
        "input nests too deep",
        [
            Problem(
                name,
                where,
                "nests deeper than any record may (rule parse-limits, max_depth)",
                "flatten the input; records are a few levels deep",
            )
        ],
    )


def _json(text: str, name: str) -> list[Item]:
    try:
        data = _loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            "JSON does not parse",
            [Problem(name, f"line {exc.lineno}, column {exc.colno}", f"JSON error: {exc.msg}", "fix the JSON syntax")],
        ) from None
    except RecursionError:
        raise _deep(name, "") from None
    except _Refused as exc:
        raise InputError("refused value", [Problem(name, _token_line(text, exc.token), str(exc), exc.fix)]) from None
    if isinstance(data, list):
        return [Item(d, name, None) for d in data]
    return [Item(data, name, 1)]


def _token_line(text: str, token: str) -> str:
    """The line of the first bare token (NaN, 1e999) or quoted key the refusal names (json gives no position)."""
    found: re.Match[str] | None
    if token.startswith('"'):
        keys = list(re.finditer(re.escape(token) + r"\s*:", text))
        found = keys[1] if len(keys) > 1 else None
    else:
        found = re.search(r"(?<![\w\".+-])" + re.escape(token) + r"(?![\w\".])", text)
    return f"line {text.count(chr(10), 0, found.start()) + 1}" if found else ""


def _json_lines(text: str, name: str) -> list[Item]:
    items: list[Item] = []
    problems: list[Problem] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            items.append(Item(_loads(line), name, lineno))
        except json.JSONDecodeError as exc:
            problems.append(
                Problem(
                    name,
                    f"line {lineno}, column {exc.colno}",
                    f"JSON error: {exc.msg}",
                    "each line must be one JSON object",
                )
            )
        except RecursionError:
            problems.extend(_deep(name, f"line {lineno}").problems)
        except _Refused as exc:
            problems.append(Problem(name, f"line {lineno}", str(exc), exc.fix))
    if problems:
        raise InputError("JSON Lines do not parse", problems)
    return items


def _yaml(text: str, name: str, limits: Limits) -> list[Item]:
    yaml = YAML(typ="rt")
    # Duplicate keys are refused by ruamel; depth is capped while composing (one level for
    # a list of records), aliases while converting (`_Plain`).
    yaml.max_depth = limits.max_depth + 1
    items: list[Item] = []
    documents: list[Any] = []
    try:
        for doc in yaml.load_all(text):
            if doc is None:
                continue
            line = doc.lc.line + 1 if hasattr(doc, "lc") and doc.lc.line is not None else None
            items.append(
                Item(
                    _Plain(name, limits.max_yaml_aliases).convert(doc, line), name, line, field_lines=_field_lines(doc)
                )
            )
            documents.append(doc)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        if "maximum depth" in str(exc):
            raise _deep(name, where) from None
        raise InputError(
            "YAML does not parse",
            [Problem(name, where, f"YAML error: {getattr(exc, 'problem', None) or exc}", "fix the YAML syntax")],
        ) from None
    except RecursionError:
        raise _deep(name, "") from None
    warned = comment_warnings(text)
    if len(items) == 1 and isinstance(items[0].data, list):
        # A list of records: each item starts at its own line and knows its fields' lines.
        seq = documents[0]
        return [
            Item(d, name, _line_of(seq, i, None), tuple(w for _, w in warned), field_lines=_field_lines(seq[i]))
            for i, d in enumerate(items[0].data)
        ]
    if warned:
        starts = [it.line or 1 for it in items]
        out = []
        for n, it in enumerate(items):
            end = starts[n + 1] if n + 1 < len(starts) else 10**9
            mine = tuple(w for line, w in warned if starts[n] <= line < end or (n == 0 and line < starts[0]))
            out.append(Item(it.data, it.file, it.line, mine, it.place, it.field_lines))
        items = out
    return items


# A plain (unquoted) value followed by ` #` and no space: YAML ends the value there and reads
# the rest as a comment, so `issue: PR #1008` records "PR". A comment is `# text`.
_KEYED = re.compile(r"""^\s*(?:-\s+)?[^\s'"#:{\[-][^:#]*:(?:\s+|$)""")
_VALUE = r"""(?P<value>[^\s'"#|>&*!\[{][^#]*?)\s+#(?P<rest>\S.*)$"""
_EATEN_KEYED = re.compile(r"""^\s*(?:-\s+)?[^\s'"#:{\[-][^:#]*:\s+""" + _VALUE)
_EATEN_ITEM = re.compile(r"""^\s*-\s+""" + _VALUE)
_BLOCK = re.compile(r":\s*[|>][-+0-9]*\s*(?:#.*)?$")


def comment_warnings(text: str) -> list[tuple[int, str]]:
    """(line, message) for every line where YAML reads part of a plain value as a comment
    (`title: fixes #1008` is "fixes"). Block scalars (`|`, `>`) keep `#` and are skipped."""
    out = []
    block_indent: int | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if block_indent is not None:
            if not stripped or indent > block_indent:
                continue
            block_indent = None
        if _BLOCK.search(line):
            block_indent = indent
            continue
        if not stripped or stripped.startswith("#") or stripped.startswith("---"):
            continue
        m = _EATEN_KEYED.match(line) if _KEYED.match(line) else _EATEN_ITEM.match(line)
        if m:
            lost = "#" + m.group("rest")
            out.append(
                (
                    n,
                    f"line {n}: YAML reads {lost!r} as a comment, so the value is {m.group('value').strip()!r}; "
                    "quote the whole value to keep it",
                )
            )
    return out


class _Plain:
    """ruamel's round-trip objects to plain dict/list/scalars, for one document.

    YAML's .nan/.inf are refused at their line and field. An alias makes shared data that a
    walk visits once per use, so a few lines (a "billion laughs") can expand to billions of
    nodes: uses of already-visited data are counted and capped, and an alias inside its
    own anchor (a cycle) is refused.
    """

    def __init__(self, name: str, max_aliases: int) -> None:
        self.name = name
        self.max_aliases = max_aliases
        self.seen: set[int] = set()
        self.open: set[int] = set()
        self.aliases = 0

    def _refuse(self, line: int | None, path: str, message: str, fix: str) -> InputError:
        where = ", ".join(part for part in (f"line {line}" if line else "", f"field {path}" if path else "") if part)
        return InputError("refused YAML", [Problem(self.name, where, message, fix)])

    def convert(self, node: Any, line: int | None = None, path: str = "") -> Any:
        if isinstance(node, (dict, list)):
            key = id(node)
            if key in self.open:
                raise self._refuse(
                    line, path, "an alias refers to the mapping or list that contains it (a cycle)", "remove the alias"
                )
            if key in self.seen:
                self.aliases += 1
                if self.aliases > self.max_aliases:
                    raise self._refuse(
                        line,
                        path,
                        f"uses aliases more than {self.max_aliases} times (rule parse-limits, max_yaml_aliases)",
                        "write the values out, or raise rules.parse-limits.max_yaml_aliases",
                    )
            self.seen.add(key)
            self.open.add(key)
            try:
                if isinstance(node, dict):
                    return self._mapping(node, line, path)
                return [self.convert(v, _line_of(node, i, line), f"{path}[{i}]") for i, v in enumerate(node)]
            finally:
                self.open.discard(key)
        if isinstance(node, bool) or node is None:
            return node
        if isinstance(node, int):
            return int(node)
        if isinstance(node, float):
            value = float(node)
            if not math.isfinite(value):
                raise self._refuse(
                    line, path, f"{value} is not a number a measurement can have", "measurements are finite numbers"
                )
            return value
        if isinstance(node, str):
            return str(node)
        # Dates and timestamps YAML parsed for us go back to text for pydantic to read.
        return str(node)

    def _mapping(self, node: dict, line: int | None, path: str) -> dict[str, Any]:
        plain = {
            str(k): self.convert(v, _line_of(node, k, line), f"{path}.{k}" if path else str(k)) for k, v in node.items()
        }
        decimals = {}
        for key in FIGURE_FIELDS:
            places = _yaml_decimals(node.get(key))
            if places is not None and lost_decimals(float(node[key]), places):
                decimals[key] = places
        return _keep_decimals(plain, decimals)


def check_yaml_bounds(data: Any, name: str = "<yaml>", limits: Limits | None = None) -> None:
    """Raise InputError when loaded YAML expands aliases beyond the cap or holds a cycle."""
    _Plain(name, (limits or Limits()).max_yaml_aliases).convert(data)


def _yaml_decimals(value: Any) -> int | None:
    """Decimals of a YAML float as written (ruamel keeps its width and the dot's position)."""
    width, dot = getattr(value, "_width", None), getattr(value, "_prec", None)
    if not isinstance(value, float) or width is None or dot is None or getattr(value, "_exp", None):
        return None
    return max(width - dot - 1, 0)


def _field_lines(node: Any, path: str = "", depth: int = 0) -> tuple[tuple[str, int], ...]:
    """(path, 1-based line) of every key and list item under `node`, from ruamel's positions."""
    out: list[tuple[str, int]] = []
    if depth > 32 or not hasattr(node, "lc"):
        return ()
    if isinstance(node, dict):
        entries = [(k, f"{path}.{k}" if path else str(k)) for k in node]
    elif isinstance(node, list):
        entries = [(i, f"{path}[{i}]") for i in range(len(node))]
    else:
        return ()
    for key, sub in entries:
        line = _line_of(node, key, None)
        if line is not None:
            out.append((sub, line))
        out.extend(_field_lines(node[key], sub, depth + 1))
    return tuple(out)


def _line_of(node: Any, key: Any, default: int | None) -> int | None:
    """1-based line of a mapping key or sequence item, from ruamel's position data."""
    try:
        return node.lc.data[key][0] + 1
    except (AttributeError, KeyError, IndexError, TypeError):
        return default
