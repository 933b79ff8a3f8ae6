"""Set every input port of a block with one ``ctx.set`` a cycle in the Amaranth simulator.

The simulator settles the whole design after each ``ctx.set`` of a testbench, so a
testbench that drives twenty input ports a cycle evaluates the design twenty times
a cycle; for the profile-flag predictor that was 85 % of a test's time. Wrapped in
``BatchedInputs``, the block's input ports are driven combinationally from one wide
signal, and the context returned by ``context(ctx)`` records each ``set`` of an input
port (or of a slice of one) and applies them all with one ``ctx.set`` before the
next ``get``, ``tick`` or other call. What the block sees each cycle is unchanged:
a synchronous design's settled state does not depend on the order in which its
inputs were set. A ``set`` of anything but an input port goes to the simulator as
it is.
"""

from __future__ import annotations

from amaranth.hdl import Elaboratable, Module, Signal, Value
from amaranth.hdl._ast import Slice  # not exported by amaranth.hdl (0.5)
from amaranth.lib import wiring
from amaranth.sim import Simulator


class BatchedInputs(Elaboratable):
    """``dut`` with its ``In`` ports driven from one packed signal.

    Parameters
    ----------
    dut : amaranth.lib.wiring.Component
        The block; simulate this wrapper instead of it, and read outputs from ``dut``.
    """

    def __init__(self, dut):
        self.dut = dut
        # per input port, keyed by id(signal) (signals are not hashable):
        self._signal = {}  # the port's signal
        self._offset = {}  # its bit offset in ``packed``
        self._value = {}  # its current value
        offset = 0
        for _path, member, port in dut.signature.flatten(dut):
            if member.flow != wiring.In:
                continue
            signal = Value.cast(port)
            assert isinstance(signal, Signal), f"input port {signal!r} is not a signal"
            self._signal[id(signal)] = signal
            self._offset[id(signal)] = offset
            self._value[id(signal)] = signal.init & ((1 << len(signal)) - 1)
            offset += len(signal)
        self.packed = Signal(max(offset, 1), init=self._pack())
        self._dirty = False

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.dut
        for key, signal in self._signal.items():
            offset = self._offset[key]
            m.d.comb += signal.eq(self.packed[offset:offset + len(signal)])
        return m

    def _pack(self):
        return sum(value << self._offset[key] for key, value in self._value.items())

    def _target(self, value):
        """``(key, start, stop)`` if ``value`` is an input port or a slice of one."""
        value = Value.cast(value)
        start, stop = 0, len(value)
        while isinstance(value, Slice):  # a field of a field: slices of slices
            start, stop = value.start + start, value.start + stop
            value = value.value
        if isinstance(value, Signal) and id(value) in self._offset:
            return id(value), start, stop
        return None

    def record(self, target, value):
        """Record ``target = value``; False if ``target`` is not an input port (bits)."""
        found = self._target(target)
        if found is None:
            return False
        key, start, stop = found
        mask = ((1 << (stop - start)) - 1) << start
        self._value[key] = (self._value[key] & ~mask) | ((int(value) << start) & mask)
        self._dirty = True
        return True

    def flush(self, ctx):
        if self._dirty:
            ctx.set(self.packed, self._pack())
            self._dirty = False

    def context(self, ctx):
        """A testbench context that batches the ``set`` of input ports (see module doc)."""
        return _BatchingContext(self, ctx)


class _BatchingContext:
    def __init__(self, batch, ctx):
        self._batch, self._ctx = batch, ctx

    def set(self, target, value):
        if not self._batch.record(target, value):
            self._batch.flush(self._ctx)
            self._ctx.set(target, value)

    def __getattr__(self, name):
        self._batch.flush(self._ctx)
        return getattr(self._ctx, name)


def simulate_batched(dut, testbench, period=1e-6):
    """Run ``testbench(ctx)`` on ``dut`` with a clock, input sets batched (see module doc)."""
    batch = BatchedInputs(dut)

    async def batched(ctx):
        await testbench(batch.context(ctx))

    sim = Simulator(batch)
    sim.add_clock(period)
    sim.add_testbench(batched)
    sim.run()
