"""cocotb tier: the generated brr Verilog on Verilator against the golden model."""

import pytest

from hwprof.catalog import get_top
from hwprof.golden.brr import Brr as Golden
from hwprof.regress import run_top_regression
from hwprof.rtl.brr import Brr
from hwprof.sim.runner import run_cocotb
from hwprof.synth import to_verilog
from tests.lfsr_bank import BANK, LfsrBank, bank_params

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


def test_lfsr_top_wide_galois_multi_step(seed):
    result = run_top_regression(get_top("lfsr"), {"width": 64, "form": "galois", "steps": 3},
                                seed=seed, cycles=30_000)  # fmt: skip
    assert result.passed, describe(result)


def test_lfsr_library_at_every_brr_width(seed):
    bank = [[form, width, bank_params(form, width)] for form, width in BANK]
    result = run_cocotb(
        verilog=to_verilog(LfsrBank(), "lfsr_bank"), toplevel="lfsr_bank",
        test_module="test_lfsr_bank", env={"bank": bank, "cycles": 20_000}, seed=seed,
    )  # fmt: skip
    assert result.passed, describe(result)


def test_regress_command(seed, capsys):
    """``hwprof regress brr`` runs the same regression and reports PASS with its seed."""
    from hwprof.cli import main

    assert main(["regress", "brr", "--seed", str(seed), "--cycles", "3000"]) == 0
    out = capsys.readouterr().out
    assert f"brr: PASS (1 tests, 0 failed, seed {seed};" in out
