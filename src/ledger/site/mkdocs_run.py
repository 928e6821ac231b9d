"""MkDocs: the nav ledger needs in mkdocs.yml, and the build itself, run in-process.

No build hooks and no page-generating plugins: the generated Markdown and mkdocs.yml are
all MkDocs sees, so Zensical (MkDocs-Material's successor, which reads mkdocs.yml) builds
the same folder. The nav lists index pages only (automatic navigation grows quadratically
with pages); every other generated page is declared `not_in_nav`, so that
`validation.omitted_files: warn` still catches a page nobody meant to leave out.
"""

from __future__ import annotations

import io
import logging
import os
import stat
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

from ..config import inside, no_aliases, yaml_rt
from ..errors import InputError, LedgerError, Problem
from . import mkdocs_cache
from .build_cache import BuildCache

#: (title, page) of the generated index pages, in nav order.
NAV = (
    ("Home", "index.md"),
    ("Decisions", "decisions/index.md"),
    ("Report", "report/index.md"),
    ("Sandwiches", "sandwiches/index.md"),
    ("Specs", "specs/index.md"),
    ("Hypotheses and owed", "hypotheses/index.md"),
    ("Charts", "charts/index.md"),
    ("Sweeps", "sweeps/index.md"),
    ("Memory", "memory/index.md"),
    ("Findings", "findings/index.md"),
    ("Records", "records/index.md"),
)
#: Folders of generated pages that are reached through their index, not the nav.
NOT_IN_NAV = ("records/", "report/", "charts/", "specs/", "contracts/")
#: Static files ledger writes beside the generated pages (under the docs folder).
ASSETS = "assets/ledger/"
CSS = ASSETS + "ledger.css"
#: The file:// Worker polyfill; its name says "iframe-worker", so MkDocs-Material's offline
#: plugin does not add its CDN copy (https://unpkg.com/iframe-worker/shim).
SHIM = ASSETS + "iframe-worker-shim.js"
PALETTE = [
    {
        "media": "(prefers-color-scheme: light)",
        "scheme": "default",
        "toggle": {"icon": "material/weather-night", "name": "Switch to dark mode"},
    },
    {
        "media": "(prefers-color-scheme: dark)",
        "scheme": "slate",
        "toggle": {"icon": "material/weather-sunny", "name": "Switch to light mode"},
    },
]


def _load(path: Path):
    try:
        text = path.read_text(encoding="utf-8")
        no_aliases(text, str(path))
        return yaml_rt().load(text) or {}
    except LedgerError:
        raise
    except Exception as exc:  # ruamel raises many YAMLError subclasses and ValueErrors
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise InputError(
            "mkdocs.yml does not parse",
            [Problem(str(path), where, f"YAML error: {getattr(exc, 'problem', None) or exc}", "fix the YAML syntax")],
        ) from None


def load(mkdocs_yml: Path) -> Any:
    """mkdocs.yml as data (round-trip YAML): a build parses it once and passes it to the
    functions below (`data=`), which otherwise parse it themselves."""
    return _load(mkdocs_yml)


def docs_dir(mkdocs_yml: Path, root: Path, data: Any = None) -> Path:
    """MkDocs' docs_dir, which must lie inside the repository `root` (ConfigError otherwise)."""
    data = _load(mkdocs_yml) if data is None else data
    return inside(root, str(data.get("docs_dir", "docs")), "docs_dir", str(mkdocs_yml), mkdocs_yml.parent)


def site_dir(mkdocs_yml: Path, root: Path, data: Any = None) -> Path:
    """MkDocs' site_dir, which must lie inside the repository `root` (only `--out` reaches outside)."""
    data = _load(mkdocs_yml) if data is None else data
    return inside(root, str(data.get("site_dir", "site")), "site_dir", str(mkdocs_yml), mkdocs_yml.parent)


def directory_urls(mkdocs_yml: Path, data: Any = None) -> bool:
    """Whether MkDocs will write page/index.html URLs (the offline plugin turns them off)."""
    data = _load(mkdocs_yml) if data is None else data
    plugins = data.get("plugins") or []
    for plugin in plugins if isinstance(plugins, list) else []:
        if plugin == "offline" or (isinstance(plugin, dict) and "offline" in plugin):
            options = plugin.get("offline") if isinstance(plugin, dict) else None
            if not (isinstance(options, dict) and options.get("enabled") is False):
                return False
    return bool(data.get("use_directory_urls", True))


