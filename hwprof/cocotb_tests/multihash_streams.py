"""Test streams for the multi-hash profiler (shared by the cocotb module and pytest)."""

from __future__ import annotations

import numpy as np

from hwprof.golden.multihash import MultiHashConfig


def random_keys(rng, n, key_bits, distinct=None):
    """Uniform keys, or uniform over ``distinct`` random keys."""
    if distinct is None:
        return [int(k) for k in rng.integers(0, 1 << key_bits, size=n, dtype=np.uint64)]
    pool = rng.integers(0, 1 << key_bits, size=distinct, dtype=np.uint64)
    return [int(k) for k in pool[rng.integers(0, distinct, size=n)]]


def zipf_keys(rng, n, key_bits, a=1.3, distinct=4096):
    pool = rng.integers(0, 1 << key_bits, size=distinct, dtype=np.uint64)
    ranks = np.minimum(rng.zipf(a, size=n), distinct) - 1
    return [int(k) for k in pool[ranks]]


def colliding_keys(config: MultiHashConfig, rng, count, table=0):
    """``count`` distinct keys that all hash to one counter of ``table``."""
    h = config.hashes()[table]
    found = []
    target = None
    while len(found) < count:
        cand = rng.integers(0, 1 << config.key_bits, size=1 << 14, dtype=np.uint64)
        idx = h.many(cand)
        if target is None:
            target = int(idx[0])
        found.extend(int(k) for k in np.unique(cand[idx == target]))
    return found[:count]


def collision_stream(config, rng, n, hot=4, cold=60):
    """All keys collide in table 0: a few hot keys (above threshold) among cold ones."""
    keys = colliding_keys(config, rng, hot + cold)
    weights = np.array([20.0] * hot + [1.0] * cold)
    pick = rng.choice(len(keys), size=n, p=weights / weights.sum())
    return [keys[i] for i in pick]


def at_threshold_stream(config, rng, intervals):
    """Per interval: keys occurring exactly T and T - 1 times, shuffled, padded with noise."""
    length, t = config.interval_length, config.threshold
    out = []
    for _ in range(intervals):
        exact = random_keys(rng, max(1, length // (4 * t)), config.key_bits)
        under = random_keys(rng, max(1, length // (4 * t)), config.key_bits)
        body = [k for k in exact for _ in range(t)] + [k for k in under for _ in range(t - 1)]
        body = body[:length]
        body += random_keys(rng, length - len(body), config.key_bits)
        rng.shuffle(body)
        out += body
    return out


def repeated_stream(config, rng, n):
    """The same tuple over and over, with short runs of a second one."""
    a, b = random_keys(rng, 2, config.key_bits)
    return [b if (i // 7) % 5 == 4 else a for i in range(n)]
