"""Pieces shared by the multi-hash profiler's two designs (the CAM accumulator of
:mod:`hwprof.rtl.multihash_cam` and the block RAM one of
:mod:`hwprof.rtl.multihash_bram`): the parameter check, the stream layouts, the
component signature, the counter tables, the run-time configuration registers and a
pipeline stage."""

from __future__ import annotations

from amaranth.hdl import Elaboratable, Module, Signal
from amaranth.lib import data, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..golden.multihash import MultiHashConfig

__all__ = ["RuntimeConfig", "Stage", "multihash_config", "multihash_signature",
           "record_layout", "tuple_layout", "PREFIX_PICK_SETS", "readout_pick_for",
           "counter_tables"]

#: the block RAM design's readout picks by a prefix OR over the sets up to this many sets
#: (the defaults' 25), from the set address register above (``readout_pick``)
PREFIX_PICK_SETS = 32


def multihash_config(tables=4, counters=2048, counter_bits=24, accumulator=100,
                     interval_length=10_000, threshold=100, pc_bits=32, value_bits=32,
                     retain=True, reset=False, conservative=True, hash_seed=1,
                     ways=4) -> MultiHashConfig:  # fmt: skip
    """The checked parameters of :func:`hwprof.rtl.multihash.MultiHash` (its defaults).

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.multihash.MultiHashConfig`).
    """
    return MultiHashConfig(
        tables=tables, counters=counters, counter_bits=counter_bits,
        accumulator=accumulator, interval_length=interval_length, threshold=threshold,
        pc_bits=pc_bits, value_bits=value_bits, retain=retain, reset=reset,
        conservative=conservative, hash_seed=hash_seed, ways=ways)  # fmt: skip


def readout_pick_for(config: MultiHashConfig, readout_pick=None) -> str:
    """The block RAM readout's pick: ``readout_pick`` checked, or by the number of sets
    (``"prefix"`` up to :data:`PREFIX_PICK_SETS` sets, else ``"address"``)."""
    if readout_pick not in (None, "prefix", "address"):
        raise ValueError(f"readout_pick must be None, 'prefix' or 'address', "
                         f"not {readout_pick!r}")
    if readout_pick is None:
        return "prefix" if config.sets <= PREFIX_PICK_SETS else "address"
    return readout_pick


def tuple_layout(pc_bits, value_bits):
    """Input payload: ``value`` in the low bits, ``pc`` above (= the golden key)."""
    fields = {"value": value_bits}
    if pc_bits:
        fields["pc"] = pc_bits
    return data.StructLayout(fields)


def record_layout(key_bits, counter_bits):
    """Output payload: one profile record, or the end-of-interval marker (``end = 1``)."""
    return data.StructLayout({"key": key_bits, "count": counter_bits, "end": 1})


def multihash_signature(c: MultiHashConfig) -> dict:
    """The ports of both designs (see :func:`hwprof.rtl.multihash.MultiHash`)."""
    return {
        "tuples": In(stream.Signature(tuple_layout(c.pc_bits, c.value_bits))),
        "records": Out(stream.Signature(record_layout(c.key_bits, c.counter_bits))),
        "cfg_we": In(1),
        "cfg_interval": In(c.counter_bits),
        "cfg_threshold": In(c.counter_bits),
    }


def counter_tables(m: Module, c: MultiHashConfig) -> tuple[list, list]:
    """The counter tables in block RAM, submodules ``table0``, ``table1``.. of ``m``: one
    per hash function, ``c.table_size`` words of ``c.counter_bits`` bits, no initial
    contents. Returns their synchronous read ports and their write ports, in table order.
    """
    reads, writes = [], []
    for i in range(c.tables):
        m.submodules[f"table{i}"] = mem = Memory(shape=c.counter_bits, depth=c.table_size,
                                                 init=[])  # fmt: skip
        reads.append(mem.read_port(domain="sync"))
        writes.append(mem.write_port())
    return reads, writes


class Stage(Elaboratable):
    """One pipeline stage of a design: a submodule whose logic the design writes into
    :attr:`m` when it builds its stages in order (a later stage reads the signals an
    earlier one made; a stage may drive a signal an earlier one reads)."""

    def __init__(self):
        self.m = Module()

    def elaborate(self, platform):
        return self.m


class RuntimeConfig:
    """``interval`` and ``threshold`` registers written through the ``cfg_*`` ports.

    A write (``cfg_we``) is held pending and takes effect at the next interval
    boundary (:meth:`apply`), so an interval never changes length or threshold
    half-way. Reset values: the configuration's ``interval_length`` and
    ``threshold``. Signal names (``interval``, ``threshold``, ``pend``) are those
    the formal properties read (in the submodule ``config``).
    """

    def __init__(self, m: Module, component, width: int):
        c = component.config
        self._component = component
        self.interval = Signal(width, init=c.interval_length, name="interval")
        self.threshold = Signal(width, init=c.threshold, name="threshold")
        self.pend = Signal(name="pend")
        self._interval = Signal(width, name="pend_interval")
        self._threshold = Signal(width, name="pend_threshold")
        with m.If(component.cfg_we):
            m.d.sync += [self.pend.eq(1), self._interval.eq(component.cfg_interval),
                         self._threshold.eq(component.cfg_threshold)]  # fmt: skip

    @property
    def pending_interval(self):
        """The written ``interval`` waiting for the next boundary (with ``pend``)."""
        return self._interval

    @property
    def pending_threshold(self):
        """The written ``threshold`` waiting for the next boundary (with ``pend``)."""
        return self._threshold

    def apply(self, m: Module, boundary) -> None:
        """At ``boundary`` (the interval's last tuple), a pending write takes effect."""
        with m.If(boundary & self.pend):
            m.d.sync += [self.interval.eq(self._interval), self.threshold.eq(self._threshold)]
            with m.If(~self._component.cfg_we):
                m.d.sync += self.pend.eq(0)
