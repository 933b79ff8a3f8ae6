"""The trace writer's raw path: split raw records into columns, narrow a column, into reused arrays.

The valgrind tool writes 32-byte records (:data:`hwprof.golden.tracefile.RAW_DTYPE`:
``pc, addr, value`` as little-endian u64, then ``kind``, ``size`` and 6 pad bytes).
:func:`split_raw` copies a chunk of them into the five columns of the trace format,
with each column's minimum and maximum and the records per kind (what the column
encoder and the footer need); :func:`narrow` stores ``column - base`` in a
narrower array in one pass. Both write into arrays the caller reuses from chunk
to chunk: the page faults of fresh memory cost more than the copies themselves
(docs/traces.md, "Capture speed"). numpy releases the GIL in these copies and
reductions, so the writer runs them in its worker threads next to zstd.

Plain numpy on purpose: a numba kernel that does the split in one pass is
about 3x faster per record (0.03 against 0.09 CPU-seconds per 8M records on
this machine), but importing numba and loading the compiled kernels costs
about 0.4 CPU-seconds in every ``hwprof trace capture`` process, more than
the split of a 31M-record xz trace saves.

The results are exactly numpy's columns: ``tests/test_trace_writer_raw.py`` compares
files written through this path with the format's numpy encoding, byte for byte.
"""

from __future__ import annotations

import numpy as np

__all__ = ["split_raw", "narrow"]

_FIELDS = ("kind", "size", "pc", "addr", "value")


def split_raw(raw: np.ndarray, out: list[np.ndarray] | None = None
              ) -> tuple[list[np.ndarray], dict[str, tuple[int, int]], np.ndarray]:  # fmt: skip
    """Columns of raw records, their bounds and the records per kind.

    Parameters
    ----------
    raw : np.ndarray
        Records of ``RAW_DTYPE`` (32 bytes each).
    out : list of np.ndarray, optional
        The five columns to fill (at least ``len(raw)`` long each; the first
        ``len(raw)`` elements are filled and returned). Reusing them spares the
        page faults of fresh memory.

    Returns
    -------
    columns : list of np.ndarray
        ``kind, size`` (uint8) and ``pc, addr, value`` (uint64), in the trace's column order.
    bounds : dict
        ``(min, max)`` of each column by name (Python ints; empty for no records).
    counts : np.ndarray
        Records per kind code (int64, 256 entries).
    """
    n = len(raw)
    if out is None:
        out = [np.empty(n, np.uint8), np.empty(n, np.uint8), *(np.empty(n, np.uint64)
                                                               for _ in range(3))]  # fmt: skip
    columns = [c[:n] for c in out]
    for name, column in zip(_FIELDS, columns, strict=True):
        np.copyto(column, raw[name])
    counts = np.bincount(columns[0], minlength=256).astype(np.int64, copy=False)
    bounds: dict[str, tuple[int, int]] = {}
    if n:
        present = np.flatnonzero(counts)
        bounds["kind"] = (int(present[0]), int(present[-1]))
        for name, column in zip(_FIELDS[1:], columns[1:], strict=True):
            bounds[name] = (int(column.min()), int(column.max()))
    return columns, bounds, counts


def narrow(column: np.ndarray, base: int, dtype: np.dtype, out: np.ndarray | None = None
           ) -> np.ndarray:  # fmt: skip
    """``(column - base).astype(dtype)`` in one pass (every element fits: not checked).

    ``out``: an array of ``dtype`` at least as long as ``column`` to fill (its first
    ``len(column)`` elements are returned).
    """
    out = np.empty(len(column), dtype) if out is None else out[: len(column)]
    np.subtract(column, column.dtype.type(base), out=out, casting="unsafe")
    return out
