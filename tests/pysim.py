"""Run an Amaranth component in the Python simulator against a golden model.

``compare(dut, model_step, stimulus, outputs)`` drives ``stimulus`` (one dict of
input values per cycle), calls ``model_step(**inputs)`` (which returns the
expected outputs for the cycle as a dict or an object with attributes) and
compares every name in ``outputs`` each cycle. Returns the list of mismatches,
so a test can also assert that a mutant *does* mismatch.
"""

from __future__ import annotations

from tests.batched_inputs import simulate_batched


def compare(dut, model_step, stimulus, outputs, *, signal_names=None, stop_at_first=True):
    signal_names = signal_names or {}
    mismatches = []

    def expected_value(expected, name):
        return expected[name] if isinstance(expected, dict) else getattr(expected, name)

    async def testbench(ctx):
        for cycle, inputs in enumerate(stimulus):
            for name, value in inputs.items():
                ctx.set(getattr(dut, signal_names.get(name, name)), value)
            expected = model_step(**inputs)
            for name in outputs:
                got = ctx.get(getattr(dut, name))
                want = expected_value(expected, name)
                if got != want:
                    mismatches.append((cycle, name, got, want, dict(inputs)))
            if mismatches and stop_at_first:
                return
            await ctx.tick()

    simulate_batched(dut, testbench)
    return mismatches
