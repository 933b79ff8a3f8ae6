"""Multi-hash interval profiler with conservative update, one tuple per cycle.

Narayanasamy et al., sections 5-6; the rules are those of
:mod:`hwprof.golden.multihash`. See docs/multihash.md for the block diagram,
the pipeline and its hazards.

Pipeline (two stages, one tuple per cycle):

* **S0** (the input handshake cycle): the ``n`` hash units compute the indices
  of the incoming tuple combinationally and present them to the synchronous read
  ports of the ``n`` counter memories.
* **S1**: the read data arrive. Each counter value is taken from, in order:
  the *bypass register* of its table if the previous tuple wrote the same index
  (a read issued in S0 while that write happened returns the old word), else
  0 if the counter's *valid bit* is clear (flushed this interval), else the
  memory word. In the same cycle: the accumulator CAM lookup (so an allocation
  made by the previous tuple already shields this one), conservative update,
  promotion (``min + 1 >= threshold``), allocation, the counter write-back, the
  accumulator update and, on the interval's last tuple, the boundary.

Interval boundary without stopping the input: the counter tables are flushed by
clearing per-counter valid bits (flops, cleared in one cycle) instead of
writing the SRAMs; the accumulator's candidate entries are snapshotted in one
cycle (``pending`` bit and count per entry; the key stays in the entry's tag,
which no allocation may overwrite until it is read out) and drained through the
``records`` stream while the next interval runs.

Stalls (``tuples.ready`` low) happen only while the previous readout is
incomplete and either (a) a promotion wants an entry whose record is not yet
read out, or (b) the next interval ends. With an always-ready consumer neither
happens when ``interval_length >= accumulator + 2`` (a promotion needs
``threshold`` tuples after the boundary, and the k-th allocation of an interval
takes the k-th lowest free entry, which the in-order readout has already sent);
otherwise a stall lasts as long as the consumer withholds ``ready``.
"""

from __future__ import annotations

from functools import reduce

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..golden.multihash import MultiHashConfig
from ._params import checked_config
from .hashing import Hash
from .multihash_bram import LATENCY, PREFIX_PICK_SETS, elaborate_set_associative
from .multihash_config import RuntimeConfig
from .select import lowest_one, victim

__all__ = ["MultiHash", "tuple_layout", "record_layout", "LATENCY"]


def tuple_layout(pc_bits, value_bits):
    """Input payload: ``value`` in the low bits, ``pc`` above (= the golden key)."""
    fields = {"value": value_bits}
    if pc_bits:
        fields["pc"] = pc_bits
    return data.StructLayout(fields)


def record_layout(key_bits, counter_bits):
    """Output payload: one profile record, or the end-of-interval marker (``end = 1``)."""
    return data.StructLayout({"key": key_bits, "count": counter_bits, "end": 1})


def _or_mux(onehot, values, width):
    """``values[i]`` for the one set bit of ``onehot`` (0 if none): AND-OR."""
    terms = [Mux(onehot[i], v, 0) for i, v in enumerate(values)] or [Const(0, width)]
    while len(terms) > 1:  # a balanced OR tree (a 1000-deep chain overflows the recursion)
        terms = [reduce(lambda a, b: a | b, terms[k : k + 2]) for k in range(0, len(terms), 2)]
    return terms[0]


def _select_bit(bits, index):
    """``bits[index]`` as a balanced tree of 2:1 muxes."""
    level = [bits[j] for j in range(len(bits))]
    for b in range(len(index)):
        level = [Mux(index[b], level[k + 1], level[k]) for k in range(0, len(level), 2)]
    return level[0]


