"""The ``multihash-values`` sweep on one trace: wall and CPU time, and where the CPU goes.

    .venv/bin/python bench/bench_multihash_sweep.py --trace FILE [--preset 1m] [--intervals N]
        [--seeds 5] [--split]

Runs :func:`hwprof.experiments.multihash_values.run_program` (every configuration
of the sweep and the two set-associative accumulators, 17 x ``--seeds``, and the 3
baselines x ``--seeds``, with exact
counts and formula (1) per interval, reading the trace as it goes) on the first
``--intervals`` intervals of ``--trace`` (default: all, i.e. 100 intervals of 1M on
a 100M-load trace) and prints the wall time, the CPU time of the process (all
threads) and the load average, which on the shared 2-core machine says how much of
the wall time was waiting. ``--split`` runs the same profilers one thread at a time
(one seed) and prints each one's CPU seconds (``time.thread_time``) and those of the
exact counts and of formula (1): the profile to read before optimising. The numba
kernels are compiled (or loaded from their cache) on a few intervals first, untimed.
"""

from __future__ import annotations

import argparse
import collections
import os
import time

from hwprof.experiments.baselines import baselines_for
from hwprof.experiments.multihash_values import (
    ORGANISATIONS,
    WORKERS,
    configurations,
    hash_seed,
    run_program,
)
from hwprof.golden.interval_error import Bulk, IntervalTruth, profile_stream
from hwprof.golden.multihash import PRESETS, MultiHashConfig
from hwprof.traces.keys import trace_keys
from hwprof.traces.tracefile import open_trace


class _Timed:
    """A profiler whose ``feed`` CPU time (this thread's) is added to ``spent[label]``."""

    def __init__(self, label, profiler, spent):
        self.label, self.profiler, self.spent = label, profiler, spent
        self.needs_truth = getattr(profiler, "needs_truth", False)

    def feed(self, keys, truth):
        start = time.thread_time()
        out = self.profiler.feed(keys, truth)
        self.spent[self.label] += time.thread_time() - start
        return out


def split(trace: str, preset: dict, intervals: int | None) -> None:
    spent: collections.Counter = collections.Counter()
    truth_init, truth_eval = IntervalTruth.__init__, IntervalTruth.evaluate

    def init(self, *args, **kwargs):
        start = time.thread_time()
        truth_init(self, *args, **kwargs)
        spent["exact counts"] += time.thread_time() - start

    def evaluate(self, *args):
        start = time.thread_time()
        out = truth_eval(self, *args)
        spent["formula (1)"] += time.thread_time() - start
        return out

    profilers = [_Timed(label, Bulk(tables=t, conservative=c, reset=r, retain=True,
                                    hash_seed=hash_seed(0), **preset), spent)
                 for label, t, c, r in configurations()]  # fmt: skip
    profilers += [_Timed(name, p, spent)
                  for name, p in baselines_for(MultiHashConfig(**preset), seed=1).items()]
    IntervalTruth.__init__, IntervalTruth.evaluate = init, evaluate
    try:
        cpu = time.process_time()
        profile_stream(trace_keys(open_trace(trace)), profilers,
                       preset["interval_length"], preset["threshold"], max_intervals=intervals,
                       workers=1)  # fmt: skip
        cpu = time.process_time() - cpu
    finally:
        IntervalTruth.__init__, IntervalTruth.evaluate = truth_init, truth_eval
    print(f"split (one seed, one thread): {cpu:.1f} CPU s in all, of which")
    for label, seconds in spent.most_common():
        print(f"  {label:16} {seconds:7.2f} s  {100 * seconds / cpu:5.1f} %")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", required=True, help="a captured load trace")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="1m")
    parser.add_argument("--intervals", type=int, help="intervals to run (default: all)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, default=WORKERS)
    parser.add_argument("--split", action="store_true", help="CPU seconds per profiler")
    args = parser.parse_args()
    preset = PRESETS[args.preset]
    run_program(open_trace(args.trace), PRESETS["10k"], 1, 3, workers=1)  # compile / load
    if args.split:
        split(args.trace, preset, args.intervals)
        return
    load = os.getloadavg()[0]
    start, cpu = time.perf_counter(), time.process_time()
    r = run_program(open_trace(args.trace), preset, args.seeds, args.intervals,
                    workers=args.workers)  # fmt: skip
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(f"{args.preset}: {r['tuples']:,} tuples, {r['intervals']} intervals, "
          f"{r['profilers']} profilers ({len(configurations())} configurations + "
          f"{len(ORGANISATIONS) - 1} accumulator organisations + 3 baselines, x {args.seeds} "
          f"seeds), {args.workers} threads: {wall:.1f} s wall, "
          f"{cpu:.1f} s CPU ({r['tuples'] * r['profilers'] / cpu / 1e6:.1f} M profiler-tuples "
          f"per CPU-s); load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
