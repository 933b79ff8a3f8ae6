"""The trace format (hwprof.traces.tracefile): round trip, streaming, every defect -> TraceError."""

from __future__ import annotations

import gzip
import json
import os
import re
import struct
import tracemalloc
import zlib
from collections import Counter

import numpy as np
import pytest
import zstandard

from hwprof.golden.hashing import pack_key
from hwprof.traces import lackey as legacy
from hwprof.traces.keys import EDGE_KINDS, trace_keys
from hwprof.traces.lackey import LegacyEdgeReader, open_for_convert
from hwprof.traces.tracefile import (
    BRANCH_KINDS,
    COLUMNS,
    CONST,
    DICT,
    EDGE,
    KIND_NAMES,
    LOAD,
    OFFSET,
    RAW,
    RETURN,
    Chunk,
    TraceError,
    TraceReader,
    TraceWriter,
    _decode_column,
    _encode_column,
    open_trace,
    parse_kinds,
    recorded_instructions,
)
from tests.trace_records import random_records, read_all, write_records


def one_line_error(excinfo, path) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    assert str(path) in message
    return message


def test_round_trip_every_column_and_kind_over_several_chunks(tmp_path, seed):
    rng = np.random.default_rng(seed)
    records = random_records(rng, 3500)
    path = write_records(tmp_path / "t.trace", records, chunk_records=1000, pieces=4,
                         footer={"tool": {"instructions": 123}})  # fmt: skip
    with open_trace(path) as reader:
        assert isinstance(reader, TraceReader)
        chunks = list(reader.chunks())
        assert [len(c) for c in chunks] == [1000, 1000, 1000, 500]
        for threads in (1, 2, 3):
            got = read_all(reader, threads=threads)
            for column in COLUMNS:
                np.testing.assert_array_equal(got[column], records[column], err_msg=column)
        assert reader.header["format_version"] == 2 == reader.version
        assert reader.header["program"] == "/bin/test"
        assert reader.header["argv"] == ["test", "-x"]
        assert reader.header["captured"].startswith("20")
        expected = Counter(KIND_NAMES[int(k)] for k in records["kind"])
        assert reader.footer["counts"] == dict(expected)
        assert len(expected) == 9  # every kind was exercised
        assert reader.footer["records"] == reader.records == 3500
        assert reader.footer["tool"] == {"instructions": 123}


def test_select_and_kind_filter_keep_program_order(tmp_path, seed):
    rng = np.random.default_rng(seed)
    records = random_records(rng, 2500)
    path = write_records(tmp_path / "t.trace", records, chunk_records=700)
    mask = np.isin(records["kind"], BRANCH_KINDS)
    with open_trace(path) as reader:
        got = read_all(reader, kinds="branches")
        for column in COLUMNS:
            np.testing.assert_array_equal(got[column], records[column][mask])
        loads = read_all(reader, kinds=[LOAD])
        np.testing.assert_array_equal(loads["value"], records["value"][records["kind"] == LOAD])
    chunk = Chunk(*(records[c] for c in COLUMNS))
    picked = chunk.select([LOAD, EDGE])
    keep = (records["kind"] == LOAD) | (records["kind"] == EDGE)
    np.testing.assert_array_equal(picked.pc, records["pc"][keep])
    assert parse_kinds("loads,branches") == (0, 1, 2, 3, 4, 5, 6)
    with pytest.raises(ValueError, match="unknown record kind 'stores'"):
        parse_kinds("loads,stores")


