"""The native bench of ``hwprof mutate TOP --bench native``: a real trace through every mutant.

The cocotb regression drives the Verilog from Python, one cycle at a time; the
multi-hash profiler's takes minutes per run, too slow to run once per mutant.
Here the mutants' one Verilog (every mutant behind ``mutsel``, set from the
plusarg ``+mutsel=i``: :func:`hwprof.verify.mutate.build_mutant_design`) is compiled once
with the native stream harness (:class:`hwprof.sim.native.StreamHarness`,
``hwprof/sim/native/stream.cpp``), and each mutant is one run of the harness on
the tuples of a shipped real trace with the output back-pressured, compared with
the golden model's output computed once. A mismatch, a crash or a run over the
time limit kills the mutant.

A top takes part when its catalog entry has a ``native_bench``
(:class:`hwprof.block.Top`).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import numpy as np

from ..catalog import TOPS, Top
from ..sim.runner import DEFAULT_BUILD_ROOT

__all__ = ["native_bench", "NativeRunner"]


def native_bench(top: Top, params: dict, **options):
    """The native bench of ``top`` (resolved ``params``; ``options``: fields of the
    bench, e.g. fewer tuples for a test); ValueError if it has none."""
    if top.native_bench is None:
        have = ", ".join(name for name, t in TOPS.items() if t.native_bench is not None)
        raise ValueError(f"top {top.name!r} has no native mutation bench (one of "
                         f"{have}); use --bench cocotb")  # fmt: skip
    return top.native_bench(dict(params), **options)


class NativeRunner:
    """The bench built on the mutants' Verilog: one run per mutant index."""

    def __init__(self, bench, component, verilog: str, work: Path,
                 build_root: Path = DEFAULT_BUILD_ROOT,
                 extra_args: tuple[str, ...] = ()):  # fmt: skip
        self.bench = bench
        self.work = Path(work)
        self.keys_path = self.work / "native-keys.bin"
        keys = bench.keys()
        keys.astype("<u8").tofile(self.keys_path)
        # the golden model first: a schedule it refuses stops the run before the build
        started = time.monotonic()
        self.want = bench.expected(keys)
        self.free_path = self.work / "native-free-keys.bin"
        free = bench.free_keys() if bench.free_tuples else np.zeros(0, np.uint64)
        free.astype("<u8").tofile(self.free_path)
        self.free_want = bench.free_expected(free) if bench.free_tuples else None
        self.golden_seconds = time.monotonic() - started
        self.harness = bench.build(component, verilog, build_root, extra_args,
                                   name=f"{bench.top}-mutants")  # fmt: skip

    def _run(self, index, keys, ready, plusargs, timeout):
        work = self.work / f"native-{index}"
        try:
            return self.harness.run(keys, work, self.bench.drain, ready, self.bench.seed,
                                    plusargs=(f"+mutsel={index}", *plusargs),
                                    timeout=timeout)  # fmt: skip
        finally:
            (work / "out.bin").unlink(missing_ok=True)

    def run(self, index: int, timeout: float) -> tuple[str, str]:
        """Mutant ``index`` (0: the original): ("pass" | "fail" | "timeout", detail).

        The back-pressured run with the configuration writes, then (if it passes) the
        always-ready run at the reset values (the bench's ``free_tuples``).
        """
        b = self.bench
        started = time.monotonic()
        try:
            run = self._run(index, self.keys_path, b.ready, (), timeout)
            mismatches, what = b.compare(run, self.want)
            if mismatches or self.free_want is None:
                return ("fail" if mismatches else "pass"), f"native: {what}"
            left = max(1.0, timeout - (time.monotonic() - started))
            free = self._run(index, self.free_path, 1.0, ("+nocfg",), left)
        except subprocess.TimeoutExpired:
            return "timeout", f"native: no verdict in {timeout:.0f} s"
        except RuntimeError as exc:  # the harness failed, or its output file is short
            return "fail", f"native: crash ({str(exc).splitlines()[0][:120]})"
        mismatches, free_what = b.compare(free, self.free_want)
        if mismatches:
            return "fail", f"native, always ready: {free_what}"
        if free.stalls:
            return "fail", (f"native, always ready: {free.stalls} stalls (the design's "
                            "throughput: none while threshold >= candidates + 7)")
        return "pass", f"native: {what}; always ready: {free_what}, no stall"
