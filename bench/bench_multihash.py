"""Speed of the multi-hash golden model: cycle model vs. compiled fast path (tuples/s).

    .venv/bin/python bench/bench_multihash.py [--tuples N] [--preset 10k|1m]

Prints one line per path. The fast path's first call compiles (numba, cached on
disk); that warm-up is excluded from the measurement.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hwprof.golden.multihash import PRESETS, run_fast, run_plain


def keys_for(n, seed=1):
    rng = np.random.default_rng(seed)
    pool = rng.integers(0, 1 << 64, size=200_000, dtype=np.uint64)
    return pool[np.minimum(rng.zipf(1.2, size=n), len(pool)) - 1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuples", type=int, default=20_000_000)
    parser.add_argument("--plain-tuples", type=int, default=200_000)
    parser.add_argument("--preset", choices=sorted(PRESETS), default="10k")
    args = parser.parse_args()
    params = PRESETS[args.preset]
    keys = keys_for(args.tuples)
    run_fast(keys[: 2 * params["interval_length"]], **params)  # compile / load the cache
    start = time.perf_counter()
    profiles = run_fast(keys, **params)
    fast = time.perf_counter() - start
    print(f"fast path  ({args.preset}): {args.tuples / fast:,.0f} tuples/s "
          f"({args.tuples:,} tuples, {len(profiles)} intervals, {fast:.2f} s)")  # fmt: skip
    plain_keys = keys[: args.plain_tuples]
    start = time.perf_counter()
    run_plain(plain_keys, **params)
    plain = time.perf_counter() - start
    print(f"cycle model({args.preset}): {len(plain_keys) / plain:,.0f} tuples/s "
          f"({len(plain_keys):,} tuples, {plain:.2f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