def test_value_tuples_and_packed_keys(tmp_path, seed):
    rng = np.random.default_rng(seed)
    records = random_records(rng, 3000)
    path = write_records(tmp_path / "t.trace", records, chunk_records=800)
    loads = records["kind"] == LOAD
    with open_trace(path) as reader:
        pcs, values = zip(*reader.value_tuples(), strict=True)
        np.testing.assert_array_equal(np.concatenate(pcs), records["pc"][loads])
        np.testing.assert_array_equal(np.concatenate(values), records["value"][loads])
        keys = np.concatenate(list(trace_keys(reader, pc_bits=20, value_bits=40, value_map="low")))
        edge_keys = np.concatenate(list(trace_keys(path, EDGE_KINDS, value_map="low")))
    expected = [
        pack_key(int(p) % (1 << 20), int(v) % (1 << 40), 40)
        for p, v in zip(records["pc"][loads], records["value"][loads], strict=True)
    ]
    assert keys.tolist() == expected
    edges = np.isin(records["kind"], EDGE_KINDS)
    assert edges.any()
    expected = [
        pack_key(int(p) % (1 << 32), int(a) % (1 << 32), 32)
        for p, a in zip(records["pc"][edges], records["addr"][edges], strict=True)
    ]
    assert edge_keys.tolist() == expected


def test_write_chunk_keeps_the_order_of_write(tmp_path, seed):
    """Whole chunks handed over as columns land between the records written before and after."""
    rng = np.random.default_rng(seed)
    records = random_records(rng, 1500, kinds=range(8))
    released = []
    with TraceWriter(tmp_path / "c.trace", header={}, chunk_records=512) as writer:
        writer.write(**{c: records[c][:700] for c in COLUMNS})
        writer.write_chunk(*(np.ascontiguousarray(records[c][700:1300]) for c in COLUMNS),
                           release=lambda: released.append(True))  # fmt: skip
        writer.write(**{c: records[c][1300:] for c in COLUMNS})
        writer.close()
    assert released == [True]
    with open_trace(tmp_path / "c.trace") as reader:
        assert [n for _, n, _ in reader._chunks] == [512, 188, 600, 200]
        got = read_all(reader)
    for column in COLUMNS:
        np.testing.assert_array_equal(got[column], records[column])


