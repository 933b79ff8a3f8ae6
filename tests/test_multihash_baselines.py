"""Baselines of the multi-hash experiment: equal-memory sizing, count-min, frequent items,
and the compiled hotlist against the Gibbons-Matias statements."""

from __future__ import annotations

import inspect
import textwrap

import numpy as np
import pytest

from hwprof.experiments import baselines
from hwprof.experiments.baselines import (
    CountMinBaseline,
    FrequentItemsBaseline,
    HotlistBaseline,
    budget_bytes,
    hotlist_interval,
)
from hwprof.golden.hotlist import Hotlist
from hwprof.golden.interval_error import IntervalTruth
from hwprof.golden.multihash import PRESETS, MultiHashConfig


def test_budget_by_hand():
    # 2048 x 24-bit counters = 6144 B; 100 entries x (64 + 24 + 2) bits = 1125 B
    assert budget_bytes(MultiHashConfig()) == {"counters": 6144, "accumulator": 1125,
                                               "total": 7269}  # fmt: skip
    c = MultiHashConfig(**PRESETS["1m"])
    assert budget_bytes(c)["total"] == 6144 + 11250
    cm = CountMinBaseline(c)
    assert (cm.num_hashes, cm.num_buckets) == (3, 256) and cm.bytes <= 6144 + 11250
    fi = FrequentItemsBaseline(c)
    assert fi.lg_max_k == 9 and fi.bytes == 18 * 512 <= 17394 < 18 * 1024
    hot = HotlistBaseline(MultiHashConfig())
    assert hot.entries == 7269 // 11 == 660


def stream(rng, length=20_000, distinct=3000):
    pool = rng.integers(0, 1 << 63, distinct, dtype=np.uint64)
    return pool[np.minimum(rng.zipf(1.3, length), distinct) - 1]


def test_count_min_never_underestimates(seed):
    """Count-min's estimate is >= the true count: no false negative, no neutral negative
    while the candidate list has room for every tuple whose estimate reaches T."""
    rng = np.random.default_rng(seed)
    keys = stream(rng)
    config = MultiHashConfig(counters=512, tables=4, accumulator=4096, interval_length=5000,
                             threshold=50)  # fmt: skip
    truth = IntervalTruth(keys, 5000, 50)
    cm = CountMinBaseline(config, seed=seed % 1000)
    parts, totals, _ = truth.evaluate(*cm.feed(keys, truth))
    assert np.all(parts[:, 1] == 0) and np.all(parts[:, 3] == 0), seed
    assert np.nanmax(totals) > 0, seed  # 3 x 64 buckets: collisions do show up


def test_sketches_exact_with_room(seed):
    """With fewer distinct tuples than slots, both sketches count exactly: error 0."""
    rng = np.random.default_rng(seed)
    keys = stream(rng, 10_000, 40)
    config = MultiHashConfig(interval_length=2000, threshold=20)
    truth = IntervalTruth(keys, 2000, 20)
    for profiler in (CountMinBaseline(config, seed=3), FrequentItemsBaseline(config),
                     HotlistBaseline(config, seed=seed)):  # fmt: skip
        if isinstance(profiler, CountMinBaseline):
            profiler.num_buckets = 1 << 16  # no collision among 40 keys (w.h.p.)
        parts, totals, _ = truth.evaluate(*profiler.feed(keys, truth))
        assert np.nansum(totals) == 0, (type(profiler).__name__, seed)


def test_hotlist_exact_while_it_fits():
    values, counts, p = hotlist_interval([5, 7, 5, 9, 5, 7], entries=3, seed=1)
    assert (values.tolist(), counts.tolist(), p) == ([5, 7, 9], [3, 2, 1], 1.0)


def unbiased_failures(run, seeds=120):
    """Gibbons-Matias: C[v] / p estimates v's count without bias (a 5-sigma bound)."""
    rng = np.random.default_rng(7)
    keys = np.concatenate([np.full(300, 1), rng.integers(100, 160, 1700)]).astype(np.uint64)
    rng.shuffle(keys)
    est = np.array([run(keys, s) for s in range(seeds)])
    bound = 5 * est.std(ddof=1) / np.sqrt(seeds)
    return [] if abs(est.mean() - 300) <= bound else [(est.mean(), bound)]


def compiled(keys, s):
    values, counts, p = hotlist_interval(keys, 16, seed=s)
    return counts[values == 1].sum() / p


def reference(keys, s):
    h = Hotlist(16, seed=s)
    for k in keys.tolist():
        h.add(k)
    return h.estimate(1)


@pytest.mark.parametrize("run", [compiled, reference], ids=["compiled", "reference"])
def test_hotlist_estimate_unbiased(run):
    assert unbiased_failures(run) == []


def test_hotlist_checker_catches_a_mutant(monkeypatch):
    """Mutant: thinning keeps each count with probability 1/2 while p is divided by f."""
    kernel = baselines._hotlist_kernel()
    source = textwrap.dedent(inspect.getsource(kernel.py_func)).replace("@njit(cache=True)\n", "")
    assert source.count("np.random.binomial(mcount[s], 1.0 / factor)") == 1
    namespace = dict(vars(baselines))
    exec(source.replace("np.random.binomial(mcount[s], 1.0 / factor)",
                        "np.random.binomial(mcount[s], 0.5)"), namespace)  # fmt: skip
    monkeypatch.setattr(baselines, "_hotlist_kernel", lambda: namespace["kernel"])  # as Python
    with np.errstate(over="ignore"):  # the map hash wraps around in uint64, as in numba
        assert unbiased_failures(compiled, seeds=30) != []
