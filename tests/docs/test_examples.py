"""Every YAML example in docs/guide/*.md passes as written, and the quickstart runs as written
(issue 28 item 10: "Every example in docs/ passes as written (test them)").

Each fenced YAML block is placed by what it is and run through the real CLI in a fresh ledger:

- a record (it says `kind:`, or a `<!-- docs-example: KIND -->` line above it names the kind;
  `fields of KIND` for a fragment that shows some fields) is added with `ledger add`; an id the
  example leaves as a placeholder is the id of a record of that kind made in the same ledger;
- a `ledger.yaml` snippet (its keys are config keys) is merged into the ledger's config, which
  `ledger rules` and `ledger status` must read without a usage error;
- a page's front matter (`---` ... `---`) heads a spec page that `ledger check` must parse;
- a file for another program (a GitHub workflow: `on:`/`jobs:`) must be YAML.

A block none of these fits fails, naming its file and line. The quickstart's console session
(docs/guide/quickstart.md) runs command by command in a fresh folder: each `$ ledger ...` line in
this process, each exit code as the output shown implies (`error:` is 2, else 0), the ids it
prints carried into the commands and files after it.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import GIT_ENV, LEDGER_BIN, ROOT, cli
from ruamel.yaml import YAML

from ledger.config import Config
from ledger.schema.registry import model_for

GUIDE = ROOT / "docs" / "guide"
MARKER = re.compile(r"^<!--\s*docs-example:\s*(?P<what>.+?)\s*-->$")
ULID = re.compile(r"\b01[0-9A-HJKMNP-TV-Z]{24}\b")
#: Reference fields -> the kind of record a placeholder id in them stands for.
REFERENCED = {
    "contract": "contract",
    "flop_audit": "flop-audit",
    "environment": "environment",
    "evidence": "measurement",
    "control_a": "measurement",
    "candidate": "measurement",
    "control_b": "measurement",
}
WORKFLOW_KEYS = {"on", "jobs", True}  # YAML 1.1 reads a bare `on:` as True


@dataclass
class Block:
    file: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    marker: str | None

    @property
    def where(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    out: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^```(\w+)\s*$", lines[i])
        if fence is None:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        above = lines[start - 1].strip() if start else ""
        marked = MARKER.match(above)
        out.append(Block(path, start + 1, fence.group(1), "\n".join(body) + "\n", marked["what"] if marked else None))
        i += 1
    return out


def yaml_blocks() -> list[Block]:
    return [b for path in sorted(GUIDE.glob("*.md")) for b in blocks(path) if b.lang == "yaml"]


def documents(text: str) -> list:
    return [d for d in YAML(typ="safe").load_all(io.StringIO(text)) if d is not None]


class Ledger:
    """A fresh ledger the examples run in, with a record of each kind they may refer to."""

    def __init__(self, repo: Path):
        self.repo = repo
        self.latest: dict[str, str] = {}

    def add(self, kind: str, body: dict, where: str) -> str:
        body = dict(body)
        body.pop("kind", None)
        model = model_for(kind)
        for name in model.REFERENCE_FIELDS:
            wanted = REFERENCED.get(name)
            value = body.get(name)
            if wanted is None or value is None:
                continue
            if isinstance(value, list):
                body[name] = [v if self.exists(v) else self.need(wanted, where) for v in value]
            elif not self.exists(value):
                body[name] = self.need(wanted, where)
        result = cli(self.repo, "add", kind, "-", input=json.dumps(body))
        assert result.returncode == 0, f"{where}: `ledger add {kind}` of the example failed:\n{result.stderr}"
        rid = result.stdout.split()[0]
        self.latest[kind] = rid
        return rid

    def exists(self, value: object) -> bool:
        return (
            isinstance(value, str)
            and ULID.fullmatch(value) is not None
            and any(v == value for v in self.latest.values())
        )

    def need(self, kind: str, where: str) -> str:
        if kind not in self.latest:
            base = {
                "contract": {"name": "docs-example-contract", "model": "docs example"},
                "measurement": {"samples": [1.0]},
                "flop-audit": {
                    "flop_per_sample": 1,
                    "derivation": "example",
                    "peak": {"name": "p", "tflops_per_gpu": 1},
                },
                "environment": {},
            }[kind]
            self.add(kind, base, where)
        return self.latest[kind]


def place(block: Block) -> str:
    """What the block is: a record kind, `fields of KIND`, `config`, `front-matter` or `workflow`."""
    if block.marker:
        return block.marker
    if block.text.lstrip().startswith("---"):
        return "front-matter"
    docs = documents(block.text)
    if len(docs) == 1 and isinstance(docs[0], dict) and set(docs[0]) & WORKFLOW_KEYS:
        return "workflow"
    if docs and all(isinstance(d, dict) and ("kind" in d or is_config(d)) for d in docs):
        # Records, a ledger.yaml snippet, or both (a record and the rule that judges it).
        return "config" if len(docs) == 1 and "kind" not in docs[0] else "records"
    return ""


def is_config(doc: dict) -> bool:
    return set(doc) <= set(Config.model_fields)


def merge(into: dict, extra: dict) -> dict:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge(into[key], value)
        else:
            into[key] = value
    return into


def run_config(repo: Path, block: Block, snippet: dict) -> None:
    config_path = repo / "ledger.yaml"
    config = YAML(typ="safe").load(config_path.read_text(encoding="utf-8")) or {}
    # Files and folders the snippet names exist in a real campaign; make them here.
    for entry in snippet.get("guard", []) if isinstance(snippet.get("guard"), list) else []:
        target = repo / str(entry).replace("**/", "").replace("*", "example")
        if str(entry).endswith(".md"):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("# Example\n", encoding="utf-8")
        else:
            target.mkdir(parents=True, exist_ok=True)
    for folder in (snippet.get("sources") or {}).values():
        (repo / folder).mkdir(parents=True, exist_ok=True)
    templates = (snippet.get("site") or {}).get("templates")
    if templates:
        (repo / templates).mkdir(parents=True, exist_ok=True)
    out = io.StringIO()
    YAML(typ="safe").dump(merge(config, snippet), out)
    config_path.write_text(out.getvalue(), encoding="utf-8")
    for command in (("rules",), ("status",)):
        result = cli(repo, *command)
        assert result.returncode == 0, f"{block.where}: `ledger {command[0]}` with this config:\n{result.stderr}"


def run_front_matter(repo: Path, block: Block) -> None:
    [front] = documents(block.text)
    sweep = (front.get("figures") or {}).get("sweep") if isinstance(front.get("figures"), dict) else None
    if sweep:
        # The contract a page's figures are judged against exists in the campaign it is from.
        contract = {"name": sweep, "model": "docs example", "sweep": [{"name": "threads", "unit": "workers"}]}
        Ledger(repo).add("contract", contract, block.where)
    page = repo / "ledger" / "specs" / "example.md"
    page.write_text(block.text.strip() + "\n\n# Example\n\nA page.\n", encoding="utf-8")
    result = cli(repo, "check", "--all", "--format", "json")
    assert result.returncode in (0, 1), (
        f"{block.where}: `ledger check` of a page with this front matter:\n{result.stderr}"
    )
    problems = [
        v
        for v in json.loads(result.stdout)["violations"]
        if v["file"].endswith("example.md") and "front matter" in v["message"]
    ]
    assert not problems, f"{block.where}: the front matter is refused: {problems}"


@pytest.mark.parametrize("block", yaml_blocks(), ids=lambda b: b.where)
def test_yaml_example_passes_as_written(block: Block, repo: Path) -> None:
    what = place(block)
    assert what, (
        f"{block.where}: a YAML example ledger cannot place; write `kind:` in it, or put "
        "`<!-- docs-example: KIND -->` (or `fields of KIND`, `config`, `front-matter`, `workflow`) on the line above"
    )
    ledger = Ledger(repo)
    if what == "records":
        for doc in documents(block.text):
            if "kind" in doc:
                ledger.add(doc["kind"], doc, block.where)
            else:
                run_config(repo, block, doc)
    elif what.startswith("fields of "):
        kind = what.removeprefix("fields of ")
        base = {"measurement": {"samples": [1.0]}, "sandwich": {}, "hypothesis": {"title": "example"}}.get(kind, {})
        ledger.add(kind, {**base, **documents(block.text)[0]}, block.where)
    elif what == "config":
        run_config(repo, block, documents(block.text)[0])
    elif what == "front-matter":
        run_front_matter(repo, block)
    elif what == "workflow":
        assert documents(block.text), f"{block.where}: not YAML"
    else:
        [doc] = documents(block.text)
        ledger.add(what, doc, block.where)


def session(path: Path) -> list[tuple[str, list[str], Block]]:
    """The `$ ` commands of a page's console blocks, each with the output shown under it."""
    out: list[tuple[str, list[str], Block]] = []
    for block in blocks(path):
        if block.lang != "console":
            continue
        for line in block.text.splitlines():
            if line.startswith("$ "):
                out.append((line[2:], [], block))
            elif out and out[-1][2] is block:
                out[-1][1].append(line)
    return out


