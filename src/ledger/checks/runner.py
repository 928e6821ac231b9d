"""Run the rules over the whole ledger (`--all`) or over what a range of commits adds
(`--base REF`, `--pre-push`)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from .. import pages as pages_mod
from ..config import CONFIG_NAME
from ..errors import InputError, Problem
from ..git import EMPTY_TREE, ZERO, Git, GitError
from ..schema.registry import KINDS, record_adapter
from ..store.ledger import shard_of
from . import comparability
from .cache import VerificationCache, clean_blobs
from .history import STATUS_WORDS
from .keyindex import key_index
from .pages import check_high_water, check_page, owed_of_page, page_settings
from .records import FileRules, Info, inspect_artifact, inspect_batch, inspect_file, inspect_paths
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
    def of(cls, checker: Checker, base: str, head: str) -> _Range:
        git = checker.git
        prefix = checker.ledger.root.resolve().relative_to(git.toplevel.resolve()).as_posix()
        prefix = "" if prefix == "." else prefix + "/"
        return cls(git, base, head, prefix, f"{prefix}{checker.records_rel}/", f"{prefix}{checker.specs_rel}/")

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
        self.active: dict[str, Active] = {
            k: a for k, a in configure(ledger.config.rules, CONFIG_NAME).items() if a.severity != "off"
        }
        self.result = CheckResult(mode=mode, rules=sorted(self.active))
        self.records_rel = PurePosixPath(ledger.config.records).as_posix().strip("/")
        self.specs_rel = PurePosixPath(ledger.config.specs).as_posix().strip("/")
        self.infos: dict[str, Info] = {}
        self._git: Git | None = None
        #: Answer unmodified record files from the verification cache (checks/cache.py).
        self.use_cache = True

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
        self.check_shas(new)

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
        config = self.ledger.config
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
        reachable = source.reachable([c for c in resolved.values() if c])
        self._report_shas(by_sha, resolved, reachable, repo, where)

    def _report_shas(self, by_sha, resolved, reachable, repo, where) -> None:
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
                elif full not in reachable:
                    self.emit(
                        "sha-abbreviated",
                        info.path,
                        f"source commit {sha} is historical: no branch or tag contains it, so a fresh clone will not have it",
                        field="source.sha",
                    )

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

    def run_all(self) -> None:
        root = self.ledger.records_dir
        paths = []
        if root.is_dir():
            for folder, dirs, files in os.walk(root):
                dirs.sort()
                rel = os.path.relpath(folder, root)
                for name in files:
                    if name.startswith(".tmp-") or name == ".gitignore":
                        continue
                    paths.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
        rules = self.file_rules()
        violations, infos = self.inspect_remembering(root, paths, rules)
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
        issues = _live_issue_owners([(i.id, i.number, i.owner, _supersedes(i)) for i in infos if i.kind == "issue"])
        pages_text = {}
        spec_dir = self.ledger.specs_dir
        if spec_dir.is_dir():
            for page in sorted(spec_dir.rglob("*.md")):
                pages_text[page.relative_to(self.ledger.root).as_posix()] = page.read_text(
                    encoding="utf-8", errors="replace"
                )
        self.page_checks(pages_text, list(pages_text), issues.get)
        config = self.ledger.root / CONFIG_NAME
        if config.is_file():
            self.result.violations.extend(inspect_artifact(CONFIG_NAME, config.read_bytes(), rules, text_page=True))

    def inspect_remembering(self, root: Path, paths: list[str], rules: FileRules) -> tuple[list[Violation], list[Info]]:
        """`inspect_file` on every path, answering unmodified tracked files from the
        verification cache (checks/cache.py) and remembering what it inspected."""
        cache = VerificationCache.open(self.git, rules) if self.use_cache else None
        blobs = clean_blobs(root) if cache is not None and cache.file is not None else {}
        found: dict[str, tuple[list[Violation], Info | None]] = {}
        misses = []
        for path in paths:
            blob = blobs.get(path)
            hit = cache.get(path, blob) if cache is not None and blob is not None else None
            if hit is None:
                misses.append(path)
            else:
                found[path] = hit
        if cache is not None:
            cache.keep_only({f"{blobs[p]} {p}" for p in paths if p in blobs})
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

    # -- ranges ----------------------------------------------------------------------------

    def run_range(self, base: str, head: str) -> None:
        """Check what the commits from BASE to HEAD add: the records, the pages they change, the config."""
        self.result.ranges.append((base, head))
        r = _Range.of(self, base, head)
        added, pages_changed = self._range_changes(r)
        infos = self._range_records(r, added)
        self._fetch(r, {ref for info in infos for _, ref in info.refs})
        self.cross_checks(infos, self.lookup, lambda ref: ref in self.infos)
        if "unique-key" in self.active:
            self._range_unique_keys(r, infos)
        if "attachments" in self.active:
            for info in infos:
                self.check_attachment(info, r.read_attachment)
        self._range_pages(r, pages_changed)

    def _range_changes(self, r: _Range) -> tuple[list[str], list[str]]:
        """Records added and pages changed; a record changed or removed is `append-only`; the config is read."""
        added: list[str] = []
        pages_changed: list[str] = []
        config = r.prefix + CONFIG_NAME
        for status, path in self.git.diff(r.base, r.head, [r.rec_prefix, r.spec_prefix, config]):
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
        return added, pages_changed

    def _range_records(self, r: _Range, added: list[str]) -> list[Info]:
        """Inspect the added record files; an id the range repeats, or that the base has, is `unique-id`."""
        blobs = self.git.read_blobs([f"{r.head}:{p}" for p in added])
        batch = [(p[len(r.rec_prefix) :], blobs.get(f"{r.head}:{p}") or b"") for p in added]
        violations, infos = inspect_batch(batch, self.file_rules())
        self.result.violations.extend(violations)
        self.result.records_checked += sum(1 for p in added if p.endswith(".json"))
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

    def _range_pages(self, r: _Range, pages_changed: list[str]) -> None:
        """The changed pages are checked; the high-water mark counts all of them."""
        all_pages = [p for p in self.git.ls_tree(r.head, r.spec_prefix) if p.endswith(".md")]
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

    # -- pre-push --------------------------------------------------------------------------

    def new_ref_base(self, local: str, remote: str | None) -> str:
        """For a ref the remote does not have yet: the closest commit the remote already has."""
        git = self.git
        pattern = f"refs/remotes/{remote}" if remote else "refs/remotes"
        candidates = git.text("for-each-ref", "--format=%(objectname)", pattern, check=False).split()
        best, best_count = EMPTY_TREE, None
        for sha in dict.fromkeys(candidates):
            mb = git.text("merge-base", local, sha, check=False)
            if not mb:
                continue
            count = int(git.text("rev-list", "--count", f"{mb}..{local}"))
            if best_count is None or count < best_count:
                best, best_count = mb, count
        return best


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
        elif mode == "pre-push":
            for _local_ref, local_sha, remote_ref, remote_sha in parse_pre_push(pre_push_input or ""):
                if local_sha == ZERO:
                    continue  # deleting a remote branch adds nothing
                if remote_sha == ZERO:
                    checker.run_range(checker.new_ref_base(local_sha, remote), local_sha)
                elif not checker.git.has_commit(remote_sha):
                    checker.emit(
                        "append-only",
                        remote_ref,
                        f"the remote's {remote_ref} is at {remote_sha[:12]}, which is not here, so this push cannot be compared with it",
                        fix="`git fetch` first, then push again",
                    )
                else:
                    checker.run_range(remote_sha, local_sha)
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
