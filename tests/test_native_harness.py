"""Native (C++) Verilator harness: the brr unit over full LFSR periods.

A Verilator build with ``-O2`` takes a minute or more on the shared machine:
soak tier (``make soak``). Speed is measured in bench/bench_native_brr.py.
"""

from __future__ import annotations

import pytest

from hwprof.catalog import get_top
from hwprof.golden.brr import BrrConfig
from hwprof.sim.native import build_native, check_brr_period, run_brr_period
from hwprof.synth import to_verilog


@pytest.mark.soak
def test_brr_full_period_bit_exact(tmp_path, seed):
    exe = build_native(to_verilog(get_top("brr").construct({}), "brr"), "brr", "brr_period")
    period = (1 << 20) - 1
    run = run_brr_period(exe, period + 10, seed, tmp_path / "out.bin")
    report = check_brr_period(run, BrrConfig())
    assert report["state_mismatches"] == 0 and report["taken_mismatches"] == 0, report
    assert report["redirect_mismatches"] == 0, report
    # a maximal-length 20-bit LFSR: every non-zero state once, back to the seed
    assert report["period"] == period and report["distinct_states_in_period"] == period
    # the checker can fail: against a model with another seed every state differs
    wrong = check_brr_period(run, BrrConfig(seed=2))
    assert wrong["state_mismatches"] == len(run.state)
