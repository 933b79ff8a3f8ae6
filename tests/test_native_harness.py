"""Native (C++) Verilator harnesses: the brr unit over full LFSR periods, the tagged
compressor, the stratified sampler and the multi-hash profiler on long skewed
synthetic tuple streams (real traces: tests/test_trace_verify.py).

A Verilator build with ``-O2`` takes a minute or more on the shared machine:
soak tier (``make soak``). Speed is measured in bench/bench_native_brr.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from hwprof.catalog import get_top
from hwprof.golden.brr import Brr, BrrConfig
from hwprof.sim.native import build_native
from hwprof.synth import to_verilog
from hwprof.tops.brr_bench import BRR_PERIOD, check_brr_period, run_brr_period
from hwprof.verify.trace_verify import Check, golden_model
from tests.test_trace_verify import WRONG


@pytest.mark.soak
def test_brr_full_period_bit_exact(tmp_path, seed):
    exe = build_native(to_verilog(get_top("brr").construct({}), "brr"), "brr", BRR_PERIOD)
    period = (1 << 20) - 1
    run = run_brr_period(exe, period + 10, seed, tmp_path / "out.bin")
    report = check_brr_period(run, Brr(BrrConfig()))
    assert report["state_mismatches"] == 0 and report["taken_mismatches"] == 0, report
    assert report["redirect_mismatches"] == 0, report
    # a maximal-length 20-bit LFSR: every non-zero state once, back to the seed
    assert report["period"] == period and report["distinct_states_in_period"] == period
    # the checker can fail: against a model with another seed every state differs
    wrong = check_brr_period(run, Brr(BrrConfig(seed=2)))
    assert wrong["state_mismatches"] == len(run.state)


def synthetic_keys(n: int, seed: int) -> np.ndarray:
    """Skewed ``<pc, value>`` tuples: Zipf pcs over 5,000 sites, 70 % small Zipf values."""
    rng = np.random.default_rng(seed)
    pcs = (rng.zipf(1.3, n) % 5000).astype(np.uint64) * 4 + 0x400000
    small = rng.random(n) < 0.7
    values = np.where(small, rng.zipf(1.5, n) % 64, rng.integers(0, 1 << 32, n))
    return (pcs << np.uint64(32)) | values.astype(np.uint64)


@pytest.mark.soak
@pytest.mark.parametrize("name", ["tagged_compressor", "stratified"])
def test_stream_bit_exact(tmp_path, seed, name):
    """200,000 synthetic tuples, output always ready, against the golden bulk path."""
    check = Check.build(name)
    keys = synthetic_keys(200_000, seed)
    report = check.run(keys, tmp_path)
    assert report["stalls"] == 0 and report["messages"] > 100 and report["mismatches"] == 0
    # the checker can fail: against a model with other parameters (cycle model)
    wrong = golden_model(name, {**check.params, **WRONG[name]})
    assert check.run(keys[:20_000], tmp_path, golden=wrong)["mismatches"] > 0


@pytest.mark.soak
def test_multihash_stream_bit_exact(tmp_path, seed):
    """Default profiler (4 x 512 counters, 100 entries, interval 10,000): ten intervals."""
    check = Check.build("multihash")
    keys = synthetic_keys(100_000, seed)
    report = check.run(keys, tmp_path)
    assert report["intervals"] == 10 and report["messages"] > 0
    assert report["mismatches"] == 0, report
    # the checker can fail: a profiler with twice the threshold leaves out every key
    # counted T..2T-1 times (threshold T + 1 left out only keys counted exactly T times:
    # seeds 1 and 3 had none, and the check found no mismatch)
    threshold = check.params["threshold"]
    wrong = golden_model("multihash", {**check.params, "threshold": 2 * threshold})
    assert check.run(keys, tmp_path, golden=wrong)["mismatches"] > 0
