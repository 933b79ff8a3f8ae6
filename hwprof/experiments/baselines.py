"""Baselines for the multi-hash profiler at equal memory: count-min, frequent items, hotlist.

What a user would pick instead of the paper's hardware, each run per interval
(reset at every interval start, like the hardware's flush) and reporting its
candidates, the tuples whose estimated count in the interval is at least ``T``,
with that estimate as ``f_h`` (so :mod:`hwprof.golden.interval_error` scores them
with formula (1) exactly like the hardware):

* :class:`CountMinBaseline`: Apache DataSketches ``count_min_sketch`` plus a
  candidate list of as many entries as the hardware accumulator (the usual
  "count-min + heap" heavy-hitter scheme). The sketch is linear, so each
  interval's distinct tuples are added with their counts as weights (the same
  sketch as one update per tuple). The list is idealised: it holds the
  ``accumulator`` tuples with the largest final estimates ``>= T`` (a heap that
  never evicts a tuple that ends up larger).
* :class:`FrequentItemsBaseline`: DataSketches ``frequent_items_sketch``
  (Misra-Gries with reverse purge); each interval's distinct tuples are added
  as weighted updates in a seeded random order (one Python call per tuple
  would take ~100x longer); the reported candidates are the items with
  estimate ``>= T``, at most ``accumulator`` of them.
* :class:`HotlistBaseline`: the Gibbons-Matias hotlist of
  :mod:`hwprof.golden.hotlist` (the same algorithm, compiled: :func:`hotlist_interval`),
  one tuple at a time in stream order, thinning factor ``f = 16/15`` (Burrows et
  al.'s); candidates are entries with ``C[v] / p >= T``.

Equal memory (:func:`budget_bytes`): the multi-hash configuration's counters
(``counters x counter_bits``) plus its accumulator (``entries x (key + count +
valid + replaceable bits)``). Count-min gets the same accumulator for its list and
the counters' bytes as 64-bit DataSketches counters (``num_hashes`` rows of
``bytes / 8 / num_hashes`` buckets); frequent items the largest power-of-two map
whose slots (8-byte item, 8-byte count, 2-byte state: 18 bytes, the C++ layout)
fit in the whole budget; the hotlist ``budget / (8 + counter_bits / 8)`` entries
(a 64-bit key and a counter each).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..golden.multihash import MultiHashConfig

__all__ = ["budget_bytes", "CountMinBaseline", "FrequentItemsBaseline", "HotlistBaseline",
           "hotlist_interval", "baselines_for"]  # fmt: skip

FI_SLOT_BYTES = 18


def budget_bytes(config: MultiHashConfig) -> dict:
    """Bytes of the multi-hash configuration: counters, accumulator, total."""
    counters = config.counters * config.counter_bits // 8
    entry_bits = config.key_bits + config.counter_bits + 2
    accumulator = (config.accumulator * entry_bits + 7) // 8
    return {"counters": counters, "accumulator": accumulator, "total": counters + accumulator}


def _records(per_interval):
    keys = [k for ks, _ in per_interval for k in ks]
    counts = [c for _, cs in per_interval for c in cs]
    ends = np.cumsum([len(ks) for ks, _ in per_interval]).astype(np.int64)
    return np.array(keys, np.uint64), np.array(counts, np.int64), ends


def _top(keys, estimates, threshold, limit):
    keys, estimates = np.asarray(keys, np.uint64), np.asarray(estimates, np.int64)
    keep = np.flatnonzero(estimates >= threshold)
    keep = keep[np.argsort(-estimates[keep], kind="stable")[:limit]]
    keep.sort()
    return keys[keep].tolist(), estimates[keep].tolist()


class CountMinBaseline:
    """Count-min (DataSketches) + an ``accumulator``-entry candidate list, per interval."""

    needs_truth = True

    def __init__(self, config: MultiHashConfig, *, num_hashes: int = 3, seed: int = 1):
        self.config = config
        self.num_hashes = num_hashes
        self.num_buckets = budget_bytes(config)["counters"] // 8 // num_hashes
        self.seed = seed
        self.bytes = 8 * num_hashes * self.num_buckets + budget_bytes(config)["accumulator"]

    def feed(self, keys, truth):
        from datasketches import count_min_sketch

        out = []
        for r in range(len(truth)):
            unique, counts = truth.interval(r)
            sketch = count_min_sketch(self.num_hashes, self.num_buckets, self.seed)
            items = unique.tolist()
            for item, count in zip(items, counts.tolist(), strict=True):
                sketch.update(item, count)
            estimates = [sketch.get_estimate(item) for item in items]
            out.append(_top(unique, estimates, self.config.threshold, self.config.accumulator))
        return _records(out)


class FrequentItemsBaseline:
    """Frequent items (DataSketches), ``2**lg_max_k`` map slots within the budget, per interval."""

    needs_truth = True

    def __init__(self, config: MultiHashConfig, *, seed: int = 1):
        self.config = config
        total = budget_bytes(config)["total"]
        self.lg_max_k = max(3, (total // FI_SLOT_BYTES).bit_length() - 1)
        self.bytes = FI_SLOT_BYTES << self.lg_max_k
        self.rng = np.random.default_rng(seed)

    def feed(self, keys, truth):
        from datasketches import frequent_items_sketch

        out = []
        for r in range(len(truth)):
            unique, counts = truth.interval(r)
            order = self.rng.permutation(len(unique))
            sketch = frequent_items_sketch(self.lg_max_k)
            for item, count in zip(unique[order].tolist(), counts[order].tolist(), strict=True):
                sketch.update(item, count)
            items = list(_items(sketch, self.config.threshold))
            out.append(_top([k for k, _ in items], [e for _, e in items],
                            self.config.threshold, self.config.accumulator))  # fmt: skip
        return _records(out)


def _items(sketch, threshold):
    from datasketches import frequent_items_error_type

    for row in sketch.get_frequent_items(frequent_items_error_type.NO_FALSE_NEGATIVES,
                                         threshold - 1):  # fmt: skip
        yield row[0], row[1]


@cache
def _hotlist_kernel():
    from numba import njit

    @njit(cache=True)
    def kernel(keys, entries, factor, seed, out_key, out_count):
        # Gibbons-Matias: C[v] += 1 with probability p; while more than `entries`
        # non-zero counters: p /= f and every C[v] := Binomial(C[v], 1 / f).
        np.random.seed(seed)
        size = 1
        while size < 4 * (entries + 1):
            size *= 2
        mask = size - 1
        mkey = np.zeros(size, np.uint64)
        mcount = np.zeros(size, np.int64)
        used = np.zeros(size, np.bool_)
        n = 0
        p = 1.0
        for j in range(keys.shape[0]):
            if p < 1.0 and np.random.random() >= p:
                continue
            key = keys[j]
            h = np.int64((key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & mask
            while used[h] and mkey[h] != key:
                h = (h + 1) & mask
            if used[h]:
                mcount[h] += 1
                continue
            used[h] = True
            mkey[h] = key
            mcount[h] = 1
            n += 1
            while n > entries:
                p /= factor
                ks = np.empty(n, np.uint64)
                cs = np.empty(n, np.int64)
                m = 0
                for s in range(size):
                    if used[s]:
                        c = np.random.binomial(mcount[s], 1.0 / factor)
                        if c > 0:
                            ks[m] = mkey[s]
                            cs[m] = c
                            m += 1
                used[:] = False
                for i in range(m):
                    h = np.int64((ks[i] * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & mask
                    while used[h]:
                        h = (h + 1) & mask
                    used[h] = True
                    mkey[h] = ks[i]
                    mcount[h] = cs[i]
                n = m
        m = 0
        for s in range(size):
            if used[s]:
                out_key[m] = mkey[s]
                out_count[m] = mcount[s]
                m += 1
        return m, p

    return kernel


def hotlist_interval(keys, entries: int, factor: float | None = None, seed: int = 0):
    """The hotlist of :class:`hwprof.golden.hotlist.Hotlist` over ``keys``, compiled.

    Returns ``(values, counts, p)``: the non-zero counters ``C[v]`` and the final
    ``p`` (estimates are ``C[v] / p``). Same algorithm, its own random stream
    (numba's generator seeded with ``seed``).
    """
    if factor is None:
        factor = entries / (entries - 1) if entries > 1 else 2.0
    if not factor > 1:
        raise ValueError(f"factor must be above 1, not {factor!r}")
    out_key = np.zeros(entries, np.uint64)
    out_count = np.zeros(entries, np.int64)
    m, p = _hotlist_kernel()(np.ascontiguousarray(keys, np.uint64), entries, float(factor),
                             seed, out_key, out_count)  # fmt: skip
    order = np.argsort(out_key[:m])
    return out_key[:m][order], out_count[:m][order], p


class HotlistBaseline:
    """The hotlist with ``budget / (8 + counter_bits / 8)`` entries, reset per interval."""

    needs_truth = False
    #: Burrows et al.'s thinning factor (their N = 16, f = 16/15); N / (N - 1) for our
    #: hundreds of entries would thin one count in N per step and take ~N times longer
    factor = 16 / 15

    def __init__(self, config: MultiHashConfig, *, seed: int = 1):
        self.config = config
        self.entry_bytes = 8 + config.counter_bits // 8
        self.entries = budget_bytes(config)["total"] // self.entry_bytes
        self.bytes = self.entries * self.entry_bytes
        self.rng = np.random.default_rng(seed)

    def feed(self, keys, truth=None):
        length = self.config.interval_length
        out = []
        for start in range(0, len(keys), length):
            values, counts, p = hotlist_interval(keys[start : start + length], self.entries,
                                                 self.factor,
                                                 seed=int(self.rng.integers(1 << 31)))  # fmt: skip
            estimates = np.floor(counts / p + 0.5).astype(np.int64)
            out.append(_top(values, estimates, self.config.threshold, self.config.accumulator))
        return _records(out)


def baselines_for(config: MultiHashConfig, seed: int) -> dict:
    """The three baselines at the memory of ``config`` (name -> profiler)."""
    return {"count-min": CountMinBaseline(config, seed=seed),
            "frequent-items": FrequentItemsBaseline(config, seed=seed),
            "hotlist": HotlistBaseline(config, seed=seed)}  # fmt: skip
