"""YAML front matter of a page, read with ruamel.yaml (round-trip, so comments survive edits)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

_FENCE = "---"


@dataclass(frozen=True)
class FrontMatter:
    #: The front matter mapping (a ruamel CommentedMap; empty dict when the page has none).
    data: Any
    #: The Markdown after the front matter.
    body: str
    #: 0-based line in the full text where `body` starts (add it to body line numbers).
    body_line: int
    #: The raw YAML text between the fences ("" when none).
    yaml_text: str = ""


def split(text: str) -> tuple[str, str, int]:
    """(yaml text, body, body_line). The `---` fences are a line convention Markdown does not
    parse (markdown-it-py needs a plugin we do not depend on), so they are found by line."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != _FENCE:
        return "", text, 0
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r\n") in (_FENCE, "..."):
            return "".join(lines[1:i]), "".join(lines[i + 1 :]), i + 1
    return "", text, 0  # an unclosed fence is not front matter; MkDocs renders it as text


def front_matter(text: str) -> FrontMatter:
    """The page's front matter. Raises ValueError naming the line when the YAML does not parse."""
    yaml_text, body, body_line = split(text)
    if not yaml_text.strip():
        return FrontMatter({}, body, body_line, yaml_text)

    try:
        data = YAML(typ="rt").load(yaml_text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        raise ValueError(f"line {line}: front matter YAML does not parse: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError("line 2: front matter must be a YAML mapping")
    return FrontMatter(data, body, body_line, yaml_text)
