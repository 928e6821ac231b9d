"""Issue 22, item 8: the site build's lock lives under the repository's git folder, not at a
predictable name in the shared temporary folder (where another user's file made every build
wait forever, silently), and a build that cannot get it stops after a bounded wait, naming
the lock file."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from ledger.cli.main import main
from ledger.site import builder


def test_the_lock_is_under_git_and_a_held_lock_is_named(repo: Path, capsys, monkeypatch) -> None:
    docs = repo / ".ledger-build" / "docs"
    path = builder._lock_path(docs)
    assert (repo / ".git") in path.parents
    # Not a predictable name in the shared temporary folder: the repository's own .git/ledger
    # (wherever the repository lies, /tmp included, as in CI's pytest folders).
    assert path.parent == repo / ".git" / "ledger"
    held = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)
    monkeypatch.setattr(builder, "LOCK_WAIT_S", 0.5)
    try:
        code = main(["--ledger", str(repo), "site", "build"])
    finally:
        os.close(held)
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err and "another" in err
    assert main(["--ledger", str(repo), "site", "build"]) == 0
