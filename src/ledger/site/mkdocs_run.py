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
from pathlib import Path

from ruamel.yaml.scalarstring import LiteralScalarString

from ..config import yaml_rt
from ..errors import InputError, Problem

#: (title, page) of the generated index pages, in nav order.
NAV = (
    ("Home", "index.md"),
    ("Decisions", "decisions/index.md"),
    ("Report", "report/index.md"),
    ("Sandwiches", "sandwiches/index.md"),
    ("Specs", "specs/index.md"),
    ("Hypotheses and owed", "hypotheses/index.md"),
    ("Charts", "charts/index.md"),
    ("Records", "records/index.md"),
)
#: Folders of generated pages that are reached through their index, not the nav.
NOT_IN_NAV = ("records/", "report/", "charts/", "specs/")


def _load(path: Path):

    try:
        return yaml_rt().load(path.read_text(encoding="utf-8")) or {}
    except Exception as exc:  # ruamel raises many YAMLError subclasses and ValueErrors
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise InputError(
            "mkdocs.yml does not parse",
            [Problem(str(path), where, f"YAML error: {getattr(exc, 'problem', None) or exc}", "fix the YAML syntax")],
        ) from None


def docs_dir(mkdocs_yml: Path) -> Path:
    data = _load(mkdocs_yml)
    return (mkdocs_yml.parent / str(data.get("docs_dir", "docs"))).resolve()


def directory_urls(mkdocs_yml: Path) -> bool:
    return bool(_load(mkdocs_yml).get("use_directory_urls", True))


def nav_entries(prefix: str = "") -> list[dict[str, str]]:
    return [{title: prefix + page} for title, page in NAV]


def not_in_nav(prefix: str = "") -> str:
    return "".join(f"/{prefix}{folder}\n" for folder in NOT_IN_NAV)


def ensure_nav(mkdocs_yml: Path, prefix: str = "") -> bool:
    """Add ledger's nav and not_in_nav to mkdocs.yml when it has none (comments kept).

    A nav the user wrote is left as it is: they own it (the project's own docs site lists
    the generated index pages inside a larger nav).
    """

    original = mkdocs_yml.read_text(encoding="utf-8")
    data = _load(mkdocs_yml)
    changed = False
    if "nav" not in data:
        data["nav"] = nav_entries(prefix)
        changed = True
    if "not_in_nav" not in data:
        data["not_in_nav"] = LiteralScalarString(not_in_nav(prefix))
        changed = True
    if not changed:
        return False
    out = io.StringIO()
    yaml_rt().dump(data, out)
    if out.getvalue() != original:
        mkdocs_yml.write_text(out.getvalue(), encoding="utf-8")
        return True
    return False


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def build(mkdocs_yml: Path, *, out: Path | None = None, strict: bool = True) -> tuple[Path, list[Problem]]:
    """Run `mkdocs build` in-process; its warnings come back as Problems (never printed here)."""
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
        except ConfigurationError as exc:
            raise InputError(
                "mkdocs.yml is invalid",
                [Problem(str(mkdocs_yml), "", str(exc), "fix mkdocs.yml; `mkdocs build` shows the same message")],
            ) from None
        # Strictness is enforced by the caller from the collected warnings, so that every
        # warning is reported at once rather than MkDocs stopping at the first.
        config["strict"] = False
        try:
            mk_build(config)
        except Abort as exc:
            raise InputError(
                "mkdocs build failed", [Problem(str(mkdocs_yml), "", str(exc), "see the messages above")]
            ) from None
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
    problems = [
        Problem(str(mkdocs_yml.name), "mkdocs", msg.replace("\n", " "), "fix the page or link MkDocs names")
        for msg in handler.messages
    ]
    return Path(config["site_dir"]), problems
