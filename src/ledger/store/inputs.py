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


@dataclass(frozen=True)
class Item:
    data: Any
    file: str
    line: int | None  # 1-based line where the item starts
    #: Where the item is when it has no line: "record 2" of a collector's output, say.
    place: str | None = None

    @property
    def where(self) -> str:
        return f"line {self.line}" if self.line else (self.place or "")


def read_items(source: str | Path) -> list[Item]:
    """Parse FILE (or `-` for standard input) into items."""
    if str(source) == "-":
        name, text = "<stdin>", sys.stdin.read()
        suffix = ""
    else:
        path = Path(source)
        name, suffix = str(path), path.suffix.lower()
        try:
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
    return parse_items(text, name, suffix)


def parse_items(text: str, name: str, suffix: str = "") -> list[Item]:
    if not text.strip():
        raise InputError(
            "empty input", [Problem(name, "", "is empty", "give one record as JSON or YAML, or many as JSON Lines")]
        )
    if suffix == ".jsonl" or suffix == ".ndjson":
        return _json_lines(text, name)
    if suffix == ".json":
        return _json(text, name)
    if suffix in (".yaml", ".yml"):
        return _yaml(text, name)
    # Unknown suffix or stdin: JSON, then JSON Lines, then YAML.
    stripped = text.lstrip()
    if stripped[:1] in "{[":
        try:
            return _json(text, name)
        except InputError:
            if stripped[:1] == "{" and "\n{" in text.strip():
                return _json_lines(text, name)
            raise
    return _yaml(text, name)


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not a number a measurement can have")


def _loads(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _json(text: str, name: str) -> list[Item]:
    try:
        data = _loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            "JSON does not parse",
            [Problem(name, f"line {exc.lineno}, column {exc.colno}", f"JSON error: {exc.msg}", "fix the JSON syntax")],
        ) from None
    except ValueError as exc:
        raise InputError(
            "bad number",
            [
                Problem(
                    name,
                    _constant_line(text, str(exc)),
                    str(exc),
                    "measurements are finite numbers; omit the field or fix the value",
                )
            ],
        ) from None
    if isinstance(data, list):
        return [Item(d, name, None) for d in data]
    return [Item(data, name, 1)]


def _constant_line(text: str, message: str) -> str:
    """The line of the first bare NaN/Infinity token the message names (json gives no position)."""
    token = message.split(" ", 1)[0]
    found = re.search(r"(?<![\w\"])" + re.escape(token) + r"(?![\w\"])", text)
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
        except ValueError as exc:
            problems.append(Problem(name, f"line {lineno}", str(exc), "measurements are finite numbers"))
    if problems:
        raise InputError("JSON Lines do not parse", problems)
    return items


def _yaml(text: str, name: str) -> list[Item]:

    yaml = YAML(typ="rt")
    items: list[Item] = []
    try:
        for doc in yaml.load_all(text):
            if doc is None:
                continue
            line = doc.lc.line + 1 if hasattr(doc, "lc") and doc.lc.line is not None else None
            items.append(Item(_plain(doc, name, line), name, line))
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise InputError(
            "YAML does not parse",
            [Problem(name, where, f"YAML error: {getattr(exc, 'problem', None) or exc}", "fix the YAML syntax")],
        ) from None
    if len(items) == 1 and isinstance(items[0].data, list):
        return [Item(d, name, None) for d in items[0].data]
    return items


def _plain(node: Any, name: str, line: int | None = None, path: str = "") -> Any:
    """ruamel's round-trip objects to plain dict/list/scalars; YAML's .nan/.inf refused at their line and field."""
    if isinstance(node, dict):
        return {
            str(k): _plain(v, name, _line_of(node, k, line), f"{path}.{k}" if path else str(k)) for k, v in node.items()
        }
    if isinstance(node, list):
        return [_plain(v, name, _line_of(node, i, line), f"{path}[{i}]") for i, v in enumerate(node)]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        value = float(node)
        if not math.isfinite(value):
            where = ", ".join(
                part for part in (f"line {line}" if line else "", f"field {path}" if path else "") if part
            )
            raise InputError(
                "bad number",
                [
                    Problem(
                        name,
                        where,
                        f"{value} is not a number a measurement can have",
                        "measurements are finite numbers",
                    )
                ],
            )
        return value
    if isinstance(node, str):
        return str(node)
    # Dates and timestamps YAML parsed for us go back to text for pydantic to read.
    return str(node)


def _line_of(node: Any, key: Any, default: int | None) -> int | None:
    """1-based line of a mapping key or sequence item, from ruamel's position data."""
    try:
        return node.lc.data[key][0] + 1
    except (AttributeError, KeyError, IndexError, TypeError):
        return default
