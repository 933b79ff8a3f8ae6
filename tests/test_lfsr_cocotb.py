"""cocotb tier: cocotb_tests/test_lfsr.py (the lfsr top) and test_lfsr_bank.py (the LFSR
library at every brr width) on Verilator vs golden."""

import pytest

from hwprof.catalog import get_top
from hwprof.sim.runner import run_cocotb
from hwprof.synth import to_verilog
from hwprof.verify.regress import run_top_regression
from tests.lfsr_bank import BANK, LfsrBank, bank_params

pytestmark = pytest.mark.cocotb


def describe(result):
    return f"{result.failed}/{result.tests} failed, seed {result.seed}, log {result.log}"


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
