"""Input bytes as data, safely: gzip members inflated under an output limit, and JSON
numbers kept within a float's range. Shared by the importers (result files), the log
parser and the checker's artifact rules (gzip'd attachments)."""

from __future__ import annotations

import math
import zlib

GZIP_MAGIC = b"\x1f\x8b"


class GzipProblem(ValueError):
    """gzip data that does not inflate; `too_big` when it inflates past the limit (a bomb)."""

    def __init__(self, detail: str, *, too_big: bool = False):
        super().__init__(detail)
        self.too_big = too_big


def inflate(raw: bytes, limit: int) -> bytes:
    """What gzip data inflates to, every member of it: gzip allows members back to back
    (`cat a.gz b.gz`, pigz, log rotation), and a reader that stops after the first would judge
    (and scan for secrets) only part of the file. zlib by hand rather than `gzip.decompress`,
    which has no output limit. Raises GzipProblem."""
    out = bytearray()
    data = raw
    while True:
        inflater = zlib.decompressobj(wbits=31)
        try:
            out += inflater.decompress(data, limit + 1 - len(out))
        except zlib.error as exc:
            raise GzipProblem(str(exc)) from None
        if inflater.unconsumed_tail or len(out) > limit:
            raise GzipProblem(f"inflates to more than {limit:,} bytes", too_big=True)
        if not inflater.eof:
            raise GzipProblem("the compressed data is cut short")
        data = inflater.unused_data
        if not data.strip(b"\0"):  # the end, or the zero padding some writers leave
            return bytes(out)
        if data[:2] != GZIP_MAGIC:
            raise GzipProblem("data that is not gzip follows the last member")


class OutOfRange(ValueError):
    """A JSON number beyond what a float holds: no tool writes one, and arithmetic on it overflows."""

    def __init__(self, token: str):
        shown = token if len(token) <= 24 else f"{token[:12]}...{token[-6:]} ({len(token)} characters)"
        super().__init__(f"the number {shown}, beyond the range of a float (about 1.8e308)")
        self.token = token


def json_int(token: str) -> int:
    """A JSON integer; over 308 digits it is beyond a float's range (and Python's 4,300-digit limit)."""
    if len(token.lstrip("-")) > 308:
        raise OutOfRange(token)
    return int(token)


def json_float(token: str) -> float:
    """A JSON number with a fraction or exponent; one that rounds to infinity (1e400) is refused."""
    value = float(token)
    if math.isinf(value):
        raise OutOfRange(token)
    return value


#: The problem of JSON nested deeper than Python's reader follows (about a thousand levels).
NESTED = "nests lists or objects deeper than can be read"
