"""Artifact policy: compact text records only. A size cap per file, no binary content, no
secrets (tracker API keys, cloud and hub tokens), no merge-conflict markers, and
attachments that are regular files inside the records folder matching their sha256."""

from __future__ import annotations

import re

from ..store.decode import GZIP_MAGIC, GzipProblem, inflate
from ..store.limits import MAX_INFLATED_BYTES, MAX_RECORD_BYTES
from .result import ERROR
from .rule import Rule

#: The rules of this family, as data (ledger.checks.registry lists the families).
RULES: tuple[Rule, ...] = (
    Rule(
        "record-size",
        "artifacts",
        ERROR,
        "A record or attachment file is larger than the cap. The ledger keeps compact evidence; "
        "raw logs, traces and checkpoints belong in the tracker, linked from `links`.",
        "Keep the summary and raw per-step samples; move the bulk to the tracker and link it.",
        {"max_bytes": MAX_RECORD_BYTES},
        {"max_bytes": "Largest file in the records folder, in bytes."},
    ),
    Rule(
        "binary-content",
        "artifacts",
        ERROR,
        "A file in the records folder holds binary content: NUL bytes, bytes that are not UTF-8, "
        "or a long base64 run inside a string.",
        "Record numbers and text only; put binaries (traces, images, checkpoints) elsewhere and link them.",
        {"max_base64_chars": 4096},
        {"max_base64_chars": "Longest base64-looking run allowed inside a string."},
    ),
    Rule(
        "secrets",
        "artifacts",
        ERROR,
        "A record, attachment or page carries a credential. Shapes come from detect-secrets' maintained "
        "rule set (GitLab, npm, PyPI, Stripe, JWT, basic-auth URLs, OpenAI, SendGrid, Square, Azure "
        "storage) and ledger's own (W&B, Hugging Face, AWS, GitHub, GCP, Slack, Docker Hub, bare npm "
        "tokens, private keys, `user:pass@` in scp-style remotes, `?access_token=` URLs, Basic-auth "
        "values, 40-hex keys next to their variable names), in `ledger.redact`, which redaction at "
        "capture uses too. Escaped text is scanned as it parses. Pushed once, a secret is public for good.",
        "Remove the secret (records are append-only: write a corrected record and do not push this one) "
        "and rotate the credential.",
    ),
    Rule(
        "conflict-markers",
        "artifacts",
        ERROR,
        "A ledger or page file holds git merge-conflict markers (`<<<<<<< `, `>>>>>>> `).",
        "Resolve the conflict; records never conflict unless a file was edited, which append-only forbids.",
    ),
    Rule(
        "symlinks",
        "artifacts",
        ERROR,
        "A symbolic link (or another non-regular file) under the records or specs folders, or one of "
        "those folders reached through a link. A link can point outside the repository (a home "
        "directory, /proc/self/environ) or shadow a record id with a file nobody checked; ledger "
        "never follows one, in the hook, `check --all`, `show`, `list` or the site.",
        "Replace the link with the file it points at, or remove it (`git rm FILE`).",
    ),
    Rule(
        "attachments",
        "artifacts",
        ERROR,
        "A record's attachment is missing, a symlink, outside the records folder (absolute or `../`), "
        "or its bytes do not match the sha256 the record gives.",
        "Attach a regular file inside the records folder and record the sha256 of its bytes.",
    ),
)

_CONFLICT = re.compile(rb"^(?:<{7}|>{7})(?: |$)", re.M)
_CONFLICT_ANCHORS = (b"<<<<<<<", b">>>>>>>")
_BASE64: dict[int, re.Pattern[bytes]] = {}


def line_of(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


def find_conflicts(raw: bytes) -> list[int]:
    if not any(a in raw for a in _CONFLICT_ANCHORS):
        return []
    return [line_of(raw, m.start()) for m in _CONFLICT.finditer(raw)]


#: A gzip'd text attachment (the sampler's series) is read up to this many bytes; more is a bomb.
MAX_INFLATED = MAX_INFLATED_BYTES


def readable(raw: bytes) -> tuple[bytes, str | None]:
    """The text a file holds: gzip'd text is compact text, so it is judged (and scanned for
    secrets) by what it inflates to. Returns (bytes, problem with the compression or None)."""
    if raw[:2] != GZIP_MAGIC:
        return raw, None
    try:
        return inflate(raw, MAX_INFLATED), None
    except GzipProblem as exc:
        return raw, str(exc) if exc.too_big else f"is not valid gzip ({exc})"


def binary_reason(raw: bytes, max_base64: int) -> tuple[str, int] | None:
    raw, problem = readable(raw)
    if problem:
        return problem, 1
    if b"\0" in raw:
        return "holds NUL bytes", line_of(raw, raw.index(b"\0"))
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return "is not UTF-8 text", line_of(raw, exc.start)
    pattern = _BASE64.get(max_base64)
    if pattern is None:
        # The lookbehind lets a run match only from its first character: one linear scan.
        pattern = _BASE64[max_base64] = re.compile(rb"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{%d,}" % max_base64)
    m = pattern.search(raw)
    if m:
        return f"holds a {m.end() - m.start()}-character base64 run (binary content encoded as text)", line_of(
            raw, m.start()
        )
    return None
