"""The trace writer's chunk paths (TraceWriter.write and write_chunk, hwprof.traces.chunk_columns).

Records reach the encoder either through :meth:`TraceWriter.write` (copied into
reused column buffers) or as whole chunks of column arrays
(:meth:`TraceWriter.write_chunk`: a capture's shared-memory blocks, not copied);
each chunk's bounds and kind counts come from ``chunk_columns``. The files must
be exactly those of the format's plain numpy encoding (``_encode_column``
without bounds or scratch arrays), whose round trips test_traces_format.py checks.
"""

from __future__ import annotations

import os
import struct
import threading

import numpy as np
import pytest
import zstandard

from hwprof.traces import chunk_columns
from hwprof.traces.tracefile import (
    COLUMNS,
    DTYPES,
    EDGE,
    TraceError,
    TraceReader,
    TraceWriter,
    _encode_column,
)
from tests.trace_records import read_all


def mixed_records(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Records whose chunks take every column encoding (CONST, OFFSET 1/2/4, DICT, RAW)."""
    third = n // 3
    kind = np.zeros(n, np.uint8)  # a constant kind column in the first chunks
    kind[third:] = rng.integers(0, EDGE + 1, n - third)
    size = rng.choice(np.array([1, 2, 4, 8], np.uint8), n)
    pcs = np.array([0x401000, 0x401000 + 200, 0x7F00_0000_0000, 0xFFFF_FFFF_FFFF_FF00], np.uint64)
    pc = np.empty(n, np.uint64)
    pc[:third] = 0x401000 + rng.integers(0, 200, third).astype(np.uint64)  # OFFSET 1
    pc[third:] = rng.choice(pcs, n - third) + rng.integers(0, 3, n - third).astype(np.uint64)
    addr = np.empty(n, np.uint64)
    addr[: n // 2] = 0x10_0000 + rng.integers(0, 60_000, n // 2).astype(np.uint64)  # OFFSET 2
    addr[n // 2 :] = rng.integers(0, 1 << 64, n - n // 2, dtype=np.uint64, endpoint=False)
    value = rng.integers(0, 1 << 31, n).astype(np.uint64)  # OFFSET 4
    value[-7:] = np.iinfo(np.uint64).max
    return {"kind": kind, "size": size, "pc": pc, "addr": addr, "value": value}


def reference_payloads(records: dict, bounds: list[int], level: int) -> list[bytes]:
    """Each chunk's payload (chunks ``records[bounds[i]:bounds[i + 1]]``), plain numpy encoding."""
    compressor = zstandard.ZstdCompressor(level=level)
    return [b"".join(_encode_column(np.ascontiguousarray(records[name][lo:hi]), compressor,
                                    dictionary=name == "pc") for name in COLUMNS)
            for lo, hi in zip(bounds, bounds[1:], strict=False)]  # fmt: skip


def file_payloads(path) -> list[bytes]:
    reader = TraceReader(path)
    data = path.read_bytes()
    return [data[pos + 36 : pos + 36 + sum(lengths)] for pos, _, (_, *lengths) in reader._chunks]


def write_both_ways(path, records, rng, *, chunk_records, level=3, threads=2) -> list[int]:
    """Pieces alternately through write() and write_chunk(); the chunk boundaries expected."""
    n = len(records["kind"])
    cuts = sorted(rng.choice(np.arange(1, n), 12, replace=False).tolist())
    bounds = [0]
    with TraceWriter(path, header={"captured": "fixed"}, chunk_records=chunk_records,
                     level=level, threads=threads) as writer:  # fmt: skip
        for i, (lo, hi) in enumerate(zip([0, *cuts], [*cuts, n], strict=True)):
            if i % 2:
                writer.write_chunk(*(records[name][lo:hi].copy() for name in COLUMNS))
                bounds += [lo, hi] if bounds[-1] != lo else [hi]
                continue
            writer.write(**{name: records[name][lo:hi] for name in COLUMNS})
            at = bounds[-1]
            while hi - at > chunk_records:
                at += chunk_records
                bounds.append(at)
        writer.close()
    if bounds[-1] != n:
        bounds.append(n)
    return bounds


@pytest.mark.parametrize("level, threads", [(3, 1), (3, 2), (1, 3)])
def test_chunk_paths_write_the_numpy_encoding_byte_for_byte(tmp_path, seed, level, threads):
    rng = np.random.default_rng(seed)
    records = mixed_records(rng, 9000)
    path = tmp_path / "c.trace"
    bounds = write_both_ways(path, records, rng, chunk_records=1000, level=level, threads=threads)
    expected = reference_payloads(records, bounds, level)
    assert file_payloads(path) == expected
    assert {p[0] for p in expected} == {0, 1}  # kind columns both RAW and CONST
    got = read_all(TraceReader(path))
    for name in COLUMNS:
        np.testing.assert_array_equal(got[name], records[name], err_msg=name)


def test_a_wrong_bound_or_narrowing_is_caught(tmp_path, seed, monkeypatch):
    """The byte comparison above fails for a wrong bound or a wrong narrowing."""
    rng = np.random.default_rng(seed)
    records = mixed_records(rng, 3000)
    real = chunk_columns.bounds_and_counts

    def off_by_one(columns):
        bounds, counts = real(columns)
        lo, hi = bounds["addr"]
        return bounds | {"addr": (lo + 1, hi)}, counts

    monkeypatch.setattr(chunk_columns, "bounds_and_counts", off_by_one)
    bounds = write_both_ways(tmp_path / "bad.trace", records, rng, chunk_records=1000)
    assert file_payloads(tmp_path / "bad.trace") != reference_payloads(records, bounds, 3)
    monkeypatch.setattr(chunk_columns, "narrow", lambda column, base, dtype, out=None:
                        (column - column.dtype.type(base) - 1).astype(dtype))  # fmt: skip
    monkeypatch.setattr(chunk_columns, "bounds_and_counts", real)
    bounds = write_both_ways(tmp_path / "bad2.trace", records, rng, chunk_records=1000)
    assert file_payloads(tmp_path / "bad2.trace") != reference_payloads(records, bounds, 3)


def test_bounds_counts_and_narrow_match_numpy(seed):
    rng = np.random.default_rng(seed)
    records = mixed_records(rng, 5000)
    columns = [records[name] for name in COLUMNS]
    bounds, counts = chunk_columns.bounds_and_counts(columns)
    for name in COLUMNS:
        lo, hi = int(records[name].min()), int(records[name].max())
        if hi - lo >= 1 << 32:  # addr (half of it random 64-bit numbers) and pc (pcs near
            # 2**64): bounds inside the column's, at least 2**32 apart (those of a sample
            # when it spans that much; no narrow encoding fits either way)
            assert lo <= bounds[name][0] and bounds[name][1] <= hi, name
            assert bounds[name][1] - bounds[name][0] >= 1 << 32, name
        else:
            assert bounds[name] == (lo, hi), name
    # value spans 2**64 only through its last 7 elements, which no sample of every 64th
    # element holds: its bounds are the exact ones, found by the full passes
    assert bounds["value"] == (int(records["value"].min()), int(records["value"].max()))
    np.testing.assert_array_equal(counts, np.bincount(records["kind"], minlength=256))
    base = int(records["addr"][:2500].min())
    out = np.full(6000, 0xAB, np.uint32)
    for dtype, into in ((np.uint16, None), (np.uint32, out)):
        np.testing.assert_array_equal(
            chunk_columns.narrow(records["addr"][:2500], base, np.dtype(dtype), into),
            (records["addr"][:2500] - np.uint64(base)).astype(dtype))  # fmt: skip
    assert chunk_columns.bounds_and_counts([c[:0] for c in columns])[0] == {}


def test_a_wide_column_whose_sample_is_narrow_gets_its_exact_bounds(seed):
    """Elements the sample skips still count: one far value between sampled ones makes the
    column wide (RAW), never an OFFSET that would wrap it."""
    rng = np.random.default_rng(seed)
    n = 100 * chunk_columns.SAMPLE_STEP
    pc = 0x401000 + rng.integers(0, 1000, n).astype(np.uint64)
    far = int(rng.integers(1, chunk_columns.SAMPLE_STEP))  # not a multiple of the step
    pc[far] = 0x7F00_0000_0000
    columns = [np.zeros(n, np.uint8), np.zeros(n, np.uint8), pc, pc.copy(), pc.copy()]
    bounds, counts = chunk_columns.bounds_and_counts(columns)
    for name in ("pc", "addr", "value"):
        assert bounds[name] == (int(pc.min()), 0x7F00_0000_0000), name
    assert counts[0] == n and counts.sum() == n
    compressor = zstandard.ZstdCompressor(level=1)
    block = _encode_column(pc, compressor, bounds=bounds["addr"])
    assert block == _encode_column(pc, compressor) and block[0] == 0  # RAW


def test_counts_of_kinds_past_the_format_s_own(seed):
    """The counts are np.bincount's for every kind code, the writer's error case included."""
    rng = np.random.default_rng(seed)
    kind = rng.integers(0, 256, 5000).astype(np.uint8)
    columns = [kind, *(np.zeros(5000, DTYPES[name]) for name in COLUMNS[1:])]
    bounds, counts = chunk_columns.bounds_and_counts(columns)
    np.testing.assert_array_equal(counts, np.bincount(kind, minlength=256))
    assert bounds["kind"] == (int(kind.min()), int(kind.max()))


def test_write_chunk_releases_after_encoding_in_a_worker(tmp_path):
    """release() comes once per chunk, from the thread that encoded it, before the file is
    closed; with one thread, during the call itself."""
    for threads in (1, 2):
        calls = []
        columns = [np.arange(100, dtype=DTYPES[name]) % (EDGE + 1) if name == "kind"
                   else np.arange(100, dtype=DTYPES[name]) for name in COLUMNS]  # fmt: skip
        with TraceWriter(tmp_path / f"r{threads}.trace", header={}, threads=threads) as writer:
            writer.write_chunk(*columns, release=lambda calls=calls: calls.append(
                threading.get_ident()))
            if threads == 1:
                assert calls == [threading.get_ident()]
            writer.close()
        assert len(calls) == 1
        if threads > 1:
            assert calls[0] != threading.get_ident()
        assert read_all(TraceReader(tmp_path / f"r{threads}.trace"))["pc"].tolist() == list(
            range(100))  # fmt: skip


def test_write_chunk_misuse_and_bad_kinds(tmp_path):
    writer = TraceWriter(tmp_path / "t.trace", header={}, chunk_records=10)
    good = [np.zeros(4, DTYPES[name]) for name in COLUMNS]
    with pytest.raises(ValueError, match="column pc is not a contiguous uint64"):
        writer.write_chunk(*good[:2], good[2].astype(np.int64), *good[3:])
    with pytest.raises(ValueError, match="column addr is not a contiguous"):
        writer.write_chunk(*good[:3], np.zeros(8, np.uint64)[::2], good[4])
    with pytest.raises(ValueError, match="column value is not a contiguous"):
        writer.write_chunk(*good[:4], np.zeros(5, np.uint64))
    with pytest.raises(ValueError, match="0 records"):
        writer.write_chunk(*(c[:0] for c in good))
    writer.abort()
    with pytest.raises(ValueError, match="closed"):
        writer.write_chunk(*good)
    # a kind the format does not have: one line, no file, and the chunk is not released
    for threads in (1, 2):
        path = tmp_path / f"k{threads}.trace"
        kind = np.zeros(25, np.uint8)
        kind[13] = EDGE + 3
        released = []
        writer = TraceWriter(path, header={}, chunk_records=10, threads=threads)
        with pytest.raises(TraceError, match=f"record kind {EDGE + 3} is not one of"):
            with writer:
                zeros = (np.zeros(25, DTYPES[name]) for name in COLUMNS[1:])
                writer.write_chunk(kind, *zeros, release=lambda seen=released: seen.append(1))
                writer.close()
        assert released == []
    assert sorted(os.listdir(tmp_path)) == []


def test_chunk_header_offsets_used_above(tmp_path):
    """file_payloads reads payloads at chunk start + 36 bytes: the layout of the docs."""
    path = tmp_path / "one.trace"
    with TraceWriter(path, header={}, chunk_records=4) as writer:
        writer.write(kind=np.zeros(4, np.uint8), pc=np.zeros(4, np.uint64))
        writer.close()
    reader = TraceReader(path)
    ((pos, n, (_, *lengths)),) = reader._chunks
    data = path.read_bytes()
    assert data[pos : pos + 4] == b"CHNK" and n == 4
    assert struct.unpack_from("<5I", data, pos + 8) == tuple(lengths)
