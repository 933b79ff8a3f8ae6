"""Speed of trace capture against ``valgrind --tool=none`` on the same program.

    .venv/bin/python bench/bench_trace_capture.py [--workloads xz,bzip2,sort,perl,python]
                                                  [--bytes N] [--runs R]

For each workload (hwprof/sim/workloads.py, input cut to ``--bytes``) it times,
``--runs`` times each, interleaved (none, tool, capture, zstd3, none, ...) so that
the load of a shared machine hits every variant alike, the median of:

* ``none``     - ``valgrind --tool=none CMD`` (valgrind's own floor);
* ``tool``     - our tool writing every load and branch record to /dev/null
                 (the instrumentation and its buffered writes alone);
* ``capture``  - :func:`hwprof.sim.trace_capture.capture` in this process (no
                 Python start-up): the tool into a FIFO, read by Python into a
                 compressed trace file (loads and branches, zstd level 1, the default);
* ``zstd3``    - the same at zstd level 3 (the format's default; smaller, slower);
* ``cli``      - ``python -m hwprof.cli trace capture -o FILE -- CMD``: a whole
                 process, Python's start-up and imports included (the first,
                 untimed run builds the tool in the work directory).

Wall seconds are the issue's measure (capture at most 3x ``none``); CPU seconds
(user + sys of every process involved, valgrind and Python) say what the
capture costs when the machine is busy. Ratios are to ``none``. Figures and the
command that produced them: docs/traces.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hwprof.sim.trace_capture import build_tool, capture
from hwprof.sim.workloads import workload_command, workload_env


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn) -> tuple[float, float, object]:
    cpu0, wall0 = _cpu(), time.perf_counter()
    result = fn()
    return time.perf_counter() - wall0, _cpu() - cpu0, result


def _variants(command: list[str], work: Path, tool: Path, extra: dict) -> dict:
    env = dict(os.environ) | extra
    out = work / "out.trace"
    quiet = {"stdout": subprocess.DEVNULL, "env": env, "check": True, "cwd": work}
    tool_env = env | {"VALGRIND_LIB": str(Path(tool).resolve())}

    def none():
        subprocess.run(["valgrind", "-q", "--tool=none", *command], **quiet)

    def tool_only():
        subprocess.run(["valgrind", "-q", "--tool=hwprof", "--out-file=/dev/null",
                        f"--stats-file={work / 'stats.json'}", *command],
                       **(quiet | {"env": tool_env}))  # fmt: skip

    def full(kinds="loads,branches", level=None):
        n = capture(command, out, kinds=kinds, progress=False, env=extra,
                    stdout=subprocess.DEVNULL, cwd=work, level=level)["records"]  # fmt: skip
        return n, out.stat().st_size

    root = Path(__file__).resolve().parents[1]
    cli_env = env | {"PYTHONPATH": os.pathsep.join(filter(None, [str(root),
                                                               env.get("PYTHONPATH")]))}

    def cli():  # a whole `hwprof trace capture` process, with Python's start-up
        subprocess.run([sys.executable, "-m", "hwprof.cli", "trace", "capture", "-o", str(out),
                        "--", *command], **(quiet | {"env": cli_env, "stderr": subprocess.DEVNULL}))
        return None

    return {"none": none, "tool": tool_only, "capture": full, "zstd3": lambda: full(level=3),
            "cli": cli}  # fmt: skip


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="xz,bzip2,sort,perl,python")
    parser.add_argument("--bytes", type=int, default=60_000, help="input size per workload")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    tool = build_tool()
    print(f"{'workload':9} {'variant':8} {'wall s':>7} {'cpu s':>7} {'wall/none':>9} "
          f"{'cpu/none':>8} {'records':>12} {'records/s (wall)':>16} {'bytes/rec':>9}"
          f"  (wall of each run)")  # fmt: skip
    for name in args.workloads.split(","):
        with tempfile.TemporaryDirectory(prefix="hwprof-bench-") as tmp:
            work = Path(tmp)
            command = workload_command(name, work)
            text = (work / "input.txt").read_bytes()[: args.bytes]
            (work / "input.txt").write_bytes(text)
            variants = _variants(command, work, tool, workload_env(name))
            times: dict[str, list[tuple[float, float]]] = {v: [] for v in variants}
            records: dict[str, object] = {}
            for fn in variants.values():  # warm-up: page cache, numba's compiled kernels
                fn()
            for _ in range(args.runs):  # interleaved, so that drift hits all alike
                for variant, fn in variants.items():
                    wall, cpu, result = _timed(fn)
                    times[variant].append((wall, cpu))
                    records[variant] = result
            base = statistics.median(c for _, c in times["none"])
            base_wall = statistics.median(w for w, _ in times["none"])
            for variant in variants:
                wall = statistics.median(w for w, _ in times[variant])
                cpu = statistics.median(c for _, c in times[variant])
                n, size = records[variant] or (None, None)
                rate = f"{n / wall:,.0f}" if n else ""
                per = f"{size / n:.2f}" if n else ""
                each = " ".join(f"{w:.2f}" for w, _ in times[variant])
                print(f"{name:9} {variant:8} {wall:7.2f} {cpu:7.2f} {wall / base_wall:9.2f} "
                      f"{cpu / base:8.2f} {n if n else '':>12} {rate:>16} {per:>9}  ({each})")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