def _minimum(values):
    level = list(values)
    while len(level) > 1:
        nxt = [Mux(a < b, a, b) for a, b in zip(level[0::2], level[1::2], strict=False)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


class MultiHash(wiring.Component):
    """Interval-based multi-hash profiler (C/R/P options), 1 tuple/cycle.

    Parameters
    ----------
    tables : int
        Number of hash tables ``n`` (1 = single-hash profiler).
    counters : int
        Total counters, ``counters / tables`` per table (a power of two).
    counter_bits : int
        Width of every counter (tables, accumulator, configuration registers).
    accumulator : int
        Accumulator (CAM) entries.
    interval_length, threshold : int
        Reset values of the two configuration registers.
    pc_bits, value_bits : int
        Tuple field widths.
    retain, reset, conservative : bool
        P1, R1, C1 of the paper.
    hash_seed : int
        Table seed of hash function 0 (function ``i``: ``hash_seed + i``).
    ways : int
        Accumulator organisation. ``ways > 0`` (default 4): ``accumulator / ways``
        sets in block RAM, the five-stage pipeline of
        :mod:`hwprof.rtl.multihash_bram` (latency :data:`LATENCY` = 4 from accept to
        the writes). ``0``: the paper's fully associative accumulator as a CAM in
        flops, the two-stage design described here (latency 1). The golden model
        takes the same ``ways`` (which tuples are kept differs).
    bypass : bool
        Forward the writes a read misses (default). ``False`` builds a broken
        design for the checker's mutant test only.
    readout_pick : str or None
        ``ways > 0`` only: how the readout picks its next pending entry, the same
        entry every cycle either way (:mod:`hwprof.rtl.multihash_bram`).
        ``"prefix"``: the first set with a pending way by a prefix OR over the sets;
        ``"address"``: from the readout's set address register ``ro_set`` (no
        prefix), with "anything pending" a flop too (``ro_any``; the stall and the
        end marker read it, not the OR of the pending bits). ``None`` (default):
        ``"prefix"`` up to :data:`~hwprof.rtl.multihash_bram.PREFIX_PICK_SETS` sets
        (the defaults' 25: their Verilog is that of the prefix pick, unchanged by
        the address pick's registers), else ``"address"``. The same cycles and
        latency either way (no golden model parameter).

    Attributes
    ----------
    tuples : In(stream.Signature(tuple_layout(pc_bits, value_bits)))
        Input tuples ``<pc, value>``; ``ready`` is low only during the stalls
        described in the module docstring.
    records : Out(stream.Signature(record_layout(pc_bits + value_bits, counter_bits)))
        At every interval end: the candidate entries ``(key, count)`` in entry
        order, then one marker with ``end = 1`` (key and count 0).
    cfg_we : In(1)
        Write ``cfg_interval``/``cfg_threshold``; they take effect at the next
        interval boundary (software writes 1 <= threshold <= interval).
    cfg_interval, cfg_threshold : In(counter_bits)

    Latency (``ways = 0``): a tuple is accepted in S0 and updates the
    tables/accumulator at the end of S1 (the next cycle). The first record of an
    interval is valid the cycle after the interval's last tuple leaves S1.
    ``ways > 0``: accepted in cycle c, tables and accumulator written at the end
    of c + 4; the first record of an interval (through a 4-entry FIFO) is valid
    at c + 7 after its last tuple was accepted in c, one record per cycle after.
    The golden model compares interval readouts, which latency does not change.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.multihash.MultiHashConfig`).
    """

    def __init__(self, tables=4, counters=2048, counter_bits=24, accumulator=100,
                 interval_length=10_000, threshold=100, pc_bits=32, value_bits=32,
                 retain=True, reset=False, conservative=True, hash_seed=1, ways=4, *,
                 bypass=True, readout_pick=None):  # fmt: skip
        self.config = checked_config(self, lambda: MultiHashConfig(
            tables=tables, counters=counters, counter_bits=counter_bits,
            accumulator=accumulator, interval_length=interval_length, threshold=threshold,
            pc_bits=pc_bits, value_bits=value_bits, retain=retain, reset=reset,
            conservative=conservative, hash_seed=hash_seed, ways=ways))  # fmt: skip
        self.bypass = bool(bypass)
        if readout_pick not in (None, "prefix", "address"):
            self._MustUse__silence = True  # rejected: no "created but never used" warning
            raise ValueError(f"readout_pick must be None, 'prefix' or 'address', "
                             f"not {readout_pick!r}")
        c = self.config
        if readout_pick is None:
            readout_pick = "prefix" if c.sets <= PREFIX_PICK_SETS else "address"
        self.readout_pick = readout_pick
        super().__init__({
            "tuples": In(stream.Signature(tuple_layout(c.pc_bits, c.value_bits))),
            "records": Out(stream.Signature(record_layout(c.key_bits, c.counter_bits))),
            "cfg_we": In(1),
            "cfg_interval": In(c.counter_bits),
            "cfg_threshold": In(c.counter_bits),
        })  # fmt: skip

    def elaborate(self, platform):
        if self.config.ways:
            return elaborate_set_associative(self)
        cam = _CamDesign(self)
        cam.stage_s0()
        cam.stage_s1_counters()
        cam.stage_s1_accumulator()
        cam.write_back()
        cam.readout()
        return cam.m


class _CamDesign:
    """The fully associative (CAM) design of :class:`MultiHash` (``ways = 0``), stage
    by stage in one module (the formal properties name its signals there)."""

    def __init__(self, component):
        self.component = component
        self.c = c = component.config
        self.m = m = Module()
        # --- configuration registers ---------------------------------------------------
        self.cfg = RuntimeConfig(m, component, c.counter_bits)
        self.position = Signal(c.counter_bits, name="position")

    def stage_s0(self):
        """S0: the hash units on the input tuple, the counter memories' read addresses."""
        m, c, component = self.m, self.c, self.component
        n, z, w, kb = c.tables, c.table_size, c.counter_bits, c.key_bits
        key_in = Signal(kb, name="key_in")
        m.d.comb += key_in.eq(component.tuples.payload.as_value())
        self.stall = stall = Signal(name="stall")
        accept = Signal(name="accept")
        m.d.comb += [
            component.tuples.ready.eq(~stall),
            accept.eq(component.tuples.valid & ~stall),
        ]
        self.s1_valid = Signal(name="s1_valid")
        self.s1_key = Signal(kb, name="s1_key")
        self.s1_index = [Signal(c.index_bits, name=f"s1_index{i}") for i in range(n)]
        self.read_ports, self.write_ports, self.flags = [], [], []
        for i in range(n):
            m.submodules[f"hash{i}"] = h = Hash(c.index_bits, kb, c.hash_seed + i, c.pc_bits)
            m.submodules[f"table{i}"] = mem = Memory(shape=w, depth=z, init=[])
            rp = mem.read_port(domain="sync")
            wp = mem.write_port()
            m.d.comb += [h.key.eq(key_in), rp.addr.eq(h.index), rp.en.eq(~stall)]
            with m.If(~stall):
                m.d.sync += self.s1_index[i].eq(h.index)
            self.read_ports.append(rp)
            self.write_ports.append(wp)
            self.flags.append(Signal(z, name=f"counter_valid{i}"))
        with m.If(~stall):
            m.d.sync += [self.s1_valid.eq(component.tuples.valid), self.s1_key.eq(key_in)]

    def stage_s1_counters(self):
        """S1: each counter from the bypass register, its valid bit or the memory word;
        the minimum and the (conservative) update."""
        m, c = self.m, self.c
        n, w = c.tables, c.counter_bits
        self.byp_valid = [Signal(name=f"bypass_valid{i}") for i in range(n)]
        self.byp_index = [Signal(c.index_bits, name=f"bypass_index{i}") for i in range(n)]
        self.byp_value = [Signal(w, name=f"bypass_value{i}") for i in range(n)]
        old = []
        for i in range(n):
            v = Signal(w, name=f"counter{i}")
            fresh = Mux(_select_bit(self.flags[i], self.s1_index[i]),
                        self.read_ports[i].data, 0)  # fmt: skip
            if self.component.bypass:
                forward = self.byp_valid[i] & (self.byp_index[i] == self.s1_index[i])
                m.d.comb += v.eq(Mux(forward, self.byp_value[i], fresh))
            else:
                m.d.comb += v.eq(fresh)
            old.append(v)
        low = Signal(w, name="low")
        m.d.comb += low.eq(_minimum(old))
        # min of the updated counters: low + 1 under C0 and C1 alike
        self.estimate = estimate = Signal(w, name="estimate")
        m.d.comb += estimate.eq(low + 1)
        self.new = []
        for i in range(n):
            step = (old[i] == low) if c.conservative else Const(1, 1)
            self.new.append((old[i] + step)[:w])

    def stage_s1_accumulator(self):
        """S1: the accumulator CAM lookup, promotion, allocation, the stall and the
        interval's boundary."""
        m, c = self.m, self.c
        w, acc, kb = c.counter_bits, c.accumulator, c.key_bits
        threshold, s1_valid = self.cfg.threshold, self.s1_valid
        self.valid = valid = Signal(acc, name="valid")
        self.repl = repl = Signal(acc, name="repl")
        self.tags = tags = [Signal(kb, name=f"tag{a}") for a in range(acc)]
        self.counts = counts = [Signal(w, name=f"count{a}") for a in range(acc)]
        self.pending = pending = Signal(acc, name="pending")
        self.ro_counts = [Signal(w, name=f"readout_count{a}") for a in range(acc)]
        self.ro_end = Signal(name="ro_end")

        self.match = match = Signal(acc, name="match")
        m.d.comb += match.eq(Cat(*[valid[a] & (tags[a] == self.s1_key) for a in range(acc)]))
        self.hit = hit = Signal(name="hit")
        m.d.comb += hit.eq(s1_valid & match.any())
        self.hit_count = hit_count = Signal(w, name="hit_count")
        m.d.comb += hit_count.eq(_or_mux(match, counts, w) + 1)
        self.requalify = Signal(name="requalify")
        m.d.comb += self.requalify.eq((match & repl).any() & (hit_count >= threshold))

        promote = Signal(name="promote")
        m.d.comb += promote.eq(s1_valid & ~hit & (self.estimate >= threshold))
        self.target = target = victim(m, valid, repl)
        self.alloc = alloc = Signal(name="alloc")
        m.d.comb += alloc.eq(promote & target.any())
        self.last = last = Signal(name="last")
        m.d.comb += last.eq(self.position == self.cfg.interval - 1)
        self.busy = busy = Signal(name="busy")
        m.d.comb += busy.eq(pending.any() | self.ro_end)
        m.d.comb += self.stall.eq(s1_valid & ((alloc & (target & pending).any())
                                              | (last & busy)))  # fmt: skip
        self.commit = commit = Signal(name="commit")
        m.d.comb += commit.eq(s1_valid & ~self.stall)
        self.boundary = Signal(name="boundary")
        m.d.comb += self.boundary.eq(commit & last)

    def write_back(self):
        """End of S1: the counter write-back, valid bits and bypass registers; the
        accumulator entries' update and boundary transform; position, configuration."""
        m, c = self.m, self.c
        n, z, w = c.tables, c.table_size, c.counter_bits
        commit, boundary, stall, hit = self.commit, self.boundary, self.stall, self.hit
        zero_them = self.alloc if c.reset else Const(0, 1)
        for i in range(n):
            value = Signal(w, name=f"counter_new{i}")
            m.d.comb += value.eq(Mux(zero_them, 0, self.new[i]))
            write = commit & ~hit
            m.d.comb += [
                self.write_ports[i].addr.eq(self.s1_index[i]),
                self.write_ports[i].data.eq(value),
                self.write_ports[i].en.eq(write),
            ]
            with m.If(~stall):
                m.d.sync += [
                    self.byp_valid[i].eq(write & ~boundary),
                    self.byp_index[i].eq(self.s1_index[i]),
                    self.byp_value[i].eq(value),
                ]
            # flush / set as plain logic: a decoder, no 2**index_bits-way case statement
            decode = Cat(*[self.s1_index[i] == j for j in range(z)])
            flags = self.flags[i]
            m.d.sync += flags.eq(Mux(boundary, 0, flags | Mux(write, decode, 0)))

        # accumulator entries: update, then the boundary transform
        valid, repl, counts = self.valid, self.repl, self.counts
        for a in range(c.accumulator):
            hit_a = commit & self.match[a]
            alloc_a = commit & self.alloc & self.target[a]
            nv = Mux(alloc_a, 1, valid[a])
            nr = Mux(alloc_a, 0, Mux(hit_a & self.requalify, 0, repl[a]))
            nc = Mux(alloc_a, self.estimate, Mux(hit_a, self.hit_count, counts[a]))
            with m.If(alloc_a):
                m.d.sync += self.tags[a].eq(self.s1_key)
            with m.If(boundary):
                candidate = nv & ~nr
                m.d.sync += [
                    self.pending[a].eq(candidate),
                    self.ro_counts[a].eq(nc),
                ]
                if c.retain:
                    m.d.sync += [valid[a].eq(candidate), repl[a].eq(1), counts[a].eq(0)]
                else:
                    m.d.sync += [valid[a].eq(0), repl[a].eq(nr), counts[a].eq(nc)]
            with m.Else():
                m.d.sync += [valid[a].eq(nv), repl[a].eq(nr), counts[a].eq(nc)]

        # --- position and configuration ---------------------------------------------------
        with m.If(commit):
            m.d.sync += self.position.eq(Mux(self.last, 0, self.position + 1))
        self.cfg.apply(m, boundary)

    def readout(self):
        """The records stream: the pending entries in entry order, then the end marker."""
        m, c, records = self.m, self.c, self.component.records
        pending = self.pending
        select = Signal(c.accumulator, name="select")
        m.d.comb += select.eq(lowest_one(pending))
        more = Signal(name="more")
        m.d.comb += more.eq(pending.any())
        m.d.comb += [
            records.valid.eq(self.busy),
            records.payload.key.eq(_or_mux(select, self.tags, c.key_bits)),
            records.payload.count.eq(_or_mux(select, self.ro_counts, c.counter_bits)),
            records.payload.end.eq(~more),
        ]
        with m.If(records.valid & records.ready):
            with m.If(more):
                m.d.sync += pending.eq(pending & ~select)
            with m.Else():
                m.d.sync += self.ro_end.eq(0)
        with m.If(self.boundary):
            m.d.sync += self.ro_end.eq(1)
