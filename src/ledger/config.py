"""The ledger's config file (`ledger.yaml`), declared as data and read with ruamel.yaml."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from .errors import ConfigError, Problem

CONFIG_NAME = "ledger.yaml"


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


class Config(BaseModel):
    """Everything `ledger.yaml` may say. Unknown keys are refused so a typo is an error."""

    model_config = ConfigDict(extra="forbid")
    version: int = 1
    records: str = Field("ledger/records", description="Folder of record files, relative to the config file.")
    specs: str = Field("ledger/specs", description="Folder of spec pages (Markdown with front matter).")
    source: str = Field(".", description="Default checkout whose commit stamps records (`--source` overrides).")
    sources: dict[str, str] = Field(
        default_factory=dict,
        description="Repository (URL or name, as records' source.repo say) -> path of a clone of it, where "
        "`ledger check` verifies the commits of imported records that are not the source checkout's.",
    )
    contract: str | None = Field(
        None, description="Name of the current contract; default: the contract with the most recent measurement."
    )
    site: SiteSettings = Field(default_factory=SiteSettings)
    rules: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Rule id -> severity and parameters.")


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
        data = YAML(typ="safe", pure=True).load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path}: no config file; run `ledger init`") from None
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(
            "config does not parse",
            [Problem(str(path), where, f"YAML error: {getattr(exc, 'problem', exc)}", "fix the YAML syntax")],
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(
            "config is not a mapping",
            [Problem(str(path), "", "the config must be a YAML mapping", "see `ledger init` for the layout")],
        )
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(
                str(path),
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
