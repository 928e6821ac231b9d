"""`ledger add`, `show`, `list` through the real CLI on a real git repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import cli, git

from ledger.store import Ledger, canonical_bytes, content_hash


def record_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "ledger" / "records").rglob("*.json"))


def test_add_yaml_prints_id_and_writes_one_canonical_file(repo: Path) -> None:
    (repo / "note.yaml").write_text("body: clocks looked low on node 3\ntitle: node 3 clocks\n")
    result = cli(repo, "add", "note", "note.yaml")
    assert result.returncode == 0, result.stderr
    rid = result.stdout.strip()
    (path,) = record_files(repo)
    assert path.name == f"{rid}.json"
    assert path.parent.name == rid[-2:].lower() and path.parent.parent.name == "note"
    raw = path.read_bytes()
    data = json.loads(raw)
    assert raw == canonical_bytes(data) and raw.endswith(b"}\n")
    assert list(data) == sorted(data) and b'\n  "allocation": {' in raw
    assert data["sha256"] == content_hash(data)
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    assert data["source"]["sha"] == head and data["source"]["dirty"] is False
    assert data["allocation"]["scheduler"] == "local"
    assert data["tool"] == {"name": "ledger", "version": "0.1.0"}


def test_add_json_lines_many_and_json_format(repo: Path) -> None:
    lines = "\n".join(json.dumps({"samples": [0.5 + i / 100, 0.51, 0.52], "title": f"run {i}"}) for i in range(5))
    result = cli(repo, "add", "measurement", "-", "--format", "json", input=lines + "\n")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert [o["kind"] for o in out] == ["measurement"] * 5
    assert len(record_files(repo)) == 5
    rec = Ledger.open(repo).get(out[0]["id"])
    assert rec.n == 3 and rec.median == 0.51 and rec.min == 0.5


def test_show_json_goes_back_in_with_fresh_id_and_stamps(repo: Path) -> None:
    first = cli(repo, "add", "note", "-", "--allocation", "job-1", input='{"body": "first"}').stdout.strip()
    shown = cli(repo, "show", first, "--format", "json")
    assert shown.returncode == 0
    again = cli(repo, "add", "note", "-", input=shown.stdout)
    assert again.returncode == 0, again.stderr
    second = again.stdout.strip()
    assert second != first
    a, b = (json.loads(cli(repo, "show", i, "--format", "json").stdout) for i in (first, second))
    assert a["body"] == b["body"] == "first"
    assert a["allocation"]["id"] == "job-1" and b["allocation"]["id"] != "job-1"
    assert a["sha256"] != b["sha256"]


def test_show_text_and_prefix(repo: Path) -> None:
    rid = cli(repo, "add", "note", "-", input="body: '[red]not markup[/red]'").stdout.strip()
    result = cli(repo, "show", rid[:20])
    assert result.returncode == 0, result.stderr
    assert "[red]not markup[/red]" in result.stdout and rid in result.stdout


def test_list_sorted_by_time_with_kind_filter(repo: Path) -> None:
    ids = [cli(repo, "add", "note", "-", input=f"body: n{i}").stdout.strip() for i in range(3)]
    cli(repo, "add", "issue", "-", input="number: 7\ntitle: seven")
    rows = json.loads(cli(repo, "list", "--kind", "note", "--format", "json").stdout)
    assert [r["id"] for r in rows] == ids
    table = cli(repo, "list")
    assert table.returncode == 0 and "issue" in table.stdout
    # The table shows each id as its shortest unique prefix, which `ledger show` resolves.
    prefix = next(w for line in table.stdout.splitlines() for w in line.split()[:1] if ids[0].startswith(w))
    assert len(prefix) < len(ids[0])
    assert json.loads(cli(repo, "show", prefix, "--format", "json").stdout)["id"] == ids[0]


BAD_INPUTS = [
    ("broken.json", '{"body": "x",,}', "note", "line 1, column 14", "JSON error"),
    ("ok.yaml", "body: x", "nonsense", "KIND", "unknown kind"),
    ("missing.yaml", "title: no body", "note", "field body", "Field required"),
    ("typed.yaml", "samples: [0.1, fast]", "measurement", "field samples[1]", "valid number"),
    ("nan.json", '{"samples": [0.1, NaN]}', "measurement", "nan.json", "NaN"),
    ("nan.yaml", "samples: [0.1, .nan]", "measurement", "nan.yaml", "nan"),
    ("negative.yaml", "samples: [0.1, -0.2]", "measurement", "field samples[1]", "greater than or equal to 0"),
    (
        "dangling.yaml",
        "body: x\nsupersedes: [01K00000000000000000000000]",
        "note",
        "field supersedes[0]",
        "not in the ledger",
    ),
    ("extra.yaml", "body: x\nbdy: typo", "note", "field bdy", "Extra inputs"),
    ("badline.jsonl", '{"body": "a"}\n{"body": \n', "note", "line 2", "JSON error"),
]


@pytest.mark.parametrize("name,text,kind,where,message", BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_bad_input_exits_2_names_the_place_and_writes_nothing(
    repo: Path, name: str, text: str, kind: str, where: str, message: str
) -> None:
    (repo / name).write_text(text)
    result = cli(repo, "add", kind, name)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert where in result.stderr and message in result.stderr, result.stderr
    assert record_files(repo) == []


def test_one_bad_record_in_a_batch_writes_none(repo: Path) -> None:
    text = '{"body": "good"}\n{"body": ""}\n{"body": "also good"}\n'
    result = cli(repo, "add", "note", "-", input=text)
    assert result.returncode == 2 and "line 2, field body" in result.stderr
    assert record_files(repo) == []


def test_unknown_id_and_missing_ledger_exit_2(repo: Path, tmp_path: Path) -> None:
    assert cli(repo, "show", "01K00000000000000000000000").returncode == 2
    elsewhere = tmp_path / "empty"
    elsewhere.mkdir()
    result = cli(elsewhere, "list")
    assert result.returncode == 2 and "ledger init" in result.stderr


def test_references_resolve_or_are_refused(repo: Path) -> None:
    contract = cli(
        repo,
        "add",
        "contract",
        "-",
        input=(
            "name: c1\nmodel: m\nparam_precision: fp32\noptimizer_state_precision: fp32\n"
            "compute_precision: bf16\nwarmup_steps: 10\nmeasured_steps: 20\n"
        ),
    ).stdout.strip()
    ok = cli(repo, "add", "measurement", "-", input=json.dumps({"contract": contract, "samples": [1.0]}))
    assert ok.returncode == 0, ok.stderr
    bad = cli(
        repo,
        "add",
        "measurement",
        "-",
        input=json.dumps({"contract": contract[:-1] + ("0" if contract[-1] != "0" else "1"), "samples": [1.0]}),
    )
    assert bad.returncode == 2 and "field contract" in bad.stderr


def test_bad_input_in_a_repository_without_commits_reports_both(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    assert cli(root, "init").returncode == 0
    result = cli(root, "add", "note", "-", input="title: no body\n")
    assert result.returncode == 2
    assert "no commit" in result.stderr and "field body" in result.stderr
    assert not list((root / "ledger" / "records").rglob("*.json"))


def test_list_keeps_the_value_at_80_columns_beside_imported_records(repo: Path) -> None:
    """Imported ids share a long prefix and their summary is a title without the figure:
    at 80 columns the summary wraps and the value column stays (it used to be dropped)."""
    added = cli(repo, "add", "measurement", "-", input='{"samples": [0.712, 0.709, 0.708, 0.711]}')
    assert added.returncode == 0, added.stderr
    data = Path(__file__).resolve().parents[1] / "importers" / "data"
    for fmt, name in (("hyperfine", "hyperfine_sleep.json"), ("pyperf", "pyperf/mult_list_py36_tags.json")):
        result = cli(repo, "import", fmt, str(data / name))
        assert result.returncode == 0, result.stdout + result.stderr
    rows = json.loads(cli(repo, "list", "--format", "json").stdout)
    values = [r["value"] for r in rows if r["value"]]
    assert len(values) >= 4
    listed = cli(repo, "list", env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert "value" in lines[1].split()
    assert all(len(line) <= 80 for line in lines), listed.stdout
    for v in values:
        assert v in listed.stdout, (v, listed.stdout)


def test_a_yaml_mistake_is_named_at_its_own_line(repo: Path) -> None:
    """A misspelt or mistyped field is reported at the line it is on, not the record's first
    line; in a YAML list of records, at the item's line (it used to have no line at all)."""
    (repo / "note.yaml").write_text("# a note\n\nbody: hi\n\ntitle: ok\ntitel: oops\n")
    result = cli(repo, "add", "note", "note.yaml")
    assert result.returncode == 2, result.stderr
    assert "note.yaml:line 6, field titel: schema-valid" in result.stderr, result.stderr
    (repo / "contract.yaml").write_text("name: y\nmodel: m\n\n\nwarmup_steps: ten\n")
    result = cli(repo, "add", "contract", "contract.yaml")
    assert result.returncode == 2 and "contract.yaml:line 5, field warmup_steps" in result.stderr, result.stderr
    (repo / "notes.yaml").write_text("- body: a\n- body: b\n  titel: x\n")
    result = cli(repo, "add", "note", "notes.yaml")
    assert result.returncode == 2 and "notes.yaml:line 3, field titel" in result.stderr, result.stderr
    assert record_files(repo) == []


