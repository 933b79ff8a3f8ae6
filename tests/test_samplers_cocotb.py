"""cocotb tier: sampler Verilog on Verilator against the golden models (7 builds:
the sampler bank, the H[P]A_k pipeline, the tagged compressor and its mutant (soak
tier), A_k and H[CR] with the skid buffer, R_r with a mutated LFSR zero detector)."""

import pytest

from hwprof.catalog import get_top
from hwprof.rtl.tagged import TaggedCompressor
from hwprof.sim.runner import run_cocotb
from hwprof.synth import to_verilog
from hwprof.verify.regress import run_top_regression
from tests.sampler_bank import BANK, SamplerBank

pytestmark = pytest.mark.cocotb


def describe(result):
    return f"{result.failed}/{result.tests} failed, seed {result.seed}, log {result.log}"


def test_sampler_bank_on_verilator(seed):
    bank = {prefix: [kind, params] for prefix, (kind, params) in BANK.items()}
    result = run_cocotb(
        verilog=to_verilog(SamplerBank(), "sampler_bank"), toplevel="sampler_bank",
        test_module="test_samplers", env={"bank": bank, "cycles": 20_000}, seed=seed,
    )  # fmt: skip
    assert result.passed, describe(result)


def test_stratified_pipeline_on_verilator(seed):
    top = get_top("stratified_pipeline")
    overrides = {"rate": 8, "entries": 64, "assoc_entries": 4, "count_bits": 8, "depth": 6}
    result = run_top_regression(top, overrides, seed=seed, cycles=20_000)
    assert result.passed, describe(result)


def test_tagged_compressor_on_verilator(seed):
    result = run_top_regression(get_top("tagged_compressor"), {"evict_hits": 4}, seed=seed,
                                cycles=20_000)  # fmt: skip
    assert result.passed, describe(result)


def test_assoc_table_skid_on_verilator(seed):
    """A_k at its default latency 2 with the skid buffer (registered handshake)."""
    params = {"entries": 4, "in_count_bits": 4, "count_bits": 8, "skid": True}
    result = run_top_regression(get_top("assoc_table"), params, seed=seed, cycles=20_000)
    assert result.passed, describe(result)


def test_stratified_skid_on_verilator(seed):
    """H[CR_r]_n at latency 3 with the skid buffer (the bank has H[P], H[CR] without)."""
    params = {"rate": 4, "entries": 16, "sampler": "cr", "count_bits": 4, "skid": True}
    result = run_top_regression(get_top("stratified"), params, seed=seed, cycles=20_000)
    assert result.passed, describe(result)


# Soak tier (suite time): in the fast tier this module's checker is shown failing by the
# LFSR zero-detector mutant below, and this mutant by the Amaranth-level check
# (tests/test_samplers_rtl.py::test_checker_catches_tagged_mutant).
@pytest.mark.soak
def test_tagged_mutant_is_caught(seed):
    """Counters reset on E5/E6 instead of kept: the same regression must fail."""
    top = get_top("tagged_compressor")
    params = {"evict_hits": 4}
    mutant = TaggedCompressor(evict_hits=4, keep_counts=False)
    result = run_top_regression(top, params, seed=seed, cycles=20_000,
                                verilog=to_verilog(mutant, top.name),
                                golden_params=top.resolve(params))  # fmt: skip
    assert result.tests == 1 and result.failed == 1, describe(result)
    assert "golden model says" in result.log.read_text(), "failed, but not on a mismatch"


def test_lfsr_zero_detector_mutant_is_caught(seed):
    """One input of R_r's LFSR zero detector inverted (``hwprof mutate sampler_random``'s
    survivor 34): the lock-up escape fires on 0x00008000 instead of 0, a state reached
    from reset once in about 2^32 advances. Only the regression's one-hot phase (each
    one-bit state written into the register) reaches it: the same regression must fail
    there, on the register compare."""
    top = get_top("sampler_random")
    params = {"rate": 4, "key_bits": 40}
    verilog = to_verilog(top.construct(params), top.name)
    detector = "= | register;"
    assert verilog.count(detector) == 1, "the LFSR's zero detector is no longer one OR"
    mutant = verilog.replace(detector, "= | (register ^ 32'h00008000);")
    result = run_top_regression(top, params, seed=seed, cycles=2_000, verilog=mutant)
    assert result.tests == 1 and result.failed == 1, describe(result)
    log = result.log.read_text()
    assert "LFSR register" in log and "one-hot state 1 << 15" in log, "failed, but elsewhere"
