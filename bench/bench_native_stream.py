"""Native Verilator stream harness: simulated cycles per second of the tagged
compressor, the stratified sampler and the multi-hash profiler, with the check.

Run: ``.venv/bin/python bench/bench_native_stream.py [TOP..] [--tuples N] [--trace F]
[--repeat R]``. Builds each top (default parameters, ``-O2``) with
``hwprof/sim/native/stream.cpp`` (cached under build/sim/), streams N tuples (the
first N ``<load pc, value>`` tuples of ``--trace``, default the shipped
hwprof/traces/shipped/xz.trace; ``--synthetic``: Zipf pcs and values, tests/test_native_harness.py)
with the output always ready, R times, and prints the best and median simulated
cycles per second of the simulation loop: by the process's CPU time (the model's
own cost) and by wall time (on a shared machine, also the time others had the
core), the load average, and the comparison with the golden model (hwprof/verify/trace_verify.py).
docs/verification.md quotes it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from hwprof.traces.keys import PORT_VALUE_MAP, trace_keys
from hwprof.traces.workloads import shipped_trace
from hwprof.verify.trace_verify import Check, checked_tops


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("tops", nargs="*", default=checked_tops())
    parser.add_argument("--tuples", type=int, default=1_000_000)
    parser.add_argument("--trace", type=Path)
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.synthetic:
        from tests.test_native_harness import synthetic_keys

        keys, source = synthetic_keys(args.tuples, args.seed), "synthetic"
    else:
        trace = args.trace or shipped_trace("xz")
        keys = np.concatenate(list(trace_keys(trace, limit=args.tuples, value_map=PORT_VALUE_MAP)))
        source = Path(trace).name
    print(f"{len(keys):,} tuples of {source}; load average {os.getloadavg()}")
    for name in args.tops:
        start = time.perf_counter()
        check = Check.build(name)
        print(f"{name}: build (or cache) {time.perf_counter() - start:.1f} s")
        cpu, wall = [], []
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.repeat):
                report = check.run(keys, Path(tmp))
                cpu.append(report["rtl_cpu_cycles_per_second"])
                wall.append(report["rtl_cycles_per_second"])
        print(
            f"{name}: {report['cycles']:,} cycles, CPU {max(cpu):,} cycles/s best "
            f"({statistics.median(cpu):,.0f} median), wall {max(wall):,} best "
            f"({statistics.median(wall):,.0f} median); messages {report['messages']:,}, "
            f"stalls {report['stalls']:,}, mismatches {report['mismatches']}; "
            f"load average {os.getloadavg()[0]:.1f}"
        )


if __name__ == "__main__":
    main()
