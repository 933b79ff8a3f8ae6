"""cocotb tier: cocotb_tests/test_profile_flag_predictor.py on Verilator vs the golden front end."""

import pytest

from hwprof.catalog import get_top
from hwprof.synth import to_verilog
from tests.frontend_replay import describe, run_cocotb_frontend
from tests.selective_dispatch_mutants import LockIgnored

pytestmark = pytest.mark.cocotb

TOP = get_top("profile_flag_predictor")


def run(overrides, seed, **sizes):
    return run_cocotb_frontend(TOP, overrides, seed, **sizes)


#: suite time: the defaults and the length check in the fast tier; the other parameter
#: sets in the soak tier (the Amaranth tier, tests/test_predictor_rtl.py, runs every
#: update and fetch latency and these geometries against the golden model)
@pytest.mark.parametrize(
    "overrides", [{}, pytest.param({"lanes": 2, "n_flags": 2, "sets": 8}, marks=pytest.mark.soak),
                  {"length_check": True},
                  pytest.param({"update_latency": 0, "fetch_latency": 1}, marks=pytest.mark.soak),
                  pytest.param({"update_latency": 1}, marks=pytest.mark.soak),
                  pytest.param({"update_latency": 2}, marks=pytest.mark.soak)],
    ids=["default", "w2-n2-s8", "length-check", "update0-fetch1", "update1", "update2"],
)
def test_predictor_on_verilator(overrides, seed):
    result = run(overrides, seed)
    assert result.tests == 4 and result.passed, describe(result)


@pytest.mark.soak
def test_predictor_soak(seed):
    result = run({}, seed, instructions=500_000, programs=8, directed=30_000)
    assert result.passed, describe(result)


#: suite time: soak tier (its own Verilator build, about 50 CPU s). In the fast tier the
#: mutant without the length check below shows this checker can fail (on the defaults'
#: build), and tests/test_predictor_rtl.py catches this mutant in the Amaranth simulator
@pytest.mark.soak
def test_mutant_ignoring_the_lock_bit_is_caught(seed):
    mutant = to_verilog(LockIgnored(**TOP.resolve({})), TOP.name)
    result = run({}, seed, verilog=mutant, instructions=5000, programs=1, directed=2000)
    assert result.failed >= 1, describe(result)
    assert "golden model says" in result.log.read_text(), "failed, but not on a mismatch"


def test_predictor_without_the_length_check_is_caught(seed):
    """RTL built without the sec. IV-A.2 check, golden with it: the stale block mismatches."""
    plain = to_verilog(TOP.construct({}), TOP.name)
    result = run({"length_check": True}, seed, verilog=plain, instructions=5000, programs=1,
                 directed=3000)  # fmt: skip
    assert result.failed >= 1, describe(result)
    assert "golden model says" in result.log.read_text(), "failed, but not on a mismatch"
