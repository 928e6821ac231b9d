"""History rules: what a push or a range of commits may do to what is already in the ledger.

- `append-only`: nothing in the records folder is modified, deleted or renamed, compared
  with what the remote had (pre-push) or a base ref; a force-push that drops records is a
  deletion against the remote's tree, and a deleted remote branch drops its records. With
  `--all` and `--base`, the whole history of the records folder is walked as well: every
  file ever added is at HEAD with the bytes it was added with (so CI on a fresh clone sees
  what a `git push --no-verify` did). (From the decode investigation: a refuted hypothesis
  deleted is one the next reader reaches again.)
- `config-change`: the push being judged cannot switch off its own judge. The rules,
  their parameters and the records/specs/source paths that judge a range come from the
  base side's committed `ledger.yaml`; a push may tighten them (the tighter value applies
  at once), and loosening them is refused unless the same push adds a note or decision
  record tagged `ledger-config` saying why (it then applies from the next push on).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

from ..git import Git
from ..store.ids import new_id
from ..store.ledger import shard_of
from .result import ERROR
from .rule import Rule

#: The rules of this family, as data (ledger.checks.registry lists the families).
RULES: tuple[Rule, ...] = (
    Rule(
        "append-only",
        "history",
        ERROR,
        "Record files are never modified, deleted or renamed: compared with the remote's tree on "
        "push (a force-push that drops records, and deleting a remote branch that holds records, "
        "included) or with the merge base of --base REF; `--all` and `--base` also walk the "
        "records folder's whole history, so every file ever added must be at HEAD unchanged.",
        "Restore the record as it was (a change already committed: `git revert` that commit); to correct it, add a new record whose `supersedes` lists its id.",
    ),
    Rule(
        "behind-remote",
        "history",
        ERROR,
        "A push is compared with the remote's branch as the remote has it now. When another writer "
        "pushed first, the remote's commit is not in this clone: the push is behind the remote (a "
        "lost race, not a rewrite), and what it would replace cannot be checked until it is fetched. "
        "(From many jobs pushing to one remote: the lost race read as an `append-only` accusation.)",
        "Fetch first, as git's own hint says: `git pull --no-rebase` (a merge keeps the commits your "
        "records are stamped with; a rebase rewrites them) and push again, or `ledger push`, which "
        "fetches, merges, checks and retries.",
    ),
    Rule(
        "config-change",
        "history",
        ERROR,
        "A push is judged by the rules and paths of the base side's committed `ledger.yaml`, "
        "never by the ones it brings. Tightening them applies at once; loosening them (a lower "
        "severity, a higher limit, another records, specs or source folder) is refused unless "
        "the same push adds a `note` or `decision` record tagged `ledger-config` that says why, naming "
        "each setting (rule id or field) and its new value; append-only, symlinks, secrets, the site's "
        "paths and site.publish_hosts cannot be loosened by a push. The loosened config then judges "
        "the pushes after it.",
        "Push the config change with a record that says why, e.g. "
        "`printf 'body: cell-width 300 for the decode tables\\ntags: [ledger-config]\\n' | ledger add note -`; "
        "push the records that need the new config after it.",
    ),
    Rule(
        "attributes",
        "history",
        ERROR,
        "No .gitattributes line sets an attribute that changes bytes on checkout (`text`, `eol`, "
        "`crlf`, `filter`, `working-tree-encoding`, `ident`) for the ledger's files: with one, every "
        "record fails its hash in every fresh clone, and the records would be blamed.",
        "Remove the line, or narrow its pattern so it matches no record, spec page or config file "
        "(`git check-attr -a FILE` shows what applies).",
    ),
    Rule(
        "records-ignored",
        "history",
        ERROR,
        "No .gitignore line (nor .git/info/exclude, nor the global excludes file) hides files of "
        "the records folder: a hidden record is written by `ledger add` (which warns) but never "
        "committed, and `check` would be clean. The pre-push check asks git about a record path "
        "of every kind, and walks the records folder when the push changes a .gitignore.",
        "Remove the line (`git check-ignore -v FILE` shows which), then `git add` the records and push again.",
    ),
)

#: Attributes that make git change a file's bytes between the object and the checkout.
_BYTE_ATTRIBUTES = ("text", "eol", "crlf", "filter", "working-tree-encoding", "ident")
#: Names a record, spec page or config file has, for matching a pattern without a slash.
_SAMPLES = ("01M8XS2V759P7NJWS938ZPY15G.json", "page.md", "ledger.yaml", "mkdocs.yml")


def attribute_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) of a .gitattributes text that would change the bytes git checks out
    for the ledger's files (records, specs, config): a byte-changing attribute set on a
    pattern that matches them (any pattern with a slash counts, and any `[attr]` macro)."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        pattern, attrs = words[0], words[1:]
        names = [a.split("=", 1)[0] for a in attrs if not a.startswith(("-", "!"))]
        if not any(n in _BYTE_ATTRIBUTES for n in names):
            continue
        if pattern.startswith("[attr]") or "/" in pattern.strip("/") or any(fnmatch(s, pattern) for s in _SAMPLES):
            found.append((number, line.strip()))
    return found


def attribute_problems(git: Git, commit: str, paths: list[str]) -> list[tuple[str, int, str]]:
    """(path, line, text) of each line of the .gitattributes files `paths` at `commit` that
    would change the bytes of the ledger's files in every checkout."""
    blobs = git.read_blobs([f"{commit}:{p}" for p in paths])
    out = []
    for path in paths:
        raw = blobs.get(f"{commit}:{path}")
        for number, line in attribute_lines((raw or b"").decode("utf-8", "replace")):
            out.append((path, number, line))
    return out


