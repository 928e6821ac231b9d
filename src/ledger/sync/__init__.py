"""Many writers, one remote: `ledger push`.

A cluster's jobs each add records and push to one shared remote. Records are new files at
unique paths, so two writers' commits never conflict: `ledger push` fetches, merges (never
rebases, so every commit a record is stamped with stays reachable), checks only what the
push adds, exactly as the pre-push hook would, and pushes. So that many jobs started at once
do not queue behind one ref, each push also leaves its commit on a ref of its own
(`refs/ledger/incoming/<job>`, which no other writer touches); whichever writer next finds
the branch quiet merges every queued commit into it in one checked, atomic push
(`integrate`), and the others see theirs land without pushing again. Interrupted state a
killed push left behind is undone (`locks`), and a lock of a dead writer on the remote is
reported with the command that clears it.

    from ledger.sync import push, PushOptions
    report = push(ledger, PushOptions(remote="origin"))
    report.outcome          # "landed", "queued", "nothing" or "refused"
"""

from .locks import PushState, StaleLock
from .push import Attempt, PushOptions, PushReport, push

__all__ = ["Attempt", "PushOptions", "PushReport", "PushState", "StaleLock", "push"]
