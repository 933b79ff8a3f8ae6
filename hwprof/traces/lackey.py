"""The retired legacy edge traces of valgrind's lackey tool, read only to convert them.

Legacy file format: gzip'd text, one tuple per line, two hexadecimal numbers
``<pc> <value>`` (source and destination superblock address, no ``0x``). Lines
starting with ``#`` are comments. The binary format of
:mod:`hwprof.traces.tracefile` replaces it: ``hwprof trace convert`` turns a
legacy file into one (``edge`` records: ``pc`` the source, ``addr`` the
destination), which :func:`hwprof.traces.keys.trace_keys` then reads like any
trace. Every other reader refuses a legacy file
(:class:`~hwprof.traces.tracefile.LegacyTraceError`).
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .tracefile import (
    COLUMNS,
    EDGE,
    Chunk,
    LegacyTraceError,
    TraceError,
    TraceReader,
    open_trace,
    parse_kinds,
)

__all__ = ["TraceError", "LegacyEdgeReader", "open_for_convert", "write_trace"]


def write_trace(path: Path, pcs, values, comment: str = "") -> None:
    """Write ``pcs[i] values[i]`` pairs as a gzip'd text trace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as out:
        if comment:
            out.write(f"# {comment}\n")
        for pc, value in zip(pcs, values, strict=True):
            out.write(f"{int(pc):x} {int(value):x}\n")


def open_for_convert(path) -> TraceReader | LegacyEdgeReader:
    """What ``hwprof trace convert`` reads: a trace file, or a legacy gzip'd text edge trace."""
    try:
        return open_trace(path)
    except LegacyTraceError:
        return LegacyEdgeReader(path)


class LegacyEdgeReader:
    """The old gzip'd text edge traces (``<source> <destination>`` hex lines) as EDGE records.

    What ``hwprof trace convert`` uses of :class:`TraceReader`: ``header``, ``footer``,
    ``counts``, ``records`` and :meth:`chunks`. The whole file is checked when it
    is opened (one streaming pass); chunks are parsed again as they are read.
    """

    def __init__(self, path, chunk_records: int = 1 << 20):
        self.path = Path(path)
        self.chunk_records = chunk_records
        records = 0
        comments: list[str] = []
        for pcs, _ in self._parse(comments):
            records += len(pcs)
        if not records:
            raise TraceError(f"{self.path}: no tuples")
        self.header = {"format": "legacy gzip'd text edge trace", "format_version": 0,
                       "kinds": ["edge"], "comment": " ".join(comments)}  # fmt: skip
        self.footer = {"records": records, "chunks": -(-records // chunk_records),
                       "counts": {"edge": records}}  # fmt: skip

    def _parse(self, comments=None):
        pcs: list[int] = []
        dests: list[int] = []
        try:
            with gzip.open(self.path, "rt") as lines:
                for number, line in enumerate(lines, 1):
                    if line.startswith("#") or not line.strip():
                        if comments is not None and line.startswith("#"):
                            comments.append(line[1:].strip())
                        continue
                    fields = line.split()
                    try:
                        if len(fields) != 2:
                            raise ValueError
                        pc, dest = int(fields[0], 16), int(fields[1], 16)
                        if not (0 <= pc < 1 << 64 and 0 <= dest < 1 << 64):
                            raise ValueError
                    except ValueError:
                        raise TraceError(
                            f"{self.path}:{number}: expected two hex numbers '<pc> <value>', "
                            f"got {line.strip()[:40]!r}"
                        ) from None
                    pcs.append(pc)
                    dests.append(dest)
                    if len(pcs) == self.chunk_records:
                        yield pcs, dests
                        pcs, dests = [], []
        except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
            raise TraceError(f"{self.path}: not a readable gzip'd text trace ({exc})") from None
        if pcs:
            yield pcs, dests

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self) -> None:
        pass

    @property
    def records(self) -> int:
        return int(self.footer["records"])

    @property
    def counts(self) -> dict[str, int]:
        return dict(self.footer["counts"])

    def chunks(self, kinds=None, columns=COLUMNS) -> Iterator[Chunk]:
        if isinstance(kinds, str):
            kinds = parse_kinds(kinds)
        if kinds is not None and EDGE not in kinds:
            return
        for pcs, dests in self._parse():
            n = len(pcs)
            yield Chunk(np.full(n, EDGE, np.uint8), np.zeros(n, np.uint8),
                        np.array(pcs, np.uint64), np.array(dests, np.uint64),
                        np.zeros(n, np.uint64))  # fmt: skip
