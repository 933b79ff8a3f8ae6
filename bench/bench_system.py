"""The RISC-V system in Verilator: first build time and simulation speed.

Run: ``.venv/bin/python bench/bench_system.py``. Prints:

* the first build of the system's Verilator model (Verilog generation, Verilator,
  C++ compilation) into a fresh build directory, wall and CPU seconds;
* the first firmware build with a fresh zig cache (zig builds its runtime library,
  compiler-rt, then) and a later one;
* core cycles per second of the workload ``hwprof/system/workloads/compress.c``
  (no event log), by wall time and by the simulator's CPU time.

The figures in docs/system.md come from this script.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = ROOT / "hwprof" / "system" / "workloads" / "compress.c"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def self_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def first_build() -> None:
    from hwprof.system.sim import build_system

    with tempfile.TemporaryDirectory(prefix="bench-system-") as tmp:
        wall, cpu = time.perf_counter(), children_cpu() + self_cpu()
        build_system(build_root=Path(tmp))
        wall = time.perf_counter() - wall
        cpu = children_cpu() + self_cpu() - cpu
    print(f"first build of the system model: {wall:.1f} s wall, {cpu:.1f} s CPU")


def firmware_builds() -> None:
    code = ("import sys, tempfile, time; from pathlib import Path; "
            "from hwprof.system.firmware import compile_program; "
            "t = time.perf_counter(); "
            "compile_program([sys.argv[1]], Path(tempfile.mkdtemp()) / 'fw'); "
            "print(f'{time.perf_counter() - t:.1f}')")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-zig-") as cache:
        env = dict(os.environ, HWPROF_ZIG_CACHE=cache)
        for label in ("fresh zig cache", "zig cache warm"):
            cpu = children_cpu()
            out = subprocess.run([sys.executable, "-c", code, str(WORKLOAD)], env=env,
                                 capture_output=True, text=True, check=True)  # fmt: skip
            print(f"firmware build of compress.c, {label}: {out.stdout.strip()} s wall, "
                  f"{children_cpu() - cpu:.1f} s CPU")  # fmt: skip


def speed(repeats: int) -> None:
    from hwprof.system.sim import build_system, run_program

    exe = build_system()
    best = None
    with tempfile.TemporaryDirectory(prefix="bench-run-") as work:
        for _ in range(repeats):
            run = run_program([WORKLOAD], exe=exe, work=Path(work), events=False)
            if best is None or run.cpu_seconds < best.cpu_seconds:
                best = run
    print(f"simulation of compress.c: {best.cycles:,} cycles, "
          f"{best.cycles / best.wall_seconds / 1e6:.2f} M cycles/s by wall time, "
          f"{best.cycles / best.cpu_seconds / 1e6:.2f} M cycles/s by CPU time "
          f"(best of {repeats})")  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", choices=("build", "firmware", "speed"), default=None,
                        help="one measurement only")  # fmt: skip
    args = parser.parse_args()
    if args.only in (None, "build"):
        first_build()
    if args.only in (None, "firmware"):
        firmware_builds()
    if args.only in (None, "speed"):
        speed(args.repeats)


if __name__ == "__main__":
    main()
