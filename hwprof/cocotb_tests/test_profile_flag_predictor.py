"""profile_flag_predictor on Verilator against the golden front-end model, every cycle.

The golden front end (:mod:`hwprof.golden.frontend`) runs a program with the
profile-flag predictor on; each cycle it records the fetched lanes, the decoded
lanes (with the flag each PI saw) and the squash, and the predictor's outputs.
The same inputs drive the RTL; ``skip``, ``follow``, ``not_taken`` (of the fetched
lanes: the others mean nothing) and ``bits`` are compared every cycle. Programs:
the directed ones (paper Fig. 3 and 4, nested pushpf/poppf, a block of profile
types 0/1/0, 12 nested frames, a stale block recompiled shorter) and seeded random
programs of ``HWPROF_INSTRUCTIONS`` instructions each (basic blocks; every second
one with profile blocks that mix PI types). With
``length_check`` the stale block and the random programs carry ``pflen`` hints
(sec. IV-A.2). First, ``table_match``: the golden predictor alone, driven with blocks
in every set and way, full-width tags, wrapping follows, PIs out of program
order, PIs of every operation in every lane and evictions in every set
(hwprof/cocotb_tests/predictor_stimulus.py), every leader fetched after each round. Then
``table_after_reset``: the table filled, reset, and filled again set by set in two
orders (each from a reset: the memory keeps the blocks before, their valid bits clear).
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly
from frontend_programs import pack, replay_random_programs
from harness import check_equal, golden_params, param, rng, seed, start_in_reset
from predictor_stimulus import reset_passes, table_steps

from hwprof.golden.frontend import (
    FrontEnd,
    directed_programs,
    fig3_basic_block,
    stale_block_patches,
)

TABLE = ("sets", "ways", "min_block", "length_check", "update_latency")


async def replay(dut, frontend: FrontEnd, name: str) -> int:
    return await replay_steps(dut, frontend.predictor_trace, name)


async def replay_steps(dut, steps, name: str) -> int:
    """Drive recorded predictor steps (golden outputs of ``fetch_latency`` 0) from reset."""
    params = golden_params()
    lanes, addr = params["lanes"], params["addr_width"]
    await start_in_reset(dut, {"fetch_valid": 0, "upd_valid": 0, "squash": 0})
    # fetch_latency=1: the lookup of the lanes fetched in the cycle before
    delay = params.get("fetch_latency", 0)
    previous = None
    for cycle, st in enumerate(steps):
        fetch = st.fetch + [(0, 0)] * (lanes - len(st.fetch))
        update = st.update + [(0, 0, 0)] * (lanes - len(st.update))
        dut.fetch_valid.value = (1 << len(st.fetch)) - 1
        dut.fetch_insn.value = pack([f[0] for f in fetch], 32)
        dut.fetch_pc.value = pack([f[1] for f in fetch], addr)
        dut.upd_valid.value = (1 << len(st.update)) - 1
        dut.upd_insn.value = pack([u[0] for u in update], 32)
        dut.upd_pc.value = pack([u[1] for u in update], addr)
        dut.upd_flag.value = pack([u[2] for u in update], 1)
        dut.squash.value = st.squash
        await ReadOnly()
        context = f"program {name}"
        # lanes not fetched: outputs mean nothing (independent of fetch_valid)
        looked_up = previous if delay else st
        previous = st
        n = len(looked_up.fetch) if looked_up is not None else 0
        mask = (1 << n) - 1
        follow = int(dut.follow.value) & ((1 << (n * addr)) - 1)
        if n:
            want = looked_up.out
            check_equal(cycle, "skip", int(dut.skip.value) & mask, want.skip & mask, context)
            check_equal(cycle, "follow", follow, pack(want.follow[:n], addr), context)
            check_equal(cycle, "not_taken", int(dut.not_taken.value) & mask,
                        want.not_taken & mask, context)
        check_equal(cycle, "bits", int(dut.bits.value), st.out.bits, context)
        await FallingEdge(dut.clk)
    return len(steps)


def _frontend(program, rate, run_seed, instructions, patches=()):
    params = golden_params()
    frontend = FrontEnd(program, lanes=params["lanes"], n_flags=params["n_flags"],
                        addr_width=params["addr_width"], mispredict_rate=rate, seed=run_seed,
                        predictor={k: params[k] for k in TABLE})  # fmt: skip
    frontend.run(instructions, patches=patches)
    return frontend


#: the first test of the module: the simulation starts with the table memory's
#: initial zeros, which the stimulus's tag-0 probes rely on (later tests start from
#: the table the test before left: reset clears the valid bits only)
@cocotb.test()
async def table_match(dut):
    """Every set and way, full-width tags, evictions, PIs out of order, every PI operation
    in every lane, LRU passes (predictor_stimulus)."""
    steps = table_steps(rng(), golden_params())
    cycles = await replay_steps(dut, steps, "table")
    dut._log.info("table: %d cycles equal, %d skips", cycles,
                  sum(st.out.skip.bit_count() for st in steps))


@cocotb.test()
async def table_after_reset(dut):
    """Sets filled again after a reset, in ascending and descending order, against the
    memory's old blocks (reset clears the valid bits only; predictor_stimulus)."""
    for n, steps in enumerate(reset_passes(rng(), golden_params())):
        cycles = await replay_steps(dut, steps, f"after reset {n}")
        dut._log.info("after reset %d: %d cycles equal, %d skips", n, cycles,
                      sum(st.out.skip.bit_count() for st in steps))


@cocotb.test()
async def directed_programs_match(dut):
    """Paper Fig. 3/4 listings, nesting, mis-fetches, and a stale block (sec. IV-A.2)."""
    count = param("directed_instructions", 3000)
    programs = directed_programs()
    cases = [(name, programs[name], ()) for name in
             ("fig3_off", "fig3_on", "fig3_mispredict_in_block", "fig4_off_misfetch",
              "nested_push_pop", "off_on_off", "recursion")]  # fmt: skip
    stale = directed_programs()["fig3_off"]
    if golden_params()["length_check"]:  # the counter blocks carry their pflen hints
        stale = (fig3_basic_block(False, pflen=True), stale[1])
    cases.append(("stale_block", stale, stale_block_patches(stale[0], count // 2)))
    for name, (program, rate), patches in cases:
        frontend = _frontend(program, rate, seed(), count, patches)
        cycles = await replay(dut, frontend, name)
        dut._log.info("%s: %d cycles equal, counts %s", name, cycles, frontend.counts)


@cocotb.test()
async def random_programs_match(dut):
    """Seeded random basic-block programs with frequent flag toggles."""
    await replay_random_programs(dut, _frontend, replay, toggle_rate=0.5)
