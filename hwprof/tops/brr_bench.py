"""Native Verilator benches of the branch-on-random unit (the ``brr`` top).

The C++ sources are package data beside this module (``hwprof/tops/native/``) and
are built by :func:`hwprof.sim.native.build_native`:

* ``brr_period.cpp`` (:data:`BRR_PERIOD`): ``decode_valid`` every cycle for N cycles
  from reset, ``freq`` from a seeded xorshift generator; it writes per cycle the
  freq, taken, redirect and state. :func:`run_brr_period` runs it and
  :func:`check_brr_period` compares the run with the golden model.
* ``brr_counts.cpp`` (:data:`BRR_COUNTS`): the taken outcomes of every state of one
  LFSR period at every freq, counted from the Verilog alone (used by the brr tests).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..sim.native import run_harness

__all__ = ["BRR_PERIOD", "BRR_COUNTS", "BrrRun", "run_brr_period", "check_brr_period"]

SOURCES = Path(__file__).resolve().parent / "native"
#: the period harness: ``brr_period CYCLES SEED OUT.bin``
BRR_PERIOD = SOURCES / "brr_period.cpp"
#: the full-period outcome counts: ``brr_counts PERIOD``
BRR_COUNTS = SOURCES / "brr_counts.cpp"


class BrrRun:
    """Outputs of ``brr_period``: per cycle ``freq``, ``taken``, ``redirect``, ``state``.

    Parameters
    ----------
    path : Path
        The harness's output file.
    cycles : int
        The cycles it ran.
    rate, cpu_rate : float
        Cycles per second of the simulation loop, by wall time and by CPU time.
    """

    def __init__(self, path: Path, cycles: int, rate: float, cpu_rate: float = 0.0):
        raw = Path(path).read_bytes()
        if len(raw) != cycles * 6:
            raise RuntimeError(f"{path}: {len(raw)} bytes, expected {cycles * 6}")
        self.freq = np.frombuffer(raw, np.uint8, cycles, 0)
        flags = np.frombuffer(raw, np.uint8, cycles, cycles)
        self.taken = flags & 1
        self.redirect = flags >> 1 & 1
        self.state = np.frombuffer(raw, np.uint32, cycles, 2 * cycles)
        self.cycles_per_second = rate  # by wall time of the simulation loop
        self.cpu_cycles_per_second = cpu_rate  # by its CPU time


def run_brr_period(exe: Path, cycles: int, seed: int, out: Path) -> BrrRun:
    """Run ``exe`` (:data:`BRR_PERIOD` built against the ``brr`` module) for ``cycles``
    cycles with the freq generator's ``seed``, writing to ``out``; the run read back."""
    report = run_harness([exe, cycles, seed, out])
    return BrrRun(out, cycles, report["cycles_per_second"], report["cpu_cycles_per_second"])


def check_brr_period(run: BrrRun, golden) -> dict:
    """Compare a ``brr_period`` run with ``golden``, the golden model of the unit built
    (:class:`hwprof.golden.brr.Brr`).

    Returns cycles, mismatches (state, taken, redirect: cycles that differ), and the
    LFSR period seen: the first cycle > 0 whose state is the seed again (0 if none).
    """
    config = golden.config
    cycles = len(run.state)
    states = golden.states(cycles)
    masks = np.array(golden.config.outcome_masks, dtype=np.uint64)[run.freq]
    taken = (states & masks) == masks
    repeat = np.flatnonzero(run.state[1:] == config.seed)
    return {
        "cycles": cycles,
        "state_mismatches": int(np.count_nonzero(run.state != states)),
        "taken_mismatches": int(np.count_nonzero(run.taken != taken)),
        "redirect_mismatches": int(np.count_nonzero(run.redirect != taken)),
        "period": int(repeat[0] + 1) if repeat.size else 0,
        "distinct_states_in_period": int(np.unique(run.state[: (1 << config.width) - 1]).size),
    }
