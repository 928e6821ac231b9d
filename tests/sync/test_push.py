"""`ledger push` through real clones of one bare remote, real pushes through the installed
hook, and real kills (SIGKILL to the process group, as a job's cgroup is killed).

Small N here; `benchmarks/writers_bench.py` runs 8 to 64 jobs at once."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import GIT_ENV, LEDGER_BIN, SCRUBBED, cli, git, run_ledger

from ledger.checks.hooks import install


def clone(remote: Path, where: Path) -> Path:
    git(remote.parent, "clone", "-q", str(remote), str(where))
    install(where, str(LEDGER_BIN), sys.executable)
    return where


def notes(repo: Path, *bodies: str) -> list[str]:
    # In this process (tests/conftest.py: cli): the adds prepare a push; the pushes under
    # test are the processes.
    lines = "".join(json.dumps({"body": b}) + "\n" for b in bodies)
    result = cli(repo, "add", "note", "-", input=lines)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def env() -> dict[str, str]:
    full = {**os.environ, **GIT_ENV}
    for name in SCRUBBED:
        full.pop(name, None)
    return full


def push(repo: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    result = run_ledger(repo, "push", "--format", "json", *args)
    return result, (json.loads(result.stdout) if result.stdout.strip().startswith("{") else {})


def on_main(remote: Path) -> list[str]:
    out = git(remote, "ls-tree", "-r", "--name-only", "main", "--", "ledger/records").stdout
    return sorted(Path(p).stem for p in out.split() if p.endswith(".json"))


def fresh_check(remote: Path, where: Path) -> None:
    git(remote.parent, "clone", "-q", str(remote), str(where))
    result = cli(where, "check", "--all")
    assert result.returncode == 0, result.stdout + result.stderr


def pause_remote(remote: Path, flag: Path) -> Path:
    """A reference-transaction hook on the remote that, once, holds the locks of an update of
    the remote's main while `flag` exists: a push is caught in the middle of the remote's ref
    update. Returns the file it touches once it holds them."""
    ready = flag.with_suffix(".ready")
    hook = remote / "hooks" / "reference-transaction"
    hook.write_text(
        "#!/bin/sh\n"
        "updates=$(cat)\n"
        f'if [ "$1" = prepared ] && [ -e "{flag}" ] && echo "$updates" | grep -q " refs/heads/main$" '
        f'&& mkdir "{ready}.once" 2>/dev/null; then\n'
        f'  touch "{ready}"\n  while [ -e "{flag}" ]; do sleep 0.05; done\nfi\n'
    )
    hook.chmod(0o755)
    return ready


def wait_for(path: Path, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.05)


def test_commit_per_add_writers_merge_and_every_stamp_resolves(pushed: Path, tmp_path: Path) -> None:
    """Two jobs commit after each `ledger add` and push: the second one's fetch-merge keeps
    every commit its records are stamped with (a rebase rewrote them: `sha-resolves`), with
    no tag per record, and a fresh clone checks clean."""
    remote = tmp_path / "remote.git"
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo in (a, b):
        for i in range(2):
            notes(repo, f"{repo.name} {i}")
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "-m", f"{repo.name} {i}")
    first, report = push(a)
    assert first.returncode == 0 and report["outcome"] == "landed", first.stderr
    second, report = push(b)
    assert second.returncode == 0 and report["outcome"] == "landed", second.stderr
    assert report["pushes"] == 1 and report["records"] == 2
    stamped = {json.loads(p.read_bytes())["source"]["sha"] for p in (b / "ledger" / "records" / "note").rglob("*.json")}
    for sha in stamped:
        assert git(remote, "merge-base", "--is-ancestor", sha, "main", check=False).returncode == 0, sha
    assert git(remote, "tag", "--list").stdout == ""
    assert len(on_main(remote)) == 4
    # Each push landed in the push that queued it, and took its queue ref back.
    assert git(remote, "for-each-ref", "refs/ledger/incoming/").stdout == ""
    assert report["queue_ref"] is None and any("removed its queue ref" in a for a in report["actions"])
    fresh_check(remote, tmp_path / "fresh")
    # A careless `git pull --rebase` rewrites b's unpushed commit that its next record is stamped
    # with: refused `sha-resolves`, and the message leads with the fix that works (the tag).
    notes(a, "a late")
    git(a, "add", "-A")
    git(a, "commit", "-q", "-m", "a late")
    assert push(a)[0].returncode == 0
    for i in range(2):
        notes(b, f"b late {i}")
        git(b, "add", "-A")
        git(b, "commit", "-q", "-m", f"b late {i}")
    git(b, "pull", "-q", "--rebase")
    refused, report = push(b)
    assert refused.returncode == 1 and report["outcome"] == "refused", refused.stderr
    assert "push the `ledger-keep` tag each fix names" in report["message"], report["message"]
    assert "write the record" not in report["message"]
    [lost] = [v for v in report["violations"] if v["rule"] == "sha-resolves"]
    tag = re.search(r"`(git push origin \w+:refs/tags/ledger-keep/\w+)`", lost["fix"]).group(1)
    assert subprocess.run(tag, shell=True, cwd=b, env=env(), capture_output=True).returncode == 0
    landed, report = push(b)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    fresh_check(remote, tmp_path / "fresh-after-rebase")


def test_many_writers_at_once_land_without_serialising(pushed: Path, tmp_path: Path) -> None:
    """Five jobs push at the same moment: every record lands once, no job retries in a loop,
    the queue is emptied, and the remote is whole."""
    remote = tmp_path / "remote.git"
    jobs = [clone(remote, tmp_path / f"job{n}") for n in range(5)]
    ids = {n: notes(job, f"job {n} a", f"job {n} b") for n, job in enumerate(jobs)}
    start = tmp_path / "start"
    script = f'while [ ! -e "{start}" ]; do sleep 0.01; done; exec "{LEDGER_BIN}" push --format json'
    procs = [
        subprocess.Popen(
            ["sh", "-c", script], cwd=job, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for job in jobs
    ]
    start.touch()
    outs = [p.communicate(timeout=240) for p in procs]
    assert [p.returncode for p in procs] == [0] * 5, [err for _, err in outs]
    reports = [json.loads(out) for out, _ in outs]
    assert {r["outcome"] for r in reports} == {"landed"}
    # Landed, by its own push or another's integration: nothing of the job waits in a queue ref.
    assert [r["queue_ref"] for r in reports] == [None] * 5, reports
    assert sorted(i for group in ids.values() for i in group) == on_main(remote)
    pushes = [r["pushes"] for r in reports]
    assert max(pushes) <= 4 and sum(pushes) <= 2 * len(jobs), pushes  # 1+2+3+4+5 = 15 when pushes serialise
    git(remote, "fsck", "--no-progress")
    assert git(remote, "for-each-ref", "refs/ledger/incoming/").stdout == ""  # no job leaves its queue ref
    fresh_check(remote, tmp_path / "fresh")


def test_a_queued_push_lands_with_the_next_integration(pushed: Path, tmp_path: Path) -> None:
    """While one push holds the remote's ref lock, another loses the race: its commit waits
    on its own queue ref (--wait 0: it does not wait), and `ledger push --integrate` (CI, or
    a job after the array) lands it, checked, and empties the queue."""
    remote = tmp_path / "remote.git"
    a, b, ci = (clone(remote, tmp_path / name) for name in ("a", "b", "ci"))
    flag = tmp_path / "hold"
    flag.touch()
    ready = pause_remote(remote, flag)
    ids = notes(a, "a") + notes(b, "b")
    holder = subprocess.Popen([str(LEDGER_BIN), "push"], cwd=a, env=env(), stderr=subprocess.PIPE, text=True)
    wait_for(ready)
    queued, report = push(b, "--wait", "0")
    assert queued.returncode == 0 and report["outcome"] == "queued", queued.stderr
    assert report["queue_ref"].startswith("refs/ledger/incoming/")
    # What happened: a's push held the remote's ref lock at that moment; nobody landed first.
    assert "origin's ref main was locked by another writer's push at that moment" in queued.stderr, queued.stderr
    assert "landed first" not in queued.stderr and "integrated first" not in queued.stderr
    assert report["records"] == 0 and report["records_queued"] == report["records_new"] == 1
    # What lands it, exactly: another writer's plain push does not.
    assert "`ledger push --integrate` from any clone" in report["message"], report["message"]
    assert "another writer's plain push lands only its own" in report["message"]
    ref = report["queue_ref"]
    flag.unlink()
    _, held = holder.communicate(timeout=60)  # waits, and closes its pipe
    assert holder.returncode == 0, held
    # A plain push with nothing of its own lands nothing queued, and says what does.
    idle, report = push(a)
    assert idle.returncode == 0 and report["outcome"] == "nothing", idle.stderr
    assert report["queue_waiting"] == [ref] and "`ledger push --integrate` lands them" in report["message"]
    integrated, report = push(ci, "--integrate")
    assert integrated.returncode == 0 and report["outcome"] == "landed", integrated.stderr
    assert report["integrated"] >= 1
    assert report["records"] == 1 and "landed: 1 record(s)" in integrated.stderr  # b's note
    assert sorted(ids) == on_main(remote)
    assert git(remote, "for-each-ref", "refs/ledger/incoming/").stdout == ""


def test_a_kill_mid_push_leaves_locks_that_the_next_push_names(pushed: Path, tmp_path: Path) -> None:
    """A job killed while the remote updates its ref leaves `refs/heads/main.lock` and
    `HEAD.lock`: every writer is refused until they are deleted. The next `ledger push` says
    what the killed push left in this clone and what it undid, and names each stale lock of
    the remote with the command that clears it; after that command it lands."""
    remote = tmp_path / "remote.git"
    job = clone(remote, tmp_path / "job")
    ids = notes(job, "measured before the kill")
    flag = tmp_path / "hold"
    flag.touch()
    ready = pause_remote(remote, flag)
    killed = subprocess.Popen([str(LEDGER_BIN), "push"], cwd=job, env=env(), start_new_session=True)
    wait_for(ready)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(10)
    flag.unlink()
    locks = sorted(str(p) for p in remote.rglob("*.lock"))
    assert any(p.endswith("main.lock") for p in locks), locks
    for lock in locks:  # two and a half minutes pass: older than any ref update takes
        os.utime(lock, (time.time() - 150.4, time.time() - 150.4))
    blocked, report = push(job, "--no-queue")
    assert blocked.returncode == 2, blocked.stderr
    # Nothing landed and nothing is queued (--no-queue): the one record is only in this clone.
    assert (report["records"], report["records_queued"], report["records_new"]) == (0, 0, 1)
    assert "safe in refs/ledger/incoming" not in blocked.stderr
    assert "recovering: a `ledger push`" in blocked.stderr and "while at 'push'" in blocked.stderr
    assert report["outcome"] == "blocked"
    # The message is the last line said: every lock's command, in one.
    assert report["message"] and blocked.stderr.rstrip().endswith(report["message"]), report["message"]
    assert all(lock["clear"] in report["message"] for lock in report["locks"])
    named = {lock["path"] for lock in report["locks"]}
    assert named == {os.path.normpath(p) for p in locks}
    for lock in report["locks"]:
        assert f"Clear it: {lock['clear']}" in blocked.stderr
        # 150 s and the seconds the push took since: never rounded up to "3 min".
        assert re.search(rf"{re.escape(lock['path'])} is 2 min 3\d s old", blocked.stderr), blocked.stderr
        subprocess.run(lock["clear"], shell=True, check=True)
    landed, report = push(job)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    assert ids == on_main(remote)


def test_a_kill_mid_merge_is_undone_by_the_next_push(pushed: Path, tmp_path: Path) -> None:
    """Killed inside its merge (before the merge commit), `ledger push` leaves the other
    writer's files staged in this clone; the next one takes them back, says so, and lands."""
    remote = tmp_path / "remote.git"
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    notes(a, "a")
    assert push(a)[0].returncode == 0
    mine = notes(b, "b")
    ready = tmp_path / "merging"
    hook = b / ".git" / "hooks" / "pre-merge-commit"
    hook.write_text(f'#!/bin/sh\ntouch "{ready}"\nsleep 60\n')
    hook.chmod(0o755)
    killed = subprocess.Popen([str(LEDGER_BIN), "push"], cwd=b, env=env(), start_new_session=True)
    wait_for(ready)
    os.killpg(killed.pid, signal.SIGKILL)
    killed.wait(10)
    hook.unlink()
    staged = git(b, "diff", "--cached", "--name-only").stdout.split()
    assert any("/note/" in p for p in staged), staged  # a's record, staged by the killed merge
    # The killed git may leave its index.lock (kill -9 of the group while it wrote the index):
    # the next push clears it at once, since no live git holds it, rather than fail the merge.
    (b / ".git" / "index.lock").write_bytes(b"")
    landed, report = push(b)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    lock = b / ".git" / "index.lock"
    assert any(f"removed {lock}, a lock the interrupted push's git left" in a for a in report["actions"]), report
    assert any("took back the 1 file(s) its merge had staged" in a for a in report["actions"]), report["actions"]
    assert set(mine) <= set(on_main(remote)) and len(on_main(remote)) == 2
    assert git(b, "status", "--porcelain").stdout == ""


