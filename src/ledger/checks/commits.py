"""What a range of commits adds (`--base REF`, `--pushed`, `--pre-push`), judged by the base
side's committed config, and the records folder's whole history (append-only)."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from .. import pages as pages_mod
from ..analysis.families import norm
from ..config import CONFIG_NAME
from ..git import EMPTY_TREE, Git
from ..schema.registry import KINDS
from ..store.ledger import Ledger
from . import guidance
from .crossrecord import (
    check_attachments,
    check_forks,
    check_unique,
    correctors_in,
    cross_checks,
    issue_owner_or_settled,
    live_issue_owners,
    supersedes_of,
)
from .findings import Findings
from .guarded import base_guarded, guarded_of
from .history import STATUS_WORDS, attribute_problems, walk_records_history
from .info import Info
from .keyedrows import check_file, declared_changes, declared_files, page_declaration
from .pages import UNOWNED_TAG, named_items, owed_of_page, page_evidence, page_settings
from .perfile import check_pages
from .policy import Policy, accepts_config_change, config_at, judge_config
from .records import FileRules, inspect_artifact, inspect_batch, inspect_file, stamp_time
from .registry import RULES
from .shas import Pushing
from .sweepevidence import SweepEvidence, sweep_evidence
from .trees import CommitTree


def ledger_prefix(ledger: Ledger, git: Git) -> str:
    """The ledger's folder inside its repository, "" at the top, else with a trailing "/"."""
    rel = ledger.root.resolve().relative_to(git.toplevel.resolve()).as_posix()
    return "" if rel == "." else rel + "/"


