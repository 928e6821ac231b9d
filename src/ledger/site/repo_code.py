"""The one place that decides whether a site build uses code the judged repository brings.

Code is what runs at build time or in every reader's browser: the templates of
`site.templates` (their Markdown may carry raw HTML and script), the `assets/` overrides of
ledger's stylesheet and Worker shim, and in mkdocs.yml the `hooks:` (Python files MkDocs
runs), `theme.custom_dir` (theme templates MkDocs renders unsandboxed), `extra_javascript`,
`extra_css` and `extra.polyfills` other than ledger's own, `INHERIT:`, and YAML tags that
import Python (`!!python/...`) or read the environment (`!ENV`, which would publish a CI
token). mkdocs.yml is also code where it names what Python-Markdown imports and calls
(`markdown_extensions: ["os:system": {command: ...}]` ran a shell command), what reads files
into pages (`pymdownx.snippets` published /proc/self/environ), which plugins run, and text the
theme writes into every page unescaped (`copyright`, `site_description`), a `javascript:` or
`data:` URL anywhere, and `extra.analytics` / `extra.consent` (scripts off the site's host):
only the inert extensions and plugins below, and plain text, are the repository's to choose.
A repository's files cannot opt in; only the person building can, with `ledger site
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


#: Markdown extensions that only change how Markdown turns into HTML: Python-Markdown's own and
#: pymdown's, less those that read files into a page (snippets, b64). Any other name is a Python
#: module (or `module:callable`) that Python-Markdown imports and calls with the given options.
_INERT_EXTENSIONS = frozenset(
    [
        *(
            f"{prefix}{name}"
            for prefix in ("", "markdown.extensions.")
            for name in (
                "abbr admonition attr_list codehilite def_list extra fenced_code footnotes legacy_attrs "
                "legacy_em md_in_html meta nl2br sane_lists smarty tables toc wikilinks"
            ).split()
        ),
        *(
            f"pymdownx.{name}"
            for name in (
                "arithmatex betterem blocks.admonition blocks.details blocks.tab bracketspan caret critic "
                "details emoji escapeall extra fancylists highlight inlinehilite keys magiclink mark "
                "progressbar quotes saneheaders smartsymbols superfences tabbed tasklist tilde"
            ).split()
        ),
        "material.extensions.emoji",
    ]
)
#: Plugins that render what ledger wrote and nothing else (no network, no files outside docs_dir).
_INERT_PLUGINS = frozenset(["search", "offline", "tags", "material/search", "material/offline", "material/tags"])
#: Settings the theme writes into every page's HTML as they are (Material does not escape them).
_RAW_TEXT = ("site_name", "site_description", "site_author", "copyright", "repo_name")
_MARKUP = re.compile(r'[<>"]')
#: URL schemes that run script or embed content when a page links or loads them.
_LIVE_URL = re.compile(r"^(?:javascript|vbscript|data):", re.IGNORECASE)


def _names(value: Any) -> list[str]:
    """The names of a list (or mapping) of extensions or plugins, each `name` or `{name: options}`."""
    if isinstance(value, dict):
        return [str(k) for k in value]
    if isinstance(value, (list, tuple)):
        return [str(next(iter(v), "")) if isinstance(v, dict) else str(v) for v in value]
    return [] if value is None else [str(value)]


def _strings(value: Any, path: str = ""):
    """Every string in `value` (nested mappings and lists) with its dotted field name."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


def _settings_problems(data: dict, where: str) -> list[Problem]:
    """What mkdocs.yml's own settings would run or inject (see the module's docstring)."""
    found: list[Problem] = []
    for name in _names(data.get("markdown_extensions")):
        if name not in _INERT_EXTENSIONS:
            found.append(
                Problem(
                    where,
                    "field markdown_extensions",
                    f"{name!r} is Python that Python-Markdown imports and calls (or it reads files into pages)",
                    _FIX,
                )
            )
    for name in _names(data.get("plugins")):
        if name not in _INERT_PLUGINS:
            found.append(Problem(where, "field plugins", f"the plugin {name!r} runs at build time", _FIX))
    for key in _RAW_TEXT:
        value = data.get(key)
        if isinstance(value, str) and _MARKUP.search(value):
            found.append(
                Problem(
                    where, f"field {key}", f"{value!r} holds markup the theme writes into every page unescaped", _FIX
                )
            )
    extra = data.get("extra")
    for key in ("analytics", "consent"):
        if isinstance(extra, dict) and extra.get(key):
            found.append(Problem(where, f"field extra.{key}", "loads scripts from off the site's host", _FIX))
    for field, value in _strings(data):
        if _LIVE_URL.match("".join(ch for ch in value if ch > " ")):
            found.append(
                Problem(where, f"field {field}", f"{value[:60]!r} is a URL that runs script or embeds content", _FIX)
            )
    return found


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
    found.extend(_settings_problems(data, where))
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
