"""Speed of the golden LFSR/brr models (outcomes per second), one core.

Run: ``.venv/bin/python bench/bench_lfsr_brr.py [--count N]``. Prints one line per
measurement; the figures quoted in docs/brr.md come from this script.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hwprof.golden.brr import FREQS, Brr


def best_of(repeats, fn):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    freqs = np.random.default_rng(1).integers(0, FREQS, args.count)
    fast = best_of(args.repeats, lambda: Brr(seed=12345).outcomes(freqs))
    print(f"golden brr fast path: {args.count / fast:,.0f} outcomes/s ({args.count} outcomes)")
    cycles = args.count // 20
    model = Brr(seed=12345)

    def cycle_model():
        for f in freqs[:cycles]:
            model.step(decode_valid=1, freq=int(f))

    slow = best_of(args.repeats, cycle_model)
    print(f"golden brr cycle model: {cycles / slow:,.0f} cycles/s ({cycles} cycles)")


if __name__ == "__main__":
    main()
