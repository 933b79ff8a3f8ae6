"""Shared by the selective-dispatch cocotb modules: golden front-end programs to replay."""

from __future__ import annotations

import random

from harness import golden_params, param, seed

from hwprof.golden.frontend import basic_block_program, mixed_type_program


def pack(values, width: int) -> int:
    """Lane values into one ArrayLayout port value (lane 0 in the low bits)."""
    return sum(v << (i * width) for i, v in enumerate(values))


async def replay_random_programs(dut, make_frontend, replay, toggle_rate=0.3) -> None:
    """``programs`` seeded random basic-block programs of ``instructions`` each.

    ``make_frontend(program, rate, seed, instructions)`` runs the golden front end;
    ``replay(dut, frontend, name)`` drives its trace into the RTL. With the
    predictor's ``length_check``, profile blocks carry their ``pflen`` hints;
    without it, every second program has profile blocks that mix PI types.
    """
    instructions = param("instructions", 50_000)
    params = golden_params()
    for index in range(param("programs", 2)):
        program_seed = seed() * 1000 + index
        if index % 2 and not params.get("length_check", False):
            program = mixed_type_program(random.Random(program_seed),
                                         n_flags=params["n_flags"])  # fmt: skip
        else:
            program = basic_block_program(random.Random(program_seed),
                                          n_flags=params["n_flags"], toggle_rate=toggle_rate,
                                          pflen=params.get("length_check", False))  # fmt: skip
        frontend = make_frontend(program, 0.05, program_seed, instructions)
        cycles = await replay(dut, frontend, f"random #{index} (seed {program_seed})")
        dut._log.info("random #%d: %d cycles equal, counts %s", index, cycles, frontend.counts)
