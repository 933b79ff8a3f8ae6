"""Program traces: a binary, chunked, zstd-compressed, columnar format and its streaming reader.

A trace is a sequence of records in program order, each with five fields
(columns): ``kind`` (uint8, see :data:`KIND_NAMES`), ``size`` (uint8), ``pc``,
``addr`` and ``value`` (uint64). Their meaning per kind:

============ ============================ =============================== ===========
column       load (``LOAD``)              control transfer (1..6)         ``BLOCK``
============ ============================ =============================== ===========
size         bytes loaded (value holds    0                               0
             the low 8 bytes)
pc           the loading instruction      the branch instruction          block start
addr         data address                 target (where control went;     0
                                          for not-taken the fall-through)
value        loaded value, zero-extended  fall-through address            0
============ ============================ =============================== ===========

``EDGE`` records come from the legacy gzip'd text traces of lackey superblock
edges (:mod:`hwprof.traces.lackey`): ``pc`` = source, ``addr`` =
destination, ``value`` = 0.

File layout (little-endian; docs/traces.md has it byte by byte)::

    header   "HWPTRACE" | u16 version | u16 0 | u32 H | H bytes JSON
             | u32 crc32(the 16 bytes before and the JSON; version 1: the JSON only)
    chunk*   "CHNK" | u32 n | 5 x u32 column block lengths
             | u32 crc32(payload) | u32 crc32(the 32 bytes before) | payload
    end      "TEND" | F bytes JSON footer | u32 F | u32 crc32(footer)
             | u64 records | u64 chunks | "HWPTEND\\0"

A chunk's payload is its five column blocks in the order kind, size, pc, addr,
value; each is a 16-byte descriptor and zstd frames of the column stored
narrow where it can be (a constant, offsets from a base in 1, 2 or 4 bytes, a
dictionary of pcs; see ``_encode_column``). Format version 1, which readers
still read, stored each column as one zstd frame of its raw array. Columns are
compressed separately so that a reader decompresses only what it needs
(:meth:`TraceReader.value_tuples` skips ``addr`` and ``size``).

Writing goes to a temporary name next to the destination, renamed by
:meth:`TraceWriter.close`; an exception inside ``with TraceWriter(...)`` or
:meth:`TraceWriter.abort` deletes it, so a failed write leaves no trace file.

:class:`TraceReader` validates the header, the end marker and every chunk
header when it opens a file, and each chunk's checksum as it streams; any
defect raises :class:`TraceError`, one line naming the file and the problem.
A legacy gzip'd text trace is refused (:class:`LegacyTraceError`); ``hwprof trace
convert`` (:mod:`hwprof.traces.lackey`) turns one into this format. The profile
keys of a trace come from :func:`hwprof.traces.keys.trace_keys`.
"""

from __future__ import annotations

import datetime
import json
import os
import struct
import threading
import zlib
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import zstandard

from . import chunk_columns, common
from .common import (  # noqa: F401 (re-exported: __all__)
    BLOCK,
    BRANCH_KINDS,
    CALL,
    COLUMNS,
    COND_NOT_TAKEN,
    COND_TAKEN,
    EDGE,
    INDIRECT,
    JUMP,
    KIND_CODES,
    KIND_GROUPS,
    KIND_NAMES,
    LOAD,
    RETURN,
    TraceError,
    create_temporary,
    discard_temporary,
    parse_kinds,
    temporary_path,
)

#: The names of :mod:`hwprof.traces.common` (the record kinds, ``TraceError``,
#: ``parse_kinds``) are re-exported beside the reader's and the writer's.
__all__ = [
    *common.__all__,
    "recorded_instructions",
    "FORMAT_VERSION",
    "Chunk",
    "TraceWriter",
    "TraceReader",
    "LegacyTraceError",
    "open_trace",
    "kind_mask",
]


class LegacyTraceError(TraceError):
    """The file is a legacy gzip'd text trace: a retired format that only ``hwprof trace
    convert`` reads (:func:`hwprof.traces.lackey.open_for_convert`)."""


#: The version this module writes. Readers read every version up to their own:
#: 1 (a column is one zstd frame of its raw array) and 2 (encoded columns).
FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)
MAGIC = b"HWPTRACE"
END_MAGIC = b"HWPTEND\0"
CHUNK_MAGIC = b"CHNK"
TAIL_MAGIC = b"TEND"
DTYPES = {"kind": np.dtype("u1"), "size": np.dtype("u1"), "pc": np.dtype("<u8"),
          "addr": np.dtype("<u8"), "value": np.dtype("<u8")}  # fmt: skip
