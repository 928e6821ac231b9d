"""Every record format ledger ever wrote is read by today's ledger (docs/reference/format.md).

tests/schema/formats/ holds one record file per format version, as written; each is placed in
a fresh ledger and read back through the real commands, so a format change without its
migration (or without its fixture) fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from checks.check_helpers import set_rule
from conftest import cli, git

from ledger.schema.envelope import FORMAT_VERSION
from ledger.schema.migrate import MIGRATIONS
from ledger.store import Ledger, content_hash

FORMATS = Path(__file__).parent / "formats"
FIXTURES = sorted(FORMATS.glob("v*.json"), key=lambda p: int(p.stem[1:]))


def test_a_fixture_for_every_format_and_a_migration_between_each() -> None:
    assert [int(p.stem[1:]) for p in FIXTURES] == list(range(1, FORMAT_VERSION + 1))
    assert sorted(MIGRATIONS) == list(range(1, FORMAT_VERSION))


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.stem)
def test_a_record_of_each_format_is_read_today(repo: Path, fixture: Path) -> None:
    raw = fixture.read_bytes()
    data = json.loads(raw)
    assert data["format_version"] == int(fixture.stem[1:])
    assert content_hash(data) == data["sha256"]  # the bytes as that version wrote them
    book = Ledger.open(repo)
    path = book.path_for(data["kind"], data["id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw)
    # Its commit is in this project's history, not in the test's repository.
    set_rule(repo, "sha-resolves", severity="off")
    set_rule(repo, "sha-foreign", severity="off")  # (and labelled with a checkout's path)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"a record of format {data['format_version']}")

    checked = cli(repo, "check", "--all")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    shown = cli(repo, "show", data["id"], "--format", "json")
    assert shown.returncode == 0, shown.stderr
    today = json.loads(shown.stdout)
    assert today["format_version"] == FORMAT_VERSION
    assert today["id"] == data["id"] and today["sha256"] == data["sha256"]
    record = book.load(path)
    assert record.format_version == FORMAT_VERSION and record.kind == data["kind"]
