"""The one git layer of ledger: git's own command line through subprocess, used by the
store's stamps, the checker, the hooks and the demo alike.

Every command runs in a clean environment (`clean_env`): every inherited `GIT_*` variable is
dropped (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE... would point git at another repository), so a
hook that git started from a `git worktree` still reads the repository of the folder it was
asked about; replace objects and grafts are off, so `git replace` cannot make a commit or blob
read as another.

Every command is also hardened against the repository it reads (`command`, the one place a
git command line is made): a judged repository's config cannot make git run a program. Its
fsmonitor, hooks, pager, external diff and textconv drivers are off, and a bare repository is
used only when named explicitly (`safe.bareRepository=explicit`), so a bare repository
committed inside a work tree (with `core.fsmonitor` in its committed `config`) is refused
instead of read. The options are `-c` options, which beat every config file; the user's own
global and system config (where CI puts `safe.directory`) are still read for the rest.

Reads of many blobs go through one `cat-file --batch`, so a pre-push check reads only the
blobs the push adds. GitPython is not used: it cost ~0.1 s of import time on every push and
`ledger add`, ran these same commands, and decoded diffs that the stamps need as exact bytes.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ZERO = "0" * 40
ZERO_256 = "0" * 64
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


def is_zero(sha: str) -> bool:
    """git's all-zero object name (40 hex for SHA-1, 64 for SHA-256): a ref that does not exist."""
    return sha in (ZERO, ZERO_256)


def clean_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment git runs in: every `GIT_*` variable a hook inherits removed (GIT_DIR,
    GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY, GIT_CONFIG_COUNT/KEY/VALUE... would make
    git read another repository, index or config), replace objects off, grafts ignored, so
    every read sees the history the objects record, not one a `git replace` or `info/grafts`
    substitutes. Git finds the repository from the working folder given."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("GIT_")}
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    env["GIT_GRAFT_FILE"] = os.devnull
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["GIT_PAGER"] = "cat"
    env["PAGER"] = "cat"
    env["LC_ALL"] = "C"
    return env


#: Settings that make git run a program, neutralised for every command ledger runs: a judged
#: repository's config (a committed bare repository's `config`, a clone's) cannot run code
#: through them. `-c` beats every config file. `safe.bareRepository=explicit` refuses a bare
#: repository that git would otherwise discover from the working folder.
HARDENED_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("diff.external", ""),
    ("core.alternateRefsCommand", ""),
    ("core.untrackedCache", "false"),
    ("submodule.recurse", "false"),
    ("safe.bareRepository", "explicit"),
)

#: Options given before every subcommand: replace objects off, paths printed as they are
#: (core.quotePath=false: no octal escapes for non-ASCII names), no advice about the grafts
#: file (`clean_env` points GIT_GRAFT_FILE at /dev/null, which git would otherwise call a
#: deprecated grafts file in every error it prints), then the hardened settings.
GLOBAL_OPTIONS = (
    "--no-replace-objects",
    "-c",
    "core.quotePath=false",
    "-c",
    "advice.graftFileDeprecated=false",
    *(opt for key, value in HARDENED_CONFIG for opt in ("-c", f"{key}={value}")),
)

#: Subcommands that can run a diff driver: external diff and textconv are refused on each.
_DIFFING = frozenset({"diff", "diff-tree", "diff-index", "diff-files", "log", "show"})


def command(*args: str, hooks: bool = False) -> list[str]:
    """The one way ledger makes a git command line: `git`, the hardened global options, the
    subcommand, `--no-ext-diff --no-textconv` on every diffing subcommand, then the rest.
    `hooks=True` keeps the repository's hooks path (for `ledger push`, whose pre-push hook
    must run, and to find where `ledger hook install` writes); everything else stays hardened."""
    options = list(GLOBAL_OPTIONS)
    if hooks:
        at = options.index(f"core.hooksPath={os.devnull}")
        del options[at - 1 : at + 1]
    if not args:
        return ["git", *options]
    sub, rest = args[0], list(args[1:])
    if sub in _DIFFING:
        rest = ["--no-ext-diff", "--no-textconv", *rest]
    return ["git", *options, sub, *rest]


class GitError(RuntimeError):
    pass