_HEAD = struct.Struct("<8sHHI")  # magic, version, reserved, header length
_CHUNK = struct.Struct("<4sI5II")  # magic, records, 5 column lengths, payload crc
_CHUNK_SIZE = _CHUNK.size + 4  # + crc32 of the chunk header itself
_TRAILER = struct.Struct("<IIQQ8s")  # footer length, footer crc, records, chunks, magic
#: Largest chunk a reader accepts (records); bounds the memory of one chunk.
MAX_CHUNK_RECORDS = 1 << 24
ZSTD_LEVEL = 3


def recorded_instructions(footer: dict | None) -> int | None:
    """Guest instructions of the recorded window (executed minus ``--skip``ped), from a
    capture's footer; ``None`` when the trace does not say (converted or built traces)."""
    guest = (footer or {}).get("guest_instructions")
    return None if guest is None else guest - ((footer or {}).get("skipped_instructions") or 0)


def kind_mask(kinds) -> np.ndarray:
    """A 256-entry boolean table, True at the kind codes ``kinds``: ``kind_mask(k)[column]``
    selects the records of those kinds."""
    lut = np.zeros(256, dtype=bool)
    lut[list(kinds)] = True
    return lut


class Chunk:
    """Records in program order as equal-length numpy arrays.

    Attributes
    ----------
    kind, size : np.ndarray of uint8
    pc, addr, value : np.ndarray of uint64
        Arrays from :class:`TraceReader` are read-only views of the
        decompressed chunk; a column the reader was told to skip is ``None``.
    """

    __slots__ = COLUMNS

    def __init__(self, kind, size, pc, addr, value):
        self.kind, self.size, self.pc, self.addr, self.value = kind, size, pc, addr, value
        lengths = {len(c) for c in (kind, size, pc, addr, value) if c is not None}
        if len(lengths) > 1:
            raise ValueError(f"chunk columns must have equal lengths, not {sorted(lengths)}")

    def __len__(self) -> int:
        return len(self.kind) if self.kind is not None else len(self.pc)

    def select(self, kinds) -> Chunk:
        """The records of these kinds (codes) only, in program order."""
        mask = kind_mask(kinds)[self.kind]
        return Chunk(*(None if c is None else c[mask] for c in self.columns()))

    def columns(self) -> tuple:
        return (self.kind, self.size, self.pc, self.addr, self.value)


# --- column encodings ----------------------------------------------------------------------
# Each column of a chunk is stored as a 16-byte descriptor and up to two zstd frames:
#   u8 encoding | u8 width | u16 0 | u32 T (bytes of the table frame) | u64 base
#   [T bytes: zstd frame of the u64 table]  [zstd frame of the n stored elements]
# RAW: the column itself (width = its item size). CONST: every element is `base` (no
# frames). OFFSET: element = base + stored (unsigned, width 1, 2 or 4). DICT: element =
# table[stored] (width 1 or 2, at most 65536 table entries). The writer picks the
# narrowest that fits: fewer bytes to decompress is what makes reading fast.
RAW, CONST, OFFSET, DICT = range(4)
_DESC = struct.Struct("<BBHIQ")
_NARROW = {1: np.dtype("u1"), 2: np.dtype("<u2"), 4: np.dtype("<u4")}
DICT_MAX = 1 << 16


def _encode_column(column: np.ndarray, compressor, dictionary: bool = False,
                   bounds: tuple[int, int] | None = None, scratch=None) -> bytes:
    """The stored block of ``column`` (see above).

    ``bounds``: the column's ``(min, max)`` if known (the raw path computes them
    while splitting); ``scratch``: ``scratch(dtype)`` gives a reusable array of at
    least ``len(column)`` elements for the narrowed column. Neither changes the bytes.
    """
    if not len(column):
        return _DESC.pack(RAW, column.itemsize, 0, 0, 0) + compressor.compress(b"")
    lo, hi = bounds if bounds is not None else (int(column.min()), int(column.max()))
    if lo == hi:
        return _DESC.pack(CONST, column.itemsize, 0, 0, lo)
    for width, dtype in _NARROW.items():
        if width < column.itemsize and hi - lo < 1 << (8 * width):
            if scratch is None:
                data = (column - column.dtype.type(lo)).astype(dtype)
            else:
                data = chunk_columns.narrow(column, lo, dtype, scratch(dtype))
            return _DESC.pack(OFFSET, width, 0, 0, lo) + compressor.compress(_bytes(data))
    if dictionary and column.itemsize == 8 and (dict_block := _dictionary(column, compressor)):
        return dict_block  # pcs of code spread over more than 4 GiB (a sort: the writer's cost)
    little = np.ascontiguousarray(column, dtype=column.dtype.newbyteorder("<"))
    return _DESC.pack(RAW, column.itemsize, 0, 0, 0) + compressor.compress(_bytes(little))


