"""Combinational profiler hash unit (Narayanasamy et al., sec. 5.3; Sastry et al.).

``Hash(index_bits, key_bits, table_seed, pc_bits=0)`` computes, in logic,
``index = xor_fold(flip(randomize(pc)) ^ randomize(value), index_bits)`` for
``key = (pc << value_bits) | value``. The randomize tables come from
:func:`hwprof.golden.hashing.make_tables` (same seed, same tables); the rest
(byte placement, flip, xor-fold) is wiring and XOR gates built here. See
:mod:`hwprof.golden.hashing` for the algorithm and the golden twin
``HashFunction`` with the same parameters.

Usage::

    from hwprof.rtl.hashing import Hash
    m.submodules.h0 = h0 = Hash(index_bits=9, key_bits=64, table_seed=1, pc_bits=32)
    m.d.comb += h0.key.eq(Cat(value, pc))
    ... h0.index ...   # same cycle
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.hashing import HashConfig, make_tables
from ._params import Checked

__all__ = ["Hash", "rom_lookup", "rom_split", "rom_switch", "ROM_STYLES"]


def rom_lookup(m, table, address, name, width=8):
    """``table[address]`` (``width``-bit entries) as constant logic: a Shannon mux tree per bit.

    Each output bit is decomposed on the address bits, most significant first;
    constant sub-functions fold away and identical sub-functions (same truth
    table) are shared across the 8 bits. The tables are hardwired, as the paper
    intends, and the netlist stays small for the synthesis flow (no process
    that ``proc_rom`` would turn into a memory, no constant shifter to techmap).
    """
    cache = {}

    def build(truth, level):
        if all(bit == truth[0] for bit in truth):
            return Const(truth[0], 1)
        if truth not in cache:
            half = len(truth) // 2
            low, high = build(truth[:half], level - 1), build(truth[half:], level - 1)
            node = Signal(name=f"{name}_t{len(cache)}")
            m.d.comb += node.eq(Mux(address[level - 1], high, low))
            cache[truth] = node
        return cache[truth]

    levels = len(address)  # a short top byte reaches only the first 2**levels entries
    out = Signal(width, name=name)
    for bit in range(width):
        truth = tuple((entry >> bit) & 1 for entry in table[: 1 << levels])
        m.d.comb += out[bit].eq(build(truth, levels))
    return out


def rom_split(m, table, address, name, width=8, low=5):
    """``table[address]`` as constant logic in two stages (the same function as :func:`rom_lookup`).

    The ``low`` least significant address bits select, by a balanced tree of 2:1
    multiplexers (address bit 0 at the leaves), one of ``2**low`` constant words;
    word ``l`` packs the entries ``(h << low) | l`` for every value ``h`` of the
    remaining high address bits, ``width`` bits each; the high bits then pick
    their entry out of the selected word (a shift). The decomposition order is
    the Shannon tree's (bit 0 nearest the constants, the top bit at the output):
    after ABC the generic netlist is within a few percent of :func:`rom_lookup`'s
    (the four hash units of ``multihash``: +2.6 % gates, the same depth), while
    a Verilator model evaluates a few word-wide operations per table instead of
    one statement per tree node (docs/verification.md, native harness "Speed").
    With ``low = 5`` and ``width = 8`` the words are 64 bits (a native C++ word).
    """
    levels = len(address)  # a short top byte reaches only the first 2**levels entries
    entries = list(table[: 1 << levels])
    entries += [0] * ((1 << levels) - len(entries))
    low = min(low, levels)
    high = levels - low
    words = [sum(entries[(h << low) | lo] << (width * h) for h in range(1 << high))
             for lo in range(1 << low)]  # fmt: skip
    level = [Const(word, width << high) for word in words]
    for b in range(low):
        level = [Mux(address[b], level[k + 1], level[k]) for k in range(0, len(level), 2)]
    word = Signal(width << high, name=f"{name}_word")
    m.d.comb += word.eq(level[0])
    out = Signal(width, name=name)
    m.d.comb += out.eq(word.word_select(address[low:], width) if high else word)
    return out


class _SwitchRom(wiring.Component):
    """A ROM as nested switch statements, in a module of its own (see :func:`rom_switch`)."""

    def __init__(self, entries, address_bits, width, step):
        self._entries, self._step = entries, step
        super().__init__({"address": In(address_bits), "data": Out(width)})

    def elaborate(self, platform):
        m = Module()
        address, step = self.address, self._step

        def build(hi, base):
            lo = max(0, hi - step)
            with m.Switch(address[lo:hi]):
                for v in range(1 << (hi - lo)):
                    with m.Case(v):
                        if lo == 0:
                            m.d.comb += self.data.eq(self._entries[base | v])
                        else:
                            build(lo, base | (v << lo))

        build(len(address), 0)
        return m


def rom_switch(m, table, address, name, width=8, step=2):
    """``table[address]`` as nested ``Switch`` statements of ``2**step`` cases each.

    The same function as :func:`rom_lookup`. The outermost switch decodes the top
    ``step`` address bits, the innermost the ``step`` least significant ones (the
    Shannon tree's variable order, bit 0 nearest the constants), whose cases assign
    the constant entries. Two tools read this form differently, both as intended:

    * yosys (synthesis, formal, FPGA): ``proc_rom`` turns a switch into a ROM
      (``$mem``) only when it has no nested switch and at least 8 cases; with
      ``step = 2`` no switch qualifies, so ``proc_mux`` builds 4:1 multiplexers of
      constants that ABC reduces to logic as for the Shannon tree (one table:
      629 gates, depth 12; :func:`rom_lookup` 613 and 12; no memory bits).
    * Verilator: a combinational block that only assigns constants and reads few
      input bits becomes a lookup in a constant array (its ``V3Table`` pass): one
      load per table instead of a tree of conditionals (docs/verification.md,
      "Speed"). The inputs are counted by the signals the block reads, whole: the
      switch sits in a submodule ``name`` whose port is the address (switching
      on a slice of a wider signal, such as the key, would count all its bits).
    """
    levels = len(address)  # a short top byte reaches only the first 2**levels entries
    entries = list(table[: 1 << levels])
    entries += [0] * ((1 << levels) - len(entries))
    m.submodules[name] = rom = _SwitchRom(entries, levels, width, step)
    m.d.comb += rom.address.eq(address)
    return rom.data


#: ROM encodings of :class:`Hash` (``rom=``): the same function, different netlists
ROM_STYLES = {"tree": rom_lookup, "split": rom_split, "switch": rom_switch}


class Hash(Checked, wiring.Component):
    """One hash function of the profiler family, as combinational logic.

    Parameters
    ----------
    index_bits : int
        Width of ``index``, 1..32.
    key_bits : int
        Width of ``key`` (``pc`` in the top ``pc_bits`` bits, ``value`` below), 1..128.
    table_seed : int
        Seed of the randomize tables (``numpy.random.default_rng(table_seed)``).
    pc_bits : int
        Width of the pc field, 0..key_bits-1 (0: the key is a single value).
    tables : tuple, optional
        Override ``(value_tables, pc_tables)`` (default: ``make_tables(table_seed,
        ...)``); used by tests to build a mutant.
    rom : str
        How the byte tables are built (:data:`ROM_STYLES`): ``"tree"`` (default),
        a Shannon mux tree per output bit (:func:`rom_lookup`); ``"split"``, a mux
        tree of 64-bit constant words and a shift (:func:`rom_split`: the same
        function, far cheaper to simulate in Verilator, a slightly larger netlist);
        ``"switch"``, nested 4-way case statements (:func:`rom_switch`: the same
        function, a table lookup in Verilator, logic in yosys).

    Attributes
    ----------
    key : In(key_bits)
        ``(pc << (key_bits - pc_bits)) | value``.
    index : Out(index_bits)
        The hash index (combinational, latency 0).

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.hashing.HashConfig`).
    """

    @classmethod
    def check_params(cls, index_bits, key_bits, table_seed, pc_bits, tables, rom):
        if rom not in ROM_STYLES:
            raise ValueError(f"rom must be one of {sorted(ROM_STYLES)}, not {rom!r}")
        return HashConfig(index_bits, key_bits, table_seed, pc_bits)

    def __init__(self, index_bits, key_bits, table_seed, pc_bits=0, *, tables=None,
                 rom="tree"):  # fmt: skip
        self.rom = rom
        c = self.config
        self.tables = (
            tables if tables is not None else make_tables(c.table_seed, c.value_bits, c.pc_bits)
        )
        super().__init__({"key": In(c.key_bits), "index": Out(c.index_bits)})

    def elaborate(self, platform):
        m = Module()
        c = self.config
        width = c.width_bytes
        value_tables, pc_tables = self.tables
        lookup = ROM_STYLES[self.rom]
        value = self.key[: c.value_bits]
        nv = [Const(0, 8)] * width
        for i, table in enumerate(value_tables):
            nv[i] = lookup(m, table, value[8 * i : 8 * i + 8], f"nv{i}")
        npc = [Const(0, 8)] * width
        if c.pc_bits:
            pc = self.key[c.value_bits :]
            for i, table in enumerate(pc_tables):
                # flip: randomized pc byte i goes to byte W-1-i
                npc[width - 1 - i] = lookup(m, table, pc[8 * i : 8 * i + 8], f"npc{i}")
        mixed = Signal(8 * width)
        m.d.comb += mixed.eq(Cat(*nv) ^ Cat(*npc))
        folded = Const(0, c.index_bits)
        for lo in range(0, 8 * width, c.index_bits):
            chunk = mixed[lo : lo + c.index_bits]
            folded = folded ^ chunk  # a short last chunk is zero-extended
        m.d.comb += self.index.eq(folded)
        return m