def test_no_queue_giving_up_says_the_records_are_only_in_this_clone(pushed: Path, tmp_path: Path) -> None:
    """`--no-queue` that loses its last attempt (another push holds the remote's ref) says
    plainly that nothing landed, that the records are committed only in this clone (the
    commit, the branch) and not on the remote, and the command that lands them; its last
    attempt does not say "retrying". That command then lands them."""
    remote = tmp_path / "remote.git"
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    flag = tmp_path / "hold"
    flag.touch()
    ready = pause_remote(remote, flag)
    ids = notes(a, "a") + notes(b, "b")
    holder = subprocess.Popen([str(LEDGER_BIN), "push"], cwd=a, env=env(), stderr=subprocess.PIPE, text=True)
    wait_for(ready)
    gave_up, report = push(b, "--no-queue", "--attempts", "1")
    flag.unlink()
    _, held = holder.communicate(timeout=60)
    assert holder.returncode == 0, held
    assert gave_up.returncode == 2 and report["outcome"] == "gave-up", gave_up.stderr
    assert "retrying" not in gave_up.stderr and "that was the last of --attempts 1" in gave_up.stderr
    # The JSON says why as the text does: a's push held the ref, nobody landed first.
    [attempt] = report["attempts"]
    assert attempt["why"].startswith("origin's ref main was locked by another writer's push"), attempt
    assert f"attempt 1: {attempt['why']}; that was the last" in gave_up.stderr
    head = git(b, "rev-parse", "HEAD").stdout.strip()
    message = report["message"]
    assert f"committed only in this clone ({b}), at {head[:12]} on branch main" in message, message
    assert "NOT on origin" in message and "`ledger push`" in message and "nothing landed" in message
    assert message in gave_up.stderr
    assert (report["records"], report["records_new"], report["queue_ref"]) == (0, 1, None)
    assert ids[1] not in on_main(remote)
    landed, report = push(b)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    assert sorted(ids) == on_main(remote)


