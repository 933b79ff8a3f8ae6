"""The legacy edge traces of valgrind's lackey tool, and the keys of an edge-profile trace.

Legacy file format: gzip'd text, one tuple per line, two hexadecimal numbers
``<pc> <value>`` (source and destination superblock address, no ``0x``). Lines
starting with ``#`` are comments. The binary format of
:mod:`hwprof.traces.tracefile` replaces it: ``hwprof trace convert`` turns a
legacy file into one (``edge`` records), and traces are captured with hwprof's own
tool (:mod:`hwprof.traces.workloads`). :func:`read_trace` returns the keys
``(pc << 32) | value`` (:func:`hwprof.golden.hashing.pack_key` layout, 32-bit
fields: both addresses are truncated to their low 32 bits).
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from .keys import EDGE_KINDS
from .tracefile import EDGE, LOAD, TraceError, open_trace

__all__ = ["TraceError", "read_trace", "write_trace"]

MASK32 = (1 << 32) - 1


def write_trace(path: Path, pcs, values, comment: str = "") -> None:
    """Write ``pcs[i] values[i]`` pairs as a gzip'd text trace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as out:
        if comment:
            out.write(f"# {comment}\n")
        for pc, value in zip(pcs, values, strict=True):
            out.write(f"{int(pc):x} {int(value):x}\n")


def read_trace(path: Path) -> np.ndarray:
    """Keys ``(pc << 32) | value`` of a trace file; :class:`TraceError` if malformed.

    A legacy gzip'd text trace gives its edges ``<source, destination>``; a trace
    of the binary format (:mod:`hwprof.traces.tracefile`) its edges if it holds
    any, else its loads' ``<pc, value>`` if it holds any, else the ``<pc, target>``
    of its control transfers (:data:`~hwprof.traces.keys.EDGE_KINDS`: a branch
    trace). Fields keep their low 32 bits.
    """
    with open_trace(path) as trace:
        if trace.counts.get("edge"):
            chunks = list(trace.keys(field="address", kinds=[EDGE]))
        elif trace.counts.get("load"):
            chunks = list(trace.keys(field="value", kinds=[LOAD]))
        else:
            chunks = list(trace.keys(field="address", kinds=EDGE_KINDS))
    keys = np.concatenate(chunks) if chunks else np.zeros(0, np.uint64)
    if not len(keys):
        raise TraceError(f"{path}: no tuples")
    return keys