def test_chunks_stream_with_bounded_memory(tmp_path):
    n, per_chunk = 2_000_000, 1 << 17
    rng = np.random.default_rng(5)
    with TraceWriter(tmp_path / "big.trace", header={}, chunk_records=per_chunk) as writer:
        for _ in range(n // 500_000):
            writer.write(kind=0, size=8, pc=rng.integers(0, 1 << 20, 500_000),
                         addr=rng.integers(0, 1 << 40, 500_000),
                         value=rng.integers(0, 1 << 62, 500_000))  # fmt: skip
        writer.close()
    raw_bytes = n * 26  # what the whole trace takes decompressed
    with open_trace(tmp_path / "big.trace") as reader:
        for threads in (1, 2):
            tracemalloc.start()
            try:
                sizes = [len(c) for c in reader.chunks(threads=threads)]
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
            assert sum(sizes) == n and max(sizes) == per_chunk
            # a few chunks (the caller's, the next, their compressed bytes), not the trace
            assert peak < 6 * per_chunk * 26 < raw_bytes / 2, (threads, peak)


def test_writer_aborted_by_an_exception_leaves_nothing(tmp_path):
    path = tmp_path / "t.trace"
    path.write_bytes(b"an older file")
    with pytest.raises(RuntimeError):
        with TraceWriter(path, header={}, chunk_records=10) as writer:
            writer.write(kind=np.zeros(100, np.uint8), pc=np.arange(100))
            assert len([p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]) == 1
            assert path.read_bytes() == b"an older file"
            raise RuntimeError("capture failed")
    assert sorted(os.listdir(tmp_path)) == ["t.trace"]
    assert path.read_bytes() == b"an older file"  # an aborted write never replaces a file
    writer = TraceWriter(tmp_path / "u.trace", header={})
    writer.write(kind=0, pc=[1, 2, 3])
    assert not (tmp_path / "u.trace").exists()  # not before close()
    writer.abort()
    assert sorted(os.listdir(tmp_path)) == ["t.trace"]


def test_writer_rejects_bad_columns_and_unwritable_paths(tmp_path):
    with TraceWriter(tmp_path / "t.trace", header={}) as writer:
        with pytest.raises(ValueError, match="record kind 9"):
            writer.write(kind=[0, 9], pc=[1, 2])
        with pytest.raises(
            ValueError, match=r"columns have different shapes \(kind \(2,\), pc \(3,\)\)"
        ):
            writer.write(kind=[0, 0], pc=[1, 2, 3])
        with pytest.raises(ValueError, match="column value does not fit"):
            writer.write(kind=[0], pc=[1], value=[-1])
        writer.abort()
    with pytest.raises(TraceError, match="cannot write"):
        TraceWriter(tmp_path / "missing-dir" / "t.trace", header={})
    with pytest.raises(ValueError, match="chunk_records"):
        TraceWriter(tmp_path / "t.trace", header={}, chunk_records=0)


@pytest.fixture
def small_trace(tmp_path):
    rng = np.random.default_rng(11)
    records = random_records(rng, 40)
    return write_records(tmp_path / "small.trace", records, chunk_records=15,
                         footer={"tool": "x"})  # fmt: skip


def read_everything(path) -> int:
    with open_trace(path) as reader:
        return sum(len(c) for c in reader.chunks())


def test_truncated_at_every_offset(small_trace, tmp_path):
    data = small_trace.read_bytes()
    assert read_everything(small_trace) == 40
    for offset in range(len(data)):
        cut = tmp_path / f"cut{offset}.trace"  # a new file each time: rewriting one is slow
        cut.write_bytes(data[:offset])
        with pytest.raises(TraceError) as excinfo:
            read_everything(cut)
        message = one_line_error(excinfo, cut)
        assert ("truncated" in message) if offset else ("empty file" in message), (offset, message)
        cut.unlink()


def test_every_corrupted_byte_is_caught(small_trace, tmp_path, seed):
    data = small_trace.read_bytes()
    rng = np.random.default_rng(seed)
    for offset in range(len(data)):
        bad = tmp_path / f"bad{offset}.trace"
        flipped = bytearray(data)
        flipped[offset] ^= int(rng.integers(1, 256))
        bad.write_bytes(bytes(flipped))
        with pytest.raises(TraceError) as excinfo:
            read_everything(bad)
        one_line_error(excinfo, bad)
        bad.unlink()


def test_corrupt_chunk_payload_is_named(small_trace, tmp_path):
    data = bytearray(small_trace.read_bytes())
    header_end = 16 + struct.unpack_from("<I", data, 12)[0] + 4
    data[header_end + 36 + 5] ^= 0x40  # inside chunk 0's compressed kind column
    bad = tmp_path / "bad.trace"
    bad.write_bytes(bytes(data))
    reader = open_trace(bad)  # the chunk headers are intact: opening works
    for threads in (1, 2):
        with pytest.raises(TraceError, match=r"corrupt chunk 0 at byte \d+ \(checksum mismatch\)"):
            list(reader.chunks(threads=threads))


def test_wrong_version_magic_empty_and_legacy(small_trace, tmp_path):
    data = bytearray(small_trace.read_bytes())
    data[8:10] = struct.pack("<H", 3)
    newer = tmp_path / "newer.trace"
    newer.write_bytes(bytes(data))
    with pytest.raises(TraceError) as excinfo:
        open_trace(newer)
    assert "format version 3 is newer than the version this hwprof reads (2)" in one_line_error(
        excinfo, newer)  # fmt: skip
    for name, content, what in [
        ("elf", b"\x7fELF" + bytes(100), "not a trace file"),
        ("text", b"401000 402000\n", "not a trace file"),
        ("empty", b"", "empty file"),
    ]:
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(TraceError) as excinfo:
            open_trace(path)
        assert what in one_line_error(excinfo, path)
    with pytest.raises(TraceError, match="cannot open"):
        open_trace(tmp_path / "missing.trace")
    old = tmp_path / "old.trace.gz"
    legacy.write_trace(old, [1, 2], [3, 4])
    with pytest.raises(TraceError) as excinfo:
        TraceReader(old)  # the binary reader alone says what the file is
    assert "hwprof trace convert" in one_line_error(excinfo, old)


def test_legacy_gzip_text_reads_as_edges(tmp_path, seed):
    rng = np.random.default_rng(seed)
    pcs = rng.integers(0, 1 << 48, 2500, dtype=np.uint64)
    dests = rng.integers(0, 1 << 64, 2500, dtype=np.uint64)
    path = tmp_path / "old.trace.gz"
    legacy.write_trace(path, pcs, dests, comment="gzip: gzip -c input")
    with pytest.raises(TraceError, match="hwprof trace convert"):
        open_trace(path)
    reader = open_for_convert(path)
    assert isinstance(reader, LegacyEdgeReader)
    reader.chunk_records = 1000
    chunks = list(reader.chunks())
    assert [len(c) for c in chunks] == [1000, 1000, 500]
    got = read_all(reader)
    assert set(got["kind"].tolist()) == {EDGE}
    np.testing.assert_array_equal(got["pc"], pcs)
    np.testing.assert_array_equal(got["addr"], dests)
    assert reader.footer["counts"] == {"edge": 2500}
    assert reader.header["comment"] == "gzip: gzip -c input"
    assert list(reader.chunks(kinds="loads")) == []
    # keys of the edges: (source mod 2^32) << 32 | (destination mod 2^32)
    expected = [(int(p) % (1 << 32)) << 32 | int(d) % (1 << 32)
                for p, d in zip(pcs, dests, strict=True)]  # fmt: skip
    assert np.concatenate(list(trace_keys(reader, "auto", value_map="low"))).tolist() == expected


def test_auto_keys_are_the_loads_else_the_edges(tmp_path, seed):
    records = random_records(np.random.default_rng(seed), 3000, kinds=range(8))
    path = write_records(tmp_path / "t.trace", records, chunk_records=1000)
    loads = records["kind"] == LOAD
    pairs = zip(records["pc"][loads], records["value"][loads], strict=True)
    expected = [(int(p) % (1 << 32)) << 32 | int(v) % (1 << 32) for p, v in pairs]
    assert np.concatenate(list(trace_keys(path, "auto", value_map="low"))).tolist() == expected
    # no loads, no edges and no control transfer but returns: nothing to key
    returns = {c: records[c][records["kind"] == RETURN] for c in COLUMNS}
    path = write_records(tmp_path / "r.trace", returns, chunk_records=1000)
    assert [k.tolist() for k in trace_keys(path, "auto")] == [[]]


@pytest.mark.parametrize("content, what", [
    (b"1 2\nzz 3\n", ":2: expected two hex numbers"),
    (b"# only a comment\n", "no tuples"),
])  # fmt: skip
def test_bad_legacy_files(tmp_path, content, what):
    path = tmp_path / "old.trace.gz"
    path.write_bytes(gzip.compress(content))
    with pytest.raises(TraceError) as excinfo:
        open_for_convert(path)
    assert what in one_line_error(excinfo, path)
    path.write_bytes(gzip.compress(b"1 2\n" * 1000)[:-30])  # truncated gzip
    with pytest.raises(TraceError) as excinfo:
        open_for_convert(path)
    assert "not a readable gzip'd text trace" in one_line_error(excinfo, path)


@pytest.mark.parametrize("column, encoding, width", [
    (np.full(3000, 0xDEAD_BEEF_0000_0001, np.uint64), CONST, 8),
    (np.full(3000, 5, np.uint8), CONST, 1),
    (np.arange(3000, dtype=np.uint64) % 200 + (1 << 63), OFFSET, 1),
    (np.arange(3000, dtype=np.uint64) * 17 + 0x7FFD_0000_0000, OFFSET, 2),
    (np.arange(3000, dtype=np.uint64) * 4099 + 0x40_0000, OFFSET, 4),
    (np.arange(3000, dtype=np.uint64) % 300 * (1 << 40), DICT, 2),
    (np.arange(3000, dtype=np.uint64) % 100 * (1 << 40) + 3, DICT, 1),
    (np.arange(3000, dtype=np.uint64) * (1 << 40), RAW, 8),  # 3000 distinct of 3000
    (np.arange(3000, dtype=np.uint8), RAW, 1),
])  # fmt: skip
def test_every_column_encoding_round_trips(column, encoding, width):
    compressor, decompressor = zstandard.ZstdCompressor(), zstandard.ZstdDecompressor()
    block = _encode_column(column, compressor, dictionary=True)
    assert block[:2] == bytes([encoding, width])
    got = _decode_column(memoryview(block), len(column), column.dtype, decompressor)
    assert got.dtype == column.dtype
    np.testing.assert_array_equal(got, column)


def test_all_encodings_through_a_file(tmp_path):
    n = 5000
    rng = np.random.default_rng(7)
    records = {"kind": np.zeros(n, np.uint8), "size": np.full(n, 8, np.uint8),
               "pc": rng.choice(np.array([0x401000, 0x7F12_3456_7000], np.uint64), n),
               "addr": 0x7FFD_0000_0000 + rng.integers(0, 1 << 16, n).astype(np.uint64),
               "value": rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False)}  # fmt: skip
    path = write_records(tmp_path / "t.trace", records, chunk_records=2000)
    with open_trace(path) as reader:
        got = read_all(reader)
    for column in COLUMNS:
        np.testing.assert_array_equal(got[column], records[column])


