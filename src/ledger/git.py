"""The one git layer of ledger: git's own command line through subprocess, used by the
store's stamps, the checker, the hooks and the demo alike.

Every command runs in a clean environment (`clean_env`): the variables that point git at a
repository (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, ..., the list `git rev-parse
--local-env-vars` prints) are dropped, so a hook that git started from a `git worktree`
(with `GIT_DIR` set) still reads the repository of the folder it was asked about, and
`GIT_NO_REPLACE_OBJECTS=1`, so `git replace` cannot make a commit or blob read as another.

Reads of many blobs go through one `cat-file --batch`, so a pre-push check reads only the
blobs the push adds. GitPython is not used: it cost ~0.1 s of import time on every push and
`ledger add`, ran these same commands, and decoded diffs that the stamps need as exact bytes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

ZERO = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

#: What `git rev-parse --local-env-vars` prints (git 2.39-2.47): the variables that tie a git
#: process to one repository, and that git itself clears before working in another one.
LOCAL_ENV_VARS = (
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_OBJECT_DIRECTORY",
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE",
    "GIT_GRAFT_FILE",
    "GIT_INDEX_FILE",
    "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE",
    "GIT_PREFIX",
    "GIT_INTERNAL_SUPER_PREFIX",
    "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR",
)
#: Variables that change how a pathspec reads (ledger passes `:(exclude,top)` magic), and the
#: namespace or quarantine of the process that ran the hook.
OTHER_ENV_VARS = (
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
    "GIT_NOGLOB_PATHSPECS",
    "GIT_ICASE_PATHSPECS",
    "GIT_NAMESPACE",
    "GIT_QUARANTINE_PATH",
)


def clean_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default: this process's) without the repository-locating GIT_* variables,
    with replace objects off. Identity (GIT_AUTHOR_*, GIT_COMMITTER_*), ssh and askpass stay."""
    drop = set(LOCAL_ENV_VARS) | set(OTHER_ENV_VARS)
    env = {k: v for k, v in (os.environ if environ is None else environ).items() if k not in drop}
    env["GIT_NO_REPLACE_OBJECTS"] = "1"
    return env


class GitError(RuntimeError):
    pass


class Git:
    def __init__(self, cwd: Path):
        self.cwd = Path(cwd)
        self.env = clean_env()

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        proc = subprocess.run(["git", *args], cwd=self.cwd, input=input, capture_output=True, env=self.env)
        if check and proc.returncode != 0:
            raise GitError(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout

    def text(self, *args: str, check: bool = True) -> str:
        return self.run(*args, check=check).decode("utf-8", "surrogateescape").strip()

    def ok(self, *args: str) -> bool:
        return subprocess.run(["git", *args], cwd=self.cwd, capture_output=True, env=self.env).returncode == 0

    def maybe(self, *args: str) -> str | None:
        """The command's output, or None when it fails (no such ref, no remote, detached HEAD)."""
        proc = subprocess.run(["git", *args], cwd=self.cwd, capture_output=True, env=self.env)
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
