"""End-to-end speed of the multi-hash golden model on a long value stream (tuples/s).

    .venv/bin/python bench/bench_multihash_stream.py [--tuples N] [--trace FILE] [--tables 4]

Streams ``N`` tuples (default 100M) through :func:`hwprof.golden.interval_error.
profile_stream` with one profiler (C1-R0-P1, the paper's best configuration)
for each of the paper's presets (10k / 1% / 100 entries and 1M / 0.1% / 1000
entries, 2048 counters): read (or generate) + profile + formula (1) per
interval. With ``--trace`` the tuples come from a captured trace
(``hwprof.traces.tracefile``); without, from the seeded synthetic value stream
of ``hwprof.traces.keys``, generated into memory beforehand (not
timed: the figure is then profile + error only). Prints one line per preset,
with the wall time and the CPU time of all threads (on the shared 2-core
machine the wall time depends on the other jobs). The first call compiles the
numba kernels (cached on disk); that warm-up is excluded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from hwprof.golden.interval_error import Bulk, profile_stream
from hwprof.golden.multihash import PRESETS
from hwprof.traces.keys import SyntheticValueTrace, trace_keys


def sources(args):
    """Chunks of keys: read from ``--trace`` while profiling, or generated beforehand."""
    if args.trace:
        from hwprof.traces.tracefile import open_trace

        return lambda: trace_keys(open_trace(args.trace)), 0.0
    start = time.perf_counter()
    chunks = list(trace_keys(SyntheticValueTrace(args.seed, args.tuples)))
    return (lambda: iter(chunks)), time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tuples", type=int, default=100_000_000)
    parser.add_argument("--trace", help="a captured trace instead of the synthetic stream")
    parser.add_argument("--tables", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--preset", choices=sorted(PRESETS), action="append")
    args = parser.parse_args()
    warm = np.arange(30_000, dtype=np.uint64)
    profile_stream([warm], [Bulk(interval_length=10_000, threshold=100)], 10_000, 100)
    source, generated = sources(args)
    if not args.trace:
        print(f"synthetic stream: {args.tuples:,} tuples generated in {generated:.1f} s "
              "(not timed below)")
    for name in args.preset or sorted(PRESETS):
        p = PRESETS[name]
        start, cpu = time.perf_counter(), time.process_time()
        result = profile_stream(source(), [Bulk(tables=args.tables, **p)], p["interval_length"],
                                p["threshold"], max_intervals=args.tuples // p["interval_length"],
                                workers=1)  # fmt: skip
        total, cpu = time.perf_counter() - start, time.process_time() - cpu
        what = "read + profile + error" if args.trace else "profile + error (in memory)"
        print(f"{name}: {result.tuples:,} tuples, {result.intervals} intervals, {what} "
              f"{result.tuples / total / 1e6:.2f} M tuples/s ({total:.1f} s wall; "
              f"{cpu:.1f} s CPU in all threads, {result.tuples / cpu / 1e6:.2f} M tuples/CPU-s); "
              f"error {100 * result.errors[0].total:.3f} %")  # fmt: skip


if __name__ == "__main__":
    main()