def test_json_errors_are_one_object_and_name_the_remote_argument(pushed: Path, tmp_path: Path) -> None:
    """`--format json` prints one JSON object with outcome "error" and the message on every
    error a job script meets (another push running in this clone, a remote that does not
    exist or cannot be reached, no git identity), with the exit code of the text form; a
    remote that is not there is named as the REMOTE argument, not a `--remote` option."""
    remote = tmp_path / "remote.git"
    a = clone(remote, tmp_path / "a")
    notes(a, "a")

    def error_of(result: subprocess.CompletedProcess, report: dict) -> str:
        assert result.returncode == 2, result.stderr
        assert report["outcome"] == "error" and report["exit_code"] == 2, result.stdout
        assert report["message"] and report["message"].split(" (")[0] in result.stderr, (report, result.stderr)
        return report["message"]

    wrong = error_of(*push(a, "upstream"))
    assert "REMOTE" in wrong and "--remote" not in wrong and "no remote named 'upstream'" in wrong
    # A mistyped --branch is refused, naming it and the remote's branches; no branch is made.
    mistyped = error_of(*push(a, "--branch", "mian"))
    assert "origin has no branch 'mian'; its branches: main" in mistyped, mistyped
    assert "`--branch main`" in mistyped and "--new-branch" in mistyped
    assert git(remote, "branch", "--list", "mian").stdout == ""
    # A lock of this clone that another git may hold (fresh, no push of ours left it) is named,
    # not an internal error of the `git add` it blocked.
    lock = a / ".git" / "index.lock"
    lock.write_bytes(b"")
    blocked = error_of(*push(a))
    assert re.search(rf"{re.escape(str(lock))} is \d+ s old", blocked) and "wait for that git" in blocked, blocked
    lock.unlink()
    assert "one of this clone's remotes (origin) as REMOTE" in wrong and "git remote add upstream URL" in wrong
    bare = {k: v for k, v in env().items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    home = tmp_path / "home"
    home.mkdir()
    bare.update(HOME=str(home), GIT_CONFIG_GLOBAL=str(home / "none"), EMAIL="")
    nobody = subprocess.run(
        [str(LEDGER_BIN), "push", "--format", "json"], cwd=a, env=bare, capture_output=True, text=True
    )
    identity = error_of(nobody, json.loads(nobody.stdout))
    assert "git config user.name" in identity and "git has no identity to commit with (fatal:" in identity
    assert "grafts" not in nobody.stderr and "hint:" not in nobody.stderr, nobody.stderr
    git(a, "remote", "add", "gone", str(tmp_path / "no-such.git"))
    unreachable = error_of(*push(a, "gone"))
    assert "git fetch" in unreachable and "check the remote's URL" in unreachable
    flag = tmp_path / "hold"
    flag.touch()
    ready = pause_remote(remote, flag)
    holder = subprocess.Popen([str(LEDGER_BIN), "push"], cwd=a, env=env(), stderr=subprocess.PIPE, text=True)
    wait_for(ready)
    second = error_of(*push(a))
    flag.unlink()
    _, held = holder.communicate(timeout=60)
    assert holder.returncode == 0, held
    assert "is running in this clone" in second
    # Asked for, a new branch is made, and counts only what the default branch lacks.
    notes(a, "on a topic branch")
    created, report = push(a, "--branch", "topic", "--new-branch")
    assert created.returncode == 0 and report["outcome"] == "landed", created.stderr
    assert report["records_new"] == report["records"] == 1, report


def test_a_torchrun_job_is_named_by_its_run_id(pushed: Path, tmp_path: Path) -> None:
    """Under torchrun alone (no SLURM, no CI) the commit names the run, as the record's
    allocation does (`torchrun-<TORCHELASTIC_RUN_ID>`), not the host."""
    remote = tmp_path / "remote.git"
    a = clone(remote, tmp_path / "a")
    notes(a, "rank 0")
    landed = run_ledger(a, "push", "--format", "json", env={"TORCHELASTIC_RUN_ID": "trun1"})
    assert landed.returncode == 0 and json.loads(landed.stdout)["outcome"] == "landed", landed.stderr
    subjects = git(remote, "log", "--format=%s", "main").stdout
    assert "ledger: 1 record(s) from torchrun-trun1" in subjects, subjects
    # Rank 0 through the Python API: the report's attributes are the JSON's fields.
    notes(a, "rank 0 again")
    script = (
        "import ledger; from ledger.sync import PushOptions, push; "
        "r = push(ledger.Ledger.open('.'), PushOptions(remote='origin', wait=30)); "
        "print(r.outcome, r.records, r.pushes, r.pushes == r.as_dict()['pushes'])"
    )
    api = subprocess.run([sys.executable, "-c", script], cwd=a, env=env(), capture_output=True, text=True)
    assert api.returncode == 0 and api.stdout.split() == ["landed", "1", "1", "True"], api.stdout + api.stderr


def test_a_changed_committed_record_is_left_out_and_said(pushed: Path, tmp_path: Path) -> None:
    """A committed record changed in the work tree is never committed by `ledger push`
    (append-only), and the push says so, with the command that undoes the change."""
    remote = tmp_path / "remote.git"
    a = clone(remote, tmp_path / "a")
    [old] = notes(a, "kept")
    assert push(a)[0].returncode == 0
    [path] = list((a / "ledger" / "records").rglob(f"{old}.json"))
    path.write_text(path.read_text().replace("kept", "changed"))
    new = notes(a, "new")
    landed, report = push(a)
    assert landed.returncode == 0 and report["records"] == 1, landed.stderr
    [said] = [line for line in report["actions"] if line.startswith("left out: 1 committed record file(s)")]
    assert said in landed.stderr and "git checkout HEAD -- ledger/records" in said
    assert sorted([old, *new]) == on_main(remote)
    assert "kept" in git(remote, "show", f"main:{path.relative_to(a).as_posix()}").stdout


def test_a_lost_race_through_the_hook_says_the_push_is_behind(pushed: Path, tmp_path: Path) -> None:
    """A plain `git push` whose remote moved since the clone fetched is refused by the hook as
    behind the remote (no `append-only` accusation), with git's advice to fetch first; after
    `git pull --no-rebase` the same push passes."""
    remote = tmp_path / "remote.git"
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo in (a, b):
        notes(repo, f"from {repo.name}")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"{repo.name}'s note")
    git(a, "push", "-q", "origin", "HEAD:main")
    lost = git(b, "push", "origin", "HEAD:main", check=False)
    assert lost.returncode != 0
    assert "error[behind-remote]" in lost.stderr and "this push is behind the remote" in lost.stderr, lost.stderr
    assert "append-only" not in lost.stderr and "Fetch first" in lost.stderr
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    git(b, "push", "-q", "origin", "HEAD:main")
    assert len(on_main(remote)) == 2


