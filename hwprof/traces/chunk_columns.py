"""The trace writer's per-chunk column work: bounds and kind counts, and narrowing.

:func:`bounds_and_counts` gives each column's minimum and maximum (for a 64-bit
column that a sample already shows to span 2**32 or more, the sample's: the
encoder only needs to know that no narrow encoding fits) and the records per
kind (what the column encoder and the footer need); :func:`narrow` stores
``column - base`` in a narrower array in one pass, into an array the caller
reuses from chunk to chunk (the page faults of fresh memory cost more than the
subtraction). numpy releases the GIL in these reductions and copies, so the
writer runs them in its worker threads next to zstd.

The results are exactly numpy's: ``tests/test_traces_writer_chunks.py`` compares
the files written through these with the format's plain numpy encoding, byte
for byte.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bounds_and_counts", "narrow"]

_FIELDS = ("kind", "size", "pc", "addr", "value")


#: Every ``SAMPLE_STEP``-th element of a wide column is looked at first: when those
#: already span 2**32 or more, no narrow encoding fits and the full pass is skipped.
SAMPLE_STEP = 64
#: The smallest span that rules out every narrow encoding (offsets of at most 4 bytes).
WIDE_SPAN = 1 << 32


def bounds_and_counts(columns) -> tuple[dict[str, tuple[int, int]], np.ndarray]:
    """Each column's bounds and the records per kind.

    Parameters
    ----------
    columns : sequence of np.ndarray
        ``kind, size`` (uint8) and ``pc, addr, value`` (uint64), of one length.

    Returns
    -------
    bounds : dict
        ``(min, max)`` of each column by name (Python ints; empty for no records),
        except for a 64-bit column whose every ``SAMPLE_STEP``-th element already
        spans :data:`WIDE_SPAN` or more: then the bounds of that sample, which lie
        inside the column's and are as far apart as the encoder needs to know (no
        offset of 4 bytes or less fits, and the column is not constant). Loaded
        values and data addresses are such columns in nearly every chunk of a
        real program; the sample costs 1/64 of the two passes of min and max.
    counts : np.ndarray
        Records per kind code (int64, 256 entries).
    """
    kind = columns[0]
    counts = np.zeros(256, np.int64)
    bounds: dict[str, tuple[int, int]] = {}
    if not len(kind):
        return bounds, counts
    lo, hi = int(kind.min()), int(kind.max())
    # one comparison per kind present instead of np.bincount, which widens the
    # uint8 column to intp first (3x slower on 2**20 records)
    for code in range(lo, hi + 1):
        counts[code] = np.count_nonzero(kind == code)
    bounds["kind"] = (lo, hi)
    for name, column in zip(_FIELDS[1:], columns[1:], strict=True):
        if column.itemsize == 8 and len(column) >= 2 * SAMPLE_STEP:
            sample = column[::SAMPLE_STEP]
            lo, hi = int(sample.min()), int(sample.max())
            if hi - lo >= WIDE_SPAN:
                bounds[name] = (lo, hi)
                continue
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
