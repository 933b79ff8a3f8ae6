"""Native (C++) Verilator harnesses: the brr unit over full LFSR periods, the tagged
compressor on a long skewed tuple stream.

A Verilator build with ``-O2`` takes a minute or more on the shared machine:
soak tier (``make soak``). Speed is measured in bench/bench_native_brr.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from hwprof.catalog import get_top
from hwprof.golden.brr import BrrConfig
from hwprof.golden.multihash import MultiHashProfiler
from hwprof.golden.samplers import Stratified
from hwprof.golden.tagged import TaggedCompressor
from hwprof.sim.native import (
    build_native,
    check_brr_period,
    check_stream,
    run_brr_period,
    run_multihash,
    run_stream,
)
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


def synthetic_keys(n: int, seed: int) -> np.ndarray:
    """Skewed ``<pc, value>`` tuples: Zipf pcs over 5,000 sites, 70 % small Zipf values."""
    rng = np.random.default_rng(seed)
    pcs = (rng.zipf(1.3, n) % 5000).astype(np.uint64) * 4 + 0x400000
    small = rng.random(n) < 0.7
    values = np.where(small, rng.zipf(1.5, n) % 64, rng.integers(0, 1 << 32, n))
    return (pcs << np.uint64(32)) | values.astype(np.uint64)


@pytest.mark.soak
def test_tagged_compressor_stream_bit_exact(tmp_path, seed):
    top = get_top("tagged_compressor")
    exe = build_native(to_verilog(top.construct({}), top.name), top.name, "stream")
    keys = synthetic_keys(200_000, seed)
    messages, _, stalls = run_stream(exe, keys, tmp_path)
    report = check_stream(messages, keys, TaggedCompressor(**top.resolve({})), 9)
    assert stalls == 0 and report["messages"] > 1000 and report["mismatches"] == 0, report
    # the checker can fail: against a model with another ShouldEvict threshold
    wrong = check_stream(messages, keys, TaggedCompressor(**{**top.resolve({}),
                                                             "evict_hits": 7}), 9)  # fmt: skip
    assert wrong["mismatches"] > 0


STRATIFIED = ("rate", "entries", "key_bits", "pc_bits", "hash_seed", "sampler", "seed",
              "count_bits")  # fmt: skip


def stratified_golden(params: dict, **changes) -> Stratified:
    """The golden H[X_r]_n for a top's resolved parameters (``changes`` applied)."""
    return Stratified(**{**{k: params[k] for k in STRATIFIED}, **changes})


@pytest.mark.soak
def test_stratified_stream_bit_exact(tmp_path, seed):
    top = get_top("stratified")
    p = top.resolve({})
    exe = build_native(to_verilog(top.construct({}), top.name), top.name, "stream")
    keys = synthetic_keys(200_000, seed)
    messages, _, stalls = run_stream(exe, keys, tmp_path)
    report = check_stream(messages, keys, stratified_golden(p), p["rate"].bit_length())
    assert stalls == 0 and report["messages"] > 100 and report["mismatches"] == 0, report
    # the checker can fail: against a model with another hash seed
    other = stratified_golden(p, hash_seed=2)
    assert check_stream(messages, keys, other, p["rate"].bit_length())["mismatches"] > 0


@pytest.mark.soak
def test_multihash_stream_bit_exact(tmp_path, seed):
    """Default profiler (4 x 512 counters, 100 entries, interval 10,000): ten intervals."""
    top = get_top("multihash")
    p = top.resolve({})
    exe = build_native(to_verilog(top.construct({}), top.name), top.name, "multihash")
    keys = synthetic_keys(100_000, seed)
    got, _, _ = run_multihash(exe, keys, tmp_path, 64, p["counter_bits"],
                              4 * p["accumulator"] + 20)  # fmt: skip
    want = MultiHashProfiler(**p).run(keys)
    assert len(want) == 10 and sum(map(len, want)) > 0
    assert got == want
    # the checker can fail: a profiler with another threshold reads out other profiles
    assert got != MultiHashProfiler(**{**p, "threshold": 101}).run(keys)
