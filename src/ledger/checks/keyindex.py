"""An index of unique keys (issue numbers, contract names) in a kind's folder at a commit,
cached under .git/ledger/ by the folder's tree id and brought up to date with
`git diff-tree` between the cached tree and the wanted one.

Why: a pre-push check must compare the keys a push adds with every key the remote has,
and reading every issue record on every push grows with the ledger. With the cache, a
push reads only the records that changed since the last push checked, so its cost stays
flat in the size of the ledger. The cache is derived data: delete it at any time.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..git import Git, GitError


def key_values(raw: bytes | None, fields: tuple[str, ...]) -> list[str]:
    if raw is None:
        return []
    try:
        data = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    return [f"{name}={json.dumps(data[name], sort_keys=True)}" for name in fields if name in data]


def key_index(git: Git, commit: str, folder: str, kind: str, fields: tuple[str, ...]) -> dict[str, list[str]]:
    """key ("number=1044") -> paths (relative to `folder`) holding it, at `commit`."""
    tree = git.subtree(commit, folder)
    cache_path = git.common_dir / "ledger" / f"keys-{kind}.json"
    cache: dict = {}
    try:
        cache = json.loads(cache_path.read_text(encoding="utf-8"))
        if cache.get("fields") != list(fields) or cache.get("folder") != folder:
            cache = {}
    except (OSError, ValueError):
        cache = {}
    if cache and cache.get("tree") == tree:
        return cache["keys"]
    if tree is None:
        return {}
    keys: dict[str, list[str]] = {}
    try:
        changes = git.diff_trees(cache.get("tree"), tree) if cache else None
    except GitError:  # the cached tree was garbage-collected: rebuild
        changes = None
    if changes is None:
        added = [
            p
            for p in git.run("ls-tree", "-r", "-z", "--full-tree", "--name-only", tree)
            .decode("utf-8", "surrogateescape")
            .split("\0")
            if p
        ]
    else:
        keys = cache["keys"]
        gone = {p for status, p in changes if status != "A"}
        if gone:
            keys = {k: [p for p in paths if p not in gone] for k, paths in keys.items()}
            keys = {k: v for k, v in keys.items() if v}
        added = [p for status, p in changes if status in "AMT"]
    blobs = git.read_blobs([f"{tree}:{p}" for p in added if p.endswith(".json")])
    for p in added:
        for key in key_values(blobs.get(f"{tree}:{p}"), fields):
            keys.setdefault(key, []).append(p)
    _save(cache_path, {"tree": tree, "folder": folder, "fields": list(fields), "keys": keys})
    return keys


def _save(path: Path, data: dict) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}")
        tmp.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time
