"""The measured source's commit order, read from git at build time, for chart x-axes.

Records stamp the commit they measured; git knows how those commits are ordered. Each
recorded SHA (full or abbreviated) the source checkout has is given its position in a
topological walk (`git rev-list --topo-order --reverse`) and its author date. A SHA the
checkout lacks is left out; charts then fall back to first-measurement order and say so.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..git import Git, GitError


def commit_order(source: Path, shas: Iterable[str]) -> dict[str, tuple[int, str]]:
    """recorded SHA -> (position in source order, author date YYYY-MM-DD)."""
    wanted = sorted({s for s in shas if s})
    if not wanted:
        return {}
    git = Git(source)
    try:
        if not git.is_repo():
            return {}
        batch = git.run(
            "cat-file",
            "--batch-check=%(objectname) %(objecttype)",
            input="\n".join(wanted).encode() + b"\n",
            check=False,
        )
    except (OSError, GitError):
        return {}
    full: dict[str, str] = {}
    for recorded, line in zip(wanted, batch.decode(errors="replace").splitlines(), strict=False):
        parts = line.split()
        if len(parts) == 2 and parts[1] == "commit":
            full[recorded] = parts[0]
    if not full:
        return {}
    try:
        walk = git.text(
            "rev-list",
            "--topo-order",
            "--reverse",
            "--format=%H %as",
            "--no-commit-header",
            *sorted(set(full.values())),
        )
    except GitError:
        return {}
    position: dict[str, tuple[int, str]] = {}
    for i, line in enumerate(walk.splitlines()):
        sha, _, date = line.partition(" ")
        position[sha] = (i, date)
    return {recorded: position[sha] for recorded, sha in full.items() if sha in position}
