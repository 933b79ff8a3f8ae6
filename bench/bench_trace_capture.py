"""Speed of trace capture against ``valgrind --tool=none`` on the same program.

    .venv/bin/python bench/bench_trace_capture.py [--workloads xz,bzip2,sort,perl,python]
                                                  [--bytes N] [--runs R] [--breakdown]

For each workload (hwprof/traces/workloads.py, input cut to ``--bytes``) it times,
``--runs`` times each, interleaved (none, tool, capture, zstd3, none, ...) so that
the load of a shared machine hits every variant alike, the median of:

* ``none``     - ``valgrind --tool=none CMD`` (valgrind's own floor);
* ``tool``     - our tool writing every load and branch record to /dev/null
                 (the instrumentation and its buffered writes alone);
* ``capture``  - :func:`hwprof.traces.capture.capture` in this process (no
                 Python start-up): the tool into a FIFO, read by Python into a
                 compressed trace file (loads and branches, zstd level 1, the default);
* ``zstd3``    - the same at zstd level 3 (the format's default; smaller, slower);
* ``cli``      - ``python -m hwprof.cli trace capture -o FILE -- CMD``: a whole
                 process, Python's start-up and imports included (the first,
                 untimed run builds the tool in the work directory).

``--breakdown`` adds what the capture's cost is made of: ``none-nc`` (``none`` with
the VEX options our tool sets itself: no guest chasing, no unrolling), ``empty``
(our tool recording nothing: its per-superblock entry check and instruction
count), ``loads`` and ``branches`` (one record kind, to /dev/null), and, after
the timing table, the writer's thread CPU per chunk of the captured trace by
part (each column's encoding, the bounds, the checksum; best of 5, warm caches).

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

from hwprof.traces.capture import build_tool, capture
from hwprof.traces.workloads import workload_command, workload_env


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _timed(fn) -> tuple[float, float, object]:
    cpu0, wall0 = _cpu(), time.perf_counter()
    result = fn()
    return time.perf_counter() - wall0, _cpu() - cpu0, result


def _variants(command: list[str], work: Path, tool: Path, extra: dict,
              breakdown: bool = False) -> dict:
    env = dict(os.environ) | extra
    out = work / "out.trace"
    quiet = {"stdout": subprocess.DEVNULL, "env": env, "check": True, "cwd": work}
    tool_env = env | {"VALGRIND_LIB": str(Path(tool).resolve())}

    def none(*options):
        subprocess.run(["valgrind", "-q", "--tool=none", *options, *command], **quiet)

    def tool_only(*options):
        subprocess.run(["valgrind", "-q", "--tool=hwprof", "--out-file=/dev/null",
                        f"--stats-file={work / 'stats.json'}", *options, *command],
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

    variants = {"none": none, "tool": tool_only, "capture": full,
                "zstd3": lambda: full(level=3), "cli": cli}  # fmt: skip
    if breakdown:
        variants |= {
            "none-nc": lambda: none("--vex-guest-chase=no", "--vex-iropt-unroll-thresh=0"),
            "empty": lambda: tool_only("--trace-loads=no", "--trace-branches=no"),
            "loads": lambda: tool_only("--trace-branches=no"),
            "branches": lambda: tool_only("--trace-loads=no"),
        }  # fmt: skip
    return variants


def _encode_parts(trace: Path, every: int = 12) -> dict[str, float]:
    """The writer's thread CPU (ms, best of 5) per chunk by part, on every
    ``every``-th chunk of ``trace`` (the encoding of :class:`TraceWriter`, zstd level 1)."""
    import functools

    import numpy as np
    import zstandard

    from hwprof.traces import chunk_columns
    from hwprof.traces import tracefile as tf

    def best(fn, *args, **kwargs):
        """``fn``'s least thread CPU time over 5 calls, and its result."""
        times = []
        for _ in range(5):
            start = time.thread_time()
            result = fn(*args, **kwargs)
            times.append(time.thread_time() - start)
        return min(times), result

    encode = functools.partial(tf._encode_column, compressor=zstandard.ZstdCompressor(level=1),
                               scratch={d: np.empty(tf.MAX_CHUNK_RECORDS, d)
                                        for d in tf._NARROW.values()}.__getitem__)  # fmt: skip
    totals: dict[str, float] = {}
    n = 0
    with tf.open_trace(trace) as reader:
        for i, chunk in enumerate(reader.chunks()):
            if i % every != every // 2:
                continue
            columns = [np.ascontiguousarray(c) for c in chunk.columns()]
            times, frames = {}, []
            times["bounds"], (bounds, _) = best(chunk_columns.bounds_and_counts, columns)
            for name, column in zip(tf.COLUMNS, columns, strict=True):
                times[name], frame = best(encode, column, dictionary=name == "pc",
                                          bounds=bounds[name])  # fmt: skip
                frames.append(frame)
            times["crc"], _ = best(tf._crc, b"".join(frames))
            for name, t in times.items():
                totals[name] = totals.get(name, 0.0) + t
            n += 1
    if not n:
        raise ValueError(f"{trace}: fewer than {every // 2 + 1} chunks (every={every})")
    return {name: 1000 * t / n for name, t in totals.items()} | {"chunks": n}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="xz,bzip2,sort,perl,python")
    parser.add_argument("--bytes", type=int, default=60_000, help="input size per workload")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true",
                        help="also time the parts of the capture's cost (see above)")
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
            variants = _variants(command, work, tool, workload_env(name), args.breakdown)
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
            if args.breakdown:
                parts = _encode_parts(work / "out.trace")
                print(f"{name:9} writer CPU per chunk, ms ({parts.pop('chunks')} chunks): "
                      + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