def refuse_links(folder: Path) -> None:
    """Every file MkDocs would read under its docs folder is a plain file or folder, never a
    symlink (MkDocs walks with `followlinks=True` and copies what a link points at: a link to
    `/proc/self/environ` published the environment, one to `/` hung the build) and never a
    device, FIFO or socket. Walked without following links; InputError (exit 2) naming each."""
    found: list[Problem] = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            path = os.path.join(top, name)
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                what = f"is a symbolic link (to {os.readlink(path)!r})"
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                what = "is not a regular file or folder"
            else:
                continue
            found.append(
                Problem(
                    path,
                    "docs_dir",
                    f"{what}; MkDocs would publish what it points at",
                    "replace it with the file itself, or remove it",
                )
            )
        if len(found) >= 50:
            break
    if found:
        raise InputError(f"the docs folder holds {len(found)} link(s) or special file(s)", found)


def nav_entries(prefix: str = "") -> list[dict[str, str]]:
    return [{title: prefix + page} for title, page in NAV]


def not_in_nav(prefix: str = "") -> str:
    return "".join(f"/{prefix}{folder}\n" for folder in NOT_IN_NAV)


def _names(items) -> list[str]:
    return [next(iter(i)) if isinstance(i, dict) else str(i) for i in items or []]


def ensure_nav(mkdocs_yml: Path, prefix: str = "", data: Any = None) -> bool:
    """Add what ledger's pages need to mkdocs.yml, keeping the user's keys and comments.

    - a nav of ledger's index pages and `not_in_nav` for the rest, when there is none (a nav
      the user wrote is theirs: the project's own docs list the index pages in a larger
      nav), and the generated folders missing from a `not_in_nav` ledger wrote;
    - what lets the site work wherever it is opened (file://, `ledger site serve`, any
      static host): MkDocs-Material's `offline` plugin with non-directory URLs, and the
      vendored Worker polyfill so search needs no CDN;
    - the palette toggle (light and dark) when the theme sets no palette;
    - ledger's stylesheet and the Markdown extensions its tables and cards use.
    Nothing the user set is overwritten. True when the file changed. A `data` given (from
    `load`) is brought up to date in place, so it stays what the file holds.
    """

    original = mkdocs_yml.read_text(encoding="utf-8")
    data = _load(mkdocs_yml) if data is None else data
    _ensure_nav_keys(data, prefix)
    _ensure_offline(data, prefix)
    _ensure_style(data, prefix)
    out = io.StringIO()
    yaml_rt().dump(data, out)
    if out.getvalue() != original:
        mkdocs_yml.write_text(out.getvalue(), encoding="utf-8")
        return True
    return False


def _ensure_nav_keys(data, prefix: str) -> None:

    if "nav" not in data:
        data["nav"] = nav_entries(prefix)
    if "not_in_nav" not in data:
        data["not_in_nav"] = LiteralScalarString(not_in_nav(prefix))
    elif f"/{prefix}records/" in str(data["not_in_nav"]):
        text = str(data["not_in_nav"])
        missing = [f"/{prefix}{folder}" for folder in NOT_IN_NAV if f"/{prefix}{folder}" not in text]
        if missing:
            data["not_in_nav"] = LiteralScalarString(text.rstrip("\n") + "\n" + "\n".join(missing) + "\n")


def _ensure_offline(data, prefix: str) -> None:

    if "use_directory_urls" not in data:
        data["use_directory_urls"] = False
    plugins = data.get("plugins")
    if plugins is None:
        data["plugins"] = CommentedSeq(["search", "offline"])
    elif isinstance(plugins, list) and "offline" not in _names(plugins):
        plugins.append("offline")
    extra = data.get("extra")
    if extra is None:
        data["extra"] = extra = CommentedMap()
    if isinstance(extra, dict):
        polyfills = extra.get("polyfills")
        if polyfills is None:
            extra["polyfills"] = CommentedSeq([prefix + SHIM])
        elif isinstance(polyfills, list) and not any("iframe-worker" in str(p) for p in polyfills):
            polyfills.append(prefix + SHIM)


def _ensure_style(data, prefix: str) -> None:

    theme = data.get("theme")
    if isinstance(theme, dict) and theme.get("name") == "material" and "palette" not in theme:
        theme["palette"] = PALETTE
    extensions = data.get("markdown_extensions")
    if extensions is None:
        data["markdown_extensions"] = CommentedSeq(["tables", "attr_list", "md_in_html"])
    elif isinstance(extensions, list):
        for name in ("attr_list", "md_in_html"):
            if name not in _names(extensions):
                extensions.append(name)
    css = data.get("extra_css")
    if css is None:
        data["extra_css"] = CommentedSeq([prefix + CSS])
    elif isinstance(css, list) and prefix + CSS not in css:
        css.append(prefix + CSS)


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def without(nav: Any, hidden: AbstractSet[str]) -> Any:
    """`nav` (MkDocs' list of {title: page or list}) without the entries for `hidden` pages;
    a section left with nothing is left out too."""
    if not isinstance(nav, list):
        return nav
    out = []
    for item in nav:
        if isinstance(item, dict) and len(item) == 1:
            title, value = next(iter(item.items()))
            if isinstance(value, str) and value in hidden:
                continue
            if isinstance(value, list):
                value = without(value, hidden)
                if not value:
                    continue
            out.append({title: value})
        elif isinstance(item, str) and item in hidden:
            continue
        else:
            out.append(item)
    return out


