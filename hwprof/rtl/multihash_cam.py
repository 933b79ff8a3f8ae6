"""The multi-hash profiler with the paper's fully associative accumulator (a CAM in
flops), two stages, one tuple per cycle: :class:`MultiHashCam` (``ways = 0``).

Narayanasamy et al., sections 5-6; the rules are those of
:mod:`hwprof.golden.multihash`. See docs/multihash.md for the block diagram,
the pipeline and its hazards.

Pipeline (two stages, one tuple per cycle):

* **S0** (the input handshake cycle, submodule ``hash``): the ``n`` hash units
  compute the indices of the incoming tuple combinationally and present them to
  the synchronous read ports of the ``n`` counter memories.
* **S1**: the read data arrive. Submodule ``counters``: each counter value is
  taken from, in order: the *bypass register* of its table if the previous tuple
  wrote the same index (a read issued in S0 while that write happened returns the
  old word), else 0 if the counter's *valid bit* is clear (flushed this
  interval), else the memory word; conservative update and the counter
  write-back. Submodule ``accumulator``, in the same cycle: the CAM lookup (so an
  allocation made by the previous tuple already shields this one), promotion
  (``min + 1 >= threshold``), allocation, the entries' update and, on the
  interval's last tuple, the boundary. Submodule ``readout``: the records stream.

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
from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring

from ..golden.multihash import MultiHashConfig
from .hashing import Hash
from .multihash_config import RuntimeConfig, Stage, counter_tables, multihash_signature
from .select import lowest_one, victim

__all__ = ["MultiHashCam"]


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


class MultiHashCam(wiring.Component):
    """Multi-hash interval profiler with a fully associative (CAM) accumulator in flops.

    Built by :func:`hwprof.rtl.multihash.MultiHash` with ``ways = 0`` (its parameters,
    ports and records); the submodules ``config``, ``hash``, ``counters``,
    ``accumulator`` and ``readout`` are its stages (module docstring).

    Parameters
    ----------
    config : MultiHashConfig
        Checked parameters (``ways = 0``).
    bypass : bool
        Forward the write a read misses (default). ``False`` builds a broken design
        for the checker's mutant test only.

    Attributes
    ----------
    tuples, records, cfg_we, cfg_interval, cfg_threshold
        As :func:`hwprof.rtl.multihash.MultiHash`.

    Latency: a tuple is accepted in S0 and updates the tables and the accumulator at
    the end of S1 (the next cycle). The first record of an interval is valid the
    cycle after the interval's last tuple leaves S1, one record per cycle after.
    """

    def __init__(self, config: MultiHashConfig, *, bypass: bool = True):
        self.config = config
        self.bypass = bool(bypass)
        super().__init__(multihash_signature(config))

    def elaborate(self, platform):
        c = self.config
        m = Module()
        # the signals a stage reads before the stage that drives them is built
        p = SimpleNamespace(component=self, c=c, stall=Signal(name="stall"),
                            commit=Signal(name="commit"), hit=Signal(name="hit"),
                            alloc=Signal(name="alloc"), boundary=Signal(name="boundary"),
                            pending=Signal(c.accumulator, name="pending"),
                            busy=Signal(name="busy"))  # fmt: skip
        p.read_ports, p.write_ports = counter_tables(m, c)
        for name, build in (("config", _config), ("hash", _hash), ("counters", _counters),
                            ("accumulator", _accumulator), ("readout", _readout)):  # fmt: skip
            m.submodules[name] = stage = Stage()
            build(p, stage.m)
        return m


def _config(p, m):
    """The configuration registers (applied at the boundary, see :func:`_accumulator`)."""
    p.cfg = RuntimeConfig(m, p.component, p.c.counter_bits)
    p.cfg_module = m


def _hash(p, m):
    """S0: the hash units on the input tuple, the counter memories' read addresses."""
    c, component = p.c, p.component
    kb = c.key_bits
    key_in = Signal(kb, name="key_in")
    m.d.comb += key_in.eq(component.tuples.payload.as_value())
    accept = Signal(name="accept")
    m.d.comb += [
        component.tuples.ready.eq(~p.stall),
        accept.eq(component.tuples.valid & ~p.stall),
    ]
    p.s1_valid = Signal(name="s1_valid")
    p.s1_key = Signal(kb, name="s1_key")
    p.s1_index = [Signal(c.index_bits, name=f"s1_index{i}") for i in range(c.tables)]
    for i in range(c.tables):
        m.submodules[f"hash{i}"] = h = Hash(c.index_bits, kb, c.hash_seed + i, c.pc_bits)
        rp = p.read_ports[i]
        m.d.comb += [h.key.eq(key_in), rp.addr.eq(h.index), rp.en.eq(~p.stall)]
        with m.If(~p.stall):
            m.d.sync += p.s1_index[i].eq(h.index)
    with m.If(~p.stall):
        m.d.sync += [p.s1_valid.eq(component.tuples.valid), p.s1_key.eq(key_in)]


