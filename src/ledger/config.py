"""The ledger's config file (`ledger.yaml`), declared as data and read with ruamel.yaml."""

from __future__ import annotations

import io
import re
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError
from ruamel.yaml.events import AliasEvent, CollectionStartEvent, ScalarEvent

from .errors import ConfigError, Problem

CONFIG_NAME = "ledger.yaml"


def guard_entry_problem(entry: str) -> str | None:
    """Why `entry` may not be a `guard:` entry, or None: a relative path inside the repository."""
    if not entry or not entry.strip():
        return "is empty"
    if entry.startswith("/") or "\\" in entry or re.match(r"^[A-Za-z]:", entry):
        return "is not a relative path with '/' separators"
    parts = PurePosixPath(entry).parts
    if any(p == ".." for p in parts):
        return "reaches outside the repository ('..')"
    if ".git" in parts:
        return "names git's own folder"
    return None


class SiteSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str = "Evidence ledger"
    docs_dir: str = Field(".ledger-build/docs", description="Where `ledger site build` writes the generated Markdown.")
    site_dir: str = Field("site", description="Where MkDocs writes the HTML.")
    templates: str | None = Field(None, description="A folder whose templates override the packaged ones.")
    mkdocs_yml: str = "mkdocs.yml"
    publish_hosts: bool = Field(
        False,
        description="Publish hostnames and host-made allocation ids as recorded (default: withheld; "
        "local paths and home folders are never published).",
    )
    forge: str | None = Field(
        None,
        description="The repository's web address on its forge (`https://github.com/org/repo`, "
        "`https://gitlab.com/group/project`): issue and pull-request numbers on the site link there.",
    )
    forge_style: Literal["github", "gitlab", "gitea"] | None = Field(
        None, description="How the forge addresses issues and pull requests; default: from the host."
    )

    @field_validator("forge")
    @classmethod
    def _forge_is_https(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = urlsplit(value)
        if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment or "@" in parts.netloc:
            raise ValueError(
                f"site.forge {value!r} is not a plain https:// address of a repository; "
                "write it as https://HOST/OWNER/REPO (no query, fragment or credentials)"
            )
        return value.rstrip("/")


class Config(BaseModel):
    """Everything `ledger.yaml` may say. Unknown keys are refused so a typo is an error."""

    model_config = ConfigDict(extra="forbid")
    version: int = 1
    records: str = Field("ledger/records", description="Folder of record files, relative to the config file.")
    specs: str = Field("ledger/specs", description="Folder of spec pages (Markdown with front matter).")
    guard: list[str] = Field(
        default_factory=list,
        description="Documents outside `specs` that the page rules guard (cell width, prose budget, owed "
        "items, figures): a file, a folder (every Markdown file under it) or a glob (`docs/*.md`, "
        "`docs/**/*.md`), relative to the config file. Files `keyed-rows` declares are guarded too.",
    )
    source: str = Field(".", description="Default checkout whose commit stamps records (`--source` overrides).")
    sources: dict[str, str] = Field(
        default_factory=dict,
        description="Repository (URL or name, as records' source.repo say) -> path of a clone of it, where "
        "`ledger check` verifies the commits of imported records that are not the source checkout's.",
    )
    contract: str | None = Field(
        None,
        description="Name of the current contract; default: the contract the newest accepted decision cites, "
        "else the one with the most valid measurements.",
    )
    site: SiteSettings = Field(default_factory=SiteSettings)
    rules: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Rule id -> severity and parameters.")

    @field_validator("guard")
    @classmethod
    def _guard_inside(cls, value: list[str]) -> list[str]:
        for entry in value:
            problem = guard_entry_problem(entry)
            if problem:
                raise ValueError(f"guard entry {entry!r} {problem}; name a file, folder or glob inside the repository")
        return value


def yaml_rt():
    """A round-trip YAML instance: comments and key order survive load and dump."""

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    return yaml


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding a `ledger.yaml`."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / CONFIG_NAME).is_file():
            return folder
    return None


def load_config(root: Path) -> Config:
    path = root / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no config file; run `ledger init`") from None
    config = parse_config(text, str(path))
    config_paths(config, root, str(path))
    return config


#: The settings of ledger.yaml that name a folder or file ledger reads or writes. Each must
#: resolve inside the repository (the folder holding ledger.yaml): a pushed config cannot
#: point ledger's reads or writes at `~`, `/` or a sibling checkout. `source:` is the one
#: exception (the measured code may be another checkout); it is read only through git's
#: hardened command line (`ledger.git`) and a push cannot change it.
PATH_SETTINGS = ("records", "specs", "site.docs_dir", "site.site_dir", "site.templates", "site.mkdocs_yml")


def inside(root: Path, value: str, setting: str, where: str = CONFIG_NAME, base: Path | None = None) -> Path:
    """The absolute, symlink-resolved path `value` names (relative to `base`, default the
    root), refused (ConfigError, exit 2) unless it lies inside `root`. The one place a
    path that a judged repository's files name is admitted; only a command-line option of
    the person running ledger (`--out`, `--source`) reaches outside."""

    top = Path(root).resolve()
    path = (Path(base) if base is not None else top) / str(value)
    resolved = path.resolve()
    if resolved == top or top in resolved.parents:
        return resolved
    raise ConfigError(
        f"{where}: {setting} points outside the repository",
        [
            Problem(
                where,
                f"field {setting}",
                f"{value!r} resolves to {resolved}, outside the repository {top}",
                "name a path inside the repository; to write elsewhere, pass it on the command line (--out)",
            )
        ],
    )


def config_paths(config: Config, root: Path, where: str = CONFIG_NAME) -> dict[str, Path]:
    """Every path setting of `config`, resolved inside `root` (ConfigError naming all that escape)."""

    found: dict[str, Path] = {}
    problems: list[Problem] = []
    for setting in PATH_SETTINGS:
        node: Any = config
        for part in setting.split("."):
            node = getattr(node, part)
        if node is None:
            continue
        try:
            found[setting] = inside(root, node, setting, where)
        except ConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ConfigError(f"{where}: {len(problems)} path setting(s) point outside the repository", problems)
    return found


def no_aliases(text: str, where: str) -> None:
    """Refuse anchors and aliases (ConfigError naming the line) before anything is built: a
    3 KB alias bomb expanded into `MemoryError` (in ledger.yaml, and in mkdocs.yml, which
    MkDocs loads with PyYAML, unbounded), and neither file needs them."""
    for event in YAML(typ="safe", pure=True).parse(text):
        anchor = getattr(event, "anchor", None) if isinstance(event, (CollectionStartEvent, ScalarEvent)) else None
        if isinstance(event, AliasEvent) or anchor:
            mark = event.start_mark
            raise ConfigError(
                "config uses YAML anchors or aliases",
                [
                    Problem(
                        where,
                        f"line {mark.line + 1}" if mark is not None else "",
                        "YAML anchors and aliases (&name, *name) are not accepted in the config",
                        "write each value out",
                    )
                ],
            )


def parse_config(text: str, where: str = CONFIG_NAME) -> Config:
    """A config from the text of a `ledger.yaml` (read from a file, or from a commit with
    `git show REV:ledger.yaml`); `where` names it in problems."""

    try:
        no_aliases(text, where)
        data = YAML(typ="safe", pure=True).load(text) or {}
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f"line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(
            "config does not parse",
            [Problem(where, line, f"YAML error: {getattr(exc, 'problem', exc)}", "fix the YAML syntax")],
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(
            "config is not a mapping",
            [Problem(where, "", "the config must be a YAML mapping", "see `ledger init` for the layout")],
        )
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(
                where,
                "field " + ".".join(str(p) for p in err["loc"]),
                err["msg"],
                "see the comments `ledger init` writes",
            )
            for err in exc.errors()
        ]
        raise ConfigError("config is invalid", problems) from None


def set_config_value(root: Path, key: str, value: Any) -> bool:
    """Set a key of `ledger.yaml` (dotted for nesting: `rules.owed-high-water.high_water`),
    keeping the user's comments. True when it changed."""
    path = root / CONFIG_NAME
    yaml = yaml_rt()
    data = yaml.load(path.read_text(encoding="utf-8"))
    *parents, leaf = key.split(".")
    node = data
    for part in parents:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    if node.get(leaf) == value:
        return False
    node[leaf] = value
    Config.model_validate(data)

    out = io.StringIO()
    yaml.dump(data, out)
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(out.getvalue(), encoding="utf-8")
    tmp.replace(path)
    return True
