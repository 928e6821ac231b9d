"""`ledger add` runs what `ledger check` would refuse, before anything is written.

Every rule that can be decided from the new records and the ledger as it stands runs at
write time, through the same code the checker runs: schema, content hash and placement,
the artifact policy (size, binary content, secrets, conflict markers), the sandwich
verdict, unique keys (contract names, issue numbers) against the records on disk,
references, comparability (sandwich arms, MFU audits), the source SHA, attachments, and
the guidance rules (rejected families, eligibility readings). A rule at error severity
refuses the whole batch, naming the input file and place, the rule id and its fix; rules
at warning severity are kept in `warnings` for the command to print. Rules about the
history (append-only) and pages are not about new records and stay with `check`.

Install it on a ledger with `admit(ledger)`: the store's `Ledger.write` then calls its
`admit` (the store's `Admission` interface) for every batch, whoever writes (add,
importers, the sandwich runner, the collectors). Each record arrives encoded once (the
bytes its file will hold); references the store's `Batch` already resolved are not
looked up again; unique keys come from the key index (checks/keyindex.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from ..config import CONFIG_NAME
from ..errors import InputError, Problem
from ..schema.kinds import Environment
from ..schema.registry import KINDS
from ..store.ledger import Ledger, UnreadableRecord, shard_of
from ..store.staged import Staged
from . import guidance
from .crossrecord import check_attachments, check_forks, check_unique, correctors_in, cross_checks, supersedes_of
from .findings import Findings
from .records import FileRules, Info, info_of, inspect_artifact, inspect_file, placement_rules, record_rules
from .registry import configure
from .result import ERROR, WARNING, Violation
from .trees import DiskTree

#: Rules of `check` that judge history or pages, not new records: they never run at add.
NOT_AT_ADD = frozenset(
    {"append-only", "cell-width", "prose-budget", "owed-high-water", "figures-spread", "regate-owed"}
)


class Admission:
    """The write-time check of one ledger (the store's `Admission` interface)."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self.active = configure(ledger.config.rules, CONFIG_NAME)
        self.tree = DiskTree(ledger)
        self.warnings: list[Violation] = []

    # -- the interface -------------------------------------------------------------------------

    def admit(self, ledger: Ledger, batch: Sequence[Staged], *, references_checked: bool = False) -> None:
        found = self.judge(batch, references_checked=references_checked)
        errors = [v for v in found if v.severity == ERROR]
        self.warnings.extend(v for v in found if v.severity == WARNING)
        if errors:
            problems = [self.problem(v, batch) for v in errors]
            raise InputError(
                f"{len(problems)} problem(s) that `ledger check` would refuse; nothing was written", problems
            )

    def problem(self, v: Violation, batch: Sequence[Staged]) -> Problem:
        """A violation as an input problem: the input file and place when known, the rule id first."""
        file, where = v.file, ""
        for staged in batch:
            if staged.origin is not None and f"/{staged.data['id']}.json" in v.file:
                file, where = staged.origin[0], staged.origin[1] or ""
                break
        parts = (where, f"field {v.field}" if v.field else "", f"line {v.line}" if v.line and not where else "")
        place = ", ".join(p for p in parts if p)
        return Problem(file, place, f"{v.rule}: {v.message}", v.fix)

    # -- the rules ---------------------------------------------------------------------------

    def judge(self, batch: Sequence[Staged], *, references_checked: bool = False) -> list[Violation]:
        """Every violation `check` would report about these records, given the ledger on disk."""
        f = Findings("add", self.ledger.config, self.active)
        records = [s.data for s in batch]
        infos = self.one_by_one(f, batch)
        new = {i.id: i for i in infos}
        known: dict[str, Info] = dict(new)
        exists_on_disk: dict[str, bool] = {}

        def exists(ref: str) -> bool:
            if ref not in new and ref not in exists_on_disk:
                exists_on_disk[ref] = self.ledger.exists(ref)
            return ref in new or exists_on_disk[ref]

        def lookup(ref: str) -> Info | None:
            """A referenced record's `Info`: the batch's, else read from disk."""
            if ref in known:
                return known[ref]
            found = self.tree.find({ref})
            if ref not in found:
                return None
            rel, raw = found[ref]
            _, info = inspect_file(rel, raw, FileRules(prefix=f.records_rel + "/"))
            if info is not None:
                known[ref] = info
            return info

        cross_checks(f, infos, lookup, None if references_checked else exists, self.ledger.root)
        if f.on("unique-key"):
            check_unique(f, infos, self.keys_on_disk({i.kind for i in infos if i.keys}, infos), self.tree)
        if f.on("correction-fork") and any(supersedes_of(i) for i in infos):
            check_forks(f, infos, correctors_in(self.tree, f.records_rel), at_add=True)
        check_attachments(f, infos, self.tree)
        self.guidance(f, records, infos)
        return [v for v in f.result.violations if v.rule not in NOT_AT_ADD]

    def one_by_one(self, f: Findings, batch: Sequence[Staged]) -> list[Info]:
        """The per-file rules on each record's canonical bytes; the records' `Info`."""
        rules = f.file_rules()
        infos: list[Info] = []
        for staged in batch:
            data, raw, model = staged.data, staged.raw, staged.model
            rel = f"{data['kind']}/{shard_of(data['id'])}/{data['id']}.json"
            if model is None:  # an importer's batch: validate as check does
                found, info = inspect_file(rel, raw, rules)
            else:  # validated by the store already: the rules that remain, as check runs them
                display = rules.prefix + rel
                found = inspect_artifact(display, raw, rules)
                placement_rules(rel, display, raw, data, model.kind, rules, found)
                record_rules(display, model, model.kind, rules, found)
                info = info_of(display, model)
            f.extend(found)
            if info is not None:
                infos.append(info)
        return infos

    def guidance(self, f: Findings, records: list[dict[str, Any]], infos: list[Info]) -> None:
        """rejected-family and baseline-eligibility against the ledger as it stands."""
        if f.on("rejected-family") and any(i.family for i in infos if i.kind != "decision"):
            decisions = self.on_disk(f, "decision") + [i for i in infos if i.kind == "decision"]
            guidance.check_families(
                infos,
                decisions,
                f.emit,
                f.params("rejected-family")["verdicts"],
                guidance.superseded_of(infos) | guidance.superseded_of(decisions),
            )
        if f.on("baseline-eligibility") and any(i.kind == "measurement" and i.health == "healthy" for i in infos):
            envs = {e.id: e for e in self.environments()}
            for data in records:
                if data["kind"] == "environment":
                    envs[data["id"]] = Environment.model_validate(data)
            guidance.check_eligibility(infos, envs, f.params("baseline-eligibility"), f.emit)

    # -- the ledger as it stands ---------------------------------------------------------------

    def keys_on_disk(self, kinds: set[str], new: list[Info]) -> dict[str, dict[str, list[str]]]:
        """kind -> "field=json" -> paths (relative to the kind's folder) of keyed records on disk."""
        batch = {i.id for i in new}
        out: dict[str, dict[str, list[str]]] = {}
        for kind in kinds:
            keys = self.tree.keys(kind, KINDS[kind].UNIQUE_KEYS)
            kept = {k: [p for p in paths if PurePosixPath(p).stem not in batch] for k, paths in keys.items()}
            out[kind] = {k: paths for k, paths in kept.items() if paths}
        return out

    def on_disk(self, f: Findings, kind: str) -> list[Info]:
        out = []
        for path in self.ledger.iter_paths(kind):
            rel = path.relative_to(self.ledger.records_dir).as_posix()
            _, info = inspect_file(rel, path.read_bytes(), FileRules(prefix=f.records_rel + "/"))
            if info is not None:
                out.append(info)
        return out

    def environments(self) -> list[Environment]:
        out = []
        for path in self.ledger.iter_paths("environment"):
            try:
                record = self.ledger.load(path)
            except (UnreadableRecord, OSError):  # schema-valid reports it at check; a bug raises
                continue
            if isinstance(record, Environment):
                out.append(record)
        return out


def admit(ledger: Ledger) -> Admission:
    """Install the write-time check on `ledger` (every later write runs it) and return it."""
    admission = Admission(ledger)
    ledger.admission = admission
    return admission
