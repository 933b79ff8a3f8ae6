"""Formula (1) of Narayanasamy et al. on long streams, for many profilers at once.

:func:`hwprof.golden.multihash.error_rate` is the readable reference (Python
dicts, one interval at a time). This module computes the same numbers (tested
equal) fast enough for 100M-tuple traces and many configurations:

* :class:`IntervalTruth`: the exact counts of a block of whole intervals, once
  (each interval's keys sorted with numpy, run-length encoded in numba): the
  distinct tuples and the true candidates of every interval (the paper's Figs.
  4 and 5) and what :meth:`IntervalTruth.evaluate` needs.
* :meth:`IntervalTruth.evaluate`: formula (1) of one hardware profile per
  interval, given as ``(keys, counts, ends)`` records (what
  :meth:`hwprof.golden.multihash.BulkProfiler.feed` returns): per interval the
  four parts, the total (NaN where formula (1) is 0/0: no candidate in either
  profile) and whether anything was reported.
* :func:`profile_stream`: streams chunks of keys through any number of
  profilers in lock step (each gets the same whole intervals; the exact counts
  are computed once per block), in threads (the numba kernels release the GIL).

A *profiler* here is any object with ``feed(keys, truth) -> (keys, counts,
ends)`` that is given whole intervals; :class:`Bulk` wraps a
:class:`~hwprof.golden.multihash.BulkProfiler`.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .multihash import BulkProfiler, ErrorRate, mean_error

__all__ = ["IntervalTruth", "Bulk", "StreamResult", "profile_stream"]

@cache
def _kernels():
    from numba import njit

    @njit(cache=True, nogil=True)
    def rle(rows, thr, unique, counts, offsets, cand_sum, candidates):
        n, length = rows.shape
        k = 0
        for r in range(n):
            offsets[r] = k
            j = 0
            while j < length:
                v = rows[r, j]
                e = j + 1
                while e < length and rows[r, e] == v:
                    e += 1
                unique[k] = v
                counts[k] = e - j
                if e - j >= thr:
                    cand_sum[r] += e - j
                    candidates[r] += 1
                k += 1
                j = e
        offsets[n] = k
        return k

    @njit(cache=True, nogil=True)
    def evaluate(unique, counts, offsets, cand_sum, thr, hk, hc, ends, parts, totals, reported):
        begin = 0
        for r in range(ends.shape[0]):
            end = ends[r]
            lo, hi = offsets[r], offsets[r + 1]
            f_pos = 0
            n_pos = 0
            n_neg = 0
            matched = 0
            extra = 0
            for j in range(begin, end):
                key = hk[j]
                fh = hc[j]
                a, b = lo, hi
                while a < b:
                    m = (a + b) // 2
                    if unique[m] < key:
                        a = m + 1
                    else:
                        b = m
                fp = 0
                if a < hi and unique[a] == key:
                    fp = counts[a]
                if fp >= thr:
                    matched += fp
                    if fh > fp:
                        n_pos += fh - fp
                    else:
                        n_neg += fp - fh
                else:
                    f_pos += abs(fp - fh)
                    extra += fp
            reported[r] = end > begin
            den = cand_sum[r] + extra
            if den == 0:  # no candidate in either profile: 0/0, no error rate
                totals[r] = np.nan
            else:
                f_neg = cand_sum[r] - matched
                parts[r, 0] = f_pos / den
                parts[r, 1] = f_neg / den
                parts[r, 2] = n_pos / den
                parts[r, 3] = n_neg / den
                totals[r] = (f_pos + f_neg + n_pos + n_neg) / den
            begin = end

    return (rle, evaluate)


class IntervalTruth:
    """Exact counts of ``n`` whole intervals of ``keys`` (``len(keys) == n * L``).

    Attributes
    ----------
    unique, counts : np.ndarray
        Each interval's distinct keys (sorted) and their counts, concatenated;
        interval ``r`` is ``offsets[r]:offsets[r + 1]``.
    distinct, candidates : np.ndarray
        Distinct tuples and true candidates (``count >= T``) per interval.
    candidate_sum : np.ndarray
        ``sum f_p`` over each interval's true candidates.
    """

    def __init__(self, keys, interval_length: int, threshold: int):
        keys = np.asarray(keys, dtype=np.uint64)
        if interval_length < 1 or len(keys) % interval_length:
            raise ValueError(f"{len(keys)} keys are not whole intervals of {interval_length}")
        rle, _ = _kernels()
        self.interval_length, self.threshold = interval_length, threshold
        n = len(keys) // interval_length
        rows = np.sort(keys.reshape(n, interval_length), axis=1)
        self.unique = np.empty(len(keys), np.uint64)
        self.counts = np.empty(len(keys), np.int64)
        self.offsets = np.empty(n + 1, np.int64)
        self.candidate_sum = np.zeros(n, np.int64)
        self.candidates = np.zeros(n, np.int64)
        k = rle(rows, threshold, self.unique, self.counts, self.offsets, self.candidate_sum,
                self.candidates)  # fmt: skip
        self.unique, self.counts = self.unique[:k], self.counts[:k]
        self.distinct = np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def interval(self, r: int):
        """``(unique, counts)`` of interval ``r``."""
        lo, hi = self.offsets[r], self.offsets[r + 1]
        return self.unique[lo:hi], self.counts[lo:hi]

    def evaluate(self, keys, counts, ends):
        """Formula (1) per interval: ``(parts n x 4, totals n, reported n)``.

        ``ends[r]`` is the end offset of interval ``r``'s records in ``keys`` /
        ``counts`` (one hardware profile per interval, each key at most once).
        """
        _, evaluate = _kernels()
        n = len(self)
        ends = np.asarray(ends, dtype=np.int64)
        if len(ends) != n:
            raise ValueError(f"{len(ends)} hardware profiles for {n} intervals")
        parts = np.zeros((n, 4))
        totals = np.zeros(n)
        reported = np.zeros(n, np.bool_)
        evaluate(self.unique, self.counts, self.offsets, self.candidate_sum, self.threshold,
                 np.asarray(keys, np.uint64), np.asarray(counts, np.int64), ends, parts, totals,
                 reported)  # fmt: skip
        return parts, totals, reported


class Bulk:
    """A :class:`~hwprof.golden.multihash.BulkProfiler` as a :func:`profile_stream` profiler."""

    def __init__(self, **params):
        self.profiler = BulkProfiler(**params)

    def feed(self, keys, truth=None):
        return self.profiler.feed(keys)


@dataclass
class StreamResult:
    """What :func:`profile_stream` measured: per-interval truth and each profiler's error."""

    intervals: int = 0
    tuples: int = 0
    distinct: list = field(default_factory=list)
    candidates: list = field(default_factory=list)
    errors: list = field(default_factory=list)  # ErrorRate per profiler