def _counters(p, m):
    """S1: each counter from the bypass register, its valid bit or the memory word; the
    minimum, the (conservative) update; at the end of S1 the counter write-back, the
    valid bits and the bypass registers."""
    c = p.c
    n, z, w = c.tables, c.table_size, c.counter_bits
    byp_valid = [Signal(name=f"bypass_valid{i}") for i in range(n)]
    byp_index = [Signal(c.index_bits, name=f"bypass_index{i}") for i in range(n)]
    byp_value = [Signal(w, name=f"bypass_value{i}") for i in range(n)]
    flags = [Signal(z, name=f"counter_valid{i}") for i in range(n)]
    old = []
    for i in range(n):
        v = Signal(w, name=f"counter{i}")
        fresh = Mux(_select_bit(flags[i], p.s1_index[i]), p.read_ports[i].data, 0)
        if p.component.bypass:
            forward = byp_valid[i] & (byp_index[i] == p.s1_index[i])
            m.d.comb += v.eq(Mux(forward, byp_value[i], fresh))
        else:
            m.d.comb += v.eq(fresh)
        old.append(v)
    low = Signal(w, name="low")
    m.d.comb += low.eq(_minimum(old))
    # min of the updated counters: low + 1 under C0 and C1 alike
    p.estimate = estimate = Signal(w, name="estimate")
    m.d.comb += estimate.eq(low + 1)

    zero_them = p.alloc if c.reset else Const(0, 1)
    for i in range(n):
        step = (old[i] == low) if c.conservative else Const(1, 1)
        value = Signal(w, name=f"counter_new{i}")
        m.d.comb += value.eq(Mux(zero_them, 0, (old[i] + step)[:w]))
        write = p.commit & ~p.hit
        wp = p.write_ports[i]
        m.d.comb += [wp.addr.eq(p.s1_index[i]), wp.data.eq(value), wp.en.eq(write)]
        with m.If(~p.stall):
            m.d.sync += [
                byp_valid[i].eq(write & ~p.boundary),
                byp_index[i].eq(p.s1_index[i]),
                byp_value[i].eq(value),
            ]
        # flush / set as plain logic: a decoder, no 2**index_bits-way case statement
        decode = Cat(*[p.s1_index[i] == j for j in range(z)])
        m.d.sync += flags[i].eq(Mux(p.boundary, 0, flags[i] | Mux(write, decode, 0)))