class RangeCheck:
    """One range of commits, BASE to HEAD: the records it adds, the pages and config it
    changes. `known` (id -> Info) is shared by the ranges of one push: what one range read,
    the next need not read again."""

    def __init__(
        self,
        f: Findings,
        ledger: Ledger,
        git: Git,
        base: str,
        head: str,
        known: dict[str, Info],
        pushing: Pushing | None = None,
    ):
        self.f = f
        self.ledger = ledger
        self.git = git
        self.base = base
        self.head = head
        self.known = known
        self.pushing = pushing
        self.prefix = ledger_prefix(ledger, git)
        #: (before, after) when the change raises the owed high-water mark; the items named for it.
        self.raised: tuple[int, int] | None = None
        self.named: set[str] = set()
        #: Whether the range changes ledger.yaml: then every guarded document is judged.
        self.config_changed = False

    def rel(self, path: str) -> str:
        """A repository path relative to the ledger's root."""
        return path[len(self.prefix) :]

    def run(self) -> None:
        f, git = self.f, self.git
        f.result.ranges.append((self.base, self.head))
        base_config = config_at(git, self.base, self.prefix + CONFIG_NAME)
        head_config = config_at(git, self.head, self.prefix + CONFIG_NAME)
        policy = judge_config(base_config, head_config, self.ledger.config)
        f.use(policy.config, policy.active)
        # The folders as the base side's config names them.
        self.rec_prefix = f"{self.prefix}{f.records_rel}/"
        self.spec_prefix = f"{self.prefix}{f.specs_rel}/"
        self.base_tree = CommitTree(git, self.base, self.rec_prefix)
        self.head_tree = CommitTree(git, self.head, self.rec_prefix)
        # The documents the page rules read, as `--all` of the head reads them and as the base
        # guarded them (checks/guarded.py); those the base did not guard are read whole.
        keyed = f.params("keyed-rows") if f.on("keyed-rows") else None
        self.guard = guarded_of(f.config, keyed, head_config)
        self.base_guard = base_guarded(base_config)
        added, pages_changed, linked = self.changes()
        infos = self.records(added, policy)
        self.fetch({ref for info in infos for _, ref in info.refs})
        cross_checks(f, infos, self.known.get, lambda ref: ref in self.known, self.ledger.root, self.pushing)
        if f.on("unique-key"):
            existing = {k: self.base_tree.keys(k, KINDS[k].UNIQUE_KEYS) for k in {i.kind for i in infos if i.keys}}
            check_unique(f, infos, existing, self.base_tree)
        if f.on("correction-fork") and any(supersedes_of(i) for i in infos):
            check_forks(f, infos, correctors_in(self.head_tree, f.records_rel))
        if f.on("rejected-family") and any(i.family for i in infos):
            self.families(infos)
        check_attachments(f, infos, self.head_tree)
        if self.raised is not None:
            self.named = self.unowned_named(infos)
        self.pages(pages_changed, linked)
        if f.on("attributes"):
            self.attributes()

    def attributes(self) -> None:
        """`attributes`: the .gitattributes files the range adds or changes, anywhere."""
        changed = [
            p for status, p in self.git.diff(self.base, self.head, [":(glob)**/.gitattributes"]) if status in "AMT"
        ]
        for path, line, text in attribute_problems(self.git, self.head, changed):
            self.f.emit(
                "attributes", path, f"{text!r} changes the bytes git checks out for the ledger's files", line=line
            )

    def changes(self) -> tuple[list[str], list[str], set[str]]:
        """Records added, pages changed, and paths committed as links (never read); a record changed
        or removed is `append-only`; the config is read; declared keyed tables (and pages that
        declare them) are checked by `keyed-rows`."""
        f, git = self.f, self.git
        added: list[str] = []
        pages_changed: list[str] = []
        config = self.prefix + CONFIG_NAME
        keyed = declared_files(f.params("keyed-rows")) if f.on("keyed-rows") else []
        keyed_paths = {self.prefix + d.path: d for d in keyed}
        keyed_changes: list[tuple[str, str, str | int | None, bool]] = []  # (git path, status, key, is page)
        guard_roots = [self.prefix + r if r else (self.prefix or ".") for r in self.guard.roots()]
        changes, modes = git.diff_with_modes(
            self.base,
            self.head,
            list(dict.fromkeys([self.rec_prefix, self.spec_prefix, config, *keyed_paths, *guard_roots])),
        )
        linked = self.links(changes, modes)
        for status, path in changes:
            if path in linked:
                continue
            if path in keyed_paths and status in "MDT":
                keyed_changes.append((path, status, keyed_paths[path].key, False))
            elif path.startswith(self.spec_prefix) and path.endswith(".md") and status in "MDT" and f.on("keyed-rows"):
                keyed_changes.append((path, status, None, True))
            if path.startswith(self.rec_prefix):
                if status == "A":
                    added.append(path)
                else:
                    words = STATUS_WORDS.get(status, "changed")
                    f.emit("append-only", self.rel(path), f"record file {words} against {self.base[:12]}")
            elif self.guard.reads(self.rel(path)) and status in "AMT":
                pages_changed.append(path)  # a keyed file too: its page rules run as in `--all`
            elif path == config and status in "AM":
                self.config_changed = True
                raw = git.read_blobs([f"{self.head}:{path}"]).get(f"{self.head}:{path}") or b""
                f.extend(inspect_artifact(CONFIG_NAME, raw, f.file_rules(), text_page=True))
                if status == "M":
                    old = git.read_blobs([f"{self.base}:{path}"]).get(f"{self.base}:{path}") or b""
                    self.mark_lowered(old, raw)
        if keyed_changes and self.base != EMPTY_TREE:
            self.keyed_rows(keyed_changes)
        return added, pages_changed, linked

    def records(self, added: list[str], policy: Policy) -> list[Info]:
        """Inspect the added record files: a loosened config needs a record that accepts it
        (`config-change`), times are checked against their commits (`record-time`), and an id the
        range repeats, or that the base has, is `unique-id`."""
        f = self.f
        raws = self.head_tree.read([p[len(self.rec_prefix) :] for p in added])
        batch = [(p[len(self.rec_prefix) :], raw or b"") for p, raw in zip(added, raws, strict=True)]
        violations, infos = inspect_batch(batch, f.file_rules())
        f.extend(violations)
        f.result.records_checked += sum(1 for p in added if p.endswith(".json"))
        loosenings = policy.loosenings
        if any(i.kind == "note" and UNOWNED_TAG in i.tags for i in infos):
            # Raising the owed mark is judged with the pages: the note must name the new items.
            loosenings = [c for c in loosenings if c.field != MARK_FIELD]
        if loosenings:
            # Each loosening is accepted only by a `ledger-config` record of this push that
            # names it and its new value; some settings no push can loosen at all.
            said = " ".join(
                _strings(next((raw for path, raw in batch if i.path.endswith(path)), None))
                for i in infos
                if accepts_config_change(i.kind, i.tags)
            )
            for change in loosenings:
                if change.locked:
                    why = "no push can loosen this setting (it guards the ledger itself); revert it"
                elif said and not change.named_in(said):
                    why = f"the `ledger-config` record does not name it (say `{change.name}` and {change.new!r})"
                elif said:
                    continue
                else:
                    why = f"it is judged by the config of {self.base[:12]}"
                f.emit("config-change", CONFIG_NAME, f"the push {change.message}; {why}", field=change.field or None)
        if f.on("record-time") and infos:
            self.commit_times(infos)
        new_ids: dict[str, Info] = {}
        for info in infos:
            if info.id in new_ids:
                f.emit("unique-id", info.path, f"id {info.id} is also the id of {new_ids[info.id].path}", field="id")
            new_ids.setdefault(info.id, info)
        self.known.update(new_ids)
        # Ids the push adds must not exist in the base tree under any kind.
        if f.on("unique-id") and self.base != EMPTY_TREE and new_ids:
            kinds_of = self.base_tree.has(set(new_ids))
            for rid, info in new_ids.items():
                for k in KINDS:
                    if k in kinds_of[rid] and f"{self.rec_prefix}{k}/" not in info.path:
                        f.emit("unique-id", info.path, f"id {rid} is already the id of a {k} record", field="id")
        return infos

    def fetch(self, wanted: set[str]) -> None:
        """Read the records `wanted` names from the head tree (not yet known): one batch, every kind's path."""
        wanted = wanted - set(self.known)
        if not wanted:
            return
        quiet = FileRules()
        for rid, (rel, raw) in self.head_tree.find(wanted).items():
            _, info = inspect_file(rel, raw, quiet)
            if info is not None:
                self.known[rid] = info

    def pages(self, pages_changed: list[str], linked: set[str]) -> None:
        """The changed pages are checked; the high-water mark counts all of them (links are never read)."""
        git, head = self.git, self.head
        listed = [
            p for r in self.guard.roots() for p in git.ls_tree(head, self.prefix + r if r else (self.prefix or "."))
        ]
        all_pages = [p for p in dict.fromkeys(listed) if self.guard.reads(self.rel(p)) and p not in linked]
        texts = git.read_blobs([f"{head}:{p}" for p in all_pages])
        pages_text = {self.rel(p): (texts.get(f"{head}:{p}") or b"").decode("utf-8", "replace") for p in all_pages}
        if self.base_guard is not None:
            # A document the base did not guard (a `guard:` entry, a keyed file, a moved specs
            # folder this push adds) is checked whole, as CI's `--all` of this tree checks it.
            fresh = [p for p in all_pages if not self.base_guard.reads(self.rel(p))]
            pages_changed = list(dict.fromkeys([*pages_changed, *fresh]))
        owners = self.issue_owners(pages_text)
        if self.config_changed:
            # A push that changes ledger.yaml may tighten a page rule (figures-evidence made an
            # error, a narrower cell-width): every guarded document is judged by the new rules,
            # as CI's `--all` of this tree judges them, not only the documents it changes.
            pages_changed = list(all_pages)
        # A page whose figures a sweep backs is judged on every push: a new measurement of the
        # sweep changes its evidence, and CI's `--all` judges it against all of them.
        swept = [p for p in all_pages if p not in pages_changed and _names_sweep(pages_text[self.rel(p)])]
        judged = [self.rel(p) for p in [*pages_changed, *swept]]
        # Records the judged pages name beside their figures, in the body or in the front
        # matter's `evidence:` (for their spread), as `--all` finds them.
        self.fetch({i for p in judged for i in _named_records(pages_text[p])})
        check_pages(
            self.f,
            pages_text,
            judged,
            owners.get,
            self.known.get,
            self.guard.covers,
            self.raised,
            self.named,
            sweep_of=self.sweep_of,
        )

    def sweep_of(self, ref: str, column: str | None) -> SweepEvidence | None:
        """The sweep of contract `ref` at the head, its measurements found by the key index
        (`contract` of every measurement), so the cost follows the sweep, not the ledger."""
        tree = self.head_tree
        # Every contract of that name (a correction repeats it), or the one of that id.
        paths = tree.keys("contract", ("name",)).get(f"name={json.dumps(ref)}", [])
        ids = {p.rsplit("/", 1)[-1].removesuffix(".json") for p in paths}
        ids.update([ref] if _ULID.fullmatch(ref) else [])
        self.fetch(ids)
        contracts = [self.known[i] for i in ids if i in self.known and self.known[i].kind == "contract"]
        members: set[str] = set()
        for c in contracts:
            held = tree.keys("measurement", ("contract",), "measurement-contracts").get(
                f"contract={json.dumps(c.id)}", []
            )
            members.update(p.rsplit("/", 1)[-1].removesuffix(".json") for p in held)
        self.fetch(members)
        measurements = [self.known[i] for i in members if i in self.known]
        return sweep_evidence(ref, contracts, measurements, column)

    def issue_owners(self, pages_text: dict[str, str]) -> dict[int, str | None]:
        """Owner of each issue that an unowned Owed item of a page cites, from the head tree's issue records."""
        issue_numbers: set[int] = set()
        for text in pages_text.values():
            for _, _, owner, issues in owed_of_page(text, page_settings(text)[0]):
                if not owner:
                    issue_numbers.update(issues)
        if not issue_numbers:
            return {}
        index = self.head_tree.keys("issue", ("number",))
        paths = [p for n in issue_numbers for p in index.get(f"number={n}", [])]
        found = []
        for raw in self.head_tree.read([f"issue/{p}" for p in paths]):
            issue = json.loads(raw) if raw else {}
            found.append(
                (
                    issue.get("id", ""),
                    issue.get("number"),
                    issue_owner_or_settled(issue.get("owner"), issue.get("status")),
                    set(issue.get("supersedes", [])),
                )
            )
        return live_issue_owners(found)

    def links(self, changes: list[tuple[str, str]], modes: dict[str, str]) -> set[str]:
        """Paths the push adds or changes as symlinks (git mode 120000) or submodules under the
        records or specs folders, and those folders themselves (or a parent) committed as a
        link: each is a `symlinks` violation, and none is read."""
        f, prefix = self.f, self.prefix
        rec_prefix, spec_prefix = self.rec_prefix, self.spec_prefix
        linked: set[str] = set()
        for status, path in changes:
            mode = modes.get(path, "")
            under = path.startswith(rec_prefix) or path.startswith(spec_prefix) or self.guard.reads(self.rel(path))
            if under and status in "AMT" and mode in ("120000", "160000"):
                linked.add(path)
                what = "a symbolic link" if mode == "120000" else "a submodule"
                f.emit("symlinks", path[len(prefix) :], f"is committed as {what} (git mode {mode}); it is not followed")
        folders: list[str] = []
        for folder in (rec_prefix.rstrip("/"), spec_prefix.rstrip("/")):
            parts = folder.split("/")
            folders.extend("/".join(parts[: i + 1]) for i in range(len(parts)))
        for path, mode in self.git.tree_modes(self.head, list(dict.fromkeys(folders))).items():
            if mode != "040000":
                f.emit("symlinks", path[len(prefix) :] or path, f"is committed as git mode {mode}, not a folder")
        return linked

    def families(self, infos: list[Info]) -> None:
        """`rejected-family` for what a push adds: the decisions of the families it names, read
        through a cached index of decision families at the head (cost flat in the ledger's size)."""
        index = self.head_tree.keys("decision", ("family",), "decision-family")
        wanted = {norm(i.family) for i in infos if i.family and i.kind != "decision"}
        ids: set[str] = set()
        for key, paths in index.items():
            value = key.partition("=")[2]
            try:
                family = json.loads(value)
            except ValueError:
                continue
            if isinstance(family, str) and norm(family) in wanted:
                ids.update(PurePosixPath(p).stem for p in paths)
        self.fetch(ids)
        decisions = [self.known[i] for i in ids if i in self.known] + [i for i in infos if i.kind == "decision"]
        guidance.check_families(
            infos,
            {d.id: d for d in decisions}.values(),
            self.f.emit,
            self.f.params("rejected-family")["verdicts"],
            guidance.superseded_of(infos),
        )

    def commit_times(self, infos: list[Info]) -> None:
        """record-time: created_at against the committer date of the commit that adds the file."""
        f, git = self.f, self.git
        params = f.params("record-time")
        future, max_age = float(params["future_seconds"]), float(params["max_age_days"]) * 86400.0
        span = self.head if self.base == EMPTY_TREE else f"{self.base}..{self.head}"
        out = git.run(
            "log",
            "--format=%x01%ct",
            "--name-only",
            "-z",
            "--no-renames",
            "--diff-filter=A",
            span,
            "--",
            self.rec_prefix,
        )
        when: dict[str, float] = {}
        stamp = None
        for part in out.decode("utf-8", "surrogateescape").split("\0"):
            part = part.strip("\n")
            if part.startswith("\x01"):
                stamp = float(part[1:].split()[0])
            elif part and stamp is not None:
                when[part] = stamp  # newest first: the oldest commit that adds it wins
        fallback = float(git.text("log", "-1", "--format=%ct", self.head))
        top_prefix = self.rec_prefix[: len(self.rec_prefix) - len(f.records_rel) - 1]
        for info in infos:
            if info.created is None:
                continue
            committed = when.get(top_prefix + info.path, fallback)
            if info.created > committed + future:
                f.emit(
                    "record-time",
                    info.path,
                    f"created_at {stamp_time(info.created)} is after the commit that adds it ({stamp_time(committed)})",
                    field="created_at",
                )
            elif info.created < committed - max_age:
                f.emit(
                    "record-time",
                    info.path,
                    f"created_at {stamp_time(info.created)} is more than {max_age / 86400:g} days before the commit "
                    f"that adds it ({stamp_time(committed)})",
                    field="created_at",
                )

    def keyed_rows(self, changed: list[tuple[str, str, str | int | None, bool]]) -> None:
        """Declared keyed tables only grow: unrelated rows byte-identical, declared keys may change."""
        git, base, head = self.git, self.base, self.head
        specs = [f"{base}:{p}" for p, *_ in changed] + [f"{head}:{p}" for p, status, *_ in changed if status != "D"]
        blobs = git.read_blobs(specs)
        messages = git.text("log", "--format=%B", f"{base}..{head}", check=False)
        declared = declared_changes(messages)
        for path, status, key, is_page in changed:
            old = (blobs.get(f"{base}:{path}") or b"").decode("utf-8", "replace")
            new = "" if status == "D" else (blobs.get(f"{head}:{path}") or b"").decode("utf-8", "replace")
            if is_page:
                keyed_old, key_old = page_declaration(old)
                keyed_new, key_new = page_declaration(new)
                if not keyed_old:
                    continue  # a page that starts declaring keyed tables has nothing published under the rule
                key = key_old
            allowed = declared.get(self.rel(path), set()) | declared.get(None, set())
            check_file(self.rel(path), old, new, key, allowed, self.f.emit)

    def mark_lowered(self, old: bytes, new: bytes) -> None:
        """The owed high-water mark only goes down: a change that raises it is judged with the
        pages (`check_high_water`), where it stands only if the change names the new unowned
        items in notes tagged `owed-unowned`."""
        if not self.f.on("owed-high-water"):
            return
        before, after = _high_water(old), _high_water(new)
        if before is not None and after is not None and after > before:
            self.raised = (before, after)

    def unowned_named(self, infos: list[Info]) -> set[str]:
        """The owed items that the `owed-unowned` notes this change adds name (one a line)."""
        notes = [i for i in infos if i.kind == "note" and UNOWNED_TAG in i.tags]
        if not notes:
            return set()
        bodies = []
        for raw in self.head_tree.read([i.path[len(self.f.records_rel) + 1 :] for i in notes]):
            try:
                body = json.loads(raw or b"{}").get("body")
            except ValueError:
                continue
            if isinstance(body, str):
                bodies.append(body)
        return named_items(bodies)


