"""The test-bench helper that batches input sets (tests/batched_inputs.py)."""

from amaranth.hdl import Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from tests.batched_inputs import BatchedInputs, simulate_batched

PAIR = data.StructLayout({"low": 3, "high": 5})


class Adder(wiring.Component):
    """``total = a + pairs[0].low + pairs[1].high + internal``; ``last`` registers it."""

    a: In(8, init=5)
    pairs: In(data.ArrayLayout(PAIR, 2))
    total: Out(10)
    last: Out(10)

    def __init__(self):
        super().__init__()
        self.internal = Signal(4)

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.total.eq(self.a + self.pairs[0].low + self.pairs[1].high + self.internal)
        m.d.sync += self.last.eq(self.total)
        return m


def test_every_set_is_seen_by_the_next_get():
    dut, seen = Adder(), []

    async def bench(ctx):
        seen.append(ctx.get(dut.total))  # the init value of ``a`` before any set
        ctx.set(dut.a, 1)
        ctx.set(dut.pairs[0].low, 2)  # a field of an array element: a slice of a slice
        ctx.set(dut.pairs[1].high, 30)
        seen.append(ctx.get(dut.total))
        ctx.set(dut.pairs[1].high, 0)
        ctx.set(dut.internal, 4)  # not a port: set directly
        await ctx.tick()
        seen.append((ctx.get(dut.total), ctx.get(dut.last)))
        ctx.set(dut.pairs[0].low, 9)  # wider than the field: truncated like a signal would be
        seen.append(ctx.get(dut.total))

    simulate_batched(dut, bench)
    assert seen == [5, 33, (7, 7), 1 + 1 + 4]


def test_one_set_of_the_packed_signal_per_cycle():
    dut = Adder()
    batch = BatchedInputs(dut)
    calls = []

    class Counting:
        def __init__(self, ctx):
            self.ctx = ctx

        def set(self, target, value):
            calls.append(value)
            self.ctx.set(target, value)

        def get(self, value):
            return self.ctx.get(value)

    async def bench(ctx):
        ctx = batch.context(Counting(ctx))
        ctx.set(dut.a, 3)
        ctx.set(dut.pairs[0].low, 1)
        ctx.set(dut.pairs[1].high, 2)
        assert calls == []
        assert ctx.get(dut.total) == 6
        assert calls == [3 | 1 << 8 | 2 << (8 + 3 + 5 + 3)]

    sim = Simulator(batch)
    sim.add_testbench(bench)
    sim.run()
    assert len(calls) == 1
