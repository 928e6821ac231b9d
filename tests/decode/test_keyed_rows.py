"""Issue 17: rows of declared documentation tables only grow. Tested on a real large Markdown
file with 12 keyed tables (stas00/ml-engineering's compute/accelerator/README.md, see
tests/data/keyed_rows/SOURCES.md), replaying two real changes of its history through `git push`."""

from __future__ import annotations

import shutil
from pathlib import Path

from checks.check_helpers import commit, page, push, set_rule
from conftest import ROOT, cli, git

from ledger import pages
from ledger.checks.keyedrows import compare

DATA = ROOT / "tests" / "data" / "keyed_rows"
BEFORE_REWRITE = DATA / "accelerator-README@ee6860e2.md"
AFTER_REWRITE = DATA / "accelerator-README@ff308c8c.md"
BEFORE_APPEND = DATA / "accelerator-README@2a1f0e92.md"
AFTER_APPEND = DATA / "accelerator-README@bfbb33a7.md"
DOC = "docs/ACCELERATORS.md"


def publish(repo: Path, source: Path) -> None:
    (repo / "docs").mkdir(exist_ok=True)
    shutil.copyfile(source, repo / DOC)


def declared(repo: Path, source: Path) -> Path:
    set_rule(repo, "keyed-rows", files=[DOC])
    publish(repo, source)
    commit(repo, "publish the accelerator tables")
    ok = push(repo)
    assert ok.returncode == 0, ok.stderr
    return repo


def test_the_real_file_has_many_keyed_tables():
    rows = pages.keyed_rows(BEFORE_REWRITE.read_text(encoding="utf-8"))
    assert len({r.table for r in rows}) >= 10 and len(rows) > 100
    result = compare(BEFORE_REWRITE.read_text(encoding="utf-8"), AFTER_REWRITE.read_text(encoding="utf-8"), None)
    assert [(k, t.split(" | ")[0]) for t, k, _ in result.changed] == [
        ("NVIDIA GH200 SXM", "Maximum Achievable Matmul FLOPS comparison table")
    ] * 2
    assert not result.removed and result.unchanged > 100


def test_a_rewritten_published_row_is_refused_key_by_key(pushed: Path):
    declared(pushed, BEFORE_REWRITE)
    publish(pushed, AFTER_REWRITE)
    commit(pushed, "consistency")
    refused = push(pushed)
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.count("error[keyed-rows]") == 2
    assert "row 'NVIDIA GH200 SXM' of table [Maximum Achievable Matmul FLOPS" in refused.stderr
    assert "unrelated keys are byte-identical" in refused.stderr
    assert f"Row-Changed: {DOC}#NVIDIA GH200 SXM" in refused.stderr


def test_a_declared_key_may_change(pushed: Path):
    declared(pushed, BEFORE_REWRITE)
    publish(pushed, AFTER_REWRITE)
    git(pushed, "add", "-A")
    git(pushed, "commit", "-q", "-m", f"consistency: GiB, not GB\n\nRow-Changed: {DOC}#NVIDIA GH200 SXM\n")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr


def test_an_appended_row_pushes_cleanly(pushed: Path):
    declared(pushed, BEFORE_APPEND)
    publish(pushed, AFTER_APPEND)
    commit(pushed, "b300/fp8")
    ok = push(pushed)
    assert ok.returncode == 0, ok.stderr


def test_a_removed_row_is_refused_even_when_declared(pushed: Path):
    declared(pushed, BEFORE_APPEND)
    text = (pushed / DOC).read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("| NVIDIA H100 SXM"))
    (pushed / DOC).write_text(text.replace(line + "\n", "", 1), encoding="utf-8")
    git(pushed, "add", "-A")
    git(pushed, "commit", "-q", "-m", f"drop a row\n\nRow-Changed: {DOC}#NVIDIA H100 SXM\n")
    refused = push(pushed)
    assert refused.returncode == 1
    assert "row 'NVIDIA H100 SXM'" in refused.stderr and "was removed" in refused.stderr


def test_deleting_the_file_removes_every_row(pushed: Path):
    declared(pushed, BEFORE_APPEND)
    (pushed / DOC).unlink()
    commit(pushed, "drop the doc")
    refused = push(pushed)
    assert refused.returncode == 1 and refused.stderr.count("error[keyed-rows]") > 100


def test_a_spec_page_declares_its_keyed_tables(pushed: Path):
    set_rule(pushed, "owed-high-water", high_water=0)
    head = "---\nkeyed_tables: {key: Threads}\n---\n# Threads\n\n| Threads | Median |\n|---|---|\n"
    page(pushed, "threads.md", head + "| 1 | ~2 s |\n| 2 | ~1 s |\n")
    commit(pushed, "page")
    assert push(pushed).returncode == 0
    page(pushed, "threads.md", head + "| 1 | ~2 s |\n| 2 | ~1.1 s |\n| 4 | ~0.6 s |\n")
    commit(pushed, "rewrite a published row")
    refused = push(pushed)
    assert refused.returncode == 1 and "row '2' of table [Threads | Threads | Median]" in refused.stderr


def test_a_malformed_declaration_is_bad_input(repo: Path):
    set_rule(repo, "keyed-rows", files="docs/BENCHMARKS.md")
    result = cli(repo, "check", "--all")
    assert result.returncode == 2 and "rules.keyed-rows.files" in result.stderr
