"""The 1M / 0.1% multi-hash configuration (block RAM design) on a real trace, natively.

Builds the generated Verilog of ``multihash -p accumulator=1000 -p
interval_length=1000000 -p threshold=1000`` (``ways`` 4, the catalog default)
with the native Verilator harness (hwprof/sim/native/multihash.cpp, records always
accepted), streams the first ``--tuples`` ``<load pc, value>`` keys of a trace
through it at one tuple per cycle, and compares every interval's readout with
the golden model (the compiled ``BulkProfiler``, bit-identical with the cycle
model by tests/test_multihash_golden.py). Prints the intervals, records,
mismatching intervals, cycles, stalls and simulation speed.

    .venv/bin/python bench/native_multihash_1m.py --trace build/traces/xz-...-loads-....trace
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from hwprof.catalog import get_top
from hwprof.experiments.value_streams import trace_keys
from hwprof.golden.multihash import BulkProfiler, split_profiles
from hwprof.golden.tracefile import open_trace
from hwprof.sim.native import build_native, run_multihash
from hwprof.synth import to_verilog

ONE_M = {"accumulator": 1000, "interval_length": 1_000_000, "threshold": 1000}


def first_keys(path, n):
    chunks, got = [], 0
    for keys in trace_keys(open_trace(path)):
        chunks.append(keys)
        got += len(keys)
        if got >= n:
            break
    return np.concatenate(chunks)[:n]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--tuples", type=int, default=20_000_000)
    args = ap.parse_args()
    top = get_top("multihash")
    params = top.resolve(ONE_M)
    t0 = time.perf_counter()
    exe = build_native(to_verilog(top.construct(ONE_M), top.name), top.name, "multihash")
    print(f"build {time.perf_counter() - t0:.0f} s ({exe})", flush=True)
    keys = first_keys(args.trace, args.tuples)
    want = split_profiles(*BulkProfiler(**params).feed(keys))
    with tempfile.TemporaryDirectory() as work:
        t0 = time.perf_counter()
        got, speed, stalls = run_multihash(exe, keys, Path(work), 64, params["counter_bits"],
                                           4 * params["accumulator"] + 20)  # fmt: skip
        wall = time.perf_counter() - t0
    bad = [i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w]
    print(f"params {params}")
    print(f"tuples {len(keys):,} intervals {len(got)} (golden {len(want)}) records "
          f"{sum(map(len, got)):,} (golden {sum(map(len, want)):,}) mismatching intervals "
          f"{len(bad) + abs(len(got) - len(want))} stalls {stalls} "
          f"{speed:,.0f} cycles/s, run {wall:.0f} s wall")  # fmt: skip
    # the checker can fail: the golden model with the fully associative accumulator
    other = split_profiles(*BulkProfiler(**{**params, "ways": 0}).feed(keys))
    print(f"intervals differing from the fully associative model: "
          f"{sum(g != o for g, o in zip(got, other, strict=False))}")


if __name__ == "__main__":
    main()
