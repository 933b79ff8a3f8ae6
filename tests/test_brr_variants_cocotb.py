"""cocotb tier: cocotb_tests/test_brr_decode.py, _replicated, _shared, _deterministic vs golden.

One build per top at a representative parameter set (4 lanes), plus one build
per mutant; each mutant must make the same check report a mismatch.
"""

import pytest

from hwprof.catalog import get_top
from hwprof.synth import to_verilog
from hwprof.verify.regress import run_top_regression

pytestmark = pytest.mark.cocotb


def describe(result):
    return f"{result.failed}/{result.tests} failed, seed {result.seed}, log {result.log}"


@pytest.mark.parametrize(
    "name, overrides, cycles",
    [
        ("brr_decode", {}, 20_000),
        ("brr_replicated", {"lanes": 4, "target_adder": True}, 15_000),
        ("brr_shared", {"lanes": 4, "steps": 2}, 15_000),
        ("brr_deterministic", {}, 30_000),
        ("brr_deterministic", {"rob_walk": True, "max_inflight": 4}, 20_000),
    ],
    ids=["decode", "replicated-4-adder", "shared-4-steps2", "deterministic", "deterministic-walk"],
)
def test_on_verilator(name, overrides, cycles, seed):
    result = run_top_regression(get_top(name), overrides, seed=seed, cycles=cycles)
    assert result.passed, describe(result)


def _assert_caught(result):
    assert result.tests == 1 and result.failed == 1, describe(result)
    text = result.log.read_text()
    assert "golden model says" in text or "no-squash core" in text, "failed, not on a mismatch"


def test_decode_mutant_is_caught(seed, monkeypatch):
    """A decoder that checks only the opcode (not funct3/reserved bits)."""
    import hwprof.rtl.brr_decode as module

    top = get_top("brr_decode")
    monkeypatch.setattr(module, "MATCH_MASK", 0x7F)
    verilog = to_verilog(top.construct({}), top.name)
    monkeypatch.undo()
    result = run_top_regression(top, seed=seed, cycles=5000, verilog=verilog,
                                golden_params=top.resolve({}))  # fmt: skip
    _assert_caught(result)


def test_shared_mutant_is_caught(seed):
    """A shared LFSR that serves every brr (steps=4) checked against the split semantics."""
    top = get_top("brr_shared")
    verilog = to_verilog(top.construct({"lanes": 4, "steps": 4}), top.name)
    result = run_top_regression(top, seed=seed, cycles=5000, verilog=verilog,
                                golden_params=top.resolve({"lanes": 4, "steps": 2}))
    _assert_caught(result)


def test_deterministic_mutant_without_shift_back_is_caught(seed, monkeypatch):
    """The non-deterministic baseline: a squash does not restore the LFSR."""
    import hwprof.rtl.brr_deterministic as module

    top = get_top("brr_deterministic")
    monkeypatch.setattr(module, "shift_back", lambda chain, count: chain)
    verilog = to_verilog(top.construct({}), top.name)
    monkeypatch.undo()
    result = run_top_regression(top, seed=seed, cycles=5000, verilog=verilog,
                                golden_params=top.resolve({}))  # fmt: skip
    _assert_caught(result)
