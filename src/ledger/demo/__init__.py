"""The example campaign: the FastVideo LTX-2 MFU campaign, re-entered from its published facts.

`build_demo(DIR)` writes it into DIR as a fresh git repository: config, spec page and
records, added through the same store API a user's harness calls. Tests and later
features use it as their fixture.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..analysis.sandwich import compute as compute_sandwich
from ..analysis.sandwich import floor_from_config
from ..checks.admission import admit
from ..config import set_config_value
from ..errors import InputError, Problem
from ..git import Git
from ..schema.envelope import Envelope
from ..site.mkdocs_run import prepare_mkdocs
from ..store.add import Stamping, add
from ..store.init import init
from ..store.inputs import Item, parse_items
from ..store.ledger import Ledger

DATA = "fastvideo-ltx2.yaml"
CONTRACT = "ltx2-t2v-fp32master-81x480x832"
UNOWNED_HIGH_WATER = 1
SPEC = "ltx2-mfu.md"


@dataclass(frozen=True)
class Campaign:
    """One example campaign: its records, spec page, current contract and owed high-water mark."""

    name: str
    data: str
    spec: str
    contract: str
    high_water: int
    title: str
    start: str


#: The example campaigns, by the name `ledger demo --campaign` takes.
CAMPAIGNS = {
    "ltx2": Campaign(
        "ltx2", DATA, SPEC, CONTRACT, UNOWNED_HIGH_WATER, "FastVideo LTX-2 training MFU", "LTX-2 MFU campaign"
    ),
    "decode": Campaign(
        "decode",
        "ltx25-decode.yaml",
        "ltx25-decode-speed.md",
        "ltx25-decode-threads-synthetic",
        1,
        "LTX-2.5 decode speed and memory (CPU threads sweep)",
        "LTX-2.5 decode-speed investigation",
    ),
}


@dataclass
class DemoResult:
    root: Path
    ledger: Ledger
    records: list[Envelope] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    campaign: str = "ltx2"


def campaign_text(campaign: str = "ltx2") -> str:
    return resources.files("ledger.demo").joinpath("data", CAMPAIGNS[campaign].data).read_text(encoding="utf-8")


def _resolve(value: Any, aliases: dict[str, str], where: str) -> Any:
    if isinstance(value, str) and value.startswith("@"):
        try:
            return aliases[value[1:]]
        except KeyError:
            raise InputError(
                "unknown alias",
                [Problem(DATA, where, f"refers to {value}, which no earlier record defines", "define the alias first")],
            ) from None
    if isinstance(value, list):
        return [_resolve(v, aliases, where) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, aliases, f"{where}.{k}") for k, v in value.items()}
    return value


#: Why the demo's ledger.yaml turns sha-abbreviated off, written above that line.
TRANSCRIBED = (
    "  # This example re-enters a published campaign: its records carry the abbreviated SHAs the\n"
    "  # campaign published, of a repository this folder does not clone, so none can resolve and\n"
    "  # every record would warn alike. Keep sha-abbreviated on in a ledger of your own.\n"
)


def declare_transcribed(target: Path) -> None:
    """Turn sha-abbreviated off in the demo's ledger.yaml, saying why above the line: a
    demo checks clean, and the reader sees the one setting that makes it so."""
    set_config_value(target, "rules.sha-abbreviated", {"severity": "off"})
    path = target / "ledger.yaml"
    text = path.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines(keepends=True) if x.lstrip().startswith("sha-abbreviated:"))
    path.write_text(text.replace(line, TRANSCRIBED + line, 1), encoding="utf-8")


def build_demo(target: Path, campaign: str = "ltx2") -> DemoResult:
    """Write an example campaign (`ltx2`: training MFU; `decode`: the LTX-2.5 decode-speed
    investigation) into `target` (which must be absent or empty) and commit it."""
    if campaign not in CAMPAIGNS:
        raise InputError(
            "unknown campaign",
            [Problem("--campaign", "", f"no example campaign {campaign!r}", "use one of: " + ", ".join(CAMPAIGNS))],
        )
    chosen = CAMPAIGNS[campaign]
    target = target.resolve()
    if target.exists() and any(target.iterdir()):
        raise InputError(
            "target not empty",
            [Problem(str(target), "", "exists and is not empty", "give a new folder, or remove this one first")],
        )
    target.mkdir(parents=True, exist_ok=True)
    repo = Git(target)
    repo.run("init", "-q", "--initial-branch=main")
    if not repo.maybe("config", "user.email"):
        repo.run("config", "user.name", "ledger demo")
        repo.run("config", "user.email", "demo@ledger.invalid")
    init(target)
    # The campaign's own contract is the current one (for ltx2, not the newer BF16 diagnostic one).
    set_config_value(target, "contract", chosen.contract)
    ledger = Ledger.open(target)
    prepare_mkdocs(ledger)  # committed as the site build will read it: the build leaves the tree clean
    # Every record goes through the rules `ledger check` applies, as `ledger add` does.
    admit(ledger)
    spec_dir = ledger.specs_dir
    spec_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(str(resources.files("ledger.demo").joinpath("data", chosen.spec)), spec_dir / chosen.spec)
    repo.run("add", "-A")
    repo.run("commit", "-q", "-m", f"Start the {chosen.start} ledger")

    floor = floor_from_config(ledger.config)
    result = DemoResult(target, ledger, campaign=campaign)
    for item in parse_items(campaign_text(campaign), chosen.data, ".yaml"):
        data = dict(item.data)
        alias = data.pop("alias", None)
        kind = data.pop("kind")
        data = _resolve(data, result.aliases, f"line {item.line}")
        if kind == "sandwich":
            s = compute_sandwich(
                data["a_value"],
                data["candidate_value"],
                data.get("b_value"),
                floor_percent=floor,
                lower_is_better=data.get("lower_is_better", True),
                extra_deltas=data.get("extra_deltas"),
            )
            data.update(s.record_fields())
        (record,) = add(ledger, kind, [Item(data, item.file, item.line)], Stamping())
        result.records.append(record)
        if alias:
            result.aliases[alias] = record.id
    # The campaign's spec leaves one owed item unowned: that is its high-water mark.
    set_config_value(target, "rules.owed-high-water.high_water", chosen.high_water)
    declare_transcribed(target)
    result.ledger = Ledger.open(target)
    repo.run("add", "-A")
    repo.run("commit", "-q", "-m", f"Record the campaign's evidence ({len(result.records)} records)")
    return result
