"""The executor of long jobs (hwprof.run): the scheduler's cost per unit, and commands'
wall time with 1 and 2 local workers.

    python bench/bench_run.py overhead [--tasks 200]
    python bench/bench_run.py command --jobs 1 2 -- mutate brr -n 40
    python bench/bench_run.py command --jobs 1 2 -- experiment multihash-values

``overhead``: on a local cluster of one worker process (127.0.0.1), an empty unit's
round trip (submit, run, result back), one at a time, and the time per unit when
``--tasks`` empty units are submitted at once to two workers; then the same units
through :func:`hwprof.run.run_units` (journal, progress bookkeeping) on two workers,
less the cluster's start. ``command``: the hwprof command once per ``--jobs`` value,
wall time (the cluster's start included). Figures go to docs/results/run-bench.md
with the command and the machine's load.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hwprof.run import Journal, RunOptions, Unit, run_units
from hwprof.run.executor import call_unit


def empty() -> None:
    """A unit that does nothing."""


def overhead(tasks: int) -> None:
    from distributed import Client, LocalCluster

    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None,
                          silence_logs=logging.ERROR) as cluster, \
                Client(cluster) as client:  # fmt: skip
            client.submit(call_unit, empty, {}, {}, pure=False).result()  # warm up
            rounds = []
            for _ in range(min(tasks, 100)):
                t0 = time.perf_counter()
                client.submit(call_unit, empty, {}, {}, pure=False).result()
                rounds.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            futures = [client.submit(call_unit, empty, {}, {}, pure=False) for _ in range(tasks)]
            client.gather(futures)
            batch = (time.perf_counter() - t0) / tasks
        print(f"{workers} worker(s): one empty unit's round trip: median "
              f"{1e3 * statistics.median(rounds):.1f} ms (min {1e3 * min(rounds):.1f}, max "
              f"{1e3 * max(rounds):.1f}, {len(rounds)} rounds); {tasks} submitted at once: "
              f"{1e3 * batch:.1f} ms per unit")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        units = [Unit(str(i), empty) for i in range(tasks)]
        t0 = time.perf_counter()
        outcomes = run_units(units, RunOptions(jobs=2, progress=False),
                             journal=Journal(Path(tmp) / "j.jsonl", {}), log=lambda _: None)
        wall = time.perf_counter() - t0
        spent = sum(o.timing["seconds"] for o in outcomes.values())
    print(f"run_units, {tasks} empty units on 2 local workers: {wall:.1f} s wall, cluster start "
          f"and stop included ({spent * 1e3:.1f} ms inside the units)")  # fmt: skip


def command(jobs: list[int], args: list[str]) -> None:
    env = {**os.environ}
    for n in jobs:
        with tempfile.TemporaryDirectory() as tmp:
            extra = ["--records", str(Path(tmp) / "m.json")] if args[0] == "mutate" else []
            if args[0] == "experiment":
                extra = ["-o", tmp]
            cmd = [sys.executable, "-m", "hwprof.cli", *args, "--jobs", str(n), *extra]
            load = os.getloadavg()[0]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
        status = "" if proc.returncode in (0, 1) else f" (exit {proc.returncode}: " \
            f"{proc.stderr.strip().splitlines()[-1:]})"
        print(f"hwprof {' '.join(args)} --jobs {n}: {wall:.0f} s wall, load average "
              f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end{status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    over = sub.add_parser("overhead")
    over.add_argument("--tasks", type=int, default=200)
    cmd = sub.add_parser("command")
    cmd.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    cmd.add_argument("args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.what == "overhead":
        overhead(args.tasks)
    else:
        command(args.jobs, [a for a in args.args if a != "--"])


if __name__ == "__main__":
    main()
