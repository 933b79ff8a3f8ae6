"""Compiled (numba) kernels of the trace writer's raw path: split and narrow columns.

The valgrind tool writes 32-byte records (:data:`hwprof.golden.tracefile.RAW_DTYPE`:
``pc, addr, value`` as little-endian u64, then ``kind``, ``size`` and 6 pad bytes).
:func:`split_raw` turns a chunk of them into the five columns of the trace format
in one pass, with each column's minimum and maximum and the records per kind
(which the column encoder and the footer need, and which numpy would compute
in one more pass each); :func:`narrow` stores ``column - base`` in a narrower
array in one pass (numpy: a subtraction, then a cast). Both release the GIL, so
the writer runs them in its worker threads next to zstd.

The results are exactly numpy's: ``tests/test_tracefile.py`` compares the files
written through this path with those written from numpy columns, byte for byte.
The kernels are compiled on first use and cached by numba (``cache=True``).
"""

from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["available", "split_raw", "narrow"]

_KERNELS = None
_LOCK = threading.Lock()  # worker threads may ask for the kernels at once


def available() -> bool:
    """The raw path reads the records as little-endian words: only on such machines."""
    return sys.byteorder == "little"


def _kernels():
    with _LOCK:
        return _KERNELS or _compile()


def _compile():
    global _KERNELS
    if _KERNELS is None:
        from numba import njit

        @njit(cache=True, nogil=True)
        def split(words, kind, size, pc, addr, value, bounds, counts):  # pragma: no cover
            n = kind.shape[0]
            lo_pc = lo_addr = lo_value = np.uint64(0xFFFFFFFFFFFFFFFF)
            hi_pc = hi_addr = hi_value = np.uint64(0)
            lo_size = np.uint8(255)
            hi_size = np.uint8(0)
            for i in range(n):
                p = words[4 * i]
                a = words[4 * i + 1]
                v = words[4 * i + 2]
                t = words[4 * i + 3]
                k = np.uint8(t & np.uint64(0xFF))
                s = np.uint8((t >> np.uint64(8)) & np.uint64(0xFF))
                pc[i] = p
                addr[i] = a
                value[i] = v
                kind[i] = k
                size[i] = s
                counts[k] += 1
                lo_pc = min(lo_pc, p)
                hi_pc = max(hi_pc, p)
                lo_addr = min(lo_addr, a)
                hi_addr = max(hi_addr, a)
                lo_value = min(lo_value, v)
                hi_value = max(hi_value, v)
                lo_size = min(lo_size, s)
                hi_size = max(hi_size, s)
            bounds[0, 0] = lo_pc
            bounds[0, 1] = hi_pc
            bounds[1, 0] = lo_addr
            bounds[1, 1] = hi_addr
            bounds[2, 0] = lo_value
            bounds[2, 1] = hi_value
            bounds[3, 0] = lo_size
            bounds[3, 1] = hi_size

        @njit(cache=True, nogil=True)
        def narrow(column, base, out):  # pragma: no cover
            for i in range(column.shape[0]):
                out[i] = column[i] - base

        _KERNELS = split, narrow
    return _KERNELS


def split_raw(raw: np.ndarray, out: list[np.ndarray] | None = None
              ) -> tuple[list[np.ndarray], dict[str, tuple[int, int]], np.ndarray]:  # fmt: skip
    """Columns of raw records, their bounds and the records per kind.

    Parameters
    ----------
    raw : np.ndarray
        Contiguous records of ``RAW_DTYPE`` (32 bytes each).
    out : list of np.ndarray, optional
        The five columns to fill (at least ``len(raw)`` long each; the first
        ``len(raw)`` elements are filled and returned). Reusing them spares the
        page faults of fresh memory, which cost more than the split itself.

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
    kind, size, pc, addr, value = (c[:n] for c in out)
    counts = np.zeros(256, np.int64)
    bounds = np.zeros((4, 2), np.uint64)
    words = np.ascontiguousarray(raw).view(np.uint64)
    split, _ = _kernels()
    split(words, kind, size, pc, addr, value, bounds, counts)
    found = {}
    if n:
        found = {name: (int(bounds[i, 0]), int(bounds[i, 1]))
                 for i, name in enumerate(("pc", "addr", "value", "size"))}  # fmt: skip
        present = np.flatnonzero(counts)
        found["kind"] = (int(present[0]), int(present[-1]))
    return [kind, size, pc, addr, value], found, counts


def narrow(column: np.ndarray, base: int, dtype: np.dtype, out: np.ndarray | None = None
           ) -> np.ndarray:  # fmt: skip
    """``(column - base).astype(dtype)`` in one pass (every element fits: not checked).

    ``out``: an array of ``dtype`` at least as long as ``column`` to fill (its first
    ``len(column)`` elements are returned).
    """
    out = np.empty(len(column), dtype) if out is None else out[: len(column)]
    _, kernel = _kernels()
    kernel(column, column.dtype.type(base), out)
    return out
