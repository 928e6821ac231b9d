"""Input bytes as data, safely: gzip members inflated under an output limit, and JSON
numbers kept within a float's range. Shared by the importers (result files), the log
parser and the checker's artifact rules (gzip'd attachments)."""

from __future__ import annotations

import io
import math
import zlib
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"


class GzipProblem(ValueError):
    """gzip data that does not inflate; `too_big` when it inflates past the limit (a bomb), or
    (`compressed`) when the file itself is larger than the read limit."""

    def __init__(self, detail: str, *, too_big: bool = False, compressed: bool = False):
        super().__init__(detail)
        self.too_big = too_big
        self.compressed = compressed


#: How much compressed data one step of the inflate reads.
CHUNK = 1 << 16


def inflate(raw: bytes, limit: int) -> bytes:
    """What gzip data inflates to (see `inflate_stream`). Raises GzipProblem."""
    return inflate_stream(io.BytesIO(raw), limit)


def inflate_stream(handle: BinaryIO, limit: int, read_limit: int | None = None) -> bytes:
    """What the gzip data read from `handle` inflates to, every member of it: gzip allows
    members back to back (`cat a.gz b.gz`, pigz, log rotation), and a reader that stops after
    the first would judge (and scan for secrets) only part of the file.

    Streamed: compressed data is read CHUNK bytes at a time and each step inflates at most what
    is left of `limit`, so the count is of inflated bytes as they come and a bomb stops at the
    cap, never holding more than the cap (a 120 KB file that inflates to 160 MB used to be read,
    inflated and parsed whole: 4 GB). `read_limit` bounds the compressed bytes read (zero
    padding included). zlib by hand rather than `gzip`, which has no output limit. Raises
    GzipProblem."""
    out = bytearray()
    read = 0

    def more() -> bytes:
        nonlocal read
        chunk = handle.read(CHUNK)
        read += len(chunk)
        if read_limit is not None and read > read_limit:
            raise GzipProblem(f"is more than {read_limit:,} compressed bytes", too_big=True, compressed=True)
        return chunk

    data = more()
    while True:
        inflater = zlib.decompressobj(wbits=31)
        while True:
            try:
                out += inflater.decompress(data, limit + 1 - len(out))
            except zlib.error as exc:
                raise GzipProblem(str(exc)) from None
            if len(out) > limit:
                raise GzipProblem(f"inflates to more than {limit:,} bytes", too_big=True)
            if inflater.eof:
                break
            data = inflater.unconsumed_tail or more()
            if not data:
                raise GzipProblem("the compressed data is cut short")
        data = inflater.unused_data or more()
        if not data:
            return bytes(out)
        if data[:1] == b"\0":
            # The zero padding some writers leave: zeros to the end, nothing else.
            while data:
                if data.strip(b"\0"):
                    raise GzipProblem("data that is not gzip follows the last member")
                data = more()
            return bytes(out)
        if len(data) < 2:
            data += more()
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
