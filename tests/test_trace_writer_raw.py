"""The trace writer's raw path (hwprof.golden.raw_split and TraceWriter.raw_buffer/commit_raw).

Every record goes through a raw chunk buffer that is split and encoded by
compiled kernels; the files must be exactly those of the format's numpy
encoding (``_encode_column`` without bounds or scratch arrays), whose round
trips the tests of test_tracefile.py check.
"""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest
import zstandard

from hwprof.golden import raw_split
from hwprof.golden.tracefile import (
    COLUMNS,
    EDGE,
    RAW_DTYPE,
    TraceError,
    TraceReader,
    TraceWriter,
    _encode_column,
)
from tests.trace_records import read_all


def mixed_raw(rng: np.random.Generator, n: int) -> np.ndarray:
    """Raw records whose chunks take every column encoding (CONST, OFFSET 1/2/4, DICT, RAW)."""
    raw = np.zeros(n, RAW_DTYPE)
    third = n // 3
    raw["kind"][:third] = 0  # a constant kind column in the first chunks
    raw["kind"][third:] = rng.integers(0, EDGE + 1, n - third)
    raw["size"] = rng.choice(np.array([1, 2, 4, 8], np.uint8), n)
    pcs = np.array([0x401000, 0x401000 + 200, 0x7F00_0000_0000, 0xFFFF_FFFF_FFFF_FF00], np.uint64)
    raw["pc"][:third] = 0x401000 + rng.integers(0, 200, third).astype(np.uint64)  # OFFSET 1
    raw["pc"][third:] = rng.choice(pcs, n - third) + rng.integers(0, 3, n - third).astype(np.uint64)
    raw["addr"][: n // 2] = 0x10_0000 + rng.integers(0, 60_000, n // 2).astype(np.uint64)  # 2
    raw["addr"][n // 2 :] = rng.integers(0, 1 << 64, n - n // 2, dtype=np.uint64,
                                         endpoint=False)  # fmt: skip
    raw["value"] = rng.integers(0, 1 << 31, n).astype(np.uint64)  # OFFSET 4
    raw["value"][-7:] = np.iinfo(np.uint64).max
    return raw


def reference_payloads(raw: np.ndarray, chunk_records: int, level: int) -> list[bytes]:
    """Each chunk's payload from numpy columns through the format's numpy encoding."""
    compressor = zstandard.ZstdCompressor(level=level)
    payloads = []
    for lo in range(0, len(raw), chunk_records):
        part = raw[lo : lo + chunk_records]
        payloads.append(b"".join(
            _encode_column(np.ascontiguousarray(part[name]), compressor, dictionary=name == "pc")
            for name in COLUMNS))  # fmt: skip
    return payloads


def file_payloads(path) -> list[bytes]:
    reader = TraceReader(path)
    data = path.read_bytes()
    return [data[pos + 36 : pos + 36 + sum(lengths)] for pos, _, (_, *lengths) in reader._chunks]


def write_in_pieces(path, raw, rng, *, chunk_records, level=3, threads=2) -> None:
    data = raw.tobytes()
    cuts = sorted(rng.choice(len(data), 30, replace=False).tolist())
    with TraceWriter(path, header={"captured": "fixed"}, chunk_records=chunk_records,
                     level=level, threads=threads) as writer:  # fmt: skip
        for i, (lo, hi) in enumerate(zip([0, *cuts], [*cuts, len(data)], strict=True)):
            if i % 2:
                writer.write_raw(data[lo:hi])
                continue
            while lo < hi:  # the capture's way: read into the writer's buffer, then commit
                window = writer.raw_buffer()
                take = min(len(window), hi - lo)
                window[:take] = data[lo : lo + take]
                writer.commit_raw(take)
                lo += take
        writer.close()


@pytest.mark.parametrize("level, threads", [(3, 1), (3, 2), (1, 3)])
def test_raw_path_writes_the_numpy_encoding_byte_for_byte(tmp_path, seed, level, threads):
    rng = np.random.default_rng(seed)
    raw = mixed_raw(rng, 9000)
    path = tmp_path / "raw.trace"
    write_in_pieces(path, raw, rng, chunk_records=1000, level=level, threads=threads)
    expected = reference_payloads(raw, 1000, level)
    assert file_payloads(path) == expected
    assert {p[0] for p in expected} == {0, 1}  # kind columns both RAW and CONST
    got = read_all(TraceReader(path))
    for name in COLUMNS:
        np.testing.assert_array_equal(got[name], raw[name], err_msg=name)


def test_a_wrong_bound_or_narrowing_is_caught(tmp_path, seed, monkeypatch):
    """The byte comparison above fails for a split that gets a bound wrong."""
    rng = np.random.default_rng(seed)
    raw = mixed_raw(rng, 3000)
    real = raw_split.split_raw

    def off_by_one(records, out=None):
        columns, bounds, counts = real(records, out)
        lo, hi = bounds["addr"]
        return columns, bounds | {"addr": (lo + 1, hi)}, counts

    monkeypatch.setattr(raw_split, "split_raw", off_by_one)
    write_in_pieces(tmp_path / "bad.trace", raw, rng, chunk_records=1000)
    assert file_payloads(tmp_path / "bad.trace") != reference_payloads(raw, 1000, 3)
    monkeypatch.setattr(raw_split, "narrow", lambda column, base, dtype, out=None:
                        (column - column.dtype.type(base) - 1).astype(dtype))  # fmt: skip
    monkeypatch.setattr(raw_split, "split_raw", real)
    write_in_pieces(tmp_path / "bad2.trace", raw, rng, chunk_records=1000)
    assert file_payloads(tmp_path / "bad2.trace") != reference_payloads(raw, 1000, 3)


def test_split_and_narrow_match_numpy(seed):
    rng = np.random.default_rng(seed)
    raw = mixed_raw(rng, 5000)
    out = [np.full(6000, 0xAB, dtype=c.dtype) for c in raw_split.split_raw(raw[:1])[0]]
    columns, bounds, counts = raw_split.split_raw(raw, out=out)
    for name, column in zip(COLUMNS, columns, strict=True):
        np.testing.assert_array_equal(column, raw[name], err_msg=name)
        assert bounds[name] == (int(raw[name].min()), int(raw[name].max())), name
    np.testing.assert_array_equal(counts, np.bincount(raw["kind"], minlength=256))
    base = int(raw["addr"][:2500].min())
    for dtype in (np.uint16, np.uint32):
        np.testing.assert_array_equal(
            raw_split.narrow(raw["addr"][:2500].copy(), base, np.dtype(dtype)),
            (raw["addr"][:2500] - np.uint64(base)).astype(dtype))  # fmt: skip
    assert raw_split.split_raw(raw[:0])[1] == {}


def test_columns_and_raw_records_interleave_in_order(tmp_path, seed):
    rng = np.random.default_rng(seed)
    raw = mixed_raw(rng, 2500)
    path = tmp_path / "mixed.trace"
    with TraceWriter(path, header={}, chunk_records=700) as writer:
        writer.write_raw(raw[:900])
        writer.write(**{name: raw[name][900:1600] for name in COLUMNS})
        writer.write_raw(raw[1600:2000].tobytes())
        writer.write_raw(raw[2000:].view(np.uint8))  # an array of bytes
        writer.close()
    got = read_all(TraceReader(path))
    for name in COLUMNS:
        np.testing.assert_array_equal(got[name], raw[name], err_msg=name)


def test_raw_misuse_and_bad_kinds(tmp_path):
    writer = TraceWriter(tmp_path / "t.trace", header={}, chunk_records=10)
    assert len(writer.raw_buffer()) == 10 * RAW_DTYPE.itemsize
    with pytest.raises(ValueError, match="not the bytes of raw_buffer"):
        writer.commit_raw(10 * RAW_DTYPE.itemsize + 1)
    with pytest.raises(ValueError, match="must be of RAW_DTYPE"):
        writer.write_raw(np.zeros(4, np.uint64))
    writer.write_raw(np.zeros(1, RAW_DTYPE).tobytes()[:5])
    with pytest.raises(ValueError, match="after a raw record cut short"):
        writer.write(kind=[0], pc=[1])
    writer.abort()
    with pytest.raises(ValueError, match="closed"):
        writer.raw_buffer()
    # a kind the format does not have, in the raw stream: one line, no file
    for threads in (1, 2):
        path = tmp_path / f"k{threads}.trace"
        raw = np.zeros(25, RAW_DTYPE)
        raw["kind"][13] = EDGE + 3
        writer = TraceWriter(path, header={}, chunk_records=10, threads=threads)
        with pytest.raises(TraceError, match=f"record kind {EDGE + 3} in the raw stream"):
            with writer:
                writer.write_raw(raw)
                writer.close()
    assert sorted(os.listdir(tmp_path)) == []


def test_chunk_header_offsets_used_above(tmp_path):
    """file_payloads reads payloads at chunk start + 36 bytes: the layout of the docs."""
    path = tmp_path / "one.trace"
    with TraceWriter(path, header={}, chunk_records=4) as writer:
        writer.write_raw(np.zeros(4, RAW_DTYPE))
        writer.close()
    reader = TraceReader(path)
    ((pos, n, (_, *lengths)),) = reader._chunks
    data = path.read_bytes()
    assert data[pos : pos + 4] == b"CHNK" and n == 4
    assert struct.unpack_from("<5I", data, pos + 8) == tuple(lengths)
