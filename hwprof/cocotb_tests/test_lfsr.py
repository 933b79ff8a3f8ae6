"""The stand-alone LFSR top on Verilator against the golden LFSR, every cycle."""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly
from harness import check_equal, golden_params, param, rng, start_in_reset

from hwprof.golden.lfsr import Lfsr


@cocotb.test()
async def lfsr_matches_golden(dut):
    cycles = param("cycles", 50_000)
    model = Lfsr(**golden_params())
    width = model.config.width
    r = rng()
    await start_in_reset(dut, {"enable": 0, "load": 0, "load_data": 0})
    # First a walking one: load each one-hot state, then step it. Every input of
    # the lock-up escape's zero detector decides one of these steps (a random load
    # hits a one-hot state with probability width / 2**width: the mutation run of
    # docs/verification.md found a detector input stuck at 0 unnoticed).
    walk = 2 * width
    for cycle in range(walk + cycles):
        if cycle < walk:
            reset, enable, load = 0, cycle % 2, 1 - cycle % 2
            data = 1 << (cycle // 2)
        else:
            reset = int(r.random() < 0.001)
            enable = int(r.random() < 0.8)
            load = int(r.random() < 0.01)
            data = 0 if r.random() < 0.2 else r.getrandbits(width)
        dut.rst.value = reset
        dut.enable.value = enable
        dut.load.value = load
        dut.load_data.value = data
        await ReadOnly()
        expected = model.step(enable=enable, load=load, load_data=data, reset=reset)
        check_equal(cycle, "state", int(dut.state.value), expected)
        await FallingEdge(dut.clk)
