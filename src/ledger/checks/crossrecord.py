"""The rules that judge records against each other: references resolve, comparability,
supersedes chains, source SHAs, unique keys, attachments. They read what else they need
through a `RecordTree` (checks/trees.py), wherever the check runs."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ..schema.registry import KINDS
from . import comparability, derived
from .findings import Findings
from .info import Info
from .records import supersedes_cycles
from .shas import Pushing, check_shas
from .trees import RecordTree

Lookup = Callable[[str], "Info | None"]


def cross_checks(
    f: Findings,
    new: list[Info],
    lookup: Lookup,
    exists: Callable[[str], bool] | None,
    root: Path,
    pushing: Pushing | None = None,
) -> None:
    """reference-resolves (unless `exists` is None: resolved by the writer already),
    comparability, supersedes-chain and the SHA rules for `new`."""
    corrected = {ref for info in new for ref in supersedes_of(info)}
    for info in new:
        if exists is not None:
            for where, ref in info.refs:
                if not exists(ref):
                    f.emit(
                        "reference-resolves",
                        info.path,
                        f"refers to record {ref}, which is not in the ledger",
                        field=where,
                    )
        comparability.check(info, lookup, f.emit, corrected=info.id in corrected)
        derived.check(info, lookup, f.emit)
    check_chains(f, new, lookup)
    check_shas(f, new, root, pushing)


def check_chains(f: Findings, new: list[Info], lookup: Lookup) -> None:
    """A `supersedes` chain that comes back to a record it started from (a cycle)."""
    if not f.on("supersedes-chain"):
        return
    for info, cycle in supersedes_cycles(new, lookup):
        f.emit(
            "supersedes-chain",
            info.path,
            "supersedes chain comes back to this record: " + " -> ".join([*cycle, cycle[0]]),
            field="supersedes",
        )


#: id -> (path, the ids it lists in `supersedes`) of the records that correct something.
Correctors = dict[str, tuple[str, frozenset[str]]]


def correctors_in(tree: RecordTree, records_rel: str) -> Correctors:
    """Every record of `tree` that supersedes something, through each kind's cached index of
    `supersedes` (checks/keyindex.py: a push reads only what changed since the last one)."""
    out: Correctors = {}
    for kind in sorted(KINDS):
        for key, paths in tree.keys(kind, ("supersedes",), f"supersedes-{kind}").items():
            try:
                ids = json.loads(key.partition("=")[2])
            except ValueError:
                continue
            refs = frozenset(i for i in ids if isinstance(i, str)) if isinstance(ids, list) else frozenset()
            for p in paths:
                if refs:
                    out[PurePosixPath(p).stem] = (f"{records_rel}/{kind}/{p}", refs)
    return out


def live_corrections(target: str, correctors_of: dict[str, set[str]]) -> set[str]:
    """The live records (superseded by none) whose `supersedes` chain reaches `target`."""
    heads: set[str] = set()
    seen = {target}
    stack = [target]
    while stack:
        for rid in correctors_of.get(stack.pop(), ()):
            if rid in seen:
                continue
            seen.add(rid)
            if correctors_of.get(rid):
                stack.append(rid)
            else:
                heads.add(rid)
    return heads


def check_forks(f: Findings, new: list[Info], correctors: Correctors, *, at_add: bool = False) -> None:
    """correction-fork: a record that `new` corrects (directly or down a chain) has one live
    correction at most. `correctors` holds the other records that supersede something (the
    tree the new ones join); a fork is reported once, on the newest of its live corrections
    that `new` brings, naming the others."""
    if not f.on("correction-fork"):
        return
    targets = {ref for info in new for ref in supersedes_of(info)}
    if not targets:
        return
    entries = dict(correctors)
    kinds = {}
    for info in new:
        entries[info.id] = (info.path, frozenset(supersedes_of(info)))
        kinds[info.id] = info.kind
    correctors_of: dict[str, set[str]] = defaultdict(set)
    for rid, (_, sup) in entries.items():
        for old in sup:
            correctors_of[old].add(rid)
    reported: set[frozenset[str]] = set()
    for target in sorted(targets):
        heads = live_corrections(target, correctors_of)
        blamed = sorted(h for h in heads if h in kinds)
        if len(heads) < 2 or not blamed or frozenset(heads) in reported:
            continue
        reported.add(frozenset(heads))
        rid = blamed[-1]
        if any(v.rule == "unique-key" and v.file == entries[rid][0] for v in f.result.violations):
            continue  # a keyed kind's fork (two corrections of one issue): unique-key said so
        others = sorted(heads - {rid})
        ids = ", ".join(f'"{i}"' for i in sorted(heads))
        if at_add:
            # The refused record is not written: a fix naming its id would name nothing. Correct
            # the live correction instead, so there is one line of corrections again.
            live = ", ".join(f'"{i}"' for i in others)
            fix = (
                f"this record was not written; supersede the live correction instead: the same record with "
                f'`"supersedes": [{live}]` (it then replaces {target} through it)'
            )
        else:
            fix = (
                f"supersede both: write one {kinds[rid]} record with the figures that stand and "
                f'`"supersedes": [{ids}]` (`ledger add {kinds[rid]} -`), then push it with the others'
            )
        f.emit(
            "correction-fork",
            entries[rid][0],
            f"corrects record {target}, and so does {' and '.join(entries[o][0] for o in others)}: "
            f"{len(heads)} live corrections of one record (each supersedes it, none supersedes the other)",
            field="supersedes",
            fix=fix,
        )


def check_unique(
    f: Findings,
    infos: list[Info],
    existing: dict[str, dict[str, list[str]]] | None = None,
    tree: RecordTree | None = None,
) -> None:
    """Unique keys among `infos`, and against `existing` (kind -> key -> paths), the keys of
    the records in `tree`, when given.

    A record may repeat a key when it corrects the record holding it: it lists that record
    in `supersedes` (an issue closed or given an owner, a contract corrected). Two records
    that correct the same one fork the key and are refused, as is a repeat that corrects nothing.
    """
    groups: dict[tuple[str, str, str], list[Info]] = defaultdict(list)
    for info in infos:
        for name, value in info.keys:
            groups[(info.kind, name, value)].append(info)
    for (kind, name, raw_value), group in groups.items():
        key = f"{name}={raw_value}"
        value = _shown(raw_value)
        held = existing.get(kind, {}).get(key, []) if existing is not None else []
        # (id, path, supersedes) of the holders already in the tree, read only when a key repeats
        holders: list[tuple[str, str, set[str]]] = []
        if held and tree is not None:
            raws = tree.read([f"{kind}/{p}" for p in held])
            for p, data in zip(held, map(_record_dict, raws), strict=True):
                path = f"{f.records_rel}/{kind}/{p}"
                holders.append((data.get("id") or PurePosixPath(path).stem, path, set(data.get("supersedes") or [])))
        if not holders and len(group) == 1:
            continue
        corrected_by: dict[str, str] = {}
        for _rid, path, sup in holders:
            for old in sup:
                corrected_by.setdefault(old, path)
        for info in sorted(group, key=lambda i: i.id):
            sup = supersedes_of(info)
            ids = {rid: path for rid, path, _ in holders}
            if ids:
                corrects = sup & set(ids)
                if not corrects:
                    first = next(iter(ids.values()))
                    f.emit(
                        "unique-key",
                        info.path,
                        f"{kind} {name} {value} is already used by {first}",
                        field=name,
                        fix=unique_key_fix(kind, name, value, first),
                    )
                for old in sorted(corrects):
                    if old in corrected_by:
                        f.emit(
                            "unique-key",
                            info.path,
                            f"{kind} {name} {value}: {ids[old]} is already corrected by {corrected_by[old]}, "
                            "so this correction forks the key",
                            field="supersedes",
                            fix=f"supersede {corrected_by[old]} (the key's live record) instead",
                        )
            for old in sup:
                corrected_by.setdefault(old, info.path)
            holders.append((info.id, info.path, sup))


def _record_dict(raw: bytes | None) -> dict:
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def check_attachments(f: Findings, infos: list[Info], tree: RecordTree) -> None:
    """attachments: each file a record attaches is in the records folder, regular, and matches its sha256."""
    if not f.on("attachments"):
        return
    for info in infos:
        for rel, digest in info.attachments:
            path = PurePosixPath(rel)
            if path.is_absolute() or ".." in path.parts:
                f.emit(
                    "attachments",
                    info.path,
                    f"attachment {rel!r} is outside the records folder",
                    field=f"attachments.{rel}",
                )
                continue
            problem, data = tree.attachment(path.as_posix())
            if problem:
                f.emit("attachments", info.path, f"attachment {rel!r} {problem}", field=f"attachments.{rel}")
            elif hashlib.sha256(data).hexdigest() != digest:
                f.emit(
                    "attachments",
                    info.path,
                    f"attachment {rel!r} does not match its sha256",
                    field=f"attachments.{rel}",
                )


def _shown(raw: str) -> str:
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def unique_key_fix(kind: str, name: str, value: str, holder: str) -> str:
    """What to do about a repeated key, in the kind's own words."""
    if kind == "issue":
        return (
            f"to correct issue #{value} (close it, give it an owner, retitle it), list the id of {holder} in "
            "`supersedes`; a new issue takes a free number (`ledger list --kind issue` shows the numbers)"
        )
    if kind == "contract":
        return (
            f"to correct contract {value}, list the id of {holder} in `supersedes`; a different contract "
            "takes another name (`ledger list --kind contract` shows the names)"
        )
    return (
        f"to correct that {kind}, list the id of {holder} in `supersedes`; otherwise give this one "
        f"another {name} (`ledger list --kind {kind}`)"
    )


def supersedes_of(info: Info) -> set[str]:
    return {ref for where, ref in info.refs if where.startswith("supersedes")}


#: What the owed count reads as an issue's owner once its live record is closed: an owed item
#: tied only to closed issues is owed no more, so it is not counted as unowned either
#: (`ledger status` and the site drop it: `analysis.keyed.settled`).
SETTLED = "(issue closed)"


def issue_owner_or_settled(owner: str | None, status: str | None) -> str | None:
    """An issue record's owner as the owed count sees it: `SETTLED` when it is closed."""
    return SETTLED if status == "closed" else owner


def live_issue_owners(found: list[tuple[str, int | None, str | None, set[str]]]) -> dict[int, str | None]:
    """number -> owner of the issue's live record: the newest that no record of its number supersedes."""
    superseded = {s for _, _, _, sup in found for s in sup}
    out: dict[int, tuple[str, str | None]] = {}
    for rid, number, owner, _ in found:
        if number is None or rid in superseded:
            continue
        if number not in out or rid > out[number][0]:
            out[number] = (rid, owner)
    for rid, number, owner, _ in found:  # a broken chain still names an owner
        if number is not None and number not in out:
            out[number] = (rid, owner)
    return {n: owner for n, (_, owner) in out.items()}
