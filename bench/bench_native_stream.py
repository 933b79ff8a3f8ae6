"""Native Verilator stream harness: the tagged compressor and the stratified sampler
on a long skewed tuple stream, checked against their golden models.

Run: ``.venv/bin/python bench/bench_native_stream.py [--tuples N] [--seed S]``.
Builds each top (default parameters) with ``hwprof/sim/native/stream.cpp`` (cached
under build/sim/), streams N synthetic ``<pc, value>`` tuples (Zipf pcs over 5,000
sites, 70 % small Zipf values; tests/test_native_harness.py), one per cycle with an
always-ready consumer, and prints simulated cycles per second (simulation loop
only) and the comparison. docs/verification.md quotes it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from hwprof.catalog import get_top
from hwprof.golden.tagged import TaggedCompressor
from hwprof.sim.native import build_native, check_stream, run_stream
from hwprof.synth import to_verilog
from tests.test_native_harness import stratified_golden, synthetic_keys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tuples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    keys = synthetic_keys(args.tuples, args.seed)
    for name in ("tagged_compressor", "stratified"):
        top = get_top(name)
        p = top.resolve({})
        start = time.perf_counter()
        exe = build_native(to_verilog(top.construct({}), name), name, "stream")
        print(f"{name}: build (or cache) {time.perf_counter() - start:.1f} s")
        with tempfile.TemporaryDirectory() as tmp:
            messages, rate, stalls = run_stream(exe, keys, Path(tmp))
        if name == "tagged_compressor":
            golden, bits = TaggedCompressor(**p), p["hit_bits"] + 1
        else:
            golden, bits = stratified_golden(p), p["rate"].bit_length()
        report = check_stream(messages, keys, golden, bits)
        print(f"{name}: {rate:,.0f} cycles/s, {stalls} stalls, {report}")


if __name__ == "__main__":
    main()
