"""The generated Verilog on real traces (hwprof/verify/trace_verify.py, native stream harness).

Default tier: the tagged compressor, built once at ``-O0`` (the build is the slow
part), on slices of the shipped traces: with the output always ready against the
golden bulk path, and back-pressured against the golden cycle model; each check
shown to fail (a message one cycle late, a model with another ShouldEvict
threshold). Soak tier (``make soak``): the same for the stratified sampler, every
tuple of every shipped trace for the three tops, and the multi-hash check's own
failure; docs/verification.md gives the figures and the command for a 10M+
tuple trace.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest
from amaranth.lib import data

from hwprof.block import TraceCheck
from hwprof.catalog import get_top
from hwprof.golden.multihash import MultiHashConfig, MultiHashProfiler
from hwprof.golden.samplers import SkidBuffer, Stratified, StratifiedConfig
from hwprof.golden.tagged import TaggedCompressor, TaggedConfig
from hwprof.sim.native import (
    OPT,
    StreamRun,
    _field,
    compare_counts,
    ready_pattern,
    stream_ports,
    stream_wrapper,
)
from hwprof.traces.keys import PORT_VALUE_MAP, trace_keys
from hwprof.traces.workloads import shipped_trace
from hwprof.verify.trace_verify import Check, bulk_counts, golden_model, main, work_dir
from tests.unelaborated import unelaborated

SLICE = 20_000


def load_keys(path, limit=None):
    """The first ``limit`` load keys (32:32, the hardware's port fields) of a trace."""
    return np.concatenate(list(trace_keys(path, limit=limit, value_map=PORT_VALUE_MAP)))


def test_trace_keys_are_the_load_tuples():
    keys = load_keys(shipped_trace("sort"), 1000)
    assert keys.dtype == np.uint64 and len(keys) == 1000
    from hwprof.traces.tracefile import LOAD, TraceReader

    with TraceReader(shipped_trace("sort")) as r:
        chunk = next(r.chunks(kinds=(LOAD,), columns=("kind", "pc", "value")))
    want = (chunk.pc[:1000] & 0xFFFFFFFF) << np.uint64(32) | (chunk.value[:1000] & 0xFFFFFFFF)
    assert np.array_equal(keys, want)


def test_stream_ports_follow_the_signature():
    for name, sink in (("stratified", "messages"), ("tagged_compressor", "messages"),
                       ("multihash", "records")):  # fmt: skip
        with unelaborated():  # only its signature is read
            source, out, layout = stream_ports(get_top(name).construct({}))
        assert (source, out) == ("tuples", sink)
        assert layout.members["key"] == 64
    with unelaborated(), pytest.raises(ValueError, match="one input and one output stream"):
        stream_ports(get_top("brr").construct({}))


def test_wrapper_drives_the_streams_and_ties_other_inputs():
    with unelaborated():  # only its signature is read
        verilog, macros = stream_wrapper(get_top("multihash").construct({}), "multihash")
    assert ".tuples__valid(in_valid_q)" in verilog and ".records__ready(out_ready)" in verilog
    assert "wire out_ready = out_ready_q & !(1'b0);" in verilog  # no hold
    assert "in_ready, out_valid, out_ready, out_payload," in verilog  # the harness sees it
    assert ".cfg_we(1'd0)" in verilog and ".cfg_interval(24'd0)" in verilog
    assert macros["HWPROF_PAYLOAD_BITS"] == 89 and macros["HWPROF_KEY_BITS"] == 64
    with unelaborated():
        verilog, _ = stream_wrapper(get_top("multihash").construct({}), "multihash",
                                    hold="held != 0")  # fmt: skip
    assert "wire out_ready = out_ready_q & !(held != 0);" in verilog


def test_payload_fields_across_words(seed):
    rng = np.random.default_rng(seed)
    layout = data.StructLayout({"key": 64, "count": 24, "end": 1})
    values = [(int(rng.integers(0, 1 << 63)) * 2 + 1, int(rng.integers(0, 1 << 24)),
               int(rng.integers(0, 2))) for _ in range(50)]  # fmt: skip
    words = np.array([[(k | c << 64 | e << 88) >> s & (2**64 - 1) for s in (0, 64)]
                      for k, c, e in values], dtype=np.uint64)  # fmt: skip
    got = {name: _field(words, f.offset, f.width).tolist() for name, f in layout}
    assert got["key"] == [v[0] for v in values]
    assert got["count"] == [v[1] for v in values]
    assert got["end"] == [v[2] for v in values]


def test_ready_pattern_fraction(seed):
    pattern = ready_pattern(20_000, 0.7, seed)
    # 20,000 draws at p = 0.7: 6 sigma is 389
    assert abs(pattern.sum() - 14_000) < 389
    assert ready_pattern(100, 1.0, seed).all()


def test_ready_pattern_is_the_harness_xorshift(seed):
    """stream.cpp's pattern: xorshift64 (13, 7, 17) from ``seed | 1``, a cycle ready when
    ``(x >> 11) % 10**6`` is below the parts per million (harness.h, stream.cpp)."""
    x, mask, want = seed | 1, 2**64 - 1, []
    for _ in range(3000):
        x ^= x << 13 & mask
        x ^= x >> 7
        x ^= x << 17 & mask
        want.append((x >> 11) % 10**6 < 300_000)
    assert ready_pattern(3000, 0.3, seed).tolist() == want, f"seed {seed}"


def test_unknown_top_bad_ready_and_bad_trace_are_usage_errors(capsys, tmp_path):
    truncated = tmp_path / "truncated.trace"
    truncated.write_bytes(shipped_trace("xz").read_bytes()[:100])
    assert main(["brr", "--limit", "10"]) == 2
    assert main(["tagged_compressor", "--ready", "0"]) == 2
    assert main(["tagged_compressor", "--trace", "no/such.trace"]) == 2
    assert main(["tagged_compressor", "--trace", str(truncated)]) == 2
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    assert main(["tagged_compressor", "--work", str(not_a_dir / "sub")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(line.startswith("error: ") for line in err)
    assert "--work" in err[-1] and str(not_a_dir / "sub") in err[-1]


def test_work_dir_is_created_with_its_parents(tmp_path):
    assert work_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b"
    assert (tmp_path / "a" / "b").is_dir()
    assert work_dir(tmp_path / "a" / "b").is_dir()  # an existing one is kept
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match="cannot be used as a directory"):
        work_dir(tmp_path / "f")


_CHECKS = {}


def _check(name: str, opt: str = OPT) -> Check:
    """One build per top and optimisation for the whole session."""
    if (name, opt) not in _CHECKS:
        _CHECKS[name, opt] = Check.build(name, opt=opt)
    return _CHECKS[name, opt]


WRONG = {"tagged_compressor": {"evict_hits": 7}, "stratified": {"hash_seed": 2}}
# the tagged compressor (latency 3: pipeline, bypass) in the default tier, built -O0
# (a build takes about a minute); the stratified sampler with the soak runs, -O2
SLICE_TOPS = ["tagged_compressor", pytest.param("stratified", marks=pytest.mark.soak)]


def _slice_check(name: str) -> Check:
    return _check(name, "-O0") if name == "tagged_compressor" else _check(name)


#: tuples per slice: H[P_256]_2048 sends a message per 256 tuples of a substream
SLICES = {"tagged_compressor": 20_000, "stratified": 400_000}


@pytest.mark.parametrize("name", SLICE_TOPS)
def test_real_trace_slice_bit_exact(tmp_path, name):
    keys = load_keys(shipped_trace("xz"), SLICES[name])
    check = _slice_check(name)
    report = check.run(keys, tmp_path)
    assert report["mismatches"] == 0, report
    assert report["tuples"] == len(keys) and report["stalls"] == 0
    assert report["messages"] >= 20, report
    # the check can fail: every message expected one cycle late
    run = check.harness.run(keys, tmp_path, check.drain())
    latency = getattr(golden_model(name, check.params), "latency", 1)
    late = compare_counts(run, keys, bulk_counts(name, check.params, keys), latency + 1)
    assert late["mismatches"] == report["messages"]


def test_harness_rejects_a_truncated_key_file(tmp_path):
    exe = _slice_check("tagged_compressor").harness.exe
    (tmp_path / "keys.bin").write_bytes(b"\x01" * 7)
    proc = subprocess.run([exe, tmp_path / "keys.bin", tmp_path / "out.bin", "5"],
                          capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("size is not a multiple of 8 bytes (uint64 keys)")


@pytest.mark.parametrize("name", SLICE_TOPS)
def test_real_trace_slice_back_pressure_cycle_exact(tmp_path, seed, name):
    """Output ready on 30 % of cycles: stalls, against the golden cycle model."""
    keys = load_keys(shipped_trace("perl"), SLICES[name])
    check = _slice_check(name)
    report = check.run(keys, tmp_path, ready=0.3, seed=seed)
    assert report["mismatches"] == 0, report
    assert report["stalls"] > 0 and report["messages"] > 20, report
    # the check can fail: the golden model of other parameters, same stimulus
    wrong = golden_model(name, {**check.params, **WRONG[name]})
    bad = check.run(keys, tmp_path, ready=0.3, seed=seed, golden=wrong)
    assert bad["mismatches"] > 0


@pytest.mark.soak
@pytest.mark.parametrize("name", ["stratified", "tagged_compressor", "multihash"])
@pytest.mark.parametrize("trace", ["bzip2", "perl", "python", "sort", "xz"])
def test_shipped_trace_bit_exact(tmp_path, name, trace):
    """Every load tuple of a shipped trace (1.3-1.4M), -O2 builds."""
    check = _check(name)
    keys = load_keys(shipped_trace(trace))
    report = check.run(keys, tmp_path)
    assert report["mismatches"] == 0, report
    assert report["tuples"] == len(keys) > 1_000_000


@pytest.mark.soak
def test_tagged_compressor_without_bypass_fails_on_a_trace(tmp_path):
    """The RTL mutant of latency 3 without forwarding (rtl.tagged's ``bypass=False``)
    differs from the golden model on real tuples: the harness and check catch it."""
    from hwprof.rtl.tagged import TaggedCompressor as Rtl

    params = get_top("tagged_compressor").resolve({})
    check = Check.of("tagged_compressor", Rtl(**params, bypass=False), params, opt="-O0")
    assert check.run(load_keys(shipped_trace("xz"), SLICE), tmp_path)["mismatches"] > 0


@pytest.mark.soak
def test_multihash_slice_checker_can_fail(tmp_path):
    """The multi-hash comparison catches a profiler with intervals one tuple shorter."""
    check = _check("multihash")
    keys = load_keys(shipped_trace("xz"), 50_000)
    assert check.run(keys, tmp_path)["mismatches"] == 0
    wrong = golden_model("multihash", {**check.params, "interval_length": 9_999})
    assert check.run(keys, tmp_path, golden=wrong)["mismatches"] > 0


def test_golden_models_take_the_tops_parameters():
    """Each top's golden model at parameters that differ from every default: its
    configuration, latency and skid buffer are the ones given (written out here)."""
    p = get_top("stratified").resolve(dict(
        rate=64, entries=512, key_bits=48, pc_bits=16, hash_seed=5, sampler="cr", seed=9,
        count_bits=8, latency=1, skid=True))  # fmt: skip
    model = golden_model("stratified", p)
    assert isinstance(model, Stratified)
    assert model.config == StratifiedConfig(rate=64, entries=512, key_bits=48, pc_bits=16,
                                            hash_seed=5, sampler="cr", seed=9, count_bits=8)
    assert model.latency == 1 and isinstance(model.skid, SkidBuffer)
    assert model.count_bits == 8  # C&R's counters, not the rate's 7 bits
    p = get_top("tagged_compressor").resolve(dict(
        entries=256, ways=4, tag_bits=3, hit_bits=6, miss_bits=2, evict_hits=5,
        replace_misses=2, key_bits=40, pc_bits=20, hash_seed=7, latency=1, skid=True))
    model = golden_model("tagged_compressor", p)
    assert isinstance(model, TaggedCompressor)
    assert model.config == TaggedConfig(entries=256, ways=4, tag_bits=3, hit_bits=6,
                                        miss_bits=2, evict_hits=5, replace_misses=2,
                                        key_bits=40, pc_bits=20, hash_seed=7)  # fmt: skip
    assert model.latency == 1 and isinstance(model.skid, SkidBuffer)
    p = get_top("multihash").resolve(dict(
        tables=2, counters=512, counter_bits=16, accumulator=20, interval_length=5000,
        threshold=50, retain=False, reset=True, conservative=False, hash_seed=3, ways=0))
    model = golden_model("multihash", p)
    assert isinstance(model, MultiHashProfiler)
    assert model.config == MultiHashConfig(tables=2, counters=512, counter_bits=16,
                                           accumulator=20, interval_length=5000, threshold=50,
                                           pc_bits=32, value_bits=32, retain=False, reset=True,
                                           conservative=False, hash_seed=3, ways=0)
    assert (model.interval_length, model.threshold) == (5000, 50)
    # the defaults: latency 3, no skid buffer
    model = golden_model("stratified", get_top("stratified").resolve({}))
    assert model.latency == 3 and model.skid is None


def test_multihash_readout_splits_records_at_end_markers():
    """The multi-hash check's readout: records up to each end marker form one interval's
    profile; an interval with no record is an empty profile; records after the last
    marker belong to no finished interval."""
    readout = get_top("multihash").trace_check.readout
    rows = [(5, 9, 0), (7, 3, 0), (0, 0, 1), (0, 0, 1), (8, 4, 0), (0, 0, 1), (6, 2, 0)]
    fields = {name: np.array(column, dtype=np.uint64)
              for name, column in zip(("key", "count", "end"), zip(*rows, strict=True),
                                      strict=True)}  # fmt: skip
    run = StreamRun(cycles=0, tuples=0, stalls=0, seconds=0.0, cycles_per_second=0.0,
                    cpu_seconds=0.0, cpu_cycles_per_second=0.0,
                    cycle=np.arange(len(rows), dtype=np.uint64), fields=fields)  # fmt: skip
    assert readout(run) == [[(5, 9), (7, 3)], [], [(8, 4)]]


def test_a_profile_check_needs_both_sides():
    """A trace check with golden profiles but no way to read the run's (or the reverse)
    is refused when the catalog entry is written, not when a flow reaches it."""
    with pytest.raises(ValueError, match="needs profiles and readout"):
        TraceCheck(golden_model, profiles=lambda params, keys: [])
    with pytest.raises(ValueError, match="needs profiles and readout"):
        TraceCheck(golden_model, readout=lambda run: [])
