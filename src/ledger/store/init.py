"""`ledger init`: a commented config file, the records folder, and an mkdocs.yml. Idempotent."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from ruamel.yaml.comments import CommentedMap

from ..config import CONFIG_NAME, load_config, yaml_rt

RECORDS_GITIGNORE = "# Temporary files of interrupted writes; never part of the ledger.\n.tmp-*\n"

#: Keys ledger needs in mkdocs.yml; added when missing, never overwritten.
MKDOCS_REQUIRED: dict[str, object] = {
    "theme": {"name": "material", "font": False},
    "validation": {
        "omitted_files": "warn",
        "absolute_links": "warn",
        "unrecognized_links": "warn",
        "anchors": "warn",
    },
}


@dataclass
class InitResult:
    root: Path
    created: list[Path] = field(default_factory=list)
    updated: list[Path] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)


def _template(name: str) -> str:
    return resources.files("ledger.templates").joinpath("init", name).read_text(encoding="utf-8")


def init(root: Path) -> InitResult:
    root = root.resolve()
    root.mkdir(parents=True, exist_ok=True)
    result = InitResult(root)
    config_path = root / CONFIG_NAME
    if not config_path.exists():
        config_path.write_text(_template("ledger.yaml"), encoding="utf-8")
        result.created.append(config_path)
    config = load_config(root)

    records = root / config.records
    gitignore = records / ".gitignore"
    if not gitignore.exists():
        records.mkdir(parents=True, exist_ok=True)
        gitignore.write_text(RECORDS_GITIGNORE, encoding="utf-8")
        result.created.append(gitignore)
    specs = root / config.specs
    if not specs.exists():
        specs.mkdir(parents=True)
        keep = specs / ".gitkeep"
        keep.write_text("", encoding="utf-8")
        result.created.append(keep)

    build_ignore = root / ".gitignore"
    wanted = [config.site.docs_dir.split("/")[0] + "/", config.site.site_dir.rstrip("/") + "/"]
    existing = build_ignore.read_text(encoding="utf-8").splitlines() if build_ignore.exists() else []
    missing = [w for w in wanted if w not in existing and "/" + w not in existing]
    if missing:
        text = "\n".join(existing + ["# ledger's generated site sources and HTML", *missing]) + "\n"
        build_ignore.write_text(text.lstrip("\n"), encoding="utf-8")
        (result.updated if existing else result.created).append(build_ignore)

    mkdocs = root / config.site.mkdocs_yml
    if not mkdocs.exists():
        text = _template("mkdocs.yml").replace("Evidence ledger", config.site.title)
        mkdocs.write_text(text, encoding="utf-8")
        result.created.append(mkdocs)
    if update_mkdocs(mkdocs, config.site.docs_dir, config.site.site_dir):
        if mkdocs not in result.created:
            result.updated.append(mkdocs)
    return result


def update_mkdocs(path: Path, docs_dir: str, site_dir: str) -> bool:
    """Add what ledger needs to an existing mkdocs.yml, keeping comments and the user's values."""
    yaml = yaml_rt()
    original = path.read_text(encoding="utf-8")
    data = yaml.load(original)
    if data is None:
        data = CommentedMap()
    data.setdefault("site_name", "Evidence ledger")
    data.setdefault("docs_dir", docs_dir)
    data.setdefault("site_dir", site_dir)
    for key, wanted in MKDOCS_REQUIRED.items():
        current = data.get(key)
        if current is None:
            data[key] = dict(wanted) if isinstance(wanted, dict) else wanted
        elif isinstance(current, dict) and isinstance(wanted, dict):
            for sub, value in wanted.items():
                current.setdefault(sub, value)
    out = io.StringIO()
    yaml.dump(data, out)
    text = out.getvalue()
    if text != original:
        path.write_text(text, encoding="utf-8")
        return True
    return False