def _bytes(array: np.ndarray) -> memoryview:
    """The bytes of a contiguous array without copying them (zstd reads any buffer)."""
    return memoryview(np.ascontiguousarray(array)).cast("B")


def _dictionary(column: np.ndarray, compressor) -> bytes | None:
    """The DICT block of a column with at most 65536 distinct values, else None."""
    # pcs repeat a lot; data rarely does: judge from a sample before sorting everything
    if len(np.unique(column[:: max(1, len(column) // 4096)])) > 2048:
        return None
    table, index = np.unique(column, return_inverse=True)
    if len(table) > DICT_MAX:
        return None
    dtype = _NARROW[1 if len(table) <= 256 else 2]
    frame = compressor.compress(table.astype("<u8").tobytes())
    body = compressor.compress(index.astype(dtype).tobytes())
    return _DESC.pack(DICT, dtype.itemsize, 0, len(frame), 0) + frame + body


def _decode_column(block, n: int, dtype: np.dtype, decompressor) -> np.ndarray:
    """The column from its stored block; ValueError/IndexError/ZstdError when malformed."""
    if len(block) < _DESC.size:
        raise ValueError("column block cut short")
    encoding, width, reserved, table_len, base = _DESC.unpack(block[: _DESC.size])
    rest = block[_DESC.size :]
    if reserved:
        raise ValueError("reserved field set")
    if encoding == CONST:
        if len(rest) or width != dtype.itemsize or base > np.iinfo(dtype).max:
            raise ValueError("malformed constant")
        return np.full(n, base, dtype=dtype)
    if encoding == RAW:
        stored = dtype
    elif encoding in (OFFSET, DICT) and width in _NARROW and width < dtype.itemsize:
        stored = _NARROW[width]
    else:
        raise ValueError(f"unknown encoding {encoding} of width {width}")
    if (encoding == DICT) != (table_len > 0) or table_len > len(rest):
        raise ValueError("malformed table")
    data = decompressor.decompress(rest[table_len:])
    if len(data) != n * stored.itemsize:
        raise ValueError(f"{len(data)} bytes for {n} records")
    values = np.frombuffer(data, dtype=stored)
    if encoding == RAW:
        return values
    if encoding == OFFSET:
        return values.astype(dtype) + dtype.type(base)
    table = np.frombuffer(decompressor.decompress(rest[:table_len]), dtype="<u8")
    return table.astype(dtype, copy=False)[values]


ZSTD_FRAME_MAGIC = b"\x28\xb5\x2f\xfd"


def _decode_column_v1(block, n: int, dtype: np.dtype, decompressor) -> np.ndarray:
    """Format version 1: the column's raw little-endian array in one zstd frame.

    A few files of the development branch carry version 1 with version-2 column
    blocks; a block that does not start with a zstd frame is read as version 2.
    """
    if bytes(block[:4]) != ZSTD_FRAME_MAGIC:
        return _decode_column(block, n, dtype, decompressor)
    data = decompressor.decompress(block)
    if len(data) != n * dtype.itemsize:
        raise ValueError(f"{len(data)} bytes for {n} records")
    return np.frombuffer(data, dtype=dtype)


_THREAD = threading.local()
#: Default decompression threads of :meth:`TraceReader.chunks`.
READ_THREADS = min(2, os.cpu_count() or 1)


def _decode_in_thread(decode, block, n: int, dtype: np.dtype) -> np.ndarray:
    """``decode`` with this thread's own decompressor (they are not thread-safe)."""
    decompressor = getattr(_THREAD, "decompressor", None)
    if decompressor is None:
        decompressor = _THREAD.decompressor = zstandard.ZstdDecompressor()
    return decode(block, n, dtype, decompressor)


class _Now:
    """An executor that runs at once (the single-threaded path of :meth:`TraceReader.chunks`)."""

    def submit(self, fn, *args) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args))
        except Exception as exc:  # re-raised by result(), where the chunk is named
            future.set_exception(exc)
        return future


def _crc(data) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def _json_bytes(obj: dict) -> bytes:
    return json.dumps(obj, sort_keys=True, default=str).encode()


def _checked_columns(kind, size, pc, addr, value) -> list[np.ndarray]:
    """The five columns of :meth:`TraceWriter.write` as arrays of the format's dtypes.

    Scalars broadcast to the arrays' length; ValueError for different lengths, a
    value that does not fit its column, or a kind the format does not have.
    """
    arrays = [np.asarray(x) for x in (kind, size, pc, addr, value)]
    lengths = {name: a.shape for name, a in zip(COLUMNS, arrays, strict=True) if a.ndim}
    if len(set(lengths.values())) > 1:
        shapes = ", ".join(f"{name} {shape}" for name, shape in lengths.items())
        raise ValueError(f"columns have different shapes ({shapes})")
    n = max((a.size for a in arrays if a.ndim), default=1)
    cols = []
    for name, a in zip(COLUMNS, arrays, strict=True):
        if a.ndim == 0:
            a = np.full(n, a, dtype=DTYPES[name])
        elif a.ndim != 1 or a.size != n:
            raise ValueError(f"column {name} has shape {a.shape}, expected ({n},)")
        elif a.dtype != DTYPES[name]:
            if a.dtype.kind not in "ui" or (a.size and (a.min() < 0 or a.max() > np.iinfo(
                    DTYPES[name]).max)):  # fmt: skip
                raise ValueError(f"column {name} does not fit {DTYPES[name]}")
            a = a.astype(DTYPES[name])
        cols.append(a)
    if n and int(cols[0].max()) > EDGE:
        raise ValueError(f"record kind {int(cols[0].max())} is not one of 0..{EDGE}")
    return cols


class TraceWriter:
    """Writes a trace file chunk by chunk; the file appears only when :meth:`close` succeeds.

    Parameters
    ----------
    path : path-like
        Destination. The data goes to a hidden temporary file next to it first.
    header : dict
        JSON-serializable: ``program``, ``argv``, ``kinds`` (names), ``options``
        (skip, limit, ...). The writer adds ``format_version`` and ``captured``
        (ISO 8601 UTC) unless given.
    chunk_records : int
        Records per chunk written by :meth:`write` (the reader's unit of memory),
        1..2**24. :meth:`write_chunk` writes chunks of the size it is given.
    level : int
        zstd compression level: 3 (default) or 1 (faster, files 11-20% larger;
        docs/traces.md has the figures); zstd is most of the writer's cost.
        Readers decompress either at the same speed.
    threads : int, optional
        Encoding threads (numpy's reductions and zstd run without the GIL): with 2
        or more, full chunks are encoded in the background while the caller
        writes the next records (at most ``threads`` chunks in flight).
        Default :data:`READ_THREADS`.
    temporary : tuple, optional
        ``(path, open binary file)`` of the temporary file from
        :func:`~hwprof.traces.common.create_temporary`, created earlier (a
        capture creates it before it starts valgrind, and this writer after):
        the writer owns it from here on. By default the writer creates it.

    Raises
    ------
    TraceError
        If the temporary file cannot be created.
    """

    def __init__(self, path, *, header: dict | None = None, chunk_records: int = 1 << 20,
                 level: int = ZSTD_LEVEL, threads: int | None = None,
                 temporary: tuple | None = None):  # fmt: skip
        if not isinstance(chunk_records, int) or not 1 <= chunk_records <= MAX_CHUNK_RECORDS:
            raise ValueError(
                f"chunk_records must be an integer in 1..{MAX_CHUNK_RECORDS}, not {chunk_records!r}"
            )
        self.path = Path(path)
        self.chunk_records = chunk_records
        captured = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        self.header = {"format_version": FORMAT_VERSION, "captured": captured, "program": None,
                       "argv": [], "kinds": [], "options": {}} | dict(header or {})  # fmt: skip
        self.header["format_version"] = FORMAT_VERSION
        # (closed by close/abort)
        self.tmp, self._file = temporary if temporary is not None else create_temporary(path)
        self.level = level
        self._threads = READ_THREADS if threads is None else threads
        self._pool = None  # set below, once the file is open
        # (buffer to reuse or None, future or result of its encoded chunk), in file order
        self._inflight: deque = deque()
        # write() collects records in five reused column arrays (fresh memory's page
        # faults cost more than the copies) until a chunk is full
        self._columns: list[np.ndarray] | None = None
        self._fill = 0  # records in self._columns
        self._spare: list[list[np.ndarray]] = []
        self._scratch: dict[int, dict] = {}  # per thread: the narrowed columns' arrays
        self.counts = np.zeros(256, dtype=np.int64)
        self.records = 0
        self.chunks = 0
        self._closed = False
        if self._threads > 1:
            self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="trace-write")
        try:
            body = _json_bytes(self.header)
            fixed = _HEAD.pack(MAGIC, FORMAT_VERSION, 0, len(body))
            self._file.write(fixed + body)
            self._file.write(struct.pack("<I", _crc(fixed + body)))
        except BaseException:
            self.abort()
            raise

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None:
            self.abort()
        elif not self._closed:
            self.close()
        return False

    def write(self, *, kind, pc, addr=0, value=0, size=0) -> None:
        """Append records given as columns (arrays of one length; scalars broadcast)."""
        self._check_open()
        cols = _checked_columns(kind, size, pc, addr, value)
        n = len(cols[0])
        done = 0
        while done < n:
            if self._columns is None:
                self._columns = self._spare.pop() if self._spare else [
                    np.empty(self.chunk_records, DTYPES[name]) for name in COLUMNS]  # fmt: skip
                self._fill = 0
            take = min(n - done, self.chunk_records - self._fill)
            for column, source in zip(self._columns, cols, strict=True):
                column[self._fill : self._fill + take] = source[done : done + take]
            done += take
            self._fill += take
            if self._fill == self.chunk_records:
                self._flush()

    def write_chunk(self, kind, size, pc, addr, value, *, release=None) -> None:
        """Write five column arrays of one length (1..2**24) as one chunk, without copying them.

        Records collected by :meth:`write` go first. The arrays (of the format's
        dtypes, contiguous) are encoded in a worker thread; they must stay unchanged
        until ``release()`` is called there, right after the encoding (not called
        if the encoding fails: the error is raised by a later call). A capture
        hands over the blocks the valgrind tool fills in shared memory this way.
        """
        self._check_open()
        columns = [kind, size, pc, addr, value]
        n = len(kind)
        for name, column in zip(COLUMNS, columns, strict=True):
            if column.dtype != DTYPES[name] or column.shape != (n,) or not (
                    column.flags.c_contiguous):  # fmt: skip
                raise ValueError(f"write_chunk: column {name} is not a contiguous {DTYPES[name]} "
                                 f"array of {n} records")  # fmt: skip
        if not 1 <= n <= MAX_CHUNK_RECORDS:
            raise ValueError(f"write_chunk: {n} records, not 1..{MAX_CHUNK_RECORDS}")
        self._flush()
        self._submit(None, columns, release)

    def _flush(self) -> None:
        if not self._fill:
            return
        columns, self._columns, fill, self._fill = self._columns, None, self._fill, 0
        self._submit(columns, [c[:fill] for c in columns], None)

    def _submit(self, buffer, columns, release) -> None:
        if self._pool is None:
            self._write_chunk(*self._encode(columns, release))
            if buffer is not None:
                self._spare.append(buffer)
            return
        self._inflight.append((buffer, self._pool.submit(self._encode, columns, release)))
        while len(self._inflight) > self._threads:  # bounded: `threads` chunks encoding
            self._write_chunk(*self._next_done())

    def _next_done(self):
        buffer, future = self._inflight.popleft()
        done = future.result()
        if buffer is not None:
            self._spare.append(buffer)
        return done

    def _encode(self, columns: list[np.ndarray], release=None):
        """Encode one chunk's columns (in a worker thread); ``release()`` when done with them.

        Returns ``(n, counts per kind, chunk header, payload)``.
        """
        scratch = self._scratch.get(threading.get_ident())
        n = len(columns[0])
        if scratch is None or len(scratch[_NARROW[1]]) < n:
            scratch = self._scratch[threading.get_ident()] = {
                dtype: np.empty(max(n, self.chunk_records), dtype) for dtype in _NARROW.values()}
        bounds, counts = chunk_columns.bounds_and_counts(columns)
        if bounds["kind"][1] > EDGE:
            raise TraceError(f"{self.path}: record kind {bounds['kind'][1]} is not one of "
                             f"0..{EDGE}")  # fmt: skip
        compressor = getattr(_THREAD, "compressor", None)
        if compressor is None or getattr(_THREAD, "level", None) != self.level:
            compressor = _THREAD.compressor = zstandard.ZstdCompressor(level=self.level)
            _THREAD.level = self.level
        frames = [_encode_column(c, compressor, dictionary=name == "pc", bounds=bounds[name],
                                 scratch=scratch.__getitem__)
                  for name, c in zip(COLUMNS, columns, strict=True)]  # fmt: skip
        if release is not None:
            release()
        payload = b"".join(frames)
        head = _CHUNK.pack(CHUNK_MAGIC, n, *(len(f) for f in frames), _crc(payload))
        return n, counts, head + struct.pack("<I", _crc(head)), payload

    def _write_chunk(self, n: int, counts: np.ndarray, head: bytes, payload: bytes) -> None:
        try:
            self._file.write(head)
            self._file.write(payload)
        except OSError as exc:
            self.abort()
            raise TraceError(f"{self.path}: write failed ({exc.strerror})") from None
        self.counts += counts
        self.records += n
        self.chunks += 1

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"{self.path}: trace writer is closed")

    def close(self, footer: dict | None = None) -> Path:
        """Flush, write the end marker with ``footer`` (plus counts), and rename into place."""
        self._check_open()
        try:
            self._flush()
            while self._inflight:
                self._write_chunk(*self._next_done())
            self._shutdown()
            counts = {KIND_NAMES[k]: int(self.counts[k]) for k in KIND_NAMES if self.counts[k]}
            body = _json_bytes(dict(footer or {}) | {"counts": counts, "records": self.records,
                                                      "chunks": self.chunks})  # fmt: skip
            self._file.write(TAIL_MAGIC + body)
            self._file.write(_TRAILER.pack(len(body), _crc(body), self.records, self.chunks,
                                           END_MAGIC))  # fmt: skip
            self._file.close()
            os.replace(self.tmp, self.path)
        except OSError as exc:
            self.abort()
            raise TraceError(f"{self.path}: write failed ({exc.strerror})") from None
        except BaseException:
            self.abort()
            raise
        self._closed = True
        return self.path

    def _shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._inflight.clear()
        self._columns = None
        self._spare.clear()
        self._scratch.clear()

    def abort(self) -> None:
        """Stop writing and delete the temporary file (the destination is not touched)."""
        self._closed = True
        self._shutdown()
        discard_temporary((self.tmp, getattr(self, "_file", None)))


