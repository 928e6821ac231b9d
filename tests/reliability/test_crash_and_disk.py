"""Crashes and hostile disks: 200 adds killed with SIGKILL at random points, a full disk
(a few-MB tmpfs over the records folder), RLIMIT_FSIZE, and a read-only records folder.

Every visible record stays whole, `ledger check --all` stays clean, and a failed write
says why (exit 2, the folder, the reason) and leaves no file behind.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import random
import resource
import shutil
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import GIT_ENV, LEDGER_BIN, cli, git, run_ledger, stop_measuring, unmeasured
from reliability.helpers import check_all_clean, files_under, intact_records, kill_while_writing

KILLS = 200
SEED = 8
DATA = Path(__file__).resolve().parents[1] / "importers" / "data"


def _stamping(repo: Path):
    from ledger.schema import Source
    from ledger.schema.envelope import Allocation
    from ledger.store import Stamping

    sha = git(repo, "rev-parse", "HEAD").stdout.strip()
    return Stamping(source=Source(sha=sha), allocation=Allocation(id="crash-job"))


def _batch(n: int, tag: str, size: int = 1500) -> list:
    from ledger.store import Item

    # Words, not one run of letters: `ledger add` refuses a long base64-looking run (binary-content).
    return [Item({"body": f"{tag} {i} " + "x " * (size // 2)}, "<api>", None) for i in range(n)]


def _adder(root: str, n: int, tag: str, stamping, ready) -> None:
    from ledger.store import Item, Ledger, add

    stop_measuring()  # a forked child, killed or ended by os._exit: coverage keeps nothing it runs
    book = Ledger.open(root)
    items = [Item({"body": f"{tag} {i} " + "x" * 1500}, "<api>", None) for i in range(n)]
    ready.send(time.perf_counter())
    add(book, "note", items, stamping)
    ready.send(time.perf_counter())
    os._exit(0)


def _finished(pipe) -> bool:
    try:
        pipe.recv()
        return True
    except EOFError:  # killed before it sent its second time
        return False


def _spawn(ctx, root: Path, n: int, tag: str, stamping):
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_adder, args=(str(root), n, tag, stamping, child))
    proc.start()
    return proc, parent


@pytest.mark.slow
def test_200_adds_killed_at_random_points_leave_only_whole_records(repo: Path) -> None:
    import ledger.store  # noqa: F401 - loaded once, then forked: each child starts at its add

    rng = random.Random(SEED)
    stamping = _stamping(repo)
    ctx = multiprocessing.get_context("fork")
    # Batch sizes cross the bulk threshold (one sync() for the batch) and stay under it (fsync per file).
    sizes = [1, 8, 40]
    window: dict[int, float] = {}
    for n in sizes:
        # How long one add of n records takes here, from its first line to its return.
        runs = []
        for _ in range(3):
            proc, pipe = _spawn(ctx, repo, n, f"calibration {n}", stamping)
            runs.append(-pipe.recv() + pipe.recv())
            proc.join(30)
        window[n] = sorted(runs)[1]
    outcomes = {"finished": 0, "killed": 0}
    visible: dict[int, int] = {}
    for k in range(KILLS):
        n = sizes[k % len(sizes)]
        proc, pipe = _spawn(ctx, repo, n, f"kill {k}", stamping)
        pipe.recv()  # the add has begun: the kill lands somewhere inside it, or just after
        time.sleep(rng.uniform(0.0, 1.1 * window[n]))
        proc.kill()  # SIGKILL
        proc.join(30)
        outcomes["finished" if _finished(pipe) else "killed"] += 1
    records = intact_records(repo)
    for r in records:
        if r.get("body", "").startswith("kill "):
            k = int(r["body"].split()[1])
            visible[k] = visible.get(k, 0) + 1
    # The kills landed all over the add: some before it wrote, some after it finished.
    assert outcomes["killed"] > 0 and outcomes["finished"] > 0, outcomes
    assert all(count <= sizes[k % len(sizes)] for k, count in visible.items())
    # Temporaries of killed writers are never read as records, and git never sees them.
    status = git(repo, "status", "--porcelain", "--untracked-files=all").stdout
    assert ".tmp-" not in status
    check_all_clean(repo)
    # The ledger takes new records after the crashes.
    assert run_ledger(repo, "add", "note", "-", input="body: after the crashes").returncode == 0


@pytest.mark.slow
def test_cli_adds_killed_mid_write(repo: Path) -> None:
    (repo / "many.jsonl").write_text(
        "".join(json.dumps({"body": f"cli {i} " + "y" * 1500}) + "\n" for i in range(3000))
    )
    env = unmeasured({**os.environ, **GIT_ENV})  # each one is killed
    for _wave in range(2):
        procs = [
            subprocess.Popen(
                [str(LEDGER_BIN), "add", "note", "many.jsonl"],
                cwd=repo,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for _ in range(8)
        ]
        # Each killed once it is writing (its temporary files are there), not after a guessed
        # delay that a busy machine turns into a kill before the interpreter has started.
        assert kill_while_writing(procs, repo / "ledger" / "records") == [True] * len(procs)
    intact_records(repo)
    assert ".tmp-" not in git(repo, "status", "--porcelain", "--untracked-files=all").stdout
    check_all_clean(repo)


@contextmanager
def _mounted(args: list[str], target: Path, remount: list[str] | None = None):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("needs root and mount(8) to make a size-limited or read-only filesystem")
    done = subprocess.run(["mount", *args, str(target)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(
            f"mount refused here ({done.stderr.strip() or done.returncode}); the RLIMIT_FSIZE test still covers write failures"
        )
    try:
        if remount:
            subprocess.run(["mount", *remount, str(target)], check=True, capture_output=True)
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)


def _refused(result: subprocess.CompletedProcess, reason: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert reason in result.stderr and "nothing was written" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def _log(path: Path, n: int) -> Path:
    path.write_text(
        "".join(
            f"step {i}\nLEDGER "
            + json.dumps({"samples": [1.0, 1.01], "title": f"log {i}", "notes": "z " * 20000})
            + "\n"
            for i in range(n)
        )
    )
    return path


def test_full_disk_gives_a_clear_error_and_leaves_nothing(repo: Path, tmp_path: Path) -> None:
    records = repo / "ledger" / "records"
    with _mounted(["-t", "tmpfs", "-o", "size=2m", "tmpfs"], records):
        # What fits is written whole; then the disk fills.
        assert cli(repo, "add", "note", "-", input="body: before the disk filled").returncode == 0
        big = tmp_path / "big.jsonl"
        big.write_text("".join(json.dumps({"body": f"big {i} " + "w " * 30000}) + "\n" for i in range(40)))
        before = files_under(records)
        _refused(run_ledger(repo, "add", "note", str(big)), "the disk is full")
        _refused(
            cli(repo, "add", "measurement", "--from-log", str(_log(tmp_path / "run.log", 60))),
            "the disk is full",
        )
        assert files_under(records) == before
        # Through the API: a WriteError, and the same nothing-left-behind.
        from ledger.errors import WriteError
        from ledger.store import Ledger, add

        with pytest.raises(WriteError, match="the disk is full"):
            add(Ledger.open(repo), "note", _batch(40, "api", 60000), _stamping(repo))
        assert files_under(records) == before
        intact_records(repo)
        check_all_clean(repo)


def _limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))


def test_file_size_limit_through_the_cli(repo: Path, tmp_path: Path) -> None:
    records = repo / "ledger" / "records"
    before = files_under(records)
    # Small records first, one over the limit last: the batch is refused whole.
    lines = [json.dumps({"body": f"small {i}"}) for i in range(5)] + [json.dumps({"body": "v " * 10000})]
    (tmp_path / "batch.jsonl").write_text("\n".join(lines) + "\n")
    # Under an 8 KiB file size limit coverage's own data file (pyproject.toml: patch =
    # subprocess) cannot be written at exit either: this one process is not measured.
    env = unmeasured({**os.environ, **GIT_ENV})
    result = subprocess.run(
        [str(LEDGER_BIN), "add", "note", str(tmp_path / "batch.jsonl")],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=_limit_file_size,
    )
    _refused(result, "the file size limit was reached")
    assert files_under(records) == before


def test_read_only_records_folder_refuses_every_input_path(repo: Path, tmp_path: Path) -> None:
    records = repo / "ledger" / "records"
    assert cli(repo, "add", "note", "-", input="body: written before").returncode == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one record")
    before = files_under(records)
    with _mounted(["--bind", str(records)], records, remount=["-o", "remount,bind,ro"]):
        _refused(run_ledger(repo, "add", "note", "-", input="body: x"), "read-only")
        _refused(cli(repo, "add", "measurement", "--from-log", str(_log(tmp_path / "run.log", 2))), "read-only")
        _refused(cli(repo, "import", "hyperfine", str(DATA / "hyperfine_sleep.json")), "read-only")
        from ledger.errors import WriteError
        from ledger.store import Ledger, add

        with pytest.raises(WriteError, match="read-only"):
            add(Ledger.open(repo), "note", _batch(3, "api"), _stamping(repo))
        assert files_under(records) == before
    assert files_under(records) == before
    check_all_clean(repo)