def build(
    mkdocs_yml: Path,
    *,
    out: Path | None = None,
    strict: bool = True,
    hidden: AbstractSet[str] = frozenset(),
    cache_file: Path | None = None,
    counts: dict[str, int] | None = None,
) -> tuple[Path, list[Problem]]:
    """Run `mkdocs build` in-process; its warnings come back as Problems (never printed here).
    Pages in `hidden` (paths under docs_dir) are built but left out of the navigation. With
    `cache_file`, each page's HTML and search entries are remembered there between builds
    (`mkdocs_cache`): the same bytes, rendered only where the inputs changed. `counts`, when
    given, receives how many steps were remembered and how many were done."""
    from mkdocs.commands.build import build as mk_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, ConfigurationError

    logger = logging.getLogger("mkdocs")
    handler = _Collect()
    logger.addHandler(handler)
    # MkDocs logs through its own StreamHandler when run as a command; in-process its
    # messages would otherwise reach the root logger and print. The CLI decides what shows.
    propagate = logger.propagate
    logger.propagate = False
    try:
        overrides = {"site_dir": str(out)} if out else {}
        try:
            config = load_config(config_file=str(mkdocs_yml), **overrides)
        except (ConfigurationError, Abort) as exc:
            # On an invalid value MkDocs logs each "Config value 'X': ..." and raises a bare
            # "Aborted with a configuration error!": the logged lines name the fields.
            said = [m for m in handler.messages if m.startswith("Config value")] or [str(exc)]
            raise InputError(
                "mkdocs.yml is invalid",
                [
                    Problem(str(mkdocs_yml), "", m, "fix mkdocs.yml; `mkdocs build` shows the same message")
                    for m in said
                ],
            ) from None
        # Strictness is enforced by the caller from the collected warnings, so that every
        # warning is reported at once rather than MkDocs stopping at the first.
        config["strict"] = False
        if hidden and config.get("nav"):
            from pathspec import GitIgnoreSpec

            config["nav"] = without(config["nav"], hidden)
            # Declared out of the nav, as ledger's other generated pages are (no notice).
            extra = GitIgnoreSpec.from_lines(f"/{h}" for h in sorted(hidden))
            config["not_in_nav"] = extra if config.get("not_in_nav") is None else config["not_in_nav"] + extra
        cache = BuildCache.open(cache_file, mkdocs_cache.settings_of(config, mkdocs_yml.read_text(encoding="utf-8")))
        try:
            with mkdocs_cache.remembering(cache):
                mk_build(config)
            cache.save()
            if counts is not None:
                counts.update(remembered=cache.hits, done=cache.misses)
        except Abort as exc:
            raise InputError(
                "mkdocs build failed", [Problem(str(mkdocs_yml), "", str(exc), "see the messages above")]
            ) from None
        finally:
            cache.close()  # unsaved (a failed build): rolled back, the previous cache stays
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    problems = [
        Problem(str(mkdocs_yml.name), "mkdocs", msg.replace("\n", " "), "fix the page or link MkDocs names")
        for msg in handler.messages
    ]
    return Path(config["site_dir"]), problems


def docs_prefix(docs: Path, mkdocs_docs: Path) -> str:
    """Where the generated pages sit inside MkDocs' docs folder ("" at its top, else with a "/")."""
    try:
        rel = docs.relative_to(mkdocs_docs.resolve()).as_posix()
    except ValueError:
        return ""
    return "" if rel == "." else rel + "/"


def prepare_mkdocs(ledger) -> bool:
    """Add what ledger's pages need to mkdocs.yml (`ensure_nav`). `ledger init`
    calls it, so that the file a user commits after init is the one every build reads and a
    build leaves the working tree clean (a rewritten mkdocs.yml stamped every later record
    dirty). True when the file changed."""
    mkdocs_yml = inside(ledger.root, ledger.config.site.mkdocs_yml, "site.mkdocs_yml")
    docs = inside(ledger.root, ledger.config.site.docs_dir, "site.docs_dir")
    return ensure_nav(mkdocs_yml, docs_prefix(docs, docs_dir(mkdocs_yml, ledger.root)))
