"""Append-only: nothing in the records folder is modified, deleted or renamed, compared
with what the remote had (pre-push) or a base ref. A force-push that drops records is a
deletion against the remote's tree. (From the decode investigation: a refuted hypothesis
deleted is one the next reader reaches again.)"""

from __future__ import annotations

from .result import ERROR
from .rule import Rule

#: The rules of this family, as data (ledger.checks.registry lists the families).
RULES: tuple[Rule, ...] = (
    Rule(
        "append-only",
        "history",
        ERROR,
        "Record files are never modified, deleted or renamed: compared with the remote's tree on "
        "push (a force-push that drops records included) or with the merge base of --base REF.",
        "Restore the record as it was; to correct it, add a new record whose `supersedes` lists its id.",
    ),
)

STATUS_WORDS = {"M": "modified", "D": "deleted", "T": "changed type (file/symlink)", "R": "renamed", "C": "copied over"}
