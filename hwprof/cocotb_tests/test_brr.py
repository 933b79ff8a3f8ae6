"""brr unit on Verilator against the golden model, every cycle.

Stimulus: random ``freq`` every cycle, random gaps in ``decode_valid``, random
software loads (including the all-zero lock-up state) and random resets.
Checked each cycle: ``taken``, ``redirect`` and ``state``.

Before the random cycles, a directed phase loads, for every ``freq``, states
that just meet its outcome mask and states one mask bit short of it, and reads
``taken`` for all 16 ``freq`` in each: the random cycles see the high
frequencies (taken with probability 2^-14..2^-16) taken almost never, so a
stuck AND term or mux select of theirs would go unnoticed.
"""

from __future__ import annotations

import cocotb
from brr_stimulus import outcome_states
from cocotb.triggers import FallingEdge, ReadOnly
from harness import check_equal, golden_params, param, rng, start_in_reset

from hwprof.golden.brr import Brr


def check_outputs(dut, cycle, expected, context) -> int:
    """``state``, ``taken`` and ``redirect`` against the golden step; its ``taken``."""
    check_equal(cycle, "state", int(dut.state.value), expected.state, context)
    check_equal(cycle, "taken", int(dut.taken.value), expected.taken, context)
    check_equal(cycle, "redirect", int(dut.redirect.value), expected.redirect, context)
    return expected.taken


@cocotb.test()
async def brr_matches_golden(dut):
    """Cycle-by-cycle equality with ``hwprof.golden.brr.Brr``."""
    cycles = param("cycles", 100_000)
    golden = Brr(**golden_params())
    width = golden.config.width
    r = rng()
    # Start from reset so the register and the model agree on cycle 0.
    idle = {"decode_valid": 0, "load_valid": 0, "load_data": 0, "freq": 0}
    await start_in_reset(dut, idle)
    golden.step(reset=1)
    taken_count = 0
    cycle = 0
    for state in outcome_states(golden.config.outcome_masks, width, r):
        for i, freq in enumerate([None, *r.sample(range(16), 16)]):
            load, decode = freq is None, i == 16
            freq = r.randrange(16) if freq is None else freq
            dut.load_valid.value = int(load)
            dut.load_data.value = state
            dut.decode_valid.value = int(decode)
            dut.freq.value = freq
            await ReadOnly()
            expected = golden.step(decode_valid=decode, freq=freq, load_valid=load,
                                   load_data=state)  # fmt: skip
            context = f"directed: loaded {state:#x}, freq={freq} decode_valid={int(decode)}"
            taken_count += check_outputs(dut, cycle, expected, context)
            await FallingEdge(dut.clk)
            cycle += 1
    first = cycle
    for cycle in range(first, first + cycles):
        reset = r.random() < 0.0005
        load = not reset and r.random() < 0.002
        load_data = 0 if r.random() < 0.1 else r.getrandbits(width)
        decode = r.random() < 0.7
        freq = r.randrange(16)
        dut.rst.value = int(reset)
        dut.load_valid.value = int(load)
        dut.load_data.value = load_data
        dut.decode_valid.value = int(decode)
        dut.freq.value = freq
        await ReadOnly()
        expected = golden.step(
            decode_valid=decode, freq=freq, load_valid=load, load_data=load_data, reset=reset
        )
        context = f"freq={freq} decode_valid={int(decode)}"
        taken_count += check_outputs(dut, cycle, expected, context)
        await FallingEdge(dut.clk)
    dut._log.info("%d cycles equal, %d taken outcomes", cycles, taken_count)