def test_two_jobs_correcting_one_measurement_fork_it_and_the_fix_lands(pushed: Path, tmp_path: Path) -> None:
    """Two jobs correct one measurement before either lands: the first `ledger push` lands, the
    second is refused `correction-fork` naming both and how to supersede both; that record lands."""
    remote = tmp_path / "remote.git"
    seed = clone(remote, tmp_path / "seed")
    [original] = cli(seed, "add", "note", "-", input='{"body": "measured 1.00 s"}').stdout.split()
    assert push(seed)[0].returncode == 0
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    fixes = {}
    for repo in (a, b):
        body = json.dumps({"body": f"{repo.name}: 1.10 s", "supersedes": [original]})
        [fixes[repo.name]] = cli(repo, "add", "note", "-", input=body).stdout.split()
    assert push(a)[0].returncode == 0
    refused, report = push(b)
    assert refused.returncode == 1 and report["outcome"] == "refused", refused.stderr
    [fork] = [v for v in report["violations"] if v["rule"] == "correction-fork"]
    both = sorted(fixes.values())
    assert fork["file"].endswith(f"/{both[1]}.json") and f'"supersedes": ["{both[0]}", "{both[1]}"]' in fork["fix"]
    assert "error[correction-fork]" in refused.stderr
    assert len(re.findall(r"ledger check \(pre-push\).*: refused", refused.stderr)) == 1, refused.stderr
    assert "this clone holds origin/main merged" in report["message"] and report["queue_ref"] is None
    assert "write the record it names" in report["message"]
    # Checked and refused before any git push: an attempt, but no push.
    assert len(report["attempts"]) == 1 and report["pushes"] == 0, report
    body = json.dumps({"body": "1.05 s stands", "supersedes": both})
    assert cli(b, "add", "note", "-", input=body).returncode == 0
    landed, report = push(b)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    fresh_check(remote, tmp_path / "fresh")


