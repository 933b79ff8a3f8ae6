"""Shared by the dispatch_filter and profile_flag_predictor tests: replay per-cycle steps.

``replay(dut, steps, drive, observe)`` runs ``dut`` in the Amaranth simulator; each
cycle ``drive(ctx, step)`` sets the inputs and returns the expected outputs,
``observe(ctx)`` reads the same outputs from the RTL. Returns the first
``(cycle, got, expected)`` that differs, or None. The inputs a cycle are applied
with one ``ctx.set`` (tests/batched_inputs.py).

``run_cocotb_frontend(top, overrides, seed, ...)`` runs the top's cocotb module
(which replays golden front-end programs) with the program sizes in its env.
"""

from __future__ import annotations

from hwprof.sim.runner import run_cocotb
from hwprof.synth import to_verilog
from tests.batched_inputs import simulate_batched


def replay(dut, steps, drive, observe):
    result = []

    async def bench(ctx):
        for cycle, step in enumerate(steps):
            expected = drive(ctx, step)
            got = observe(ctx)
            if got != expected:
                result.append((cycle, got, expected))
                return
            await ctx.tick()

    simulate_batched(dut, bench)
    return result[0] if result else None


def run_cocotb_frontend(top, overrides, seed, *, verilog=None, instructions=50_000, programs=2,
                        directed=3000):
    params = top.resolve(overrides)
    verilog = verilog or to_verilog(top.construct(overrides), top.name)
    env = {"params": params, "instructions": instructions, "programs": programs,
           "directed_instructions": directed}  # fmt: skip
    return run_cocotb(verilog=verilog, toplevel=top.name, test_module=top.cocotb_module,
                      env=env, seed=seed)  # fmt: skip


def describe(result):
    return f"{result.failed}/{result.tests} failed, seed {result.seed}, log {result.log}"
