"""The system's CSR map from an independent Wishbone master (cocotbext-wishbone):
hwprof/cocotb_tests/test_system_csr.py on the generated Verilog of the CSR window."""

from __future__ import annotations

import pytest

from hwprof.sim.runner import run_cocotb
from hwprof.synth.verilog import to_verilog
from hwprof.system.regmap import BLOCKS
from hwprof.system.soc import Peripherals

pytestmark = pytest.mark.cocotb


def _registers():
    return [{"name": f"{b.name.upper()}_{r.name}", "word": (b.offset + r.offset) // 4,
             "access": r.access, "bits": r.width, "reset": r.reset}
            for b in BLOCKS for r in b.registers]  # fmt: skip


def _run(seed, params=None, testcase=None):
    verilog = to_verilog(Peripherals(), "hwprof_peripherals")
    return run_cocotb(verilog=verilog, toplevel="hwprof_peripherals",
                      test_module="test_system_csr", seed=seed, testcase=testcase,
                      env={"registers": _registers(), "params": params or {}})  # fmt: skip


def test_csr_map_from_wishbone(seed):
    result = _run(seed)
    assert result.passed and result.tests == 3, result.log.read_text()[-3000:]


def test_csr_check_can_fail(seed):
    """Told that the brr unit's seed is 2 (it is 1), the reset-value check fails."""
    result = _run(seed, {"seed": 2}, testcase="reset_values_and_access")
    assert result.tests == 1 and result.failed == 1
    assert "BRR_STATE after reset: 0x1" in result.log.read_text()