def test_a_queued_correction_refused_on_integration_is_fixed_in_its_own_clone(pushed: Path, tmp_path: Path) -> None:
    """Two jobs correct one measurement; the second's push is queued while the first holds
    the remote, and its own integration is refused `correction-fork`. The fix it prints can
    be followed in that job's own clone as printed (the clone holds the other correction),
    its queue ref is named and counted, and the push that lands the fix deletes that ref."""
    remote = tmp_path / "remote.git"
    seed = clone(remote, tmp_path / "seed")
    [original] = cli(seed, "add", "note", "-", input='{"body": "measured 1.00 s"}').stdout.split()
    assert push(seed)[0].returncode == 0
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo in (a, b):
        body = json.dumps({"body": f"{repo.name}: 1.10 s", "supersedes": [original]})
        assert cli(repo, "add", "note", "-", input=body).returncode == 0
    flag = tmp_path / "hold"
    flag.touch()
    ready = pause_remote(remote, flag)
    holder = subprocess.Popen([str(LEDGER_BIN), "push"], cwd=a, env=env(), stderr=subprocess.PIPE, text=True)
    wait_for(ready)
    job = subprocess.Popen(
        [str(LEDGER_BIN), "push", "--format", "json", "--wait", "60"],
        cwd=b,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    end = time.monotonic() + 60  # b's first push meets a's held lock: its queue ref goes in
    while not git(remote, "for-each-ref", "refs/ledger/incoming/").stdout:
        assert time.monotonic() < end and job.poll() is None, "b's push was never queued"
        time.sleep(0.05)
    flag.unlink()
    _, held = holder.communicate(timeout=60)
    assert holder.returncode == 0, held
    out, err = job.communicate(timeout=120)
    report = json.loads(out)
    assert job.returncode == 1 and report["outcome"] == "refused", err
    ref = report["queue_ref"]
    assert ref and report["records_queued"] == report["records_new"] == 1, report
    assert f"its queue ref {ref} stays on origin" in report["message"] and report["message"] in err
    [fork] = [v for v in report["violations"] if v["rule"] == "correction-fork"]
    # The fix exactly as printed, in this clone: the record it names is here.
    supersedes = json.loads(re.search(r"`\"supersedes\": (\[[^]]*\])`", fork["fix"]).group(1))
    body = json.dumps({"body": "1.05 s stands", "supersedes": supersedes})
    added = cli(b, "add", "note", "-", input=body)
    assert added.returncode == 0, added.stderr
    landed, report = push(b)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    assert any(f"removed the queue ref an earlier push left, {ref}" in a for a in report["actions"]), report
    assert git(remote, "for-each-ref", "refs/ledger/incoming/").stdout == ""
    fresh_check(remote, tmp_path / "fresh")


def test_a_refused_queued_push_fails_the_integrate_job_and_says_how_to_recover(pushed: Path, tmp_path: Path) -> None:
    """Two jobs correct one measurement; the second's push is queued (the first holds the
    remote). The job that lands the queue (`--integrate`, after a SLURM array) exits 1 and
    names the queued push, the rule and how to recover it from any clone, since the writer's
    own clone may be gone; the push that lands the recovered records deletes the queue ref."""
    remote = tmp_path / "remote.git"
    seed = clone(remote, tmp_path / "seed")
    [original] = cli(seed, "add", "note", "-", input='{"body": "measured 1.00 s"}').stdout.split()
    assert push(seed)[0].returncode == 0
    a, b, ci = (clone(remote, tmp_path / name) for name in ("a", "b", "ci"))
    for repo in (a, b):
        body = json.dumps({"body": f"{repo.name}: 1.10 s", "supersedes": [original]})
        assert cli(repo, "add", "note", "-", input=body).returncode == 0
    flag = tmp_path / "hold"
    flag.touch()
    ready = pause_remote(remote, flag)
    holder = subprocess.Popen([str(LEDGER_BIN), "push"], cwd=a, env=env(), stderr=subprocess.PIPE, text=True)
    wait_for(ready)
    queued, report = push(b, "--wait", "0")
    assert queued.returncode == 0 and report["outcome"] == "queued", queued.stderr
    ref = report["queue_ref"]
    flag.unlink()
    _, held = holder.communicate(timeout=60)  # waits, and closes its pipe
    assert holder.returncode == 0, held
    main_before = git(remote, "rev-parse", "main").stdout.strip()
    landing, report = push(ci, "--integrate")
    assert landing.returncode == 1, landing.stderr
    assert report["left_queued"] == {ref: ["correction-fork"]}
    # Nothing went in, and the report says so: no push, no "landed", the refused push named.
    assert git(remote, "rev-parse", "main").stdout.strip() == main_before
    assert report["outcome"] == "refused" and report["records"] == 0, report
    assert report["pushes"] == 0 and report["integrated"] == 0, report
    assert report["message"].startswith("nothing landed: the check refused all 1 queued push(es)"), report
    assert f"{ref} fails correction-fork" in report["message"] and "they stay queued" in report["message"]
    assert "ledger push: landed:" not in landing.stderr and "integrated 0" not in landing.stderr, landing.stderr
    assert report["left_queued_violations"][ref][0]["rule"] == "correction-fork"
    assert f"queued push {ref} was refused" in landing.stderr and "error[correction-fork]" in landing.stderr
    recover = f"git fetch origin {ref} && git merge --no-edit FETCH_HEAD"
    assert recover in landing.stderr and "the push that lands them deletes" in landing.stderr
    # Recovered from the landing job's clone, as it says: merge the queued push, end the fork.
    assert subprocess.run(recover, shell=True, cwd=ci, env=env(), capture_output=True).returncode == 0
    fixes = [r for r in on_main(remote) if r != original] + [
        Path(report["left_queued_violations"][ref][0]["file"]).stem
    ]
    body = json.dumps({"body": "1.05 s stands", "supersedes": sorted(fixes)})
    assert cli(ci, "add", "note", "-", input=body).returncode == 0
    landed, report = push(ci)
    assert landed.returncode == 0, landed.stderr
    # The push that landed the queued push's records deleted its queue ref, as it said.
    assert any(f"removed the queue ref an earlier push left, {ref}" in a for a in report["actions"]), report
    left = git(remote, "for-each-ref", "refs/ledger/incoming/").stdout
    assert ref not in left, (ref, left)
    fresh_check(remote, tmp_path / "fresh")


def test_three_jobs_correcting_one_record_get_one_fix_that_ends_the_fork(pushed: Path, tmp_path: Path) -> None:
    """Three jobs correct one measurement: the first lands, two are queued and `--integrate`
    refuses both, each naming a pair. It also prints the one fix that ends the fork (merge
    both queue refs, one record superseding all three corrections); followed as printed in
    the landing job's clone, it lands and the queue is empty."""
    remote = tmp_path / "remote.git"
    seed = clone(remote, tmp_path / "seed")
    [original] = cli(seed, "add", "note", "-", input='{"body": "measured 1.00 s"}').stdout.split()
    assert push(seed)[0].returncode == 0
    a, b, c, ci = (clone(remote, tmp_path / name) for name in ("a", "b", "c", "ci"))
    fixes = []
    for repo in (a, b, c):
        body = json.dumps({"body": f"{repo.name}: 1.10 s", "supersedes": [original]})
        fixes += cli(repo, "add", "note", "-", input=body).stdout.split()
    flag = tmp_path / "hold"
    flag.touch()
    ready = pause_remote(remote, flag)
    holder = subprocess.Popen([str(LEDGER_BIN), "push"], cwd=a, env=env(), stderr=subprocess.PIPE, text=True)
    wait_for(ready)
    for repo in (b, c):
        queued, report = push(repo, "--wait", "0")
        assert queued.returncode == 0 and report["outcome"] == "queued", queued.stderr
    flag.unlink()
    _, held = holder.communicate(timeout=60)
    assert holder.returncode == 0, held
    landing, report = push(ci, "--integrate")
    assert landing.returncode == 1 and len(report["left_queued"]) == 2, landing.stderr
    [one] = [line for line in report["actions"] if line.startswith("one fix for the 2 queued corrections")]
    assert one in landing.stderr and original in one
    command = re.search(r"from any clone, `([^`]*)`", one).group(1)
    supersedes = json.loads(re.search(r"`\"supersedes\": (\[[^]]*\])`", one).group(1))
    assert sorted(supersedes) == sorted(fixes)
    assert subprocess.run(command, shell=True, cwd=ci, env=env(), capture_output=True).returncode == 0
    body = json.dumps({"body": "1.05 s stands", "supersedes": supersedes})
    added = cli(ci, "add", "note", "-", input=body)
    assert added.returncode == 0, added.stderr
    landed, report = push(ci)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    assert git(remote, "for-each-ref", "refs/ledger/incoming/").stdout == ""
    fresh_check(remote, tmp_path / "fresh")


def test_push_shows_the_checks_warnings_and_what_the_hooks_printed(pushed: Path, tmp_path: Path) -> None:
    """A push that lands with a warning of the check (an abbreviated source SHA) shows the
    warning, as the hook would; what the user's chained pre-push hook prints is shown too."""
    remote = tmp_path / "remote.git"
    job = clone(remote, tmp_path / "job")
    chained = job / ".git" / "hooks" / "pre-push.ledger-chained"
    chained.write_text("#!/bin/sh\ncat >/dev/null\necho 'warning: GPU clocks were not pinned on node 3' >&2\n")
    chained.chmod(0o755)
    short = git(job, "rev-parse", "--short=12", "HEAD").stdout.strip()
    added = cli(job, "add", "note", "-", "--source-sha", short, input='{"body": "from an old log"}')
    assert added.returncode == 0, added.stderr
    landed, report = push(job)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    assert f"warning[sha-abbreviated] field source.sha: source commit {short} is abbreviated" in landed.stderr, (
        landed.stderr
    )
    assert [w["rule"] for w in report["warnings"]] == ["sha-abbreviated"]
    assert "ledger push: git push said: warning: GPU clocks were not pinned on node 3" in landed.stderr
    assert "warning: GPU clocks were not pinned on node 3" in report["hook_output"]


def test_a_full_sha_kept_by_a_remote_ledger_keep_tag_is_not_called_abbreviated(pushed: Path, tmp_path: Path) -> None:
    """A record stamped with a commit that a reset left behind, kept by the `ledger-keep` tag
    the check's fix names (pushed to the remote, never fetched here): a fresh clone has it, so
    the push reports no `sha-abbreviated` ("historical"), and lands."""
    remote = tmp_path / "remote.git"
    job = clone(remote, tmp_path / "job")
    git(job, "commit", "-q", "--allow-empty", "-m", "the measured change")
    measured = git(job, "rev-parse", "HEAD").stdout.strip()
    notes(job, "measured at the change")
    git(job, "push", "-q", "origin", f"{measured}:refs/tags/ledger-keep/{measured[:12]}")
    git(job, "reset", "-q", "--hard", "HEAD~1")  # the change is dropped; the record file stays
    assert git(job, "tag", "--list").stdout == ""
    landed, report = push(job)
    assert landed.returncode == 0 and report["outcome"] == "landed", landed.stderr
    assert "sha-abbreviated" not in landed.stderr and report["warnings"] == [], landed.stderr
    fresh_check(remote, tmp_path / "fresh")


def test_seconds_count_from_the_process_start(pushed: Path, tmp_path: Path) -> None:
    """The JSON's `seconds` is the command's whole wall time (Python's start and the imports
    included, what a job script waits for), `push_seconds` the push alone, `cpu_seconds` the
    CPU of the process and the git it ran."""
    remote = tmp_path / "remote.git"
    job = clone(remote, tmp_path / "job")
    notes(job, "one")
    began = time.monotonic()
    landed, report = push(job)
    wall = time.monotonic() - began
    assert landed.returncode == 0, landed.stderr
    assert report["push_seconds"] < report["seconds"] <= wall
    assert report["cpu_seconds"] > 0
