"""A gzip'd text attachment is compact text; its content is still judged and scanned for secrets."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from conftest import cli


def attach(repo: Path, name: str, data: bytes) -> dict:
    folder = repo / "ledger" / "records" / "attachments" / "series"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)
    rel = f"attachments/series/{name}"
    body = {"body": "a series", "attachments": {rel: hashlib.sha256(data).hexdigest()}}
    assert cli(repo, "add", "note", "-", input=json.dumps(body)).returncode == 0
    result = cli(repo, "check", "--all", "--format", "json")
    return {"code": result.returncode, "rules": [v["rule"] for v in json.loads(result.stdout)["violations"]]}


def test_gzipped_text_passes(repo: Path) -> None:
    out = attach(repo, "ok.jsonl.gz", gzip.compress(b'{"t": 0, "mem_available": 1}\n' * 100, mtime=0))
    assert out == {"code": 0, "rules": []}


def test_gzipped_binary_and_secrets_are_refused(repo: Path) -> None:
    out = attach(repo, "bin.gz", gzip.compress(b"\x00\x01\x02" * 50, mtime=0))
    assert out["code"] == 1 and "binary-content" in out["rules"]
    token = b"hf_" + b"a1B2c3D4" * 5
    out = attach(repo, "tok.jsonl.gz", gzip.compress(b'{"env": "' + token + b'"}\n', mtime=0))
    assert "secrets" in out["rules"]


def test_corrupt_gzip_is_refused(repo: Path) -> None:
    out = attach(repo, "bad.gz", b"\x1f\x8b" + b"not really gzip")
    assert out["code"] == 1 and "binary-content" in out["rules"]


def test_every_gzip_member_is_scanned(repo: Path) -> None:
    """gzip allows members back to back (`cat a.gz b.gz`): a secret in the second member is
    found, and trailing bytes that are not gzip are refused rather than skipped."""
    token = b"hf_" + b"a1B2c3D4" * 5
    two = gzip.compress(b'{"t": 0}\n', mtime=0) + gzip.compress(b'{"env": "' + token + b'"}\n', mtime=0)
    assert "secrets" in attach(repo, "two.jsonl.gz", two)["rules"]
    tail = gzip.compress(b'{"t": 0}\n', mtime=0) + b"PK\x03\x04 a zip after the gzip"
    assert "binary-content" in attach(repo, "tail.jsonl.gz", tail)["rules"]
