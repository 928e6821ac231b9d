"""Redaction at capture: what a collector records never holds a credential.

The shapes are the checker's own (`ledger.checks.artifacts.SECRET_PATTERNS`), so whatever a
collector lets through is exactly what `ledger check` would refuse: one definition of a
secret, used at capture and at push.
"""

from __future__ import annotations

import re

_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")
REDACTED = "<redacted>"


def redact(text: str) -> str:
    """`text` with every credential the checker recognises, and `user:token@` in URLs, removed."""
    from .checks.artifacts import SECRET_PATTERNS, find_secrets

    text = _URL_CREDENTIALS.sub("", text)
    raw = text.encode("utf-8")
    if not find_secrets(raw):
        return text
    for pattern in SECRET_PATTERNS.values():
        raw = pattern.sub(REDACTED.encode(), raw)
    return raw.decode("utf-8", "replace")