def test_show_keeps_min_and_max_apart(repo: Path) -> None:
    """Four samples 0.708-0.712: the median's spread supports 0.71, but min and max quoted to
    the median's digits read 0.71 and 0.71, a range of nothing. They stay 0.708 and 0.712, and
    the median keeps their digits (0.710), so it never reads outside or coarser than them."""
    rid = cli(repo, "add", "measurement", "-", input='{"samples": [0.712, 0.709, 0.708, 0.711]}').stdout.strip()
    shown = cli(repo, "show", rid, env={"COLUMNS": "100"})
    assert shown.returncode == 0, shown.stderr
    fields = {line.split()[0]: line.split()[1] for line in shown.stdout.splitlines() if len(line.split()) == 2}
    assert (fields["min"], fields["median"], fields["max"]) == ("0.708", "0.710", "0.712"), shown.stdout


def test_import_table_never_folds_an_id_at_80_columns(repo: Path) -> None:
    """The import summary printed `01M8S48DRD3AADG7RYCD` and `M705JP` on two lines at 80
    columns: an id that cannot be copied. Ids stay whole; the summary wraps instead."""
    data = Path(__file__).resolve().parents[1] / "importers" / "data" / "pyperf" / "mult_list_py36_tags.json"
    result = cli(repo, "import", "pyperf", str(data), env={"COLUMNS": "80"})
    assert result.returncode == 0, result.stdout + result.stderr
    ids = [r["id"] for r in json.loads(cli(repo, "list", "--format", "json").stdout)]
    assert len(ids) == 4
    for rid in ids:
        assert rid in result.stdout, (rid, result.stdout)
    assert all(len(line) <= 80 for line in result.stdout.splitlines())
