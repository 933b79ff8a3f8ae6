"""Every brr-width LFSR (both forms) on Verilator against the golden LFSR."""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly
from harness import check_equal, param, rng, start_in_reset

from hwprof.golden.lfsr import Lfsr


@cocotb.test()
async def lfsr_bank_matches_golden(dut):
    bank = param("bank")  # [[form, width, {params}], ...]
    cycles = param("cycles", 20_000)
    models = {(form, width): Lfsr(**params) for form, width, params in bank}
    r = rng()
    await start_in_reset(dut, {"enable": 0, "load": 0, "load_data": 0})
    for cycle in range(cycles):
        enable = int(r.random() < 0.8)
        load = int(r.random() < 0.01)
        data = 0 if r.random() < 0.2 else r.getrandbits(32)
        dut.enable.value = enable
        dut.load.value = load
        dut.load_data.value = data
        await ReadOnly()
        for (form, width), model in models.items():
            expected = model.step(enable=enable, load=load, load_data=data & ((1 << width) - 1))
            got = int(getattr(dut, f"state_{form}_{width}").value)
            check_equal(cycle, f"state_{form}_{width}", got, expected)
        await FallingEdge(dut.clk)