def _prefetch(chunks, depth: int = 2):
    """Iterate ``chunks`` in a background thread, ``depth`` items ahead."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def work():
        try:
            for item in chunks:
                if stop.is_set():
                    return
                q.put(item)
            q.put(done)
        except BaseException as exc:  # handed to the consumer
            q.put(exc)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while thread.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                thread.join(0.01)


def profile_stream(chunks, profilers, interval_length: int, threshold: int, *,
                   max_intervals: int | None = None, workers: int | None = None,
                   block: int = 1 << 21, prefetch: bool = True) -> StreamResult:  # fmt: skip
    """Run ``profilers`` over the stream ``chunks`` (arrays of uint64 keys).

    Only whole intervals are used (at most ``max_intervals``); an incomplete
    last interval is dropped. Blocks of about ``block`` keys (whole intervals)
    are counted exactly once (:class:`IntervalTruth`) while the profilers run,
    ``workers`` threads at a time (default: the machine's cores; the numba
    kernels and numpy's sort release the GIL); a profiler with a true
    ``needs_truth`` attribute gets the block's truth, the others ``None``. With
    ``prefetch`` the next chunk is read in a background thread meanwhile.
    """
    per_block = max(1, block // interval_length)
    workers = workers or os.cpu_count() or 1
    parts = [[] for _ in profilers]
    totals = [[] for _ in profilers]
    reported = [[] for _ in profilers]
    out = StreamResult()
    limit = math.inf if max_intervals is None else max_intervals
    pool = ThreadPoolExecutor(max_workers=max(workers, 2))

    def one(i, keys, truth):
        records = profilers[i].feed(keys, truth)
        return records

    def process(keys):
        truth_job = pool.submit(IntervalTruth, keys, interval_length, threshold)
        eager = {i: pool.submit(one, i, keys, None) for i, p in enumerate(profilers)
                 if not getattr(p, "needs_truth", False)}  # fmt: skip
        truth = truth_job.result()
        late = {i: pool.submit(one, i, keys, truth) for i, p in enumerate(profilers)
                if getattr(p, "needs_truth", False)}  # fmt: skip
        jobs = eager | late
        for i in range(len(profilers)):
            p, t, r = truth.evaluate(*jobs[i].result())
            parts[i].append(p)
            totals[i].append(t)
            reported[i].append(r)
        out.distinct += truth.distinct.tolist()
        out.candidates += truth.candidates.tolist()
        out.intervals += len(truth)
        out.tuples += len(keys)

    pending = []
    held = 0
    try:
        for chunk in _prefetch(chunks) if prefetch else chunks:
            if out.intervals >= limit:
                break
            pending.append(np.asarray(chunk, dtype=np.uint64))
            held += len(pending[-1])
            if held < per_block * interval_length:
                continue
            carry = np.concatenate(pending)
            while len(carry) >= per_block * interval_length and out.intervals < limit:
                n = int(min(per_block, limit - out.intervals))
                process(carry[: n * interval_length])
                carry = carry[n * interval_length :]
            pending, held = [carry], len(carry)
        carry = np.concatenate(pending) if pending else np.zeros(0, np.uint64)
        n = int(min(len(carry) // interval_length, limit - out.intervals))
        if n > 0:
            process(carry[: n * interval_length])
    finally:
        pool.shutdown()
    for i in range(len(profilers)):
        if parts[i]:
            out.errors.append(mean_error(np.concatenate(parts[i]), np.concatenate(totals[i]),
                                         out.candidates, np.concatenate(reported[i])))  # fmt: skip
        else:
            out.errors.append(ErrorRate(0.0, 0.0, 0.0, 0.0, 0.0, 0))
    return out
