"""Secret shapes, and redaction at capture: one definition of a credential.

The checker's `secrets` rule (`ledger.checks.artifacts`) and every collector or runner that
records text (environment, sampler, sandwich runner) import the shapes from here, so whatever
a collector lets through is exactly what `ledger check` would refuse.
"""

from __future__ import annotations

import re

_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")
REDACTED = "<redacted>"

# Credential shapes, from each vendor's documented token format.
SECRET_PATTERNS: dict[str, re.Pattern[bytes]] = {
    "W&B API key": re.compile(rb"(?i:wandb[_\-. ]?(?:api[_\-. ]?)?key)\W{0,6}[0-9a-f]{40}\b"),
    "W&B API key in a netrc or URL": re.compile(rb"(?i:api\.wandb\.ai\W{1,40}password)\s+[0-9a-f]{40}\b"),
    "Hugging Face token": re.compile(rb"\bhf_[A-Za-z0-9]{30,}\b"),
    "AWS access key id": re.compile(rb"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "AWS secret access key": re.compile(rb"(?i:aws_secret_access_key)\W{0,6}[A-Za-z0-9/+]{40}\b"),
    "GitHub token": re.compile(rb"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})\b"),
    "GCP API key": re.compile(rb"\bAIza[0-9A-Za-z_\-]{35}\b"),
    "GCP service-account key": re.compile(
        rb"service_account.{0,400}private_key|private_key.{0,400}service_account", re.S
    ),
    "OpenAI key": re.compile(rb"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{32,}\b"),
    "Slack token": re.compile(rb"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    "private key": re.compile(rb"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----"),
}
# Every pattern contains one of these literals. Substring tests run in C at memory speed,
# so a file holding none of them (nearly all) costs no regex search at all.
# Pattern name -> (literals in the bytes, literals in the lower-cased bytes).
_ANCHORS: dict[str, tuple[tuple[bytes, ...], tuple[bytes, ...]]] = {
    "W&B API key": ((), (b"wandb",)),
    "W&B API key in a netrc or URL": ((), (b"api.wandb.ai",)),
    "Hugging Face token": ((b"hf_",), ()),
    "AWS access key id": ((b"AKIA", b"ASIA"), ()),
    "AWS secret access key": ((), (b"aws_secret_access_key",)),
    "GitHub token": ((b"ghp_", b"gho_", b"ghu_", b"ghs_", b"ghr_", b"github_pat_"), ()),
    "GCP API key": ((b"AIza",), ()),
    "GCP service-account key": ((b"service_account",), ()),
    "OpenAI key": ((b"sk-",), ()),
    "Slack token": ((b"xox",), ()),
    "private key": ((b"PRIVATE KEY",), ()),
}


def line_of(raw: bytes, offset: int) -> int:
    return raw.count(b"\n", 0, offset) + 1


#: Every anchor at once: `map` over bound `__contains__` runs the substring tests in C, so
#: a file holding none of them (nearly all) is cleared without a Python-level loop.
_ALL_PLAIN = tuple(dict.fromkeys(a for plain, _ in _ANCHORS.values() for a in plain))
_ALL_FOLDED = tuple(dict.fromkeys(a for _, folded in _ANCHORS.values() for a in folded))


def find_secrets(raw: bytes) -> list[tuple[str, int]]:
    """(what, line) for every credential found."""
    if not any(map(raw.__contains__, _ALL_PLAIN)) and not any(map(raw.lower().__contains__, _ALL_FOLDED)):
        return []
    lower: bytes | None = None
    out = []
    for what, pattern in SECRET_PATTERNS.items():
        plain, folded = _ANCHORS[what]
        if not any(a in raw for a in plain):
            if not folded:
                continue
            if lower is None:
                lower = raw.lower()
            if not any(a in lower for a in folded):
                continue
        for m in pattern.finditer(raw):
            out.append((what, line_of(raw, m.start())))
    return out


def redact(text: str) -> str:
    """`text` with every credential the checker recognises, and `user:token@` in URLs, removed."""
    text = _URL_CREDENTIALS.sub("", text)
    raw = text.encode("utf-8")
    if not find_secrets(raw):
        return text
    for pattern in SECRET_PATTERNS.values():
        raw = pattern.sub(REDACTED.encode(), raw)
    return raw.decode("utf-8", "replace")
