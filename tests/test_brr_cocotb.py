"""cocotb tier: cocotb_tests/test_brr.py on Verilator vs golden (LFSR: test_lfsr_cocotb.py)."""

import pytest

from hwprof.catalog import get_top
from hwprof.golden.brr import LAYOUTS, target_freqs
from hwprof.golden.brr import Brr as Golden
from hwprof.golden.lfsr import TAPS
from hwprof.rtl.brr import Brr
from hwprof.synth import to_verilog
from hwprof.verify.regress import run_top_regression
from tests.test_brr_layout import factor_from_ranks
from tests.verilator_period import full_period_counts

pytestmark = pytest.mark.cocotb

BRR = get_top("brr")


def describe(result):
    return f"{result.failed}/{result.tests} failed, seed {result.seed}, log {result.log}"


@pytest.mark.parametrize(
    "overrides, cycles",
    [
        ({}, 100_000),
        ({"pipelined": True}, 100_000),
        ({"lockup_escape": False}, 30_000),
        ({"width": 16}, 30_000),
        ({"width": 32, "seed": 0xDEADBEEF}, 30_000),
    ],
    ids=["default", "pipelined", "no-escape", "w16", "w32"],
)
def test_brr_on_verilator(overrides, cycles, seed):
    result = run_top_regression(BRR, overrides, seed=seed, cycles=cycles)
    assert result.passed, describe(result)


@pytest.mark.parametrize("mutation", ["position", "tap"])
def test_mutant_is_caught(mutation, seed):
    """The same cocotb check, run on a Verilog with one wrong stage or tap, must fail."""
    positions = list(Golden().config.positions)
    if mutation == "position":
        positions[5] = next(p for p in range(20) if p not in positions)
        mutant = Brr(positions=tuple(positions))
    else:
        mutant = Brr(taps=(20, 3))  # a different, also primitive, polynomial
    result = run_top_regression(
        BRR, seed=seed, cycles=100_000, verilog=to_verilog(mutant, "brr"),
        golden_params=BRR.resolve({}),
    )  # fmt: skip
    assert result.tests == 1 and result.failed == 1, describe(result)
    assert "golden model says" in result.log.read_text(), "failed, but not on a mismatch"


def test_regress_command(seed, capsys):
    """``hwprof regress brr`` runs the same regression and reports PASS with its seed."""
    from hwprof.cli import main

    assert main(["regress", "brr", "--seed", str(seed), "--cycles", "3000"]) == 0
    out = capsys.readouterr().out
    assert f"brr: PASS (1 tests, 0 failed, seed {seed};" in out


def test_full_period_of_the_verilog_meets_the_independence_target(tmp_path):
    """Issue 14, counted on the generated Verilog over all 2^20 - 1 states (a C++
    Verilator harness: ~1M brr x 16 freqs): the paper's rate per freq exactly, the
    dependence factor P(both)/P(taken)^2 in [1/2, 2] for freq 0..7 at lags 1..8, and
    every pair count equal to the GF(2) rank prediction."""
    width, period = 20, 2**20 - 1
    counts = full_period_counts(to_verilog(Brr(), "brr"), width, tmp_path)
    assert counts["back_to_start"]
    taken = counts["taken"]
    assert taken == [2 ** (width - f - 1) for f in range(16)]
    steps, positions = LAYOUTS[width]
    for lag in range(1, 9):
        both = counts["both"][lag - 1]
        for f in range(16):
            predicted = factor_from_ranks(width, TAPS[width], steps, positions, f, lag)
            assert both[f] == round(predicted * taken[f] ** 2 / period), (lag, f)
            if f in target_freqs(width):
                assert 0.5 <= both[f] * period / taken[f] ** 2 <= 2, (lag, f)


@pytest.mark.soak
def test_full_period_count_catches_the_even_stage_layout(tmp_path):
    """The same count on the Verilog of the layout before issue 14 (W = 16, one step
    per brr, even stages first) finds a factor outside [1/2, 2]."""
    width, period = 16, 2**16 - 1
    even = (0, 10, 4, 14, 6, 12, 2, 8, 1, 3, 5, 7, 9, 11, 13, 15)
    mutant = Brr(width=width, lfsr_steps=1, positions=even)
    counts = full_period_counts(to_verilog(mutant, "brr"), width, tmp_path)
    taken = counts["taken"]
    factors = [counts["both"][lag - 1][f] * period / taken[f] ** 2
               for f in target_freqs(width) for lag in range(1, 9)]  # fmt: skip
    assert not all(0.5 <= x <= 2 for x in factors)
