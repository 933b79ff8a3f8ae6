"""The native bench of ``hwprof mutate TOP --bench native``: a real trace through every mutant.

The cocotb regression drives the Verilog from Python, one cycle at a time; the
multi-hash profiler's takes minutes per run, too slow to run once per mutant.
Here the mutants' one Verilog (every mutant behind ``mutsel``, set from the
plusarg ``+mutsel=i``: :func:`hwprof.verify.mutate.build_mutant_design`) is compiled once
with the native stream harness (:class:`hwprof.sim.native.StreamHarness`,
``hwprof/sim/native/stream.cpp``), and each mutant is one run of the harness on
the tuples of a shipped real trace with the output back-pressured, compared with
the golden model's output computed once. A mismatch, a crash or a run over the
time limit (CPU seconds of the harness process, with a wall backstop against a
process that sleeps) kills the mutant.

A top takes part when its catalog entry has a ``native_bench``
(:class:`hwprof.block.Top`).
"""

from __future__ import annotations

import hashlib
import math
import shutil
import time
import uuid
from pathlib import Path

import numpy as np

from ..catalog import TOPS, Top
from ..sim.limits import RunLimitExceeded
from ..sim.runner import DEFAULT_BUILD_ROOT

__all__ = ["native_bench", "NativeRunner", "run_native", "native_unit"]


def native_bench(top: Top, params: dict, **options):
    """The native bench of ``top`` (resolved ``params``; ``options``: fields of the
    bench, e.g. fewer tuples for a test); ValueError if it has none."""
    if top.native_bench is None:
        have = ", ".join(name for name, t in TOPS.items() if t.native_bench is not None)
        raise ValueError(f"top {top.name!r} has no native mutation bench (one of "
                         f"{have}); use --bench cocotb")  # fmt: skip
    return top.native_bench(dict(params), **options)


class NativeRunner:
    """The bench built on the mutants' Verilog: one run per mutant index.

    The golden model's output and the keys are written next to the harness executable
    (``data``: a directory named after their digest, under the build root), so that a
    unit of :func:`native_unit` on any worker that shares the build root reads them by
    path.
    """

    def __init__(self, bench, component, verilog: str, work: Path,
                 build_root: Path = DEFAULT_BUILD_ROOT,
                 extra_args: tuple[str, ...] = ()):  # fmt: skip
        self.bench = bench
        self.work = Path(work)
        keys = bench.keys()
        # the golden model first: a schedule it refuses stops the run before the build
        started = time.monotonic()
        self.want = bench.expected(keys)
        #: the runs of input stalls the stall rule gives the back-pressured run
        self.stalls_want = bench.expected_stalls(keys, self.want)
        free = bench.free_keys() if bench.free_tuples else np.zeros(0, np.uint64)
        self.free_want = bench.free_expected(free) if bench.free_tuples else None
        self.golden_seconds = time.monotonic() - started
        self.harness = bench.build(component, verilog, build_root, extra_args,
                                   name=f"{bench.top}-mutants")  # fmt: skip
        arrays = {"keys": keys.astype("<u8"), "want": self.want.astype("<u8"),
                  "stalls-want": self.stalls_want.astype("<u8"),
                  "free-keys": free.astype("<u8")}  # fmt: skip
        if self.free_want is not None:
            arrays["free-want"] = self.free_want.astype("<u8")
        digest = hashlib.sha256()
        for name, array in arrays.items():
            digest.update(f"{name}:{array.shape}".encode() + array.tobytes())
        #: sha256 (hex) of the keys, the golden model's output and the stall rule's stalls:
        #: the stimulus's identity
        self.digest = digest.hexdigest()
        self.data = Path(self.harness.exe).parent.resolve() / f"bench-{self.digest[:16]}"
        self.data.mkdir(parents=True, exist_ok=True)
        for name, array in arrays.items():
            target = self.data / f"{name}.bin"
            if not target.exists() or target.stat().st_size != array.nbytes:
                partial = target.with_suffix(f".{uuid.uuid4().hex[:8]}.part")
                array.tofile(partial)
                partial.replace(target)
        self.keys_path = self.data / "keys.bin"
        self.free_path = self.data / "free-keys.bin"

    def shared(self) -> dict:
        """The arguments every :func:`native_unit` of this bench takes (paths and the bench)."""
        return {"bench": self.bench, "harness": self.harness, "data": str(self.data)}

    def run(self, index: int, cpu_limit: float) -> tuple[str, str, float]:
        """Mutant ``index`` (0: the original) in this process: :func:`run_native`."""
        return run_native(self.bench, self.harness, self.data, index, cpu_limit,
                          (self.want, self.free_want, self.stalls_want))  # fmt: skip