STATUS_WORDS = {"M": "modified", "D": "deleted", "T": "changed type (file/symlink)", "R": "renamed", "C": "copied over"}

# -- the whole history of the records folder -------------------------------------------------


@dataclass
class HistoryProblem:
    path: str  # path in the repository
    message: str


def _z_fields(out: bytes) -> list[str]:
    return out.decode("utf-8", "surrogateescape").split("\0")


def walk_records_history(git: Git, head: str, folder: str, *, cache: bool = True) -> list[HistoryProblem]:
    """Every file ever added under `folder` (in the history of `head`) is at `head` with the
    bytes it was first added with.

    One `git log` pass lists only the modifications, deletions and type changes under the
    folder (merges diffed against every parent, so a merge that drops a record its first or any
    other parent had is seen, whatever path through the graph); only the paths it names are then looked up, so an intact history costs one
    path-limited walk, whatever the number of records. Replace objects and grafts are off
    (`ledger.git`), so a `git replace` cannot show another history.

    With `cache`, the last commit verified clean is kept under .git/ledger/ and a later walk
    covers only the commits since it (when it is an ancestor of `head`); a fresh clone walks
    everything. The cache is derived data: delete it at any time."""
    if git.text("rev-parse", "--is-shallow-repository", check=False) == "true":
        return [
            HistoryProblem(
                folder,
                "this clone is shallow, so the history of the records cannot be verified "
                "(CI: actions/checkout with `fetch-depth: 0`, or `git fetch --unshallow`)",
            )
        ]
    head = git.rev(head)
    cache_path = git.common_dir / "ledger" / "history-verified.json"
    since = _verified(cache_path, folder) if cache else None
    if since == head:
        return []
    if since is not None and not git.ok("merge-base", "--is-ancestor", since, head):
        since = None
    out = git.run(
        "-c",
        "log.showRoot=false",  # a root commit only adds: diffing it would cost a pass over every file
        "log",
        "--format=%x01%H",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        # Merges against every parent: a merge whose first parent lacks a record (an old
        # branch merged with `-s ours`) drops it only against the parent that had it.
        "--diff-merges=separate",
        "--diff-filter=DMT",
        f"{since}..{head}" if since else head,
        "--",
        folder,
    )
    touched = _touched(out)
    if not touched:
        if cache:
            _save_verified(cache_path, folder, head)
        return []
    first, now = _first_blobs(git, head, list(touched)), _blobs_at(git, head, list(touched))
    problems: list[HistoryProblem] = []
    for path, when in sorted(touched.items()):
        added = first.get(path, [])
        if len(added) > 1:
            # Added with other bytes on another path through the graph: which is "first"
            # would rest on commit dates, which the pusher sets.
            problems.append(
                HistoryProblem(path, f"record file was added with {len(added)} different contents in the history")
            )
            continue
        was = added[0] if added else None
        if path not in now:
            problems.append(HistoryProblem(path, f"record file was deleted in commit {when[:12]} and is not at HEAD"))
        elif was is not None and now[path] != was:
            problems.append(
                HistoryProblem(
                    path, f"record file was changed in commit {when[:12]}: HEAD differs from the file as added"
                )
            )
    if cache and not problems:
        _save_verified(cache_path, folder, head)
    return problems


