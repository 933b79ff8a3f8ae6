"""The trace writer's per-chunk column work: bounds and kind counts, and narrowing.

:func:`bounds_and_counts` gives each column's minimum and maximum and the records
per kind (what the column encoder and the footer need); :func:`narrow` stores
``column - base`` in a narrower array in one pass, into an array the caller
reuses from chunk to chunk (the page faults of fresh memory cost more than the
subtraction). numpy releases the GIL in these reductions and copies, so the
writer runs them in its worker threads next to zstd.

The results are exactly numpy's: ``tests/test_trace_writer_chunks.py`` compares
the files written through these with the format's plain numpy encoding, byte
for byte.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bounds_and_counts", "narrow"]

_FIELDS = ("kind", "size", "pc", "addr", "value")


def bounds_and_counts(columns) -> tuple[dict[str, tuple[int, int]], np.ndarray]:
    """Each column's bounds and the records per kind.

    Parameters
    ----------
    columns : sequence of np.ndarray
        ``kind, size`` (uint8) and ``pc, addr, value`` (uint64), of one length.

    Returns
    -------
    bounds : dict
        ``(min, max)`` of each column by name (Python ints; empty for no records).
    counts : np.ndarray
        Records per kind code (int64, 256 entries).
    """
    counts = np.bincount(columns[0], minlength=256).astype(np.int64, copy=False)
    bounds: dict[str, tuple[int, int]] = {}
    if len(columns[0]):
        present = np.flatnonzero(counts)
        bounds["kind"] = (int(present[0]), int(present[-1]))
        for name, column in zip(_FIELDS[1:], columns[1:], strict=True):
            bounds[name] = (int(column.min()), int(column.max()))
    return bounds, counts


def narrow(column: np.ndarray, base: int, dtype: np.dtype, out: np.ndarray | None = None
           ) -> np.ndarray:  # fmt: skip
    """``(column - base).astype(dtype)`` in one pass (every element fits: not checked).

    ``out``: an array of ``dtype`` at least as long as ``column`` to fill (its first
    ``len(column)`` elements are returned).
    """
    out = np.empty(len(column), dtype) if out is None else out[: len(column)]
    np.subtract(column, column.dtype.type(base), out=out, casting="unsafe")
    return out
