"""The one place that decides whether a site build uses code the judged repository brings.

Code is what runs at build time or in every reader's browser: the templates of
`site.templates` (their Markdown may carry raw HTML and script), the `assets/` overrides of
ledger's stylesheet and Worker shim, and in mkdocs.yml the `hooks:` (Python files MkDocs
runs), `theme.custom_dir` (theme templates MkDocs renders unsandboxed), `extra_javascript`,
`extra_css` and `extra.polyfills` other than ledger's own, `INHERIT:`, and YAML tags that
import Python (`!!python/...`) or read the environment (`!ENV`, which would publish a CI
token). A repository's files cannot opt in; only the person building can, with `ledger site
build --repository-code`. Even then, the repository's templates render in Jinja's sandbox
(`templating.environment`), which cannot reach Python objects.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import InputError, Problem
from .mkdocs_run import CSS, SHIM

#: YAML tags in mkdocs.yml that import Python or read the environment.
_TAGS = re.compile(r"!!python/|!ENV\b|!relative\b")
_FIX = "remove it, or build with `ledger site build --repository-code` if you trust this repository's code"


def _listed(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v if not isinstance(v, dict) else v.get("path", v)) for v in value]
    return [str(value)]


def problems(ledger, mkdocs_yml: Path, settings: Any, prefix: str) -> list[Problem]:
    """Each piece of repository code the build would use, as a Problem naming where it is."""
    found: list[Problem] = []
    where = str(mkdocs_yml)
    templates = ledger.config.site.templates
    if templates:
        folder = ledger.root / templates
        if folder.exists():
            found.append(
                Problem(
                    "ledger.yaml",
                    "field site.templates",
                    f"{templates!r} overrides ledger's templates and assets; their output is served on every page",
                    _FIX,
                )
            )
    try:
        text = mkdocs_yml.read_text(encoding="utf-8")
    except OSError:
        text = ""
    for number, line in enumerate(text.splitlines(), 1):
        match = _TAGS.search(line.split("#", 1)[0])
        if match:
            found.append(
                Problem(
                    where,
                    f"line {number}",
                    f"the YAML tag {match.group(0).strip()!r} imports Python or reads the environment",
                    _FIX,
                )
            )
    data = settings if isinstance(settings, dict) else {}
    for key, what in (("hooks", "Python files MkDocs runs"), ("INHERIT", "another config file")):
        if data.get(key):
            found.append(Problem(where, f"field {key}", f"names {what}: {data.get(key)!r}", _FIX))
    theme = data.get("theme")
    if isinstance(theme, dict) and theme.get("custom_dir"):
        found.append(
            Problem(
                where,
                "field theme.custom_dir",
                f"{theme['custom_dir']!r} overrides the theme's templates (rendered unsandboxed)",
                _FIX,
            )
        )
    own = {prefix + CSS: "extra_css", prefix + SHIM: "extra.polyfills"}
    extra = data.get("extra")
    extra = extra if isinstance(extra, dict) else {}
    for field, values in (
        ("extra_css", _listed(data.get("extra_css"))),
        ("extra_javascript", _listed(data.get("extra_javascript"))),
        ("extra.polyfills", _listed(extra.get("polyfills"))),
    ):
        ours = next((path for path, name in own.items() if name == field), None)
        for value in values:
            if own.get(value) != field:
                hint = f" (ledger's own is {ours!r})" if ours else ""
                found.append(
                    Problem(
                        where, f"field {field}", f"{value!r} is served on every page and is not ledger's{hint}", _FIX
                    )
                )
    return found


def guard(ledger, mkdocs_yml: Path, settings: Any, prefix: str, allowed: bool) -> None:
    """Refuse (InputError, exit 2) a build that would use repository code, unless `allowed`."""
    if allowed:
        return
    found = problems(ledger, mkdocs_yml, settings, prefix)
    if found:
        raise InputError(f"the repository brings code the site would run ({len(found)})", found)