def _touched(out: bytes) -> dict[str, str]:
    """path -> newest commit that changed or dropped it, from `git log --raw -z` output."""
    touched: dict[str, str] = {}
    commit = ""
    parts = _z_fields(out)
    i = 0
    while i < len(parts):
        part = parts[i]
        if part.startswith("\x01"):
            commit = part[1:].strip()
            i += 1
            continue
        if part.lstrip("\n").startswith(":") and i + 1 < len(parts):
            if not _ignored_name(parts[i + 1]):
                touched.setdefault(parts[i + 1], commit)
            i += 2
            continue
        i += 1
    return touched


def _first_blobs(git: Git, head: str, paths: list[str]) -> dict[str, list[str]]:
    """The blobs each path was added with anywhere in the history of `head` (every commit,
    merges against each parent), oldest first; an honest history has one per path."""
    added = git.run(
        "log",
        "--format=",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--diff-merges=separate",
        "--diff-filter=A",
        "--reverse",
        head,
        "--",
        *paths,
    )
    first: dict[str, list[str]] = {}
    parts = _z_fields(added)
    for j in range(0, len(parts) - 1):
        meta = parts[j].lstrip("\n")
        if meta.startswith(":"):
            fields = meta.split()
            if len(fields) >= 4:
                blobs = first.setdefault(parts[j + 1], [])
                if fields[3] not in blobs:
                    blobs.append(fields[3])
    return first


def _blobs_at(git: Git, head: str, paths: list[str]) -> dict[str, str]:
    now: dict[str, str] = {}
    for line in git.run("ls-tree", "-z", "--full-tree", head, "--", *paths).split(b"\0"):
        if line:
            meta, _, path = line.decode("utf-8", "surrogateescape").partition("\t")
            now[path] = meta.split()[2]
    return now


def _verified(path: Path, folder: str) -> str | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(folder) if isinstance(data, dict) else None
    return value if isinstance(value, str) and len(value) in (40, 64) else None


def _save_verified(path: Path, folder: str, commit: str) -> None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        data = {}
    data[folder] = commit
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time


def _ignored_name(path: str) -> bool:
    """Files of the records folder that are not evidence: git's and the writer's own."""
    name = path.rsplit("/", 1)[-1]
    return name == ".gitignore" or name.startswith(".tmp-")


def ignore_problems(git: Git, folder: str, kinds: list[str], walk: bool) -> list[tuple[str, int | None, str]]:
    """(ignore file, line, message) for each ignore rule that hides records under `folder`
    (relative to the work tree): probe paths of every kind (one `git check-ignore`), and with
    `walk` the untracked files git ignores there (a walk of the folder)."""
    probe = new_id()
    probes = [f"{folder}/{kind}/{shard_of(probe)}/{probe}.json" for kind in kinds]
    out = git.run(
        "check-ignore",
        "-v",
        "-z",
        "--no-index",
        "--stdin",
        input=b"\0".join(p.encode() for p in probes) + b"\0",
        check=False,
    )
    found: dict[tuple[str, str], tuple[str, int | None, str]] = {}
    parts = out.decode("utf-8", "surrogateescape").split("\0")
    for i in range(0, len(parts) - 3, 4):
        source, line, pattern, path = parts[i : i + 4]
        if pattern.startswith("!"):
            continue
        kind = path[len(folder) + 1 :].split("/", 1)[0]
        found.setdefault(
            (source, pattern),
            (source, int(line) if line.isdigit() else None, f"`{pattern}` hides new {kind} records ({path})"),
        )
    if walk:
        hidden = [p for p in git.ignored_under(folder + "/") if not _ignored_name(p)]
        if hidden:
            why = dict(git.ignored(hidden[:1]))
            source_line = why.get(hidden[0], "")
            source, _, rest = source_line.partition(":")
            line, _, pattern = rest.partition(": ")
            found.setdefault(
                (source, pattern),
                (
                    source or folder,
                    int(line) if line.isdigit() else None,
                    f"`{pattern}` hides {len(hidden)} record file(s) git never saw (first: {hidden[0]})",
                ),
            )
    return list(found.values())