def looks_bare(path: Path) -> bool:
    """True when `path` holds git's own files (HEAD, objects/, refs/): a bare repository, or
    a git folder committed inside a work tree. ledger never reads one found this way: git
    runs with `safe.bareRepository=explicit`, and the caller says why it refused."""
    path = Path(path)
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


class Git:
    def __init__(self, cwd: Path, *, hooks: bool = False):
        self.cwd = Path(cwd)
        #: Keep the repository's own hooks path (only to find or install ledger's hook).
        self.hooks = hooks

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        proc = subprocess.run(
            command(*args, hooks=self.hooks), cwd=self.cwd, input=input, capture_output=True, env=clean_env()
        )
        if check and proc.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout

    def text(self, *args: str, check: bool = True) -> str:
        return self.run(*args, check=check).decode("utf-8", "surrogateescape").strip()

    def ok(self, *args: str) -> bool:
        return (
            subprocess.run(
                command(*args, hooks=self.hooks), cwd=self.cwd, capture_output=True, env=clean_env()
            ).returncode
            == 0
        )

    def maybe(self, *args: str) -> str | None:
        """The command's output, or None when it fails (no such ref, no remote, detached HEAD)."""
        proc = subprocess.run(command(*args, hooks=self.hooks), cwd=self.cwd, capture_output=True, env=clean_env())
        return proc.stdout.decode("utf-8", "surrogateescape").strip() if proc.returncode == 0 else None

    @property
    def toplevel(self) -> Path:
        return Path(self.text("rev-parse", "--show-toplevel"))

    @property
    def common_dir(self) -> Path:
        path = Path(self.text("rev-parse", "--git-common-dir"))
        return path if path.is_absolute() else (self.cwd / path).resolve()

    def is_repo(self) -> bool:
        return self.ok("rev-parse", "--git-dir")

    def has_commit(self, sha: str) -> bool:
        return self.ok("cat-file", "-e", f"{sha}^{{commit}}")

    def rev(self, ref: str) -> str:
        return self.text("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")

    def subtree(self, commit: str, path: str) -> str | None:
        """The tree object at `commit:path`, or None when absent."""
        if commit == EMPTY_TREE:
            return None
        out = (
            self.run(
                "rev-parse", "--verify", "--quiet", f"{commit}:{path}" if path else f"{commit}^{{tree}}", check=False
            )
            .decode()
            .strip()
        )
        return out or None

    def diff(self, base: str, head: str, paths: list[str]) -> list[tuple[str, str]]:
        """(status letter, path) of what differs from base to head under paths; renames are
        reported as a deletion and an addition so a rename is never hidden."""
        out = self.run("diff", "--name-status", "--no-renames", "-z", base, head, "--", *paths)
        parts = out.decode("utf-8", "surrogateescape").split("\0")
        pairs = []
        for i in range(0, len(parts) - 1, 2):
            pairs.append((parts[i][:1], parts[i + 1]))
        return pairs

    def diff_with_modes(self, base: str, head: str, paths: list[str]) -> tuple[list[tuple[str, str]], dict[str, str]]:
        """`diff` plus each changed path's mode at head ("120000" is a symlink, "160000" a
        submodule, "000000" gone), from one `git diff --raw`."""
        out = self.run("diff", "--raw", "--no-renames", "-z", "--no-abbrev", base, head, "--", *paths)
        parts = out.decode("utf-8", "surrogateescape").split("\0")
        pairs: list[tuple[str, str]] = []
        modes: dict[str, str] = {}
        for i in range(0, len(parts) - 1, 2):
            fields = parts[i].lstrip(":").split()
            if len(fields) < 5:
                continue
            pairs.append((fields[4][:1], parts[i + 1]))
            modes[parts[i + 1]] = fields[1]
        return pairs, modes

    def tree_modes(self, commit: str, paths: list[str]) -> dict[str, str]:
        """Mode of each of `paths` (exact paths, not recursive) at `commit`; absent ones are left out."""
        if commit == EMPTY_TREE or not paths:
            return {}
        wanted = list(dict.fromkeys(paths))
        found: dict[str, str] = {}
        # git descends into a path that is the prefix of another pathspec ("a" beside "a/b"
        # lists a's entries), so one call takes paths that do not nest, and only exact
        # names count.
        while wanted:
            batch = [p for p in wanted if not any(q != p and q.startswith(p.rstrip("/") + "/") for q in wanted)]
            wanted = [p for p in wanted if p not in batch]
            out = self.run("ls-tree", "-z", "--full-tree", commit, "--", *batch, check=False)
            for entry in out.decode("utf-8", "surrogateescape").split("\0"):
                if "\t" in entry:
                    meta, path = entry.split("\t", 1)
                    if path in batch:
                        found[path] = meta.split(" ")[0]
        return found

    def diff_trees(self, old: str | None, new: str | None) -> list[tuple[str, str]]:
        out = self.run("diff-tree", "-r", "--no-renames", "--name-status", "-z", old or EMPTY_TREE, new or EMPTY_TREE)
        parts = out.decode("utf-8", "surrogateescape").split("\0")
        return [(parts[i][:1], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]

    def ls_tree(self, commit: str, path: str) -> list[str]:
        """Paths of files under `path` at `commit` (recursive)."""
        if commit == EMPTY_TREE:
            return []
        out = self.run("ls-tree", "-r", "-z", "--name-only", commit, "--", path, check=False)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    def read_blobs(self, specs: list[str]) -> dict[str, bytes | None]:
        """Contents of `rev:path` specs (or object ids) in one `git cat-file --batch`."""
        if not specs:
            return {}
        unique = list(dict.fromkeys(specs))
        out = self.run("cat-file", "--batch", input=("\n".join(unique) + "\n").encode("utf-8", "surrogateescape"))
        result: dict[str, bytes | None] = {}
        pos = 0
        for spec in unique:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            pos = end + 1
            if len(header) == 3 and header[1] != b"missing":
                size = int(header[2])
                result[spec] = out[pos : pos + size] if header[1] == b"blob" else None
                pos += size + 1
            else:
                result[spec] = None
        return result

    def resolve_commits(self, shas: list[str]) -> dict[str, str | None]:
        """sha (full or abbreviated) -> full commit sha, or None when it does not resolve."""
        if not shas:
            return {}
        unique = list(dict.fromkeys(shas))
        out = self.run(
            "cat-file", "--batch-check", input=("\n".join(f"{s}^{{commit}}" for s in unique) + "\n").encode()
        )
        lines = out.decode().splitlines()
        result: dict[str, str | None] = {}
        for sha, line in zip(unique, lines):
            parts = line.split()
            result[sha] = parts[0] if len(parts) == 3 and parts[1] == "commit" else None
        return result

    def reachable(self, commits: list[str]) -> set[str]:
        """The commits reachable from some branch or tag (what a fresh clone can have)."""
        if not commits:
            return set()
        if len(commits) <= 16:
            out = set()
            for sha in commits:
                if self.text(
                    "for-each-ref",
                    "--count=1",
                    "--contains",
                    sha,
                    "--format=%(refname)",
                    "refs/heads",
                    "refs/tags",
                    "refs/remotes",
                    check=False,
                ):
                    out.add(sha)
            return out
        listed = set(self.run("rev-list", "--all").decode().split())
        return {c for c in commits if c in listed}

    def ignored(self, paths: list[str]) -> list[tuple[str, str]]:
        """(path, "FILE:LINE: PATTERN") for each of `paths` (relative to `cwd`) that a
        .gitignore line hides from git, so it would never be committed. [] outside a repository."""
        if not paths:
            return []
        out = self.run(
            "check-ignore", "-v", "-z", "--stdin", input=b"\0".join(p.encode() for p in paths) + b"\0", check=False
        )
        parts = out.decode("utf-8", "surrogateescape").split("\0")
        found = []
        for i in range(0, len(parts) - 3, 4):
            source, line, pattern, path = parts[i : i + 4]
            if pattern.startswith("!"):
                continue  # a negated pattern matched: the path is not ignored
            found.append((path, f"{source}:{line}: {pattern}"))
        return found

    def ignored_under(self, folder: str) -> list[str]:
        """Untracked files under `folder` that .gitignore hides (git's own walk of the folder)."""
        out = self.run("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", folder, check=False)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
