"""The executor of long jobs (hwprof.run): the scheduler's cost per unit, and commands'
wall time with 1 and 2 local workers.

    python bench/bench_run.py overhead [--tasks 200] [--condition TEXT]
    python bench/bench_run.py command --jobs 1 2 [--condition TEXT] -- mutate brr -n 40
    python bench/bench_run.py command --jobs 1 2 -- experiment multihash-values
    python bench/bench_run.py table > docs/results/run-bench.md

``overhead``: on a local cluster of one worker process (127.0.0.1), an empty unit's
round trip (submit, run, result back), one at a time, and the time per unit when
``--tasks`` empty units are submitted at once to two workers; then the same units
through :func:`hwprof.run.run_units` (journal, progress bookkeeping) on two workers,
less the cluster's start. ``command``: the hwprof command once per ``--jobs`` value,
wall time (the cluster's start included) and the CPU seconds of the command and its
children. Each figure is appended to a JSON record (``--record``, default
docs/records/run-bench.json) with ``--condition``, a short description of what else the
machine was doing; ``table`` writes docs/results/run-bench.md from that record.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hwprof.run import Journal, RunOptions, Unit, run_units
from hwprof.run.executor import call_unit

RECORD = Path(__file__).resolve().parent.parent / "docs" / "records" / "run-bench.json"


def append_record(path: Path, entry: dict) -> None:
    """Append one measurement to the JSON record at ``path`` (a list of entries)."""
    entries = json.loads(path.read_text()) if path.exists() else []
    entries.append(entry)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(entries, indent=1) + "\n")
    tmp.replace(path)


def empty() -> None:
    """A unit that does nothing."""


def overhead(tasks: int, record: Path, condition: str) -> None:
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
        append_record(record, {
            "kind": "round_trip", "workers": workers, "condition": condition,
            "rounds": len(rounds), "median_ms": 1e3 * statistics.median(rounds),
            "min_ms": 1e3 * min(rounds), "max_ms": 1e3 * max(rounds),
            "batch_units": tasks, "batch_ms_per_unit": 1e3 * batch})
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
    append_record(record, {"kind": "run_units", "workers": 2, "units": tasks,
                           "condition": condition, "wall_s": wall})
    print(f"run_units, {tasks} empty units on 2 local workers: {wall:.1f} s wall, cluster start "
          f"and stop included ({spent * 1e3:.1f} ms inside the units)")  # fmt: skip


def command(jobs: list[int], args: list[str], record: Path, condition: str) -> None:
    env = {**os.environ}
    for n in jobs:
        with tempfile.TemporaryDirectory() as tmp:
            extra = ["--records", str(Path(tmp) / "m.json")] if args[0] == "mutate" else []
            if args[0] == "experiment":
                extra = ["-o", tmp]
            cmd = [sys.executable, "-m", "hwprof.cli", *args, "--jobs", str(n), *extra]
            load = os.getloadavg()[0]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            append_record(record, {
                "kind": "command", "command": "hwprof " + " ".join(args), "jobs": n,
                "condition": condition, "wall_s": wall, "exit": proc.returncode,
                "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)})
        status = "" if proc.returncode in (0, 1) else f" (exit {proc.returncode}: " \
            f"{proc.stderr.strip().splitlines()[-1:]})"
        print(f"hwprof {' '.join(args)} --jobs {n}: {wall:.0f} s wall, load average "
              f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end{status}")


def table(record: Path) -> str:
    """docs/results/run-bench.md from the JSON record."""
    entries = json.loads(record.read_text())
    out = ["# The executor of long jobs: cost per unit and wall times", "",
           "Generated by `python bench/bench_run.py table > docs/results/run-bench.md` from",
           "docs/records/run-bench.json, which `bench/bench_run.py overhead` and",
           "`bench/bench_run.py command` fill (docs/run.md). The machine has 2 cores; the",
           "last column of each table says what else it was running.", "",
           "## The scheduler's cost per unit", "",
           "An empty unit submitted to a local cluster, its result awaited before the next",
           "(a round trip), and a batch of empty units submitted at once:", "",
           "| local cluster | round trip: median (min-max) | rounds | batch | per unit in "
           "the batch | machine |", "| --- | ---: | ---: | ---: | ---: | --- |"]
    for e in (e for e in entries if e["kind"] == "round_trip"):
        plural = "es" if e["workers"] > 1 else ""
        out.append(f"| {e['workers']} worker process{plural} | {e['median_ms']:.1f} ms "
                   f"({e['min_ms']:.1f}-{e['max_ms']:.1f}) | {e['rounds']} | "
                   f"{e['batch_units']} | {e['batch_ms_per_unit']:.1f} ms | {e['condition']} |")
    for e in (e for e in entries if e["kind"] == "run_units"):
        out += ["", f"`run_units` of {e['units']} empty units on {e['workers']} local workers, "
                    f"with its journal (one flushed and synced line per unit), the cluster's "
                    f"start and stop included: {e['wall_s']:.1f} s ({e['condition']})."]
    out += ["", "## Wall time with 1 and 2 local workers", "",
            "Each run starts a fresh local cluster (`--jobs 2`) or runs in-process "
            "(`--jobs 1`);", "CPU is user + system time of the command and its children "
            "(blank where not recorded).", "",
            "| command | workers | wall | CPU | machine |", "| --- | ---: | ---: | ---: | --- |"]
    runs = [e for e in entries if e["kind"] == "command"]
    for e in runs:
        cpu = f"{e['cpu_s']:.0f} s" if e.get("cpu_s") is not None else ""
        out.append(f"| `{e['command']}` | {e['jobs']} | {e['wall_s']:.0f} s | {cpu} | "
                   f"{e['condition']} |")
    out += ["", "Speed-up of 2 workers over 1 (wall with 1 / wall with 2, runs in the same "
            "conditions, medians):", "", "| command | machine | speed-up |", "| --- | --- | ---: |"]
    groups: dict[tuple[str, str], dict[int, list[float]]] = {}
    for e in runs:
        groups.setdefault((e["command"], e["condition"]), {}).setdefault(e["jobs"], []).append(
            e["wall_s"])
    for (cmd, condition), walls in groups.items():
        if 1 in walls and 2 in walls:
            ratio = statistics.median(walls[1]) / statistics.median(walls[2])
            out.append(f"| `{cmd}` | {condition} | {ratio:.2f}x |")
    trip = statistics.median(e["median_ms"] for e in entries if e["kind"] == "round_trip")
    out += ["", "## Predicting a run on N workers", "",
            "A run costs the command's own setup (for `mutate`: the mutants' one Verilator",
            "build and the original design's regression; for the experiments: choosing the",
            "traces), the cluster's start (a local one: a few seconds; an existing one: none),",
            "then the units, shared among the workers. With `u` units of mean time `t` on `w`",
            "single-threaded workers and a per-unit scheduler cost `c`,", "",
            "    wall ~ setup + ceil(u / w) * t + u * c / w", "",
            f"`c` is the round trip above, {trip:.0f} ms (median). Every unit of these",
            "commands takes seconds (a mutant's regression, a program x seed of an experiment)",
            "to minutes (a top's place and route), so `c` is negligible and the units' part",
            "falls as `1 / w` until `w` reaches `u`; the longest single unit (multihash's place",
            "and route, a 1M-interval program of multihash-values) bounds it from below.",
            "Two things keep the speed-up below `w`: the setup, which runs once on the machine",
            "that starts the command, and units that are not single-threaded. A",
            "multihash-values unit reads its trace through the trace reader's pool of",
            "decompressing threads, so one worker already uses more than one core while it",
            "reads: on a 2-core machine a second worker has little left to use. Workers must",
            "be real cores (or machines): a worker beside other jobs only adds contention."]
    return "\n".join(out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    over = sub.add_parser("overhead")
    over.add_argument("--tasks", type=int, default=200)
    cmd = sub.add_parser("command")
    cmd.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    for p in (over, cmd):
        p.add_argument("--record", type=Path, default=RECORD)
        p.add_argument("--condition", default="quiet: nothing else running",
                       help="what else the machine was running (goes into the record)")
    cmd.add_argument("args", nargs=argparse.REMAINDER)
    tab = sub.add_parser("table")
    tab.add_argument("--record", type=Path, default=RECORD)
    args = parser.parse_args()
    if args.what == "overhead":
        overhead(args.tasks, args.record, args.condition)
    elif args.what == "command":
        command(args.jobs, [a for a in args.args if a != "--"], args.record, args.condition)
    else:
        sys.stdout.write(table(args.record))


if __name__ == "__main__":
    main()
