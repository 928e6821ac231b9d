"""Issue 22, item 8: a compressed import file is inflated as a stream under its own cap
(rule parse-limits, `max_inflated_bytes`). Before, the whole file was read and inflated up to
the 1 GiB input cap, then parsed: a 155 KB `.json.gz` of one list of floats inflated to
160 MB and took 4.2 GB and 275 s to be refused (benchmarks/bounds_bench.py measures it)."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest
from checks.check_helpers import set_rule
from conftest import cli, git

from ledger.store.decode import CHUNK, GzipProblem, inflate_stream
from ledger.store.limits import MAX_INFLATED_BYTES


def bomb(values: int) -> bytes:
    """A pyperf file whose one run holds `values` samples, gzip'd: about 1,000 to 1."""
    body = b'{"version": "1.0", "benchmarks": [{"metadata": {"name": "x"}, "runs": [{"values": ['
    return gzip.compress(body + b"1.5," * values + b"1.5]}]}]}", 9)


class Counting(io.BytesIO):
    """A file that counts the compressed bytes read from it."""

    taken = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.taken += len(chunk)
        return chunk


@pytest.fixture(scope="module")
def big() -> bytes:
    return bomb(40_000_000)  # 160 MB inflated, 155 KB compressed


def test_the_cap_counts_inflated_bytes_as_they_come(big: bytes) -> None:
    handle = Counting(big)
    with pytest.raises(GzipProblem) as caught:
        inflate_stream(handle, 1_000_000)
    assert caught.value.too_big and "more than 1,000,000 bytes" in str(caught.value)
    # it stopped at the cap: one chunk read of a file many chunks long
    assert handle.taken == CHUNK < len(big) / 2, (handle.taken, len(big))


def test_members_and_padding_still_inflate_whole() -> None:
    two = gzip.compress(b"a" * 100_000) + gzip.compress(b"b" * 100_000) + b"\0" * 70_000
    assert inflate_stream(io.BytesIO(two), 200_000) == b"a" * 100_000 + b"b" * 100_000
    with pytest.raises(GzipProblem, match="more than 199,999"):
        inflate_stream(io.BytesIO(two), 199_999)
    with pytest.raises(GzipProblem, match="not gzip follows"):
        inflate_stream(io.BytesIO(gzip.compress(b"x") + b"\0\0junk"), 100)
    with pytest.raises(GzipProblem, match="cut short"):
        inflate_stream(io.BytesIO(gzip.compress(b"x" * 100_000)[:-200]), 10**6)
    with pytest.raises(GzipProblem, match="compressed bytes") as caught:
        inflate_stream(io.BytesIO(gzip.compress(b"x") + b"\0" * 200_000), 100, read_limit=100_000)
    assert caught.value.compressed


@pytest.mark.parametrize("cap", [None, 1_000_000])
def test_an_import_that_inflates_past_the_cap_is_refused_naming_file_and_cap(
    repo: Path, tmp_path: Path, big: bytes, cap: int | None
) -> None:
    """A 155 KB file that inflates to 160 MB under the default cap, and an 8 KB one under a cap
    set in ledger.yaml: exit 2, the file, the cap and the setting to raise; nothing written."""
    if cap is not None:
        set_rule(repo, "parse-limits", max_inflated_bytes=cap)
    path = tmp_path / "bench.json.gz"
    path.write_bytes(big if cap is None else bomb(2_000_000))
    result = cli(repo, "import", "pyperf", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    limit = cap or MAX_INFLATED_BYTES
    assert str(path) in result.stderr
    assert f"decompresses to more than {limit:,} bytes" in result.stderr
    assert "max_inflated_bytes" in result.stderr and "Traceback" not in result.stderr
    assert git(repo, "status", "--porcelain", "ledger/records").stdout == ""
