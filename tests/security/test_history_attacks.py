"""Attacks on the ledger's history (issue 12, classes 2, 3, 4, 9, 10 and 11), each through
the real commands: a bare remote, the hook `ledger hook install` wrote, a real `git push`,
a fresh `git clone` for what CI sees. Each attack fails closed with a rule id, a file and a fix.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from checks.check_helpers import add, commit, push, raw_record, set_rule
from conftest import cli, git

from ledger.store.canonical import canonical_bytes, seal
from ledger.store.ids import new_id

pytestmark = pytest.mark.slow


@pytest.fixture
def pushed(pushed: Path) -> Path:
    """The campaign with a bare remote, the hook installed (tests/conftest.py: pushed), and two
    records already pushed."""
    repo = pushed
    add(repo, "note", {"body": "a refuted hypothesis, kept so the next reader does not reach it again"})
    add(repo, "issue", {"number": 7, "title": "re-gate the 8x pair", "owner": "ana"})
    commit(repo, "evidence")
    ok = push(repo)
    assert ok.returncode == 0, ok.stderr
    return repo


def _note(repo: Path) -> Path:
    return next((repo / "ledger" / "records" / "note").rglob("*.json"))


def _refused(repo: Path, rule: str, *push_args: str, file: str | None = None) -> str:
    before = git(repo, "ls-remote", "origin").stdout
    result = push(repo, *push_args)
    assert result.returncode != 0, result.stderr
    assert f"error[{rule}]" in result.stderr, result.stderr
    assert "fix:" in result.stderr, result.stderr
    if file:
        assert file in result.stderr, result.stderr
    assert git(repo, "ls-remote", "origin").stdout == before  # the remote did not move
    return result.stderr


def _reseal(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_bytes(canonical_bytes(seal({k: v for k, v in data.items() if k != "sha256"})))


def _clone(repo: Path, tmp_path: Path, name: str = "fresh") -> Path:
    target = tmp_path / name
    git(tmp_path, "clone", "-q", str(repo.parent / "remote.git"), str(target))
    return target


# -- 2. the push being judged cannot switch off its own judge -------------------------------


def test_a_push_that_turns_append_only_off_and_deletes_is_refused(pushed: Path) -> None:
    set_rule(pushed, "append-only", severity="off")
    git(pushed, "rm", "-q", str(_note(pushed)))
    commit(pushed, "relax the rule and drop the note")
    stderr = _refused(pushed, "append-only", file="ledger/records/note/")
    assert "error[config-change]" in stderr and "field rules.append-only.severity" in stderr


def test_a_push_that_moves_the_records_folder_is_refused(pushed: Path) -> None:
    config = pushed / "ledger.yaml"
    config.write_text(config.read_text().replace("records: ledger/records", "records: ledger/elsewhere"))
    assert "ledger/elsewhere" in config.read_text()
    git(pushed, "mv", "ledger/records", "ledger/elsewhere")
    commit(pushed, "move the records where no rule looks")
    stderr = _refused(pushed, "config-change", file="ledger.yaml")
    assert "error[append-only]" in stderr  # judged with the remote's folder, the move deletes records


def test_an_uncommitted_config_edit_does_not_judge_the_push(pushed: Path) -> None:
    git(pushed, "rm", "-q", str(_note(pushed)))
    commit(pushed, "drop the note")
    set_rule(pushed, "append-only", severity="off")  # in the working tree only
    _refused(pushed, "append-only")


def test_a_loosening_recorded_with_a_reason_passes_and_judges_later_pushes(pushed: Path) -> None:
    set_rule(pushed, "cell-width", max_chars=300)
    commit(pushed, "wider cells")
    _refused(pushed, "config-change", file="ledger.yaml")
    add(
        pushed,
        "note",
        {"body": "cell-width 300: the decode spec's tables name full kernels", "tags": ["ledger-config"]},
    )
    commit(pushed, "say why")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
    (pushed / "ledger" / "specs" / "wide.md").write_text("| a |\n|---|\n| " + "x" * 280 + " |\n")
    commit(pushed, "a wide table")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr


@pytest.mark.parametrize(
    "params, looser",
    [
        ({"min_sm_clock_fraction": 0.5}, True),  # a throttled board would pass as healthy
        ({"benign_clock_reasons": ["gpu_idle", "display_clock_setting", "sw_power_cap"]}, True),
        ({"min_sm_clock_fraction": 0.99}, False),  # stricter: taken at once
    ],
)
def test_baseline_eligibility_loosens_downwards_and_by_a_new_benign_reason(
    pushed: Path, params: dict, looser: bool
) -> None:
    set_rule(pushed, "baseline-eligibility", **params)
    commit(pushed, "eligibility thresholds")
    if looser:
        stderr = _refused(pushed, "config-change", file="ledger.yaml")
        assert f"rules.baseline-eligibility.{next(iter(params))}" in stderr
    else:
        ok = push(pushed)
        assert ok.returncode == 0, ok.stderr


def test_a_push_may_tighten_its_rules_at_once(pushed: Path) -> None:
    set_rule(pushed, "cell-width", max_chars=100)
    (pushed / "ledger" / "specs" / "wide.md").write_text("| a |\n|---|\n| " + "x" * 150 + " |\n")
    commit(pushed, "tighter cells and a cell over them")
    _refused(pushed, "cell-width")


# -- 3. CI sees what the hook would have refused -----------------------------------------


@pytest.mark.parametrize("how", ["delete", "reseal"])
def test_a_no_verify_push_is_caught_by_ci_on_a_fresh_clone(pushed: Path, tmp_path: Path, how: str) -> None:
    before = git(pushed, "rev-parse", "HEAD").stdout.strip()
    note = _note(pushed)
    if how == "delete":
        git(pushed, "rm", "-q", str(note))
    else:
        _reseal(note, body="the hypothesis was supported after all")
    commit(pushed, "tamper")
    assert push(pushed, "--no-verify", "HEAD:main").returncode == 0
    add(pushed, "note", {"body": "an honest record on top"})
    commit(pushed, "bury it")
    assert push(pushed).returncode == 0  # judged against the remote, which already has the tamper
    clone = _clone(pushed, tmp_path)
    rel = note.relative_to(pushed).as_posix()
    for args in (("check", "--all"), ("check", "--base", "origin/main"), ("check", "--pushed", before)):
        result = cli(clone, *args)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert "error[append-only]" in result.stdout and rel in result.stdout, (args, result.stdout)
        assert "fix:" in result.stdout


def test_a_no_verify_force_push_is_caught_by_the_ci_recipe(pushed: Path, tmp_path: Path) -> None:
    before = git(pushed, "rev-parse", "HEAD").stdout.strip()
    git(pushed, "reset", "-q", "--hard", "HEAD~1")
    add(pushed, "note", {"body": "a fresh start"})
    commit(pushed, "rewrite history")
    assert push(pushed, "--no-verify", "--force", "HEAD:main").returncode == 0
    clone = _clone(pushed, tmp_path)
    result = cli(clone, "check", "--pushed", before)
    assert result.returncode == 1, result.stdout
    assert "error[append-only]" in result.stdout and "deleted" in result.stdout


def test_the_history_walk_accepts_an_honest_ledger(pushed: Path, tmp_path: Path) -> None:
    clone = _clone(pushed, tmp_path)
    for args in (("check", "--all"), ("check", "--base", "origin/main")):
        result = cli(clone, *args)
        assert result.returncode == 0, (args, result.stdout, result.stderr)


# -- 4. git cannot be told to show another history ------------------------------------------


def test_a_replace_object_does_not_hide_a_deletion(pushed: Path) -> None:
    git(pushed, "rm", "-q", str(_note(pushed)))
    commit(pushed, "drop the note")
    parent_tree = git(pushed, "rev-parse", "HEAD~1^{tree}").stdout.strip()
    fake = git(pushed, "commit-tree", parent_tree, "-p", "HEAD~1", "-m", "drop the note").stdout.strip()
    git(pushed, "replace", "HEAD", fake)  # git log/show/diff now see the note still there
    assert git(pushed, "ls-tree", "-r", "--name-only", "HEAD", "--", "ledger/records/note").stdout.strip()
    _refused(pushed, "append-only", file="ledger/records/note/")


def test_grafts_do_not_hide_a_deletion_from_ci(pushed: Path, tmp_path: Path) -> None:
    git(pushed, "rm", "-q", str(_note(pushed)))
    commit(pushed, "drop the note")
    add(pushed, "note", {"body": "on top"})
    commit(pushed, "on top")
    assert push(pushed, "--no-verify", "HEAD:main").returncode == 0
    clone = _clone(pushed, tmp_path)
    head = git(clone, "rev-parse", "HEAD").stdout.strip()
    (clone / ".git" / "info").mkdir(exist_ok=True)
    (clone / ".git" / "info" / "grafts").write_text(head + "\n")  # HEAD has no parents now
    result = cli(clone, "check", "--all")
    assert result.returncode == 1 and "error[append-only]" in result.stdout, result.stdout


def test_a_new_branch_is_judged_against_the_remotes_default_branch(pushed: Path) -> None:
    url = str(pushed.parent / "remote.git")
    git(pushed, "checkout", "-q", "-b", "cleanup")
    git(pushed, "rm", "-q", str(_note(pushed)))
    commit(pushed, "drop the note on a new branch")
    # pushed by URL, there are no remote-tracking refs to compare with: the hook asks the remote
    result = git(pushed, "push", url, "cleanup:cleanup", check=False)
    assert result.returncode != 0 and "error[append-only]" in result.stderr, result.stderr
    assert "cleanup" not in git(pushed, "ls-remote", url).stdout


def test_deleting_the_default_branch_is_refused(pushed: Path) -> None:
    _refused(pushed, "append-only", ":main")


def test_a_push_from_a_git_worktree_resolves_its_source_shas(pushed: Path, tmp_path: Path) -> None:
    # The measured code is another repository (config `source`), pushed to its own remote.
    measured = tmp_path / "measured"
    measured.mkdir()
    git(measured, "init", "-q", "-b", "main")
    (measured / "train.py").write_text("lr = 0.1\n")
    commit(measured, "the measured code")
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(tmp_path / "measured.git"))
    git(measured, "remote", "add", "origin", str(tmp_path / "measured.git"))
    git(measured, "push", "-q", "origin", "main")
    add(pushed, "note", {"body": "source: . -> ../measured (the measured code lives there)", "tags": ["ledger-config"]})
    config = pushed / "ledger.yaml"
    config.write_text(config.read_text().replace("source: .", "source: ../measured"))
    commit(pushed, "measure ../measured")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
    # A second working tree of the ledger: git runs its hook with GIT_DIR set to it.
    tree = tmp_path / "feature-tree"
    git(pushed, "worktree", "add", "-q", "-b", "feature", str(tree))
    add(tree, "measurement", {"metric": "step_time", "unit": "s", "samples": [1.0, 1.1]})
    commit(tree, "evidence from the worktree")
    result = git(tree, "push", "origin", "feature:feature", check=False)
    assert result.returncode == 0, result.stderr
    assert "sha-resolves" not in result.stderr


# -- 9. forged times ---------------------------------------------------------------------------


@pytest.mark.parametrize("year", [2099, 1970])
def test_a_record_dated_far_away_is_refused(pushed: Path, year: int) -> None:
    at = datetime(year, 6, 1, tzinfo=UTC)
    path = raw_record(pushed, "note", {"body": f"written in {year}"}, record_id=new_id(at))
    _reseal(path, created_at=at.isoformat().replace("+00:00", "Z"))
    commit(pushed, f"from {year}")
    stderr = _refused(pushed, "record-time", file=path.relative_to(pushed).as_posix())
    assert "field created_at" in stderr


def test_an_id_that_disagrees_with_created_at_is_refused(pushed: Path) -> None:
    path = raw_record(pushed, "note", {"body": "old id, new time"}, record_id=new_id(datetime(2026, 1, 1, tzinfo=UTC)))
    commit(pushed, "mismatch")
    stderr = _refused(pushed, "record-time")
    assert "the id's time" in stderr and path.name in stderr


def test_a_record_after_its_commit_is_refused(pushed: Path) -> None:
    add(pushed, "note", {"body": "written now"})
    git(pushed, "add", "-A")
    past = (datetime.now(UTC) - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%S+0000")
    env = {**os.environ, "GIT_COMMITTER_DATE": past, "GIT_AUTHOR_DATE": past}
    import subprocess

    subprocess.run(["git", "commit", "-q", "-m", "backdated"], cwd=pushed, env={**env, **_ident()}, check=True)
    stderr = _refused(pushed, "record-time")
    assert "after the commit that adds it" in stderr


def _ident() -> dict[str, str]:
    from conftest import GIT_ENV

    return GIT_ENV


def test_forged_times_do_not_steer_the_current_contract(pushed: Path) -> None:
    from checks.check_helpers import contract

    honest = contract(pushed, "honest")
    add(pushed, "measurement", {"metric": "step_time", "unit": "s", "samples": [1.0, 1.1], "contract": honest})
    forged_at = datetime(2099, 1, 1, tzinfo=UTC)
    other = contract(pushed, "forged")
    path = raw_record(
        pushed,
        "measurement",
        {"metric": "step_time", "unit": "s", "samples": [0.5, 0.6], "contract": other},
        record_id=new_id(forged_at),
    )
    _reseal(path, created_at=forged_at.isoformat().replace("+00:00", "Z"))
    status = cli(pushed, "status")
    assert status.returncode == 0, status.stderr
    assert "honest" in status.stdout and "forged" not in status.stdout.split("\n\n")[0], status.stdout
    check = cli(pushed, "check")
    assert check.returncode == 1 and "error[record-time]" in check.stdout


# -- 10. history git can lose ------------------------------------------------------------------


def test_a_record_stamped_with_a_commit_a_rebase_left_behind_is_refused(pushed: Path, tmp_path: Path) -> None:
    (pushed / "train.py").write_text("lr = 0.1\n")
    commit(pushed, "the measured change")
    add(pushed, "note", {"body": "measured at the change"})
    stamped = git(pushed, "rev-parse", "HEAD").stdout.strip()
    git(pushed, "add", "-A")
    git(pushed, "commit", "-q", "--amend", "-m", "the measured change, reworded")  # the stamped commit is gone
    stderr = _refused(pushed, "sha-resolves", file="ledger/records/note/")
    assert f"refs/tags/ledger-keep/{stamped[:12]}" in stderr
    keep = git(pushed, "push", "origin", f"{stamped}:refs/tags/ledger-keep/{stamped[:12]}", check=False)
    assert keep.returncode == 0, keep.stderr
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr
    clone = _clone(pushed, tmp_path)
    result = cli(clone, "check", "--all")
    assert result.returncode == 0, result.stdout
    assert "sha-resolves" not in result.stdout


# -- 11. records git never sees ----------------------------------------------------------------


def test_records_hidden_by_gitignore_warn_at_add_and_are_refused_at_push(pushed: Path) -> None:
    (pushed / ".gitignore").write_text("ledger/records/note/\n")
    commit(pushed, "ignore notes")
    result = cli(pushed, "add", "note", "-", input=json.dumps({"body": "never committed"}))
    assert result.returncode == 0, result.stderr
    assert "ignored by git" in result.stderr and ".gitignore" in result.stderr, result.stderr
    _refused(pushed, "records-ignored", file=".gitignore")


def test_a_tag_at_a_tree_or_blob_is_no_internal_error_at_push(pushed: Path) -> None:
    """Hostile round: `git tag t HEAD^{tree}` pushed through the hook was `internal error:
    ValueError` (the hook read the commit time of a tree)."""
    git(pushed, "tag", "treetag", "HEAD^{tree}")
    git(pushed, "tag", "blobtag", git(pushed, "rev-parse", "HEAD:ledger.yaml").stdout.strip())
    result = git(pushed, "push", "origin", "treetag", "blobtag", check=False)
    assert "internal error" not in result.stderr and result.returncode == 0, result.stderr