def _load(data: Path, name: str):
    path = data / f"{name}.bin"
    return np.fromfile(path, dtype="<u8").reshape(-1, 3) if path.exists() else None


def run_native(bench, harness, data: Path, index: int, cpu_limit: float,
               wants=None) -> tuple[str, str, float]:  # fmt: skip
    """Mutant ``index`` (0: the original) on the native bench: ("pass" | "fail" |
    "timeout", detail, the harness runs' CPU seconds).

    The back-pressured run with the configuration writes (its records against the golden
    model's, then its input stalls, cycle by cycle, against the stall rule's), then (if
    it passes) the
    always-ready run at the reset values (the bench's ``free_tuples``), the two within
    ``cpu_limit`` CPU seconds of the harness process, each with a wall backstop
    (:func:`hwprof.sim.native.run_harness`). ``data``: the directory of the keys,
    the golden model's output and the stall rule's stalls (:class:`NativeRunner`);
    ``wants``: those already in memory, else read from ``data``. Each run writes its
    output in a directory of its own under ``data``, removed after.
    """
    data = Path(data)
    want, free_want, stalls_want = (
        wants
        if wants is not None
        else (_load(data, "want"), _load(data, "free-want"), _load(data, "stalls-want"))
    )
    b = bench
    used = 0.0

    def once(keys, ready, plusargs, limit, stalls=False):
        work = data / f"native-{index}-{uuid.uuid4().hex[:8]}"
        try:
            return harness.run(keys, work, b.drain, ready, b.seed,
                               plusargs=(f"+mutsel={index}", *plusargs),
                               cpu_limit=limit, stalls=stalls)  # fmt: skip
        finally:
            shutil.rmtree(work, ignore_errors=True)

    try:
        run = once(data / "keys.bin", b.ready, (), cpu_limit, stalls=stalls_want is not None)
        used += run.process_cpu_seconds
        mismatches, what = b.compare(run, want)
        if mismatches:
            return "fail", f"native: {what}", used
        if stalls_want is not None:
            mismatches, stall_what = b.compare_stalls(run, stalls_want)
            if mismatches:
                return "fail", f"native: {what}; {stall_what}", used
            what = f"{what}; {stall_what}"
        if free_want is None:
            return "pass", f"native: {what}", used
        free = once(data / "free-keys.bin", 1.0, ("+nocfg",), max(1.0, cpu_limit - used))
        used += free.process_cpu_seconds
    except RunLimitExceeded as exc:
        used += exc.run.cpu_seconds
        if exc.run.stopped == "cpu":
            return "timeout", f"native: no verdict in {math.ceil(cpu_limit)} CPU-s", used
        return "timeout", f"native: {exc.run.limit_text()}", used
    except RuntimeError as exc:  # the harness failed, or its output file is short
        return "fail", f"native: crash ({str(exc).splitlines()[0][:120]})", used
    mismatches, free_what = b.compare(free, free_want)
    if mismatches:
        return "fail", f"native, always ready: {free_what}", used
    if free.stalls:
        return "fail", (f"native, always ready: {free.stalls} stalls (the design's "
                        "throughput: none while threshold >= candidates + 8)"), used  # fmt: skip
    return "pass", f"native: {what}; always ready: {free_what}, no stall", used


def native_unit(index: int, *, bench, harness, data: str, cpu_limit: float) -> dict:
    """One mutant on the native bench, the unit of a run (:mod:`hwprof.run`): the harness
    executable and the bench's files by path (``data``, on a file system the workers
    share), ``cpu_limit`` CPU seconds (:func:`run_native`). Returns ``{"verdict": pass |
    fail | timeout, "detail": ...}``."""
    verdict, detail, _ = run_native(bench, harness, Path(data), index, cpu_limit)
    return {"verdict": verdict, "detail": detail}
