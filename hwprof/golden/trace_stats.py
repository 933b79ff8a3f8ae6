"""What a trace holds: tuples per interval and candidate tuples (multi-hash paper, Figs. 4-5).

Narayanasamy et al. (``papers/001``, sec. 5.2 and 5.6.1) divide the tuple
stream into *intervals* of a fixed number of tuples; a tuple is a *candidate*
of an interval when its count in that interval reaches the *candidate
threshold*, a percentage of the interval length (``count >= T`` with
``T = ceil(length * percent / 100)``, :func:`hwprof.golden.multihash.threshold_for`).
Their Fig. 4 shows the mean number of distinct tuples per interval, Fig. 5
the mean number of candidates, for thresholds 1% and 0.1%.

:class:`IntervalTuples` computes both, exactly (whole 64-bit fields, no key
truncation), over the *complete* intervals of a stream fed chunk by chunk;
memory is bounded by one block of about a million tuples.
:class:`PcCounts` counts records per pc for the top-PC list.
"""

from __future__ import annotations

import numpy as np

from .multihash import threshold_for

__all__ = ["IntervalTuples", "PcCounts", "BLOCK_TUPLES"]

#: Tuples sorted at once (rounded to whole intervals).
BLOCK_TUPLES = 1 << 20


class IntervalTuples:
    """Distinct and candidate ``<pc, x>`` tuples per complete interval of ``interval_length``.

    Parameters
    ----------
    interval_length : int
        Tuples per interval (>= 1).
    percents : tuple of float
        Candidate thresholds in percent of the interval length.

    Attributes
    ----------
    thresholds : tuple of int
        The thresholds in occurrences, ``ceil(interval_length * percent / 100)``.
    distinct : np.ndarray
        Distinct tuples of each complete interval (after :meth:`finish`).
    candidates : dict
        ``{percent: np.ndarray}``: candidates of each complete interval.
    leftover : int
        Tuples after the last complete interval (not counted).
    """

    def __init__(self, interval_length: int, percents=(1.0, 0.1)):
        if not isinstance(interval_length, int) or interval_length < 1:
            raise ValueError(f"interval_length must be a positive integer, not {interval_length!r}")
        self.interval_length = interval_length
        self.percents = tuple(percents)
        self.thresholds = tuple(threshold_for(interval_length, p) for p in self.percents)
        self._block = interval_length * max(1, BLOCK_TUPLES // interval_length)
        self._pcs: list[np.ndarray] = []
        self._xs: list[np.ndarray] = []
        self._buffered = 0
        self._distinct: list[np.ndarray] = []
        self._candidates: list[list[np.ndarray]] = [[] for _ in self.percents]
        self.leftover = 0

    def add(self, pc, x) -> None:
        """Feed the next tuples (equal-length uint64 arrays, stream order)."""
        self._pcs.append(np.asarray(pc, np.uint64))
        self._xs.append(np.asarray(x, np.uint64))
        self._buffered += len(self._pcs[-1])
        if self._buffered >= self._block:
            self._drain(final=False)

    def _drain(self, final: bool) -> None:
        pc, x = np.concatenate(self._pcs), np.concatenate(self._xs)
        length = self.interval_length
        usable = len(pc) // length * length
        if not final:
            usable = min(usable, self._block)
        for start in range(0, usable, self._block):
            end = min(start + self._block, usable)
            self._count(pc[start:end], x[start:end])
        self._pcs, self._xs = [pc[usable:]], [x[usable:]]
        self._buffered = len(pc) - usable
        if final:
            self.leftover = self._buffered

    def _count(self, pc, x) -> None:
        n, length = len(pc), self.interval_length
        m = n // length
        interval = np.repeat(np.arange(m, dtype=np.int64), length)
        order = np.lexsort((x, pc, interval))  # interval first: it stays in order
        ps, xs = pc[order], x[order]
        new = np.ones(n, dtype=bool)
        new[1:] = (ps[1:] != ps[:-1]) | (xs[1:] != xs[:-1]) | (interval[1:] != interval[:-1])
        starts = np.flatnonzero(new)
        runs = np.diff(np.append(starts, n))
        where = interval[starts]
        self._distinct.append(np.bincount(where, minlength=m))
        for out, threshold in zip(self._candidates, self.thresholds, strict=True):
            out.append(np.bincount(where[runs >= threshold], minlength=m))

    def finish(self) -> IntervalTuples:
        """Count the last complete intervals; returns ``self``."""
        self._drain(final=True)
        self.distinct = np.concatenate(self._distinct) if self._distinct else np.zeros(0, int)
        self.candidates = {
            p: (np.concatenate(c) if c else np.zeros(0, int))
            for p, c in zip(self.percents, self._candidates, strict=True)
        }
        return self

    @property
    def intervals(self) -> int:
        return len(self.distinct)


class PcCounts:
    """Records per pc, accumulated chunk by chunk (loads and control transfers apart)."""

    def __init__(self):
        self.pcs = np.zeros(0, np.uint64)
        self.counts = np.zeros((0, 2), np.int64)

    def add(self, pc, is_load) -> None:
        """Count ``pc`` (array); ``is_load`` (bool array) puts a record in column 0, else 1."""
        unique, inverse = np.unique(np.asarray(pc, np.uint64), return_inverse=True)
        is_load = np.asarray(is_load, bool)
        size = len(unique)
        counts = np.stack([np.bincount(inverse[is_load], minlength=size),
                           np.bincount(inverse[~is_load], minlength=size)], axis=1)  # fmt: skip
        merged, where = np.unique(np.concatenate([self.pcs, unique]), return_inverse=True)
        both = np.concatenate([self.counts, counts])
        total = np.stack([np.bincount(where, both[:, i], len(merged)) for i in (0, 1)], axis=1)
        total = total.astype(np.int64)  # exact: counts stay below 2**53
        self.pcs, self.counts = merged, total

    def top(self, n: int):
        """``[(pc, loads, others)]`` of the ``n`` pcs with the most records, most first."""
        total = self.counts.sum(axis=1)
        order = np.lexsort((self.pcs, -total))[:n]
        return [(int(self.pcs[i]), int(self.counts[i, 0]), int(self.counts[i, 1])) for i in order]
