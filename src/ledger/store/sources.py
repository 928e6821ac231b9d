"""The measured source checkout (config `source:`), read through `ledger.git`: what the
re-gate judgement (ledger.analysis.regate) asks of it."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..git import Git, GitError
from .ledger import Ledger


class SourceView:
    """The measured source checkout, read through `ledger.git`: its head, which commits
    resolve and precede it, and which paths changed since a commit."""

    def __init__(self, path: Path, exclude: Iterable[str] = ()):
        self.path = Path(path)
        self.git = Git(self.path)
        self.ok = self.git.is_repo()
        self.head: str | None = None
        self.problem: str | None = None
        self._exclude = list(exclude)
        self._resolved: dict[str, str | None] = {}
        self._distance: dict[str, int | None] = {}
        if not self.ok:
            self.problem = "the measured source (`source:` in ledger.yaml) is not a git checkout"
            return
        try:
            self.head = self.git.rev("HEAD")
        except GitError:
            self.ok = False
            self.problem = "the measured source (`source:` in ledger.yaml) has no commit yet"
            return

    def resolve(self, shas: Iterable[str]) -> dict[str, str | None]:
        wanted = [s for s in dict.fromkeys(shas) if s and s not in self._resolved]
        if wanted and self.ok:
            try:
                self._resolved.update(self.git.resolve_commits(wanted))
            except GitError:
                self._resolved.update({s: None for s in wanted})
        return {s: self._resolved.get(s) for s in shas if s}

    def full(self, sha: str) -> str | None:
        """The full commit of a recorded sha, once `resolve` has seen it."""
        return self._resolved.get(sha) if self.ok else None

    def distance(self, full: str) -> int | None:
        """Commits from `full` to head when `full` is head or one of its ancestors, else None."""
        if full not in self._distance:
            if full == self.head:
                self._distance[full] = 0
            elif self.git.ok("merge-base", "--is-ancestor", full, self.head or "HEAD"):
                self._distance[full] = int(self.git.text("rev-list", "--count", f"{full}..{self.head}"))
            else:
                self._distance[full] = None
        return self._distance[full]

    def changed(self, base: str, recipe_paths: list[str]) -> list[str]:
        """Paths that differ between `base` and head, within the recipe paths (all when none),
        leaving out the ledger's own files when the ledger lives in the measured repository."""
        spec = [f":(glob){p}" for p in recipe_paths] + [f":(exclude){e}" for e in self._exclude]
        out = self.git.run("diff", "--name-only", "--no-renames", "-z", base, self.head or "HEAD", "--", *spec)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def ledger_exclusions(ledger_root: Path, source: Path, relative: Iterable[str]) -> list[str]:
    """The ledger's own paths (records, specs, config, build output) relative to the source
    checkout's top, when the ledger lives inside it: records are not the measured source."""
    try:
        top = Git(source).toplevel.resolve()
        base = ledger_root.resolve().relative_to(top)
    except (GitError, ValueError, OSError):
        return []
    out = []
    for rel in relative:
        path = (base / rel).as_posix().strip("/")
        if path and path != "." and not path.startswith(".."):
            out.append(path)
    return out


def source_view(ledger: Ledger) -> SourceView:
    """The measured source of a ledger (config `source:`), its own files left out."""
    path = (ledger.root / ledger.config.source).resolve()
    site = ledger.config.site
    exclude = ledger_exclusions(
        ledger.root,
        path,
        [ledger.config.records, ledger.config.specs, "ledger.yaml", site.mkdocs_yml, site.docs_dir, site.site_dir],
    )
    return SourceView(path, exclude)
