"""Read speed of the trace format (records/s from the compressed file).

    .venv/bin/python bench/bench_trace_read.py [--records N] [--repeat R] [--file PATH]

Builds (once, cached at ``--file``) a synthetic load trace shaped like a real
program's: 3000 static loads with Zipf(1.2) dynamic frequencies, each of one
behaviour (a constant, a few small integers, heap pointers, arbitrary 64-bit
data), data addresses strided through each load's own region of stack, heap or
globals, sizes 1/4/8. Then times, ``--repeat`` times each, with the page cache
warm (run it twice for a cold first read):

* ``chunks``: every chunk with all five columns decompressed into numpy arrays
  (default threads, :data:`~hwprof.traces.tracefile.READ_THREADS`; and with one);
* ``value_tuples``: ``(pc, value)`` of the loads (``addr`` and ``size`` skipped);
* ``keys``: :func:`hwprof.traces.keys.trace_keys`, 64-bit ``pack_key`` keys ``pc:value``
  (32:32), ready for the profilers: with the default ``value_map="mix"`` and with
  ``"low"`` (the value's low bits, no mixing).

Prints the median and the range of the repeats, in records per wall second and
per CPU second of the process (all its threads): on a shared machine the second
says what the code costs, the first what the machine gave. Also times writing
8M records (``write``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np

from hwprof.traces.keys import trace_keys
from hwprof.traces.tracefile import LOAD, TraceWriter, open_trace

STATIC_LOADS = 3000


def synthetic_program(seed: int = 1):
    """Per static load: pc, behaviour, constant, address region and stride, size."""
    rng = np.random.default_rng(seed)
    pc = np.sort(rng.choice(np.arange(0x401000, 0x4C0000, 2, dtype=np.uint64), STATIC_LOADS,
                            replace=False))  # fmt: skip
    behaviour = rng.choice(4, STATIC_LOADS, p=[0.35, 0.25, 0.2, 0.2])
    constant = rng.integers(0, 1 << 32, STATIC_LOADS, dtype=np.uint64)
    region = rng.choice(np.array([0x7FFD_F000_0000, 0x5555_5575_0000, 0x4E_0000], np.uint64),
                        STATIC_LOADS)  # fmt: skip
    base = region + rng.integers(0, 1 << 20, STATIC_LOADS, dtype=np.uint64) * np.uint64(8)
    span = rng.choice(np.array([1, 16, 4096, 1 << 16]), STATIC_LOADS)
    size = rng.choice(np.array([1, 4, 8], np.uint8), STATIC_LOADS, p=[0.15, 0.35, 0.5])
    return pc, behaviour, constant, base, span, size


def synthetic_block(rng, program, n: int) -> dict:
    pc, behaviour, constant, base, span, size = program
    which = np.minimum(rng.zipf(1.2, n), STATIC_LOADS) - 1
    b = behaviour[which]
    value = constant[which].copy()
    small = b == 1
    value[small] = rng.integers(0, 8, int(small.sum()), dtype=np.uint64)
    ptr = b == 2
    value[ptr] = np.uint64(0x5555_5575_0000) + np.uint64(16) * rng.integers(
        0, 1 << 18, int(ptr.sum()), dtype=np.uint64)  # fmt: skip
    data = b == 3
    value[data] = rng.integers(0, 1 << 64, int(data.sum()), dtype=np.uint64, endpoint=False)
    offset = (rng.integers(0, 1 << 62, n) % span[which]).astype(np.uint64) * np.uint64(8)
    s = size[which]
    mask = np.where(s == 8, np.uint64(2**64 - 1), (np.uint64(1) << (8 * s).astype(np.uint64)) - 1)
    return {"kind": LOAD, "size": s, "pc": pc[which], "addr": base[which] + offset,
            "value": value & mask}  # fmt: skip


def build(path: Path, records: int, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    program = synthetic_program(seed)
    header = {"program": "synthetic", "argv": ["bench_trace_read", str(records)],
              "kinds": ["load"], "options": {"seed": seed}}  # fmt: skip
    with TraceWriter(path, header=header) as writer:
        left = records
        while left:
            n = min(left, 1 << 20)
            writer.write(**synthetic_block(rng, program, n))
            left -= n
        writer.close()


def timed(label: str, records: int, repeat: int, run) -> None:
    """Records per wall second and per CPU second of this process (median and range)."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        count = run()
        wall.append(count / (time.perf_counter() - start))
        cpu.append(count / (time.process_time() - start_cpu))
    assert count == records, (label, count, records)

    def fmt(rates):
        return (f"{statistics.median(rates) / 1e6:6.1f} M/s "
                f"({min(rates) / 1e6:.1f}..{max(rates) / 1e6:.1f})")  # fmt: skip

    print(f"{label:13}: wall {fmt(wall)}   cpu {fmt(cpu)}   [{repeat} runs]")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=24_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--file", type=Path, default=Path("build/bench/loads-24m.trace"))
    args = parser.parse_args()
    reader = open_trace(args.file) if args.file.exists() else None
    if reader is None or reader.records != args.records:
        args.file.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        build(args.file, args.records)
        print(f"built {args.file} in {time.perf_counter() - start:.1f} s")
        reader = open_trace(args.file)
    size = os.path.getsize(args.file)
    print(f"{args.file}: {reader.records:,} records, {size / 2**20:.1f} MiB, "
          f"{size / reader.records:.2f} bytes/record")  # fmt: skip
    n = reader.records
    rng = np.random.default_rng(2)
    program = synthetic_program(1)
    blocks = [synthetic_block(rng, program, 1 << 20) for _ in range(4)]
    out = args.file.with_name("write-bench.trace")

    def write():
        with TraceWriter(out, header={}) as writer:
            for _ in range(2):
                for block in blocks:
                    writer.write(**block)
            writer.close()
        return writer.records

    timed("write", 8 << 20, max(1, args.repeat // 2), write)
    out.unlink()
    print(
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
        "records/s per wall second and per CPU second of this process, median (range)"
    )
    timed("chunks", n, args.repeat, lambda: sum(len(c) for c in reader.chunks()))
    timed("chunks 1 thr", n, args.repeat, lambda: sum(len(c) for c in reader.chunks(threads=1)))
    timed("value_tuples", n, args.repeat, lambda: sum(len(p) for p, _ in reader.value_tuples()))
    timed("keys 32:32", n, args.repeat, lambda: sum(len(k) for k in trace_keys(reader)))
    timed("keys 32:32 low", n, args.repeat,
          lambda: sum(len(k) for k in trace_keys(reader, value_map="low")))  # fmt: skip


if __name__ == "__main__":
    main()