def _accumulator(p, m):
    """S1: the CAM lookup, promotion, allocation, the stall and the interval's boundary;
    at the end of S1 the entries' update (the boundary transform on the interval's
    last tuple), the readout's snapshot of the counts, the position."""
    c = p.c
    w, acc, kb = c.counter_bits, c.accumulator, c.key_bits
    threshold, s1_valid = p.cfg.threshold, p.s1_valid
    valid = Signal(acc, name="valid")
    repl = Signal(acc, name="repl")
    p.tags = tags = [Signal(kb, name=f"tag{a}") for a in range(acc)]
    counts = [Signal(w, name=f"count{a}") for a in range(acc)]
    p.ro_counts = [Signal(w, name=f"readout_count{a}") for a in range(acc)]
    p.candidates = Signal(acc, name="candidates")
    position = Signal(w, name="position")

    match = Signal(acc, name="match")
    m.d.comb += match.eq(Cat(*[valid[a] & (tags[a] == p.s1_key) for a in range(acc)]))
    m.d.comb += p.hit.eq(s1_valid & match.any())
    hit_count = Signal(w, name="hit_count")
    m.d.comb += hit_count.eq(_or_mux(match, counts, w) + 1)
    requalify = Signal(name="requalify")
    m.d.comb += requalify.eq((match & repl).any() & (hit_count >= threshold))

    promote = Signal(name="promote")
    m.d.comb += promote.eq(s1_valid & ~p.hit & (p.estimate >= threshold))
    target = victim(m, valid, repl)
    m.d.comb += p.alloc.eq(promote & target.any())
    last = Signal(name="last")
    m.d.comb += last.eq(position == p.cfg.interval - 1)
    m.d.comb += p.stall.eq(s1_valid & ((p.alloc & (target & p.pending).any())
                                       | (last & p.busy)))  # fmt: skip
    m.d.comb += p.commit.eq(s1_valid & ~p.stall)
    m.d.comb += p.boundary.eq(p.commit & last)

    # the entries: update, then the boundary transform
    candidates = []
    for a in range(acc):
        hit_a = p.commit & match[a]
        alloc_a = p.commit & p.alloc & target[a]
        nv = Mux(alloc_a, 1, valid[a])
        nr = Mux(alloc_a, 0, Mux(hit_a & requalify, 0, repl[a]))
        nc = Mux(alloc_a, p.estimate, Mux(hit_a, hit_count, counts[a]))
        candidates.append(nv & ~nr)
        with m.If(alloc_a):
            m.d.sync += tags[a].eq(p.s1_key)
        with m.If(p.boundary):
            m.d.sync += p.ro_counts[a].eq(nc)
            if c.retain:
                m.d.sync += [valid[a].eq(candidates[a]), repl[a].eq(1), counts[a].eq(0)]
            else:
                m.d.sync += [valid[a].eq(0), repl[a].eq(nr), counts[a].eq(nc)]
        with m.Else():
            m.d.sync += [valid[a].eq(nv), repl[a].eq(nr), counts[a].eq(nc)]
    m.d.comb += p.candidates.eq(Cat(*candidates))

    with m.If(p.commit):
        m.d.sync += position.eq(Mux(last, 0, position + 1))
    p.cfg.apply(p.cfg_module, p.boundary)


def _readout(p, m):
    """The records stream: the pending entries in entry order, then the end marker."""
    c, records, pending = p.c, p.component.records, p.pending
    ro_end = Signal(name="ro_end")
    m.d.comb += p.busy.eq(pending.any() | ro_end)
    select = Signal(c.accumulator, name="select")
    m.d.comb += select.eq(lowest_one(pending))
    more = Signal(name="more")
    m.d.comb += more.eq(pending.any())
    m.d.comb += [
        records.valid.eq(p.busy),
        records.payload.key.eq(_or_mux(select, p.tags, c.key_bits)),
        records.payload.count.eq(_or_mux(select, p.ro_counts, c.counter_bits)),
        records.payload.end.eq(~more),
    ]
    with m.If(p.boundary):
        m.d.sync += pending.eq(p.candidates)
    with m.If(records.valid & records.ready):
        with m.If(more):
            m.d.sync += pending.eq(pending & ~select)
        with m.Else():
            m.d.sync += ro_end.eq(0)
    with m.If(p.boundary):
        m.d.sync += ro_end.eq(1)
