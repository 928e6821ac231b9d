"""Run the rules over the whole ledger (`--all`) or over what a range of commits adds
(`--base REF`, `--pre-push`)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from .. import pages as pages_mod
from ..analysis.families import norm
from ..analysis.regate import source_view
from ..config import CONFIG_NAME
from ..errors import InputError, Problem
from ..git import EMPTY_TREE, Git, GitError, is_zero
from ..schema.registry import KINDS, record_adapter
from ..store.ledger import lstat_chain, shard_of
from . import comparability, derived, guidance
from .cache import VerificationCache, clean_blobs
from .history import STATUS_WORDS, ignore_problems, walk_records_history
from .keyedrows import check_file, declared_changes, declared_files, page_declaration
from .keyindex import key_index
from .pages import check_high_water, check_page, owed_of_page, page_settings
from .policy import accepts_config_change, config_at, judge_config
from .records import (
    FileRules,
    Info,
    inspect_artifact,
    inspect_batch,
    inspect_file,
    inspect_paths,
    stamp_time,
    supersedes_cycle,
)
from .registry import RULES, Active, configure
from .result import CheckResult, Violation

FILE_RULES = (
    "schema-valid",
    "content-hash",
    "unique-id",
    "record-size",
    "binary-content",
    "secrets",
    "conflict-markers",
    "sandwich-verdict",
    "local-path",
    "canonical-bytes",
    "parse-limits",
    "supersedes-chain",
    "record-time",
    "unit-known",
    "derived-figures",
)
#: Below this many records a whole-ledger check runs in one process (a pool costs ~50 ms).
POOL_THRESHOLD = 4000


def _same_repo(repo: str, source: Git) -> bool:
    """True when `repo` (a record's source.repo) names the checkout `source` (its origin or its path)."""

    def norm(text: str) -> str:
        text = text.strip().rstrip("/").removesuffix(".git").lower()
        text = text.split("://", 1)[-1].split("@", 1)[-1]  # scheme and credentials
        return text.replace(":", "/")

    origin = source.text("config", "--get", "remote.origin.url", check=False)
    if origin and norm(origin) == norm(repo):
        return True
    if repo.startswith("git-root:"):
        # A checkout without a remote is named by its root commit (ledger.store.stamps.repository_identity).
        roots = source.text("rev-list", "--max-parents=0", "HEAD", check=False).split()
        return repo.removeprefix("git-root:") in roots
    try:
        return Path(repo).resolve() == source.toplevel.resolve()
    except (OSError, GitError):
        return False


@dataclass(frozen=True)
class _Range:
    """One range of commits being checked, and where the ledger's folders are inside the repository."""

    git: Git
    base: str
    head: str
    prefix: str  # the ledger's folder inside the repository ("" at the top), with a trailing "/"
    rec_prefix: str
    spec_prefix: str

    @classmethod
    def of(cls, checker: Checker, base: str, head: str, prefix: str) -> _Range:
        return cls(checker.git, base, head, prefix, f"{prefix}{checker.records_rel}/", f"{prefix}{checker.specs_rel}/")

    @staticmethod
    def prefix_of(checker: Checker) -> str:
        """The ledger's folder inside its repository, "" at the top, else with a trailing "/"."""
        prefix = checker.ledger.root.resolve().relative_to(checker.git.toplevel.resolve()).as_posix()
        return "" if prefix == "." else prefix + "/"

    def rel(self, path: str) -> str:
        """A repository path relative to the ledger's root."""
        return path[len(self.prefix) :]

    def spec(self, commit: str, kind: str, rid: str) -> str:
        """`commit:path` of the record `rid` if it were of `kind`."""
        return f"{commit}:{self.rec_prefix}{kind}/{shard_of(rid)}/{rid}.json"

    def read_attachment(self, relpath: str) -> tuple[str | None, bytes]:
        """(why it cannot be read, or None; its bytes) of an attachment in the head tree."""
        full = f"{self.rec_prefix}{relpath}"
        mode = self.git.text("ls-tree", self.head, "--", full, check=False).split(" ")[0]
        if not mode:
            return "is missing", b""
        if mode == "120000":
            return "is a symlink", b""
        if mode != "100644" and mode != "100755":
            return "is not a regular file", b""
        return None, self.git.read_blobs([f"{self.head}:{full}"])[f"{self.head}:{full}"] or b""


class Checker:
    def __init__(self, ledger, mode: str):
        self.ledger = ledger
        self.mode = mode
        self.result = CheckResult(mode=mode)
        self.use(ledger.config, configure(ledger.config.rules, CONFIG_NAME))
        self.infos: dict[str, Info] = {}
        self._git: Git | None = None
        #: Answer unmodified record files from the verification cache (checks/cache.py).
        self.use_cache = True
        #: pre-push: the remote pushed to and the local commits the push sends.
        self.remote: str | None = None
        self.pushed: list[str] = []

    def use(self, config, active: dict[str, Active]) -> None:
        """Judge with `config`'s paths and these rules (a range is judged by its base's)."""
        self.config = config
        self.active = {k: a for k, a in active.items() if a.severity != "off"}
        self.result.rules = sorted(set(self.result.rules) | set(self.active))
        self.records_rel = PurePosixPath(config.records).as_posix().strip("/")
        self.specs_rel = PurePosixPath(config.specs).as_posix().strip("/")

    # -- plumbing --------------------------------------------------------------------------

    @property
    def git(self) -> Git:
        if self._git is None:
            self._git = Git(self.ledger.root)
        return self._git

    def emit(
        self,
        rule_id: str,
        file: str,
        message: str,
        *,
        line: int | None = None,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        active = self.active.get(rule_id)
        if active is None:
            return
        self.result.violations.append(
            Violation(
                file, line, field, rule_id, active.severity, message, fix if fix is not None else RULES[rule_id].fix
            )
        )

    def file_rules(self) -> FileRules:
        on = {r: self.active[r].severity for r in FILE_RULES if r in self.active}
        return FileRules(
            on,
            {r: self.active[r].params for r in on},
            {r: self.active[r].rule.fix for r in on},
            prefix=self.records_rel + "/",
        )

    def lookup(self, record_id: str) -> Info | None:
        return self.infos.get(record_id)

    # -- cross-record rules ----------------------------------------------------------------

    def cross_checks(self, new: list[Info], lookup, exists) -> None:
        for info in new:
            for where, ref in info.refs:
                if not exists(ref):
                    self.emit(
                        "reference-resolves",
                        info.path,
                        f"refers to record {ref}, which is not in the ledger",
                        field=where,
                    )
            comparability.check(info, lookup, self.emit)
            derived.check(info, lookup, self.emit)
        self.check_chains(new, lookup)
        self.check_shas(new)

    def check_chains(self, new: list[Info], lookup) -> None:
        """A `supersedes` chain that comes back to a record it started from (a cycle)."""
        if "supersedes-chain" not in self.active:
            return
        reported: set[str] = set()
        for info in new:
            if info.id in reported:
                continue
            cycle = supersedes_cycle(info, lookup)
            if cycle:
                reported.update(cycle)
                self.emit(
                    "supersedes-chain",
                    info.path,
                    "supersedes chain comes back to this record: " + " -> ".join([*cycle, cycle[0]]),
                    field="supersedes",
                )

    def check_shas(self, infos: list[Info]) -> None:
        if "sha-resolves" not in self.active and "sha-abbreviated" not in self.active:
            return
        by_repo: dict[str | None, dict[str, list[Info]]] = defaultdict(lambda: defaultdict(list))
        for info in infos:
            if info.sha:
                by_repo[info.repo][info.sha].append(info)
        for repo, by_sha in by_repo.items():
            self._check_repo_shas(repo, by_sha)

    def _check_repo_shas(self, repo: str | None, by_sha: dict[str, list[Info]]) -> None:
        """The commits of one repository (source.repo; None for the ledger's source checkout).

        A repository mapped by `sources:` in ledger.yaml is verified in that clone. Any other
        commit is looked up in the source checkout; one that is not there and whose record
        names another repository (an imported result, or a checkout stamped with --source) is
        reported once per repository as unverifiable (sha-foreign, a warning), not as an error.
        """
        config = self.config
        where = config.sources.get(repo, config.source) if repo is not None else config.source
        source = Git((self.ledger.root / where).resolve())
        if not source.is_repo():
            first = next(iter(by_sha.values()))[0]
            self.emit(
                "sha-resolves",
                CONFIG_NAME,
                f"the source checkout {where!r}"
                + (f" of {repo}" if repo else "")
                + f" is not a git repository, so {len(by_sha)} SHA(s) cannot be checked (first in {first.path})",
                field=f"sources.{repo}" if repo in config.sources else "source",
                fix="point `source` (or `sources:` for another repository) in ledger.yaml at a clone of the measured repository",
            )
            return
        resolved = source.resolve_commits(list(by_sha))
        if repo is not None and repo not in config.sources and not _same_repo(repo, source):
            missing = {sha: infos for sha, infos in by_sha.items() if not resolved.get(sha)}
            if missing:
                infos = [i for group in missing.values() for i in group]
                if "sha-foreign" in self.active:
                    self.emit(
                        "sha-foreign",
                        infos[0].path,
                        f"{len(infos)} record(s) name {len(missing)} commit(s) of {repo}, which ledger.yaml does "
                        "not map to a clone: unverifiable",
                        field="source.repo",
                        fix=f"add `sources: {{{repo!r}: PATH-OF-A-CLONE}}` to ledger.yaml; `ledger check` then verifies them",
                    )
                by_sha = {sha: infos for sha, infos in by_sha.items() if sha not in missing}
        full_shas = [c for c in resolved.values() if c]
        reachable = source.reachable(full_shas)
        lost = self.unkept(source, full_shas) if self.mode == "pre-push" else set()
        self._report_shas(by_sha, resolved, reachable, repo, where, lost)

    def _report_shas(self, by_sha, resolved, reachable, repo, where, lost) -> None:
        for sha, infos_at in by_sha.items():
            full = resolved.get(sha)
            for info in infos_at:
                if len(sha) < 40:
                    # Abbreviated SHAs are declared historical evidence (source.abbreviated):
                    # a warning, resolvable or not; full SHAs must resolve.
                    how = f"it resolves to {full}" if full else "it does not resolve in the source checkout"
                    self.emit(
                        "sha-abbreviated", info.path, f"source commit {sha} is abbreviated ({how})", field="source.sha"
                    )
                elif full is None:
                    self.emit(
                        "sha-resolves",
                        info.path,
                        f"source commit {sha} does not resolve in the source checkout"
                        + (f" of {repo} ({where})" if repo else ""),
                        field="source.sha",
                    )
                elif full in lost:
                    self.emit(
                        "sha-resolves",
                        info.path,
                        f"source commit {sha} resolves here, but no branch or tag the remote has or "
                        "this push sends contains it (a rebase or amend left it behind), so it will "
                        "not resolve in a fresh clone",
                        field="source.sha",
                        fix=f"keep the commit reachable: `git push {self.remote or 'origin'} {full}:refs/tags/ledger-keep/{full[:12]}` "
                        "(in the source repository when it is another one), then push again; or re-measure "
                        "at a commit on a pushed branch and add the record afresh",
                    )
                elif full not in reachable:
                    self.emit(
                        "sha-abbreviated",
                        info.path,
                        f"source commit {sha} is historical: no branch or tag contains it, so a fresh clone will not have it",
                        field="source.sha",
                    )

    def unkept(self, source: Git, commits: list[str]) -> set[str]:
        """Of `commits`, those that no tag, no branch of the remote and no commit this push
        sends contains: a fresh clone of the remote will not have them. One `git rev-list`
        that walks only the commits the remote lacks."""
        if not commits:
            return set()
        same = source.common_dir == self.git.common_dir
        if not same:
            out = source.text("rev-list", *commits, "--not", "--remotes", "--tags", check=False)
            return {c for c in commits if c in set(out.split())}
        remote = self.remote
        tracked = f"--remotes={remote}" if remote and "/" not in remote and ":" not in remote else "--remotes"
        out = source.text("rev-list", *commits, "--not", tracked, *self.pushed, check=False)
        lost = {c for c in commits if c in set(out.split())}
        if lost and remote:
            # Tags the remote has (a `refs/tags/ledger-keep/...` pushed earlier), asked only now.
            tags = [
                line.split()[0]
                for line in source.text("ls-remote", "--tags", remote, check=False).splitlines()
                if line.strip()
            ]
            tips = [t for t in tags if source.has_commit(t)]
            if tips:
                out = source.text("rev-list", *lost, "--not", *tips, check=False)
                lost = {c for c in lost if c in set(out.split())}
        return lost

    def check_unique(self, infos: list[Info], existing: dict[str, dict[str, list[str]]] | None = None) -> None:
        """Unique keys among `infos`, and against `existing` (kind -> key -> paths) when given.

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
            # (id, path, supersedes) of the holders already in the base, read only when a key repeats
            holders: list[tuple[str, str, set[str]]] = []
            if held:
                paths = [f"{self.records_rel}/{kind}/{p}" for p in held]
                for path, data in zip(paths, self._read_base_records(paths), strict=True):
                    holders.append(
                        (data.get("id") or PurePosixPath(path).stem, path, set(data.get("supersedes") or []))
                    )
            if not holders and len(group) == 1:
                continue
            corrected_by: dict[str, str] = {}
            for _rid, path, sup in holders:
                for old in sup:
                    corrected_by.setdefault(old, path)
            for info in sorted(group, key=lambda i: i.id):
                sup = _supersedes(info)
                ids = {rid: path for rid, path, _ in holders}
                if ids:
                    corrects = sup & set(ids)
                    if not corrects:
                        first = next(iter(ids.values()))
                        self.emit(
                            "unique-key",
                            info.path,
                            f"{kind} {name} {value} is already used by {first}",
                            field=name,
                            fix=unique_key_fix(kind, name, value, first),
                        )
                    for old in sorted(corrects):
                        if old in corrected_by:
                            self.emit(
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

    def _read_base_records(self, paths: list[str]) -> list[dict]:
        """Records of the base already holding a key (range checks) or of this ledger (--all)."""

        out = []
        base = getattr(self, "_base", None)
        if base is not None:
            prefix = getattr(self, "_prefix", "")
            blobs = self.git.read_blobs([f"{base}:{prefix}{p}" for p in paths])
            raws = [blobs.get(f"{base}:{prefix}{p}") for p in paths]
        else:
            raws = []
            for p in paths:
                try:
                    raws.append((self.ledger.root / p).read_bytes())
                except OSError:
                    raws.append(None)
        for raw in raws:
            try:
                data = json.loads(raw) if raw else {}
            except ValueError:
                data = {}
            out.append(data if isinstance(data, dict) else {})
        return out

    def check_attachment(self, info: Info, read) -> None:
        for rel, digest in info.attachments:
            path = PurePosixPath(rel)
            if path.is_absolute() or ".." in path.parts:
                self.emit(
                    "attachments",
                    info.path,
                    f"attachment {rel!r} is outside the records folder",
                    field=f"attachments.{rel}",
                )
                continue
            problem, data = read(path.as_posix())
            if problem:
                self.emit("attachments", info.path, f"attachment {rel!r} {problem}", field=f"attachments.{rel}")
            elif hashlib.sha256(data).hexdigest() != digest:
                self.emit(
                    "attachments",
                    info.path,
                    f"attachment {rel!r} does not match its sha256",
                    field=f"attachments.{rel}",
                )

    def page_checks(self, pages_text: dict[str, str], checked: list[str], issue_owner) -> None:
        rules = self.file_rules()

        def spread_of(record_id: str) -> float | None:
            info = self.lookup(record_id)
            return info.spread_percent if info else None

        for path in checked:
            text = pages_text[path]
            for v in inspect_artifact(path, text.encode("utf-8"), rules, text_page=True):
                self.result.violations.append(v)
            check_page(path, text, self.active, self.emit, spread_of)
        self.result.pages_checked = len(checked)
        check_high_water(pages_text, self.active, self.emit, issue_owner, CONFIG_NAME)

    def check_keyed_rows(self, base: str, head: str, changed: list, rel) -> None:
        """Declared keyed tables only grow: unrelated rows byte-identical, declared keys may change."""
        git = self.git
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
            allowed = declared.get(rel(path), set()) | declared.get(None, set())
            check_file(rel(path), old, new, key, allowed, self.emit)

    def check_mark_lowered(self, old: bytes, new: bytes) -> None:
        """The owed high-water mark only goes down: a change that raises it is refused."""
        if "owed-high-water" not in self.active:
            return
        before, after = _high_water(old), _high_water(new)
        if before is not None and after is not None and after > before:
            self.emit(
                "owed-high-water",
                CONFIG_NAME,
                f"rules.owed-high-water.high_water raised from {before} to {after}; the mark only goes down",
                field="rules.owed-high-water.high_water",
                fix=f"set it back to {before} (or lower), and give the new owed items owners or issues with owners",
            )

    # -- --all -----------------------------------------------------------------------------

    def walk(self, folder: Path, shown: str) -> list[str]:
        """Files under `folder` (relative paths), from the directory entries' own types: a
        symlink or other non-regular entry is a `symlinks` violation, never followed."""
        out: list[str] = []
        stack = [""]
        while stack:
            rel = stack.pop()
            try:
                entries = sorted(os.scandir(folder / rel if rel else folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                path = f"{rel}/{entry.name}" if rel else entry.name
                if entry.is_symlink():
                    try:
                        target = os.readlink(entry.path)
                    except OSError:
                        target = "?"
                    self.emit("symlinks", f"{shown}/{path}", f"is a symbolic link (to {target}); it is not followed")
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(path)
                elif entry.is_file(follow_symlinks=False):
                    out.append(path)
                else:
                    self.emit("symlinks", f"{shown}/{path}", "is not a regular file or folder")
        return sorted(out)

    def linked_folder(self, folder: Path) -> bool:
        """True (and a violation) when `folder` is reached through a symlink below the ledger root."""

        link = lstat_chain(self.ledger.root, folder)
        if link is None:
            return False
        rel = os.path.relpath(link, self.ledger.root)
        self.emit("symlinks", rel, f"is a symbolic link (to {os.readlink(link)}); nothing under it is read")
        return True

    def run_all(self) -> None:
        root = self.ledger.records_dir
        paths = []
        rules = self.file_rules()
        cache, blobs = None, {}
        # git lists the index's blob ids (for the verification cache) on another core while
        # this one walks the folder and loads the cache: 0.2 s of a warm check at 100k records.
        # The thread ends before the inspection may fork its worker processes.
        with ThreadPoolExecutor(max_workers=1) as background:
            blobs_later = background.submit(clean_blobs, root) if self.use_cache and root.is_dir() else None
            if not self.linked_folder(root) and root.is_dir():
                paths = [
                    p
                    for p in self.walk(root, self.records_rel)
                    if not p.rsplit("/", 1)[-1].startswith(".tmp-") and p.rsplit("/", 1)[-1] != ".gitignore"
                ]
            if self.use_cache:
                cache = VerificationCache.open(self.git, rules)
                if cache.file is not None and blobs_later is not None:
                    blobs = blobs_later.result()
        violations, infos = self.inspect_remembering(root, paths, rules, cache, blobs)
        self.result.violations.extend(violations)
        self.result.records_checked = sum(1 for p in paths if p.endswith(".json"))
        by_id: dict[str, Info] = {}
        for info in infos:
            if info.id in by_id:
                self.emit("unique-id", info.path, f"id {info.id} is also the id of {by_id[info.id].path}", field="id")
            by_id.setdefault(info.id, info)
        self.infos = by_id
        self.check_unique(infos)
        self.cross_checks(infos, self.lookup, lambda ref: ref in by_id)
        if "attachments" in self.active:
            for info in infos:
                self.check_attachment(info, lambda rel: _read_fs(root, rel))
        self.guidance_all(infos, root)
        issues = _live_issue_owners([(i.id, i.number, i.owner, _supersedes(i)) for i in infos if i.kind == "issue"])
        pages_text = {}
        spec_dir = self.ledger.specs_dir
        if not self.linked_folder(spec_dir) and spec_dir.is_dir():
            for rel in self.walk(spec_dir, self.specs_rel):
                if rel.endswith(".md"):
                    with open(os.path.join(spec_dir, rel), "rb") as fh:
                        pages_text[f"{self.specs_rel}/{rel}"] = fh.read().decode("utf-8", errors="replace")
        self.page_checks(pages_text, list(pages_text), issues.get)
        config = self.ledger.root / CONFIG_NAME
        if config.is_file():
            self.result.violations.extend(inspect_artifact(CONFIG_NAME, config.read_bytes(), rules, text_page=True))
        self.check_history("HEAD")

    def check_history(self, head: str) -> None:
        """append-only over the records folder's whole history at `head` (--all, --base):
        what a `git push --no-verify` deleted or re-sealed is caught by CI on a fresh clone."""
        if "append-only" not in self.active:
            return
        git = self.git
        if not git.is_repo() or not git.ok("rev-parse", "--verify", "--quiet", f"{head}^{{commit}}"):
            return  # not committed yet: there is no history to verify
        top = git.toplevel
        prefix = self.ledger.root.resolve().relative_to(top.resolve()).as_posix()
        prefix = "" if prefix == "." else prefix + "/"
        for problem in walk_records_history(git, head, prefix + self.records_rel, cache=self.use_cache):
            self.emit(
                "append-only",
                problem.path[len(prefix) :] if problem.path.startswith(prefix) else problem.path,
                problem.message,
                fix="Restore the file as it was first added (`git log --diff-filter=A -- FILE` finds the commit; "
                "`git checkout COMMIT -- FILE`); a correction is a new record whose `supersedes` lists its id.",
            )

    def inspect_remembering(
        self, root: Path, paths: list[str], rules: FileRules, cache: VerificationCache | None, blobs: dict[str, str]
    ) -> tuple[list[Violation], list[Info]]:
        """`inspect_file` on every path, answering unmodified tracked files (`blobs`: path ->
        blob id, from `clean_blobs`) from the verification cache (checks/cache.py) and
        remembering what it inspected."""
        found: dict[str, tuple[list[Violation], Info | None]] = {}
        misses = paths
        if cache is not None:
            found, misses = cache.answer(paths, blobs)
        for path, violations, info in _inspect_all(str(root), misses, rules):
            found[path] = (violations, info)
            blob = blobs.get(path)
            if cache is not None and blob is not None:
                cache.put(path, blob, violations, info)
        if cache is not None:
            self.result.cached = cache.hits
            cache.save()
        all_violations: list[Violation] = []
        infos: list[Info] = []
        for path in paths:
            violations, info = found[path]
            all_violations.extend(violations)
            if info is not None:
                infos.append(info)
        return all_violations, infos

    def guidance_all(self, infos: list[Info], root: Path) -> None:
        """Whole-ledger guidance: re-gates owed, rejected families, eligibility readings."""
        superseded = guidance.superseded_of(infos)
        if "rejected-family" in self.active:
            decisions = [i for i in infos if i.kind == "decision"]
            guidance.check_families(
                infos, decisions, self.emit, self.active["rejected-family"].params["verdicts"], superseded
            )
        prefix = self.records_rel + "/"

        def load(info: Info):
            return guidance.load_model(root, info.path[len(prefix) :] if info.path.startswith(prefix) else info.path)

        if "baseline-eligibility" in self.active:
            envs = {i.id: load(i) for i in infos if i.kind == "environment" and i.id not in superseded}
            guidance.check_eligibility(
                infos,
                {k: v for k, v in envs.items() if v is not None},
                self.active["baseline-eligibility"].params,
                self.emit,
            )
        if "regate-owed" in self.active and any(i.kind == "contract" for i in infos):
            guidance.check_regates(infos, load, source_view(self.ledger), self.emit)

    # -- ranges ----------------------------------------------------------------------------

    def run_range(self, base: str, head: str) -> None:
        """Check what the commits from BASE to HEAD add: the records, the pages they change, the
        config; judged by the base side's committed config, never by the one the push brings."""
        self.result.ranges.append((base, head))
        prefix = _Range.prefix_of(self)
        policy = judge_config(
            config_at(self.git, base, prefix + CONFIG_NAME),
            config_at(self.git, head, prefix + CONFIG_NAME),
            self.ledger.config,
        )
        self.use(policy.config, policy.active)
        r = _Range.of(self, base, head, prefix)  # the folders as the base side's config names them
        added, pages_changed, linked = self._range_changes(r)
        infos = self._range_records(r, added, policy)
        self._fetch(r, {ref for info in infos for _, ref in info.refs})
        self.cross_checks(infos, self.lookup, lambda ref: ref in self.infos)
        if "unique-key" in self.active:
            self._range_unique_keys(r, infos)
        if "rejected-family" in self.active and any(i.family for i in infos):
            self.families_at(head, r.rec_prefix, infos, lambda wanted: self._fetch(r, wanted))
        if "attachments" in self.active:
            for info in infos:
                self.check_attachment(info, r.read_attachment)
        self._range_pages(r, pages_changed, linked)

    def _range_changes(self, r: _Range) -> tuple[list[str], list[str], set[str]]:
        """Records added, pages changed, and paths committed as links (never read); a record changed
        or removed is `append-only`; the config is read; declared keyed tables (and pages that
        declare them) are checked by `keyed-rows`."""
        added: list[str] = []
        pages_changed: list[str] = []
        config = r.prefix + CONFIG_NAME
        keyed = declared_files(self.active["keyed-rows"].params) if "keyed-rows" in self.active else []
        keyed_paths = {r.prefix + d.path: d for d in keyed}
        keyed_changes: list[tuple[str, str, str | int | None, bool]] = []  # (git path, status, key, is page)
        changes, modes = self.git.diff_with_modes(r.base, r.head, [r.rec_prefix, r.spec_prefix, config, *keyed_paths])
        linked = self.tree_links(r.head, r.prefix, r.rec_prefix, r.spec_prefix, changes, modes)
        for status, path in changes:
            if path in linked:
                continue
            if path in keyed_paths and status in "MDT":
                keyed_changes.append((path, status, keyed_paths[path].key, False))
                continue
            if (
                path.startswith(r.spec_prefix)
                and path.endswith(".md")
                and status in "MDT"
                and "keyed-rows" in self.active
            ):
                keyed_changes.append((path, status, None, True))
            if path.startswith(r.rec_prefix):
                if status == "A":
                    added.append(path)
                else:
                    words = STATUS_WORDS.get(status, "changed")
                    self.emit("append-only", r.rel(path), f"record file {words} against {r.base[:12]}")
            elif path.startswith(r.spec_prefix) and path.endswith(".md") and status in "AMT":
                pages_changed.append(path)
            elif path == config and status in "AM":
                raw = self.git.read_blobs([f"{r.head}:{path}"]).get(f"{r.head}:{path}") or b""
                self.result.violations.extend(inspect_artifact(CONFIG_NAME, raw, self.file_rules(), text_page=True))
                if status == "M":
                    old = self.git.read_blobs([f"{r.base}:{path}"]).get(f"{r.base}:{path}") or b""
                    self.check_mark_lowered(old, raw)
        if keyed_changes and r.base != EMPTY_TREE:
            self.check_keyed_rows(r.base, r.head, keyed_changes, r.rel)
        return added, pages_changed, linked

    def _range_records(self, r: _Range, added: list[str], policy: Any) -> list[Info]:
        """Inspect the added record files: a loosened config needs a record that accepts it
        (`config-change`), times are checked against their commits (`record-time`), and an id the
        range repeats, or that the base has, is `unique-id`."""
        blobs = self.git.read_blobs([f"{r.head}:{p}" for p in added])
        batch = [(p[len(r.rec_prefix) :], blobs.get(f"{r.head}:{p}") or b"") for p in added]
        violations, infos = inspect_batch(batch, self.file_rules())
        self.result.violations.extend(violations)
        self.result.records_checked += sum(1 for p in added if p.endswith(".json"))
        if policy.loosenings and not any(accepts_config_change(i.kind, i.tags) for i in infos):
            for change in policy.loosenings:
                self.emit(
                    "config-change",
                    CONFIG_NAME,
                    f"the push {change.message}; it is judged by the config of {r.base[:12]}",
                    field=change.field or None,
                )
        if "record-time" in self.active and infos:
            self.check_commit_times(r.base, r.head, r.rec_prefix, infos)
        new_ids: dict[str, Info] = {}
        for info in infos:
            if info.id in new_ids:
                self.emit("unique-id", info.path, f"id {info.id} is also the id of {new_ids[info.id].path}", field="id")
            new_ids.setdefault(info.id, info)
        self.infos.update(new_ids)
        # Ids the push adds must not exist in the base tree under any kind.
        if "unique-id" in self.active and r.base != EMPTY_TREE and new_ids:
            olds = self.git.read_blobs([r.spec(r.base, k, rid) for rid in new_ids for k in KINDS])
            for rid, info in new_ids.items():
                for k in KINDS:
                    if olds.get(r.spec(r.base, k, rid)) is not None and f"{r.rec_prefix}{k}/" not in info.path:
                        self.emit("unique-id", info.path, f"id {rid} is already the id of a {k} record", field="id")
        return infos

    def _fetch(self, r: _Range, wanted: set[str]) -> None:
        """Read the records `wanted` names from the head tree (not yet known): one batch, every kind's path."""
        wanted = wanted - set(self.infos)
        if not wanted:
            return
        found = self.git.read_blobs([r.spec(r.head, k, rid) for rid in wanted for k in KINDS])
        quiet = FileRules()
        for rid in wanted:
            for k in KINDS:
                raw = found.get(r.spec(r.head, k, rid))
                if raw is not None:
                    _, info = inspect_file(f"{k}/{shard_of(rid)}/{rid}.json", raw, quiet)
                    if info is not None:
                        self.infos[rid] = info
                    break

    def _range_unique_keys(self, r: _Range, infos: list[Info]) -> None:
        self._base, self._prefix = r.base, r.prefix
        existing: dict[str, dict[str, list[str]]] = {}
        for kind in {i.kind for i in infos if i.keys}:
            existing[kind] = (
                key_index(self.git, r.base, f"{r.rec_prefix}{kind}", kind, KINDS[kind].UNIQUE_KEYS)
                if r.base != EMPTY_TREE
                else {}
            )
        self.check_unique(infos, existing)

    def _range_pages(self, r: _Range, pages_changed: list[str], linked: set[str]) -> None:
        """The changed pages are checked; the high-water mark counts all of them (links are never read)."""
        all_pages = [p for p in self.git.ls_tree(r.head, r.spec_prefix) if p.endswith(".md") and p not in linked]
        texts = self.git.read_blobs([f"{r.head}:{p}" for p in all_pages])
        pages_text = {r.rel(p): (texts.get(f"{r.head}:{p}") or b"").decode("utf-8", "replace") for p in all_pages}
        owners = self._issue_owners(r, pages_text)
        # Records that changed pages name beside their figures (for their spread).
        self._fetch(
            r, {i for p in pages_changed for f in pages_mod.quoted_figures(pages_text[r.rel(p)]) for i in f.ids}
        )
        self.page_checks(pages_text, [r.rel(p) for p in pages_changed], owners.get)

    def _issue_owners(self, r: _Range, pages_text: dict[str, str]) -> dict[int, str | None]:
        """Owner of each issue that an unowned Owed item of a page cites, from the head tree's issue records."""
        issue_numbers: set[int] = set()
        for text in pages_text.values():
            for _, _, owner, issues in owed_of_page(text, page_settings(text)[0]):
                if not owner:
                    issue_numbers.update(issues)
        if not issue_numbers:
            return {}
        index = key_index(self.git, r.head, f"{r.rec_prefix}issue", "issue", ("number",))
        paths = [p for n in issue_numbers for p in index.get(f"number={n}", [])]
        blobs = self.git.read_blobs([f"{r.head}:{r.rec_prefix}issue/{p}" for p in paths])
        found = []
        for p in paths:
            blob = blobs.get(f"{r.head}:{r.rec_prefix}issue/{p}")
            issue = json.loads(blob) if blob else {}
            found.append(
                (issue.get("id", ""), issue.get("number"), issue.get("owner"), set(issue.get("supersedes", [])))
            )
        return _live_issue_owners(found)

    def tree_links(self, head: str, prefix: str, rec_prefix: str, spec_prefix: str, changes, modes) -> set[str]:
        """Paths the push adds or changes as symlinks (git mode 120000) or submodules under the
        records or specs folders, and those folders themselves (or a parent) committed as a
        link: each is a `symlinks` violation, and none is read."""
        linked: set[str] = set()
        for status, path in changes:
            mode = modes.get(path, "")
            under = path.startswith(rec_prefix) or path.startswith(spec_prefix)
            if under and status in "AMT" and mode in ("120000", "160000"):
                linked.add(path)
                what = "a symbolic link" if mode == "120000" else "a submodule"
                self.emit(
                    "symlinks", path[len(prefix) :], f"is committed as {what} (git mode {mode}); it is not followed"
                )
        folders: list[str] = []
        for folder in (rec_prefix.rstrip("/"), spec_prefix.rstrip("/")):
            parts = folder.split("/")
            folders.extend("/".join(parts[: i + 1]) for i in range(len(parts)))
        for path, mode in self.git.tree_modes(head, list(dict.fromkeys(folders))).items():
            if mode != "040000":
                self.emit("symlinks", path[len(prefix) :] or path, f"is committed as git mode {mode}, not a folder")
        return linked

    def families_at(self, head: str, rec_prefix: str, infos: list[Info], fetch) -> None:
        """`rejected-family` for what a push adds: the decisions of the families it names, read
        through a cached index of decision families at `head` (cost flat in the ledger's size)."""

        index = key_index(self.git, head, f"{rec_prefix}decision", "decision-family", ("family",))
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
        fetch(ids)
        decisions = [self.infos[i] for i in ids if i in self.infos] + [i for i in infos if i.kind == "decision"]
        guidance.check_families(
            infos,
            {d.id: d for d in decisions}.values(),
            self.emit,
            self.active["rejected-family"].params["verdicts"],
            guidance.superseded_of(infos),
        )

    def check_commit_times(self, base: str, head: str, rec_prefix: str, infos: list[Info]) -> None:
        """record-time: created_at against the committer date of the commit that adds the file."""
        params = self.active["record-time"].params
        future, max_age = float(params["future_seconds"]), float(params["max_age_days"]) * 86400.0
        span = head if base == EMPTY_TREE else f"{base}..{head}"
        out = self.git.run(
            "log", "--format=%x01%ct", "--name-only", "-z", "--no-renames", "--diff-filter=A", span, "--", rec_prefix
        )
        when: dict[str, float] = {}
        stamp = None
        for part in out.decode("utf-8", "surrogateescape").split("\0"):
            part = part.strip("\n")
            if part.startswith("\x01"):
                stamp = float(part[1:].split()[0])
            elif part and stamp is not None:
                when[part] = stamp  # newest first: the oldest commit that adds it wins
        fallback = float(self.git.text("log", "-1", "--format=%ct", head))
        top_prefix = rec_prefix[: len(rec_prefix) - len(self.records_rel) - 1]
        for info in infos:
            if info.created is None:
                continue
            committed = when.get(top_prefix + info.path, fallback)
            if info.created > committed + future:
                self.emit(
                    "record-time",
                    info.path,
                    f"created_at {stamp_time(info.created)} is after the commit that adds it ({stamp_time(committed)})",
                    field="created_at",
                )
            elif info.created < committed - max_age:
                self.emit(
                    "record-time",
                    info.path,
                    f"created_at {stamp_time(info.created)} is more than {max_age / 86400:g} days before the commit "
                    f"that adds it ({stamp_time(committed)})",
                    field="created_at",
                )

    # -- pre-push --------------------------------------------------------------------------

    def remote_heads(self) -> dict[str, str]:
        """refs/heads/NAME -> sha on the remote pushed to, and "HEAD" -> its default branch's
        ref name when known: the local tracking refs, else one `git ls-remote` (asked only
        for a new or deleted branch)."""
        git = self.git
        remote = self.remote
        heads: dict[str, str] = {}
        if remote and "/" not in remote and ":" not in remote:
            out = git.text("for-each-ref", "--format=%(refname) %(objectname)", f"refs/remotes/{remote}/", check=False)
            for line in out.splitlines():
                ref, _, sha = line.partition(" ")
                name = ref[len(f"refs/remotes/{remote}/") :]
                if name != "HEAD":
                    heads[f"refs/heads/{name}"] = sha
            default = git.text("symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD", check=False)
            if default:
                heads["HEAD"] = "refs/heads/" + default[len(f"refs/remotes/{remote}/") :]
        if remote and (not heads or "HEAD" not in heads):
            out = git.text("ls-remote", "--symref", remote, "HEAD", "refs/heads/*", check=False)
            for line in out.splitlines():
                left, _, name = line.partition("\t")
                if left.startswith("ref: ") and name == "HEAD":
                    heads["HEAD"] = left[5:]
                elif name.startswith("refs/heads/"):
                    heads.setdefault(name, left)
        if "HEAD" not in heads:
            for name in ("refs/heads/main", "refs/heads/master"):
                if name in heads:
                    heads["HEAD"] = name
                    break
        return heads

    def new_ref_base(self, local: str) -> str:
        """For a ref the remote does not have yet: the merge base with the remote's default
        branch when they share history, else the closest commit any remote branch has
        (a new branch is judged against what the remote already holds, never against
        nothing while the remote has something)."""
        git = self.git
        heads = self.remote_heads()
        tips = [sha for name, sha in heads.items() if name != "HEAD" and git.has_commit(sha)]
        if not self.remote:
            tips += git.text("for-each-ref", "--format=%(objectname)", "refs/remotes", check=False).split()
        default = heads.get(heads.get("HEAD", ""), "")
        if default and git.has_commit(default):
            mb = git.text("merge-base", local, default, check=False)
            if mb:
                return mb
        best, best_count = EMPTY_TREE, None
        for sha in dict.fromkeys(tips):
            mb = git.text("merge-base", local, sha, check=False)
            if not mb:
                continue
            count = int(git.text("rev-list", "--count", f"{mb}..{local}"))
            if best_count is None or count < best_count:
                best, best_count = mb, count
        return best

    def check_ignored(self) -> None:
        """records-ignored: a .gitignore line must not hide records from git (pre-push)."""
        if "records-ignored" not in self.active or not self.pushed:
            return

        git = self.git
        top = git.toplevel
        changed_ignores = any(git.diff(base, head, [":(glob)**/.gitignore"]) for base, head in self.result.ranges)
        folder = self.prefix + self.records_rel
        for source, line, message in ignore_problems(Git(top), folder, sorted(KINDS), walk=changed_ignores):
            self.emit("records-ignored", source, message, line=line)

    @property
    def prefix(self) -> str:
        """The ledger's folder inside the git work tree ("" or "sub/")."""
        rel = self.ledger.root.resolve().relative_to(self.git.toplevel.resolve()).as_posix()
        return "" if rel == "." else rel + "/"

    def check_deletion(self, remote_ref: str, remote_sha: str) -> None:
        """A push that deletes a remote branch drops the records only it holds: refused when
        the branch is the remote's default one and holds records, or holds records the
        default branch lacks."""
        if "append-only" not in self.active:
            return
        git = self.git
        if not git.has_commit(remote_sha):
            self.emit(
                "append-only",
                remote_ref,
                f"the push deletes {remote_ref} at {remote_sha[:12]}, which is not here, so what it drops cannot be checked",
                fix="`git fetch` first; to drop a branch that holds records, ask whoever protects the remote",
            )
            return
        prefix = self.prefix
        policy = judge_config(config_at(git, remote_sha, prefix + CONFIG_NAME), None, self.ledger.config)
        folder = prefix + PurePosixPath(policy.config.records).as_posix().strip("/")
        heads = self.remote_heads()
        default_ref = heads.get("HEAD")
        default = heads.get(default_ref or "")
        if default_ref == remote_ref or not default or not git.has_commit(default):
            dropped = [p for p in git.ls_tree(remote_sha, folder + "/") if not p.endswith("/.gitignore")]
            against = "the remote's default branch" if default_ref == remote_ref else "no default branch known"
        else:
            dropped = [p for st, p in git.diff(default, remote_sha, [folder + "/"]) if st in "AMT"]
            against = f"the default branch {default_ref}"
        if dropped:
            self.emit(
                "append-only",
                remote_ref,
                f"the push deletes {remote_ref}, dropping {len(dropped)} record file(s) that {against} does not hold "
                f"(first: {dropped[0]})",
                fix="Do not delete a branch that holds records; merge it into the default branch first. "
                "The remote should refuse deletions too (receive.denyDeletes, or a branch ruleset).",
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


def _supersedes(info: Info) -> set[str]:
    return {ref for where, ref in info.refs if where.startswith("supersedes")}


def _live_issue_owners(found: list[tuple[str, int | None, str | None, set[str]]]) -> dict[int, str | None]:
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


def _read_fs(root: Path, rel: str):
    path = root / rel
    if path.is_symlink():
        return "is a symlink", b""
    if not path.exists():
        return "is missing", b""
    if not path.is_file():
        return "is not a regular file", b""
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return "resolves outside the records folder", b""
    return None, path.read_bytes()


Inspected = tuple[str, list[Violation], "Info | None"]


def _inspect_each(root: str, paths: list[str], rules: FileRules) -> list[Inspected]:
    """(path, violations, info) per file: one file at a time, so each result can be remembered."""
    out: list[Inspected] = []
    for path in paths:
        violations, infos = inspect_paths(root, [path], rules)
        out.append((path, violations, infos[0] if infos else None))
    return out


def _inspect_all(root: str, paths: list[str], rules: FileRules) -> list[Inspected]:
    workers = min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1), 8)
    if len(paths) < POOL_THRESHOLD or workers < 2:
        return _inspect_each(root, paths, rules)

    # Fork: the workers inherit the imported schema and its compiled validators.
    ctx = multiprocessing.get_context("fork")
    chunk = max(500, len(paths) // (workers * 4))
    chunks = [paths[i : i + chunk] for i in range(0, len(paths), chunk)]
    out: list[Inspected] = []

    record_adapter()  # build the validator once, before forking
    with ctx.Pool(workers) as pool:
        for part in pool.starmap(_inspect_each, [(root, c, rules) for c in chunks]):
            out.extend(part)
    return out


def parse_pre_push(text: str) -> list[tuple[str, str, str, str]]:
    lines = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise InputError(
                "bad pre-push input",
                [
                    Problem(
                        "<stdin>",
                        f"line {n}",
                        f"expected `LOCAL_REF LOCAL_SHA REMOTE_REF REMOTE_SHA`, got {line!r}",
                        "run through git's pre-push hook (`ledger hook install`)",
                    )
                ],
            )
        lines.append((parts[0], parts[1], parts[2], parts[3]))
    return lines


def run_check(
    ledger,
    *,
    mode: str = "all",
    base: str | None = None,
    pre_push_input: str | None = None,
    remote: str | None = None,
    use_cache: bool = True,
) -> CheckResult:
    """Check the ledger. mode: "all" (every record and page), "base" (what HEAD adds since
    `base`, compared with their merge base) or "pre-push" (what git's pre-push input adds).
    Raises LedgerError (exit 2) for bad usage; violations are in the result."""
    start = time.perf_counter()
    checker = Checker(ledger, mode)
    checker.use_cache = use_cache
    try:
        if mode == "all":
            checker.run_all()
        elif mode == "base":
            if not base:
                raise InputError(
                    "--base needs a ref",
                    [Problem("<command line>", "--base", "no ref given", "e.g. `ledger check --base origin/main`")],
                )
            git = checker.git
            head = git.rev("HEAD")
            try:
                ref = git.rev(base)
            except GitError:
                raise InputError(
                    f"no such ref {base!r}",
                    [
                        Problem(
                            "<command line>",
                            "--base",
                            f"{base!r} is not a commit here",
                            "fetch it first, or give a branch, tag or SHA",
                        )
                    ],
                ) from None
            merge_base = git.text("merge-base", ref, head, check=False) or ref
            checker.run_range(merge_base, head)
            checker.check_history(head)
        elif mode == "pre-push":
            checker.remote = remote
            lines = parse_pre_push(pre_push_input or "")
            checker.pushed = [local_sha for _, local_sha, _, _ in lines if not is_zero(local_sha)]
            for _local_ref, local_sha, remote_ref, remote_sha in lines:
                if is_zero(local_sha):
                    checker.check_deletion(remote_ref, remote_sha)
                elif is_zero(remote_sha):
                    checker.run_range(checker.new_ref_base(local_sha), local_sha)
                elif not checker.git.has_commit(remote_sha):
                    checker.emit(
                        "append-only",
                        remote_ref,
                        f"the remote's {remote_ref} is at {remote_sha[:12]}, which is not here, so this push cannot be compared with it",
                        fix="`git fetch` first, then push again",
                    )
                else:
                    checker.run_range(remote_sha, local_sha)
            checker.check_ignored()
        elif mode == "pushed":
            # CI after a push: HEAD replaced `base` (github.event.before); zeros: a new branch.
            git = checker.git
            checker.remote = remote
            head = git.rev("HEAD")
            if not base or is_zero(base):
                checker.run_range(checker.new_ref_base(head), head)
            elif not git.has_commit(base):
                raise InputError(
                    f"no commit {base!r}",
                    [
                        Problem(
                            "<command line>",
                            "--pushed",
                            f"{base!r} is not a commit in this clone",
                            "fetch the whole history (actions/checkout `fetch-depth: 0`)",
                        )
                    ],
                )
            else:
                checker.run_range(git.rev(base), head)
            checker.check_history(head)
        else:
            raise InputError(
                f"unknown mode {mode!r}",
                [Problem("<api>", "mode", f"unknown mode {mode!r}", "use all, base or pre-push")],
            )
    except GitError as exc:
        raise InputError(
            "git failed", [Problem(str(ledger.root), "git", str(exc), "run inside a git checkout of the ledger")]
        ) from None
    checker.result.seconds = time.perf_counter() - start
    return checker.result