def write_version_1(path, records: dict, chunk_records: int) -> None:
    """A version-1 file built here byte by byte (each column one zstd frame of its raw array)."""
    compress = zstandard.ZstdCompressor().compress
    header = json.dumps({"format_version": 1, "program": "old"}).encode()
    out = [b"HWPTRACE", struct.pack("<HHI", 1, 0, len(header)), header,
           struct.pack("<I", zlib.crc32(header))]  # fmt: skip
    n = len(records["kind"])
    for lo in range(0, n, chunk_records):
        frames = [compress(np.ascontiguousarray(records[c][lo : lo + chunk_records]).tobytes())
                  for c in COLUMNS]  # fmt: skip
        payload = b"".join(frames)
        head = struct.pack("<4sI5II", b"CHNK", min(chunk_records, n - lo),
                           *map(len, frames), zlib.crc32(payload))  # fmt: skip
        out += [head, struct.pack("<I", zlib.crc32(head)), payload]
    footer = json.dumps({"records": n, "counts": {}}).encode()
    chunks = -(-n // chunk_records)
    out += [b"TEND", footer, struct.pack("<IIQQ8s", len(footer), zlib.crc32(footer), n, chunks,
                                         b"HWPTEND\0")]  # fmt: skip
    path.write_bytes(b"".join(out))


def test_version_1_files_stay_readable(tmp_path, seed):
    records = random_records(np.random.default_rng(seed), 2500)
    path = tmp_path / "v1.trace"
    write_version_1(path, records, 1000)
    with open_trace(path) as reader:
        assert reader.version == 1 and reader.header["program"] == "old"
        got = read_all(reader)
    for column in COLUMNS:
        np.testing.assert_array_equal(got[column], records[column])


def test_version_1_header_with_version_2_columns(tmp_path, seed):
    # files written on the development branch before the version went to 2
    records = random_records(np.random.default_rng(seed), 2500)
    data = write_records(tmp_path / "v2.trace", records, chunk_records=1000).read_bytes()
    hlen = struct.unpack_from("<I", data, 12)[0]
    header = json.loads(data[16 : 16 + hlen]) | {"format_version": 1}
    body = json.dumps(header).encode()
    old = tmp_path / "v1.trace"
    old.write_bytes(b"HWPTRACE" + struct.pack("<HHI", 1, 0, len(body)) + body
                    + struct.pack("<I", zlib.crc32(body)) + data[16 + hlen + 4 :])  # fmt: skip
    with open_trace(old) as reader:
        assert reader.version == 1
        got = read_all(reader)
    for column in COLUMNS:
        np.testing.assert_array_equal(got[column], records[column])
    mislabeled = tmp_path / "mislabeled.trace"
    mislabeled.write_bytes(data[:8] + struct.pack("<H", 1) + data[10:])  # v2 body, v1 label
    with pytest.raises(TraceError, match="corrupt header"):
        open_trace(mislabeled)


@pytest.mark.parametrize("threads", [1, 2])
def test_bad_column_block_with_good_checksums_is_named(small_trace, tmp_path, threads):
    data = bytearray(small_trace.read_bytes())
    chunk = 16 + struct.unpack_from("<I", data, 12)[0] + 4
    lengths = struct.unpack_from("<5I", data, chunk + 8)
    pc_block = chunk + 36 + lengths[0] + lengths[1]
    data[pc_block] = 9  # an encoding that does not exist
    payload = bytes(data[chunk + 36 : chunk + 36 + sum(lengths)])
    struct.pack_into("<I", data, chunk + 28, zlib.crc32(payload))
    struct.pack_into("<I", data, chunk + 32, zlib.crc32(bytes(data[chunk : chunk + 32])))
    bad = tmp_path / "bad.trace"
    bad.write_bytes(bytes(data))
    with pytest.raises(TraceError, match=r"corrupt chunk 0 at byte \d+, column pc \(unknown encod"):
        list(open_trace(bad).chunks(threads=threads))


def test_writer_threads_write_the_same_bytes(tmp_path, seed):
    records = random_records(np.random.default_rng(seed), 5000)
    files = []
    for threads in (1, 2, 4):
        path = tmp_path / f"t{threads}.trace"
        with TraceWriter(path, header={"captured": "fixed"}, chunk_records=700,
                         threads=threads) as writer:  # fmt: skip
            for lo in range(0, 5000, 1234):
                writer.write(**{c: records[c][lo : lo + 1234] for c in COLUMNS})
            writer.close()
        files.append(path.read_bytes())
    assert files[0] == files[1] == files[2]
    with open_trace(tmp_path / "t4.trace") as reader:
        got = read_all(reader)
    for column in COLUMNS:
        np.testing.assert_array_equal(got[column], records[column])


@pytest.mark.parametrize("footer", [b"[1, 2]", b'{"records": 40}', b"not json"])
def test_footer_without_counts_with_a_good_checksum(small_trace, tmp_path, footer):
    data = small_trace.read_bytes()
    flen, _, records, chunks, magic = struct.unpack("<IIQQ8s", data[-32:])
    body = data[: len(data) - 32 - flen]  # ends with "TEND"
    bad = tmp_path / "bad.trace"
    bad.write_bytes(body + footer + struct.pack("<IIQQ8s", len(footer), zlib.crc32(footer),
                                                records, chunks, magic))  # fmt: skip
    with pytest.raises(TraceError, match="corrupt footer"):
        open_trace(bad)


@pytest.mark.parametrize("header, what", [
    (b"[1]", "not a JSON object"),
    (b'{"format_version": 1}', "version 2, the header says 1"),
    (b"{", "not JSON"),
])  # fmt: skip
def test_header_json_checked_behind_a_good_checksum(small_trace, tmp_path, header, what):
    data = small_trace.read_bytes()
    hlen = struct.unpack_from("<I", data, 12)[0]
    fixed = b"HWPTRACE" + struct.pack("<HHI", 2, 0, len(header))
    bad = tmp_path / "bad.trace"
    bad.write_bytes(fixed + header + struct.pack("<I", zlib.crc32(fixed + header))
                    + data[16 + hlen + 4 :])  # fmt: skip
    with pytest.raises(TraceError, match=re.escape(what)):
        open_trace(bad)


def test_writer_removes_temporaries_of_dead_writers_only(tmp_path):
    dead = tmp_path / f".t.trace.{(1 << 22) + 17}.tmp"  # above Linux's largest pid
    alive = tmp_path / f".t.trace.{os.getppid()}.tmp"
    other = tmp_path / f".u.trace.{(1 << 22) + 17}.tmp"
    for path in (dead, alive, other):
        path.write_bytes(b"partial")
    with TraceWriter(tmp_path / "t.trace", header={}) as writer:
        writer.write(kind=0, pc=[1])
        writer.close()
    assert not dead.exists() and alive.exists() and other.exists()


def test_recorded_instructions_are_executed_minus_skipped():
    assert recorded_instructions({"guest_instructions": 7_820_122,
                                  "skipped_instructions": 2_000_009}) == 5_820_113
    assert recorded_instructions({"guest_instructions": 100}) == 100
    assert recorded_instructions({"counts": {}}) is None
    assert recorded_instructions(None) is None
