"""Controlled runs for docs/notes/multihash-best-configuration.md.

Which multi-hash configuration is best (lowest formula (1) error) when one reading of
Narayanasamy et al. is changed in the model: the hash's randomize tables
(``--hash``), on the seeded Zipf generator of ``multihash-conditions`` (random
63-bit keys, or structured ``<pc, value>`` keys: pcs 4 bytes apart, small values)
or on a shipped trace's keys.

``--hash ours``: one random permutation per byte position and field (the shipped
model). ``shared-perm``: one permutation for every byte of pc and value.
``paper``: one 256-entry table of random bytes (not a permutation) for every byte
of pc and value, a different table per hash function (sec. 5.3 read literally).

Usage: python bench/bench_multihash_model_variants.py --hash paper --input zipf --preset 1m
    --distinct 30000 --skew 1.0 --seeds 2
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from hwprof.experiments import multihash_conditions as mc
from hwprof.golden import hashing
from hwprof.golden.interval_error import Bulk, profile_stream
from hwprof.golden.multihash import PRESETS

_ORIGINAL = hashing.make_tables


def shared_tables(permutation: bool):
    def make(table_seed, value_bits, pc_bits=0):
        rng = np.random.default_rng(table_seed)
        t = rng.permutation(256) if permutation else rng.integers(0, 256, 256)
        t = tuple(int(x) for x in t)

        def nb(bits):
            return (bits + 7) // 8

        return (t,) * nb(value_bits), (t,) * nb(pc_bits)

    return make


def structured_stream(seed, intervals, length, distinct, skew, churn):
    """As :func:`mc.zipf_stream`, but key = pc:value with pc = 0x400000 + 4 k
    (k < distinct / 8) and value < 4 * distinct (small integers)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, distinct + 1) ** skew
    weights /= weights.sum()

    def fresh(n):
        pc = 0x400000 + 4 * rng.integers(0, max(1, distinct // 8), n, dtype=np.uint64)
        value = rng.integers(0, 4 * distinct, n, dtype=np.uint64)
        return (pc << np.uint64(32)) | value

    keys = fresh(distinct)
    for i in range(intervals):
        if i:
            new = rng.random(distinct) < churn
            keys[new] = fresh(int(new.sum()))
        yield rng.permutation(np.repeat(keys, rng.multinomial(length, weights)))


def bursty(keys, width: float, seed: int):
    """``keys`` reordered: key ``k``'s occurrences at times ``phase_k + width * U``
    (modulo 1), ``phase_k`` uniform per key."""
    rng = np.random.default_rng(seed)
    unique, inverse = np.unique(keys, return_inverse=True)
    phase = rng.random(len(unique))
    time = (phase[inverse] + width * rng.random(len(keys))) % 1.0
    return keys[np.argsort(time, kind="stable")]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--hash", choices=("ours", "shared-perm", "paper"), default="ours")
    ap.add_argument("--input", choices=("zipf", "structured", "trace"), default="zipf")
    ap.add_argument("--trace", default="xz")
    ap.add_argument("--preset", choices=("10k", "1m"), default="1m")
    ap.add_argument("--distinct", type=int, default=30_000)
    ap.add_argument("--skew", type=float, default=1.0)
    ap.add_argument("--churn", type=float, default=0.0)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--intervals", type=int, default=4)
    ap.add_argument(
        "--burst",
        type=float,
        default=0.0,
        help="0: occurrences shuffled over the interval (the generator's); "
        "W > 0: each key's occurrences at a random phase + W * U(0, 1) "
        "(modulo the interval), so a key is hot in a window of W of it",
    )
    a = ap.parse_args(argv)
    hashing.make_tables = _ORIGINAL if a.hash == "ours" else shared_tables(a.hash != "paper")
    config = PRESETS[a.preset]
    length, threshold = config["interval_length"], config["threshold"]
    configs = [(f"C1R0 {n}", n, False) for n in (1, 2, 4, 8, 16)] + [
        (f"C1R1 {n}", n, True) for n in (2, 4)
    ]
    errors = {c[0]: [] for c in configs}
    for s in range(a.seeds):
        profilers = [
            Bulk(tables=n, conservative=True, reset=r, retain=True, hash_seed=1 + 100 * s, **config)
            for _, n, r in configs
        ]
        if a.input == "trace":
            from hwprof.traces import workloads
            from hwprof.traces.keys import trace_keys
            from hwprof.traces.tracefile import open_trace

            keys = np.concatenate(list(trace_keys(open_trace(workloads.shipped_trace(a.trace)))))
            n = min(a.intervals, len(keys) // length)
            stream = [keys[i * length : (i + 1) * length] for i in range(n)]
        else:
            gen = mc.zipf_stream if a.input == "zipf" else structured_stream
            stream = list(gen(1 + s, a.intervals, length, a.distinct, a.skew, a.churn))
            if a.burst > 0:
                stream = [bursty(keys, a.burst, 1000 + s) for keys in stream]
        res = profile_stream(iter(stream), profilers, length, threshold, workers=2, prefetch=False)
        for (label, _, _), e in zip(configs, res.errors, strict=True):
            errors[label].append(100 * e.total)
    means = {k: float(np.mean(v)) for k, v in errors.items()}
    best = min(means, key=means.get)
    print(
        f"hash={a.hash} input={a.input} preset={a.preset} distinct={a.distinct} "
        f"skew={a.skew} churn={a.churn} burst={a.burst} seeds={a.seeds} "
        f"intervals={a.intervals}" + (f" trace={a.trace}" if a.input == "trace" else "")
    )
    print(
        "  "
        + "  ".join(
            f"{k}: {m:.2f} [{min(errors[k]):.2f}-{max(errors[k]):.2f}]" for k, m in means.items()
        )
    )
    print(
        f"  best: {best}; C1R0 4 best in "
        f"{sum(min(errors, key=lambda k: errors[k][s]) == 'C1R0 4' for s in range(a.seeds))}"
        f"/{a.seeds} seeds"
    )


if __name__ == "__main__":
    sys.exit(main())
