"""The git pre-push hook that runs `ledger check --pre-push`.

The hook is written where git looks for hooks (core.hooksPath when set, else the
repository's hooks folder). A hook that ledger did not write is never overwritten
silently: `chain=True` keeps it (renamed `pre-push.ledger-chained`) and runs it first;
`force=True` replaces it and keeps a copy as `pre-push.ledger-backup`.
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, Problem
from ..git import Git, GitError

MARKER = "# ledger-pre-push-hook"
#: `ledger push` checks what it pushes in its own process and names here the lines it
#: checked (`LOCAL_SHA:REMOTE_REF`, space-separated); the hook then skips its own check for
#: them (the user's chained hook still runs). Setting it by hand skips the check as
#: `git push --no-verify` does: the server-side CI check stays the binding one.
CHECKED_ENV = "LEDGER_PUSH_CHECKED"
CHAINED = "pre-push.ledger-chained"
BACKUP = "pre-push.ledger-backup"

TEMPLATE = """#!/bin/sh
{marker} (written by `ledger hook install`; rewrite it with the same command)
# Refuses a push that breaks the ledger's rules. Bypass once: git push --no-verify
input=$(cat)
hooks_dir=$(dirname "$0")
if [ -x "$hooks_dir/{chained}" ]; then
    printf '%s\\n' "$input" | "$hooks_dir/{chained}" "$@" || exit $?
fi
if [ -n "${{{checked}:-}}" ]; then
    unchecked=$(printf '%s\n' "$input" | while read -r _ lsha rref _; do
        [ -n "$lsha" ] || continue
        case " ${checked} " in *" $lsha:$rref "*) ;; *) echo "$rref" ;; esac
    done)
    [ -z "$unchecked" ] && exit 0
fi
cd "$(git rev-parse --show-toplevel)" || exit 2
if [ -x {exe} ]; then
    printf '%s\\n' "$input" | {exe} -C {ledger_dir} check --pre-push --remote "$1"
elif command -v ledger >/dev/null 2>&1; then
    printf '%s\\n' "$input" | ledger -C {ledger_dir} check --pre-push --remote "$1"
else
    printf '%s\\n' "$input" | {python} -m ledger -C {ledger_dir} check --pre-push --remote "$1"
fi
"""


@dataclass
class HookResult:
    path: Path
    chained: Path | None = None
    backup: Path | None = None
    replaced_own: bool = False


def hooks_dir(git: Git) -> Path:
    git = Git(git.cwd, hooks=True)  # the repository's own hooks path, not the hardened /dev/null
    configured = git.text("config", "--get", "core.hooksPath", check=False)
    if configured:
        path = Path(os.path.expanduser(configured))
        return path if path.is_absolute() else git.toplevel / path
    path = Path(git.text("rev-parse", "--git-path", "hooks"))
    return path if path.is_absolute() else (git.cwd / path).resolve()


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def render(exe: str, python: str, ledger_dir: str) -> str:
    return TEMPLATE.format(
        marker=MARKER,
        chained=CHAINED,
        checked=CHECKED_ENV,
        exe=shlex.quote(exe),
        python=shlex.quote(python),
        ledger_dir=shlex.quote(ledger_dir),
    )


def install(root: Path, exe: str, python: str, *, chain: bool = False, force: bool = False) -> HookResult:
    """Write the pre-push hook for the ledger at `root`. Raises InputError for a foreign hook."""
    git = Git(root)
    try:
        folder = hooks_dir(git)
        top = git.toplevel
    except GitError:
        raise InputError(
            "not a git repository",
            [Problem(str(root), "", "the ledger is not inside a git repository", "run `git init` first")],
        ) from None
    ledger_dir = os.path.relpath(root.resolve(), top.resolve())
    folder.mkdir(parents=True, exist_ok=True)
    hook = folder / "pre-push"
    result = HookResult(hook)
    if hook.exists() or hook.is_symlink():
        if is_ours(hook):
            result.replaced_own = True
        elif chain:
            target = folder / CHAINED
            if target.exists():
                raise InputError(
                    "a chained hook exists",
                    [
                        Problem(
                            str(target), "", "already holds a chained hook", "remove it or merge the two hooks by hand"
                        )
                    ],
                )
            hook.rename(target)
            result.chained = target
        elif force:
            target = folder / BACKUP
            hook.replace(target)
            result.backup = target
        else:
            raise InputError(
                "a pre-push hook exists",
                [
                    Problem(
                        str(hook),
                        "",
                        "is a pre-push hook ledger did not write",
                        "pass --chain to keep it and run it before ledger, or --force to replace it (a copy is kept)",
                    )
                ],
            )
    if (folder / CHAINED).exists():
        result.chained = folder / CHAINED
    tmp = folder / ".pre-push.ledger-tmp"
    tmp.write_text(render(exe, python, ledger_dir), encoding="utf-8")
    tmp.chmod(tmp.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(tmp, hook)
    return result


def uninstall(root: Path) -> Path | None:
    """Remove ledger's hook and put a chained one back. Returns the hook path removed, if any."""
    folder = hooks_dir(Git(root))
    hook = folder / "pre-push"
    if not is_ours(hook):
        return None
    hook.unlink()
    chained = folder / CHAINED
    if chained.exists():
        chained.rename(hook)
    return hook