MARK_FIELD = "rules.owed-high-water.high_water"


def _named_ids(text: str) -> list[str]:
    """Record ids a page names in its body and its front matter's `evidence:` list."""
    return [*pages_mod.record_ids(text), *page_evidence(text, page_settings(text)[0])]


def _high_water(raw: bytes) -> int | None:
    """rules.owed-high-water.high_water of a ledger.yaml's bytes (the rule's default when unset)."""
    try:
        data = YAML(typ="safe", pure=True).load(raw.decode("utf-8", "replace")) or {}
    except YAMLError:
        return None
    rules = data.get("rules") if isinstance(data, dict) else None
    rule = (rules or {}).get("owed-high-water") if isinstance(rules, dict) else None
    value = rule.get("high_water") if isinstance(rule, dict) else None
    if value is None:
        value = RULES["owed-high-water"].params["high_water"]
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_history(f: Findings, ledger: Ledger, git: Git, head: str, use_cache: bool) -> None:
    """append-only over the records folder's whole history at `head` (--all, --base):
    what a `git push --no-verify` deleted or re-sealed is caught by CI on a fresh clone. Also
    `attributes` for every .gitattributes at `head`: records failing in a fresh clone because
    of one are then reported with the file that caused it."""
    if not git.is_repo() or not git.ok("rev-parse", "--verify", "--quiet", f"{head}^{{commit}}"):
        return  # not committed yet: there is no history to verify
    if f.on("attributes"):
        listed = git.run("ls-files", "-z", "--", ":(glob)**/.gitattributes").decode("utf-8", "surrogateescape")
        for path, line, text in attribute_problems(git, head, [p for p in listed.split("\0") if p]):
            f.emit(
                "attributes",
                path,
                f"{text!r} changes the bytes git checks out for the ledger's files; records that fail "
                "their hash or canonical bytes in this checkout may fail because of it",
                line=line,
            )
    prefix = ledger_prefix(ledger, git)
    if f.on("symlinks"):
        # A gitlink (submodule) committed in the records or specs folder checks out as an
        # empty folder the work-tree walk never reads (a symlink it reads and refuses): ask
        # the index (one C-speed listing), as the hook asks the pushed trees.
        for folder in (f.records_rel, f.specs_rel):
            listed = git.run("ls-files", "-s", "-z", "--", prefix + folder).decode("utf-8", "surrogateescape")
            for entry in listed.split("\0"):
                mode, _, rest = entry.partition(" ")
                if mode == "160000" and "\t" in rest:
                    path = rest.split("\t", 1)[1]
                    f.emit(
                        "symlinks",
                        path[len(prefix) :],
                        "is committed as a submodule (git mode 160000); it is not followed",
                    )
    if not f.on("append-only"):
        return
    for problem in walk_records_history(git, head, prefix + f.records_rel, cache=use_cache):
        f.emit(
            "append-only",
            problem.path[len(prefix) :] if problem.path.startswith(prefix) else problem.path,
            problem.message,
            fix="Restore the file as it was first added (`git log --diff-filter=A -- FILE` finds the commit; "
            "`git checkout COMMIT -- FILE`); a correction is a new record whose `supersedes` lists its id.",
        )


def _strings(raw: bytes | None) -> str:
    """Every string value of a record file (its words: body, mechanism, title...), joined."""
    try:
        data = json.loads(raw or b"null")
    except ValueError:
        return ""
    out: list[str] = []
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return " ".join(out)


_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")


def _named_records(text: str) -> set[str]:
    """Record ids a page names: in its body, and in its front matter's `evidence:` list."""
    front, _ = page_settings(text)
    return set(pages_mod.record_ids(text)) | set(page_evidence(text, front))


def _names_sweep(text: str) -> bool:
    """Whether a page's front matter names a sweep as its figures' evidence."""
    if "sweep" not in text:
        return False
    front, _ = page_settings(text)
    figures = front.get("figures")
    return isinstance(figures, dict) and figures.get("sweep") is not None