@pytest.mark.slow  # several seconds: out of the quick subset
def test_the_quickstart_runs_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "qs"
    folder.mkdir()
    path = GUIDE / "quickstart.md"
    # The files the page shows in YAML blocks, named in the sentence above each.
    lines = path.read_text(encoding="utf-8").splitlines()
    files: dict[str, str] = {}
    for block in blocks(path):
        if block.lang == "yaml":
            named = re.findall(r"`([\w.-]+\.yaml)`", "\n".join(lines[max(0, block.line - 5) : block.line - 1]))
            if named:
                files[named[-1]] = block.text
    assert {"contract.yaml", "m.yaml"} <= set(files), files
    ids: dict[str, str] = {}

    def substitute(value: str) -> str:
        return ULID.sub(lambda found: ids.get(found.group(0), found.group(0)), value)

    for command, shown, block in session(path):
        where = f"{block.where} (`$ {command}`)"
        for name, body in files.items():
            (folder / name).write_text(substitute(body), encoding="utf-8")
        if command.startswith("cat "):
            # The page shows the file it is about to use: that is its content.
            files[command.split()[1]] = "\n".join(shown) + "\n"
            continue
        command = substitute(command)
        expected = 2 if shown and shown[0].startswith("error:") else 0
        if command.startswith("ledger ") and not re.search(r"[|&;<>]", command):
            result = cli(folder, *shlex.split(command)[1:])
        else:
            env = {**GIT_ENV, "PATH": f"{LEDGER_BIN.parent}:/usr/bin:/bin"}
            result = subprocess.run(["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True)
        assert result.returncode == expected, f"{where}: exit {result.returncode}, not {expected}:\n{result.stderr}"
        printed, documented = ULID.findall(result.stdout), [i for line in shown for i in ULID.findall(line)]
        if command.startswith("ledger add") and len(printed) == 1 and len(documented) == 1:
            ids[documented[0]] = printed[0]
    status = cli(folder, "status", "--format", "json")
    assert status.returncode == 0 and "ltx2-t2v-fp32master-81x480x832" in status.stdout
