"""Native Verilator harness speed: the brr unit over full LFSR periods.

Run: ``.venv/bin/python bench/bench_native_brr.py [--periods P] [--width W]``.
Builds the generated brr Verilog with ``hwprof/tops/native/brr_period.cpp``
(once, cached under build/sim/), runs ``P`` full periods of the LFSR (decode
every cycle, random freq), checks every cycle against the golden model and
prints simulated cycles per second (the simulation loop only, best of the
runs) and the mismatch counts. docs/verification.md quotes it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from hwprof.catalog import get_top
from hwprof.golden.brr import Brr, BrrConfig
from hwprof.sim.native import build_native
from hwprof.synth import to_verilog
from hwprof.tops.brr_bench import BRR_PERIOD, check_brr_period, run_brr_period


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--periods", type=int, default=2)
    parser.add_argument("--width", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    top = get_top("brr")
    params = {"width": args.width}
    start = time.perf_counter()
    exe = build_native(to_verilog(top.construct(params), "brr"), "brr", BRR_PERIOD)
    print(f"build (or cache): {time.perf_counter() - start:.1f} s")
    config = BrrConfig(width=args.width)
    cycles = args.periods * ((1 << args.width) - 1) + 1
    rates = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            run = run_brr_period(exe, cycles, args.seed + r, Path(tmp) / "out.bin")
            rates.append(run.cycles_per_second)
            report = check_brr_period(run, Brr(config))
            print(f"run {r}: {run.cycles_per_second:,.0f} cycles/s (CPU time: "
                  f"{run.cpu_cycles_per_second:,.0f}); {report}")  # fmt: skip
    print(f"brr width {args.width}: {cycles:,} cycles ({args.periods} periods), "
          f"best {max(rates):,.0f} cycles/s")  # fmt: skip


if __name__ == "__main__":
    main()
