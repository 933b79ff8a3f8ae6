"""dispatch_filter on Verilator against the golden front-end pipeline model, every cycle.

The golden front end (:mod:`hwprof.golden.frontend`) runs a program; each cycle
its decode stage hands the filter the fetch-queue head (``valid``, ``insn``,
``pc``, ``pred_taken``; with ``predecoded`` the words' predecode bits from the
ISA's decode on ``insn_pre``) or a mis-prediction ``squash`` with a checkpoint. The same
inputs drive the RTL and every output is compared with the golden filter's.
Programs: the directed ones (paper Fig. 3 and 4, nested pushpf/poppf, stack
overflow/underflow and 12 nested frames through the trap handler's spill and
fill, a block of profile types 0/1/0, mis-predictions inside a profile block,
mis-fetches) and seeded random programs of ``HWPROF_INSTRUCTIONS`` instructions
each (basic blocks; every second one with profile blocks that mix PI types).
"""

from __future__ import annotations

import cocotb
from cocotb.triggers import FallingEdge, ReadOnly
from dispatch_stimulus import random_steps
from frontend_programs import pack, replay_random_programs
from harness import check_equal, golden_params, param, rng, seed, start_in_reset

from hwprof.golden.dispatch import DispatchFilter, golden_filter_params
from hwprof.golden.frontend import FilterStep, FrontEnd, directed_programs
from hwprof.golden.isa_profile import predecode

SCALARS = ("take", "dispatch", "drop", "stall", "redirect", "misfetch", "flag_mispredict",
           "redirect_pc", "overflow", "underflow", "halted", "flags")  # fmt: skip


async def replay(dut, frontend: FrontEnd, name: str) -> int:
    """Drive the recorded filter inputs, compare every output; returns the cycles."""
    return await replay_steps(dut, frontend.trace, frontend.filter.config.ckpt_width,
                              f"program {name}")


async def replay_steps(dut, steps, ckpt_width: int, what: str) -> int:
    """Drive ``steps`` (each with ``lanes``, ``squash``, ``restore`` and the golden
    outputs ``out``), compare every output every cycle; returns the cycles."""
    params = golden_params()
    lanes, addr = params["lanes"], params["addr_width"]
    predecoded = params.get("predecoded", False)
    await start_in_reset(dut, {"valid": 0, "squash": 0})
    for cycle, step in enumerate(steps):
        ls = step.lanes + [None] * (lanes - len(step.lanes))
        dut.valid.value = pack([1 if lane else 0 for lane in ls], 1)
        dut.pred_taken.value = pack([lane.pred_taken if lane else 0 for lane in ls], 1)
        dut.skipped.value = pack([lane.skipped if lane else 0 for lane in ls], 1)
        dut.insn.value = pack([lane.insn if lane else 0 for lane in ls], 32)
        if predecoded:  # the fetch queue's predecode bits, from the ISA's decode
            bits = [predecode(lane.insn if lane else 0) for lane in ls]
            dut.insn_pre.value = pack([b[0] | b[1] << 1 | b[2] << 2 for b in bits], 3)
        dut.pc.value = pack([lane.pc if lane else 0 for lane in ls], addr)
        dut.squash.value = step.squash
        dut.restore.value = step.restore
        await ReadOnly()
        context = f"{what}, squash={step.squash}"
        for signal in SCALARS:
            check_equal(cycle, signal, int(getattr(dut, signal).value),
                        getattr(step.out, signal), context)  # fmt: skip
        check_equal(cycle, "ckpt", int(dut.ckpt.value), pack(step.out.ckpt, ckpt_width), context)
        await FallingEdge(dut.clk)
    return len(steps)


def _frontend(program, rate, run_seed, instructions, predictor=None):
    params = golden_filter_params(golden_params())
    frontend = FrontEnd(program, mispredict_rate=rate, seed=run_seed, predictor=predictor,
                        **params)  # fmt: skip
    frontend.run(instructions)
    return frontend


def _frontend_with_predictor(program, rate, run_seed, instructions):
    """Fetch with the profile-flag predictor: ``skipped`` lanes and flag mis-predictions."""
    return _frontend(program, rate, run_seed, instructions, predictor={})


@cocotb.test()
async def directed_programs_match(dut):
    """Paper Fig. 3/4 listings, nesting, overflow, mis-fetch, mispredict in a profile block."""
    params = golden_params()
    for name, (program, rate) in directed_programs(params["stack_depth"]).items():
        frontend = _frontend(program, rate, seed(), param("directed_instructions", 3000))
        cycles = await replay(dut, frontend, name)
        dut._log.info("%s: %d cycles equal, counts %s", name, cycles, frontend.counts)


@cocotb.test()
async def random_programs_match(dut):
    """Seeded random basic-block programs, ``instructions`` correct-path instructions each.

    Fetch uses the profile-flag predictor, so the trace has skipped leaders and
    profile-flag mis-predictions as well as mis-fetches and branch squashes.
    """
    await replay_random_programs(dut, _frontend_with_predictor, replay, toggle_rate=0.5)


@cocotb.test()
async def random_heads_match(dut):
    """Random queue heads against the golden filter alone (no front end): every event
    in every lane position (an overflow or underflow in lane 0, after random restored
    checkpoints), addresses of the full width, ``HWPROF_HEADS`` cycles (default 20,000):
    a third with 35 % PCIs, a third with 85 % (several PCIs in one cycle), a third
    with 85 % PCIs that are all pushpf or poppf of existing flags (the stack moves by
    up to W entries every cycle and pops read below each other)."""
    params = golden_filter_params(golden_params())
    golden = DispatchFilter(**params)
    steps, source, third = [], rng(), param("heads", 20_000) // 3
    for pci_share, stack_only in ((0.35, False), (0.85, False), (0.85, True)):
        for lanes, squash, restore in random_steps(source, golden.config, third, pci_share,
                                                   stack_only):  # fmt: skip
            out = golden.step(lanes, squash=squash, restore=restore)
            steps.append(FilterStep(lanes, squash, restore, out))
    cycles = await replay_steps(dut, steps, golden.config.ckpt_width, "random heads")
    dut._log.info("random heads: %d cycles equal", cycles)