class TraceReader:
    """Streams a trace file chunk by chunk.

    Parameters
    ----------
    path : path-like

    Attributes
    ----------
    header : dict
        ``format_version``, ``captured``, ``program``, ``argv``, ``kinds``, ``options``.
    footer : dict
        ``records``, ``chunks``, ``counts`` ({kind name: records}) and what the
        writer added (e.g. the tool's statistics).

    Raises
    ------
    TraceError
        Not a trace, a newer format version, truncated (no end marker),
        corrupt header, footer or chunk header; later, from :meth:`chunks`,
        a chunk whose checksum or contents are wrong.
    """

    def __init__(self, path):
        self.path = Path(path)
        with self._open() as f:
            self._validate(f)

    def _open(self):
        try:
            return open(self.path, "rb")
        except OSError as exc:
            raise TraceError(f"{self.path}: cannot open ({exc.strerror})") from None

    def _error(self, what: str) -> TraceError:
        return TraceError(f"{self.path}: {what}")

    def _validate(self, f) -> None:
        size = os.fstat(f.fileno()).st_size
        head = f.read(_HEAD.size)
        if size == 0:
            raise self._error("empty file, not a trace")
        if head[:2] == b"\x1f\x8b":
            raise LegacyTraceError(f"{self.path}: a gzip'd text trace (the retired legacy "
                                   f"format): convert it with 'hwprof trace convert "
                                   f"{self.path} NEW.trace'")  # fmt: skip
        if not MAGIC.startswith(head[: len(MAGIC)]) or len(head) < len(MAGIC):
            if MAGIC.startswith(head):
                raise self._error(f"truncated trace ({size} bytes: not even a header)")
            raise self._error("not a trace file (no HWPTRACE signature)")
        if len(head) < _HEAD.size:
            raise self._error(f"truncated trace ({size} bytes: not even a header)")
        _, version, reserved, hlen = _HEAD.unpack(head)
        if version not in READ_VERSIONS:
            if version > FORMAT_VERSION:
                raise self._error(f"format version {version} is newer than the version this "
                                  f"hwprof reads ({FORMAT_VERSION}); upgrade hwprof")  # fmt: skip
            raise self._error(f"format version {version} is not one this hwprof reads "
                              f"({', '.join(map(str, READ_VERSIONS))})")  # fmt: skip
        self.version = version
        if reserved != 0:
            raise self._error(f"corrupt header (reserved field is {reserved:#06x}, not 0)")
        if _HEAD.size + hlen + 4 > size:
            raise self._error("truncated trace (inside the header)")
        body = f.read(hlen)
        (crc,) = struct.unpack("<I", f.read(4))
        if _crc(head + body if version >= 2 else body) != crc:  # v1: the JSON only
            raise self._error("corrupt header (checksum mismatch)")
        try:
            self.header = json.loads(body)
        except ValueError:
            raise self._error("corrupt header (not JSON)") from None
        if not isinstance(self.header, dict):
            raise self._error("corrupt header (not a JSON object)")
        if self.header.get("format_version", version) != version:
            raise self._error(f"corrupt header (version {version}, the header says "
                              f"{self.header.get('format_version')!r})")  # fmt: skip
        start = f.tell()
        if size - start < len(TAIL_MAGIC) + _TRAILER.size:
            raise self._error("truncated or unfinished trace (no end marker)")
        f.seek(size - _TRAILER.size)
        flen, fcrc, records, chunks, magic = _TRAILER.unpack(f.read(_TRAILER.size))
        if magic != END_MAGIC:
            raise self._error("truncated or unfinished trace (no end marker)")
        end = size - _TRAILER.size - flen - len(TAIL_MAGIC)
        if end < start:
            raise self._error("corrupt end marker (footer length out of range)")
        f.seek(end)
        tail = f.read(len(TAIL_MAGIC) + flen)
        if tail[:4] != TAIL_MAGIC or _crc(tail[4:]) != fcrc:
            raise self._error("corrupt footer (checksum mismatch)")
        try:
            self.footer = json.loads(tail[4:])
        except ValueError:
            raise self._error("corrupt footer (not JSON)") from None
        if not isinstance(self.footer, dict) or not isinstance(self.footer.get("counts"), dict):
            raise self._error("corrupt footer (no record counts)")
        # Walk the chunk headers: offsets, and every length checked against the file.
        self._chunks: list[tuple[int, int, tuple[int, ...]]] = []
        pos, total = start, 0
        while pos < end:
            f.seek(pos)
            raw = f.read(_CHUNK_SIZE)
            index = len(self._chunks)
            if len(raw) < _CHUNK_SIZE or pos + _CHUNK_SIZE > end:
                raise self._error(f"corrupt chunk {index} at byte {pos} (header cut short)")
            (hcrc,) = struct.unpack("<I", raw[_CHUNK.size :])
            magic, n, *lengths, pcrc = _CHUNK.unpack(raw[: _CHUNK.size])
            if magic != CHUNK_MAGIC or _crc(raw[: _CHUNK.size]) != hcrc:
                raise self._error(f"corrupt chunk {index} at byte {pos} (bad chunk header)")
            if not 1 <= n <= MAX_CHUNK_RECORDS:
                raise self._error(f"corrupt chunk {index} at byte {pos} ({n} records)")
            payload = sum(lengths)
            if pos + _CHUNK_SIZE + payload > end:
                raise self._error(f"corrupt chunk {index} at byte {pos} (runs past the end)")
            self._chunks.append((pos, n, (pcrc, *lengths)))
            pos += _CHUNK_SIZE + payload
            total += n
        if total != records or len(self._chunks) != chunks or self.footer.get("records") != total:
            raise self._error(f"corrupt trace: {total} records in {len(self._chunks)} chunks, "
                              f"the end marker says {records} in {chunks}")  # fmt: skip

    def __enter__(self) -> TraceReader:
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self) -> None:
        """Nothing to release: each :meth:`chunks` call opens (and closes) the file itself."""

    @property
    def records(self) -> int:
        return int(self.footer["records"])

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.footer.get("counts", {}))

    def chunks(self, kinds=None, columns=COLUMNS, threads: int | None = None) -> Iterator[Chunk]:
        """Each chunk in file order (at most two chunks in memory).

        Parameters
        ----------
        kinds : iterable of int or str, optional
            Only records of these kinds (codes, or names as in :func:`parse_kinds`).
        columns : iterable of str
            Columns to decompress; the others are ``None`` in the chunks.
        threads : int, optional
            Decompression threads (zstd runs without the GIL): with 2 or more,
            the columns of a chunk decompress in parallel and the next chunk
            while the caller works on this one. Default :data:`READ_THREADS`.
        """
        if isinstance(kinds, str):
            kinds = parse_kinds(kinds)
        lut = None if kinds is None else kind_mask(kinds)
        wanted = set(columns) | ({"kind"} if lut is not None else set())
        threads = READ_THREADS if threads is None else threads
        with self._open() as f:
            if threads <= 1 or len(self._chunks) <= 1:
                for index in range(len(self._chunks)):
                    chunk = self._assemble(self._decode(f, index, wanted, _Now()), lut)
                    if chunk is not None:
                        yield chunk
                return
            with ThreadPoolExecutor(threads, thread_name_prefix="trace-read") as pool:
                ahead: deque = deque()
                for index in range(len(self._chunks) + 1):
                    if index < len(self._chunks):
                        ahead.append(self._decode(f, index, wanted, pool))
                    if len(ahead) > 1 or index == len(self._chunks):
                        chunk = self._assemble(ahead.popleft(), lut)
                        if chunk is not None:
                            yield chunk
                        chunk = None  # the caller's chunk, the next one and the one decoding

    def _decode(self, f, index: int, wanted, pool):
        """Read and check chunk ``index``; its columns' decoding submitted to ``pool``."""
        pos, n, (pcrc, *lengths) = self._chunks[index]
        f.seek(pos + _CHUNK_SIZE)
        payload = f.read(sum(lengths))
        where = f"chunk {index} at byte {pos}"
        if len(payload) != sum(lengths):
            raise self._error(f"truncated trace ({where} cut short)")
        if _crc(payload) != pcrc:
            raise self._error(f"corrupt {where} (checksum mismatch)")
        decode = _decode_column if self.version >= 2 else _decode_column_v1
        view, offset, parts = memoryview(payload), 0, []
        for name, length in zip(COLUMNS, lengths, strict=True):
            block = view[offset : offset + length]
            offset += length
            parts.append(pool.submit(_decode_in_thread, decode, block, n, DTYPES[name])
                         if name in wanted else None)  # fmt: skip
        return where, parts

    def _assemble(self, decoding, lut) -> Chunk | None:
        where, parts = decoding
        cols = []
        for name, part in zip(COLUMNS, parts, strict=True):
            try:
                cols.append(None if part is None else part.result())
            except (ValueError, IndexError, zstandard.ZstdError) as exc:
                raise self._error(f"corrupt {where}, column {name} ({exc})") from None
        if cols[0] is not None and cols[0].size and int(cols[0].max()) > EDGE:
            raise self._error(f"corrupt {where} (record kind {int(cols[0].max())})")
        chunk = Chunk(*cols)
        if lut is not None:
            mask = lut[chunk.kind]
            if not mask.all():
                chunk = Chunk(*(None if c is None else c[mask] for c in cols))
            if not len(chunk):
                return None
        return chunk

    def value_tuples(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(pc, value)`` arrays of the loads, chunk by chunk."""
        for chunk in self.chunks(kinds=(LOAD,), columns=("kind", "pc", "value")):
            yield chunk.pc, chunk.value


def open_trace(path) -> TraceReader:
    """A reader for the trace file ``path`` (:class:`TraceReader`).

    Raises
    ------
    TraceError
        As :class:`TraceReader`; for a legacy gzip'd text trace
        (:class:`LegacyTraceError`) one line saying to convert it with
        ``hwprof trace convert``.
    """
    return TraceReader(path)
