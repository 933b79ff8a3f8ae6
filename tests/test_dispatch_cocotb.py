"""cocotb tier: cocotb_tests/test_dispatch_filter.py on Verilator against the golden front end."""

import pytest

from hwprof.catalog import get_top
from hwprof.synth import to_verilog
from tests.frontend_replay import describe, run_cocotb_frontend
from tests.selective_dispatch_mutants import NoPopHazard

pytestmark = pytest.mark.cocotb

TOP = get_top("dispatch_filter")


def run(overrides, seed, **sizes):
    return run_cocotb_frontend(TOP, overrides, seed, **sizes)


@pytest.mark.parametrize("overrides", [{}, {"lanes": 1, "stack_depth": 3}],
                         ids=["w4", "w1-depth3"])  # fmt: skip
def test_dispatch_filter_on_verilator(overrides, seed):
    """Directed programs, 2 random programs of 50,000 instructions each (seeds differ),
    20,000 cycles of random queue heads."""
    result = run(overrides, seed)
    assert result.tests == 3 and result.passed, describe(result)


@pytest.mark.soak
@pytest.mark.parametrize("overrides", [{}, {"lanes": 2, "n_flags": 8}], ids=["w4", "w2-n8"])
def test_dispatch_filter_soak(overrides, seed):
    result = run(overrides, seed, instructions=500_000, programs=8, directed=30_000)
    assert result.passed, describe(result)


def test_mutant_without_pop_hazard_is_caught(seed):
    """The same check on a filter that ignores the poppf RAW hazard must report a mismatch."""
    mutant = to_verilog(NoPopHazard(**TOP.resolve({})), TOP.name)
    result = run({}, seed, verilog=mutant, instructions=5000, programs=1, directed=1000)
    assert result.failed >= 1, describe(result)
    assert "golden model says" in result.log.read_text(), "failed, but not on a mismatch"


def test_regress_command(seed, capsys):
    from hwprof.cli import main

    assert main(["regress", "dispatch_filter", "--seed", str(seed)]) == 0
    assert "dispatch_filter: PASS" in capsys.readouterr().out
