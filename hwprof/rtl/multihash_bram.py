"""The multi-hash profiler with a set-associative accumulator in block RAM, pipelined.

:class:`MultiHashBram`, the design :func:`hwprof.rtl.multihash.MultiHash` builds for
``ways > 0`` (the rules are those of :mod:`hwprof.golden.multihash` with the same
``ways``). Five stages, one tuple per cycle, the pipeline never stops once a tuple
is accepted. Each stage is a submodule (``stage_a`` .. ``stage_e``, built by
:func:`_stage_a` .. :func:`_stage_e`; the E registers are written at the end of D,
so they are ``stage_d``'s), as are the configuration registers (``config``) and the
readout (``readout``); the memories are the component's own:

==== =========================================================================
A    accept (cycle c): the ``n`` hash units on the input tuple -> registers
B    c+1: the accumulator set ``(x * sets) >> bits`` from the hash indices;
     synchronous reads issued: counter ``i`` at ``index_i``; every way's tag and
     both count banks at the set; equality of this tuple's key / indices / set /
     interval with the three tuples ahead (the writes it will miss); each
     counter's valid bit selected from the flops (E's update applied)
C    c+2: read data into registers; each way's tag compared with the key; the
     set's valid / replaceable / fresh bits selected from the flops, E's update
     applied (and to the counters' valid bits from B); the writes of the tuples
     two and three ahead (in E and h1 now) forwarded into the counters, tag
     matches and entry counts registered for D
D    c+3: forwarding of the write one ahead (registers only), hit, conservative
     update, promotion (every counter ``>= T - 1``), victim way, the set's new
     flags (registered in E) and, on the interval's last tuple, the boundary
E    c+4: the block RAM writes (counters, tag of an allocation, entry count); the
     flag flops, pending bits and counter valid bits from E's registers
==== =========================================================================

Block RAM: the ``n`` counter tables; per way a tag memory (``sets`` x key) and two
count memories (``sets`` x ``counter_bits``), one per interval parity, so that the
readout of interval ``k`` reads bank ``k mod 2`` while interval ``k + 1`` counts
in the other. Flops per accumulator entry: valid, replaceable, fresh (its count
in the current bank belongs to this interval) and pending (not yet read out);
per counter a valid bit (the one-cycle flush), as in the fully associative design.

Forwarding: a tuple reads in B and its data are used in D; the tuples one, two
and three ahead write in E during the three cycles after the read was sampled.
Their writes (registers: the E stage and two history registers) are forwarded
by equalities computed in B; a write of another interval is not forwarded (the
counter or the entry count was flushed). The selects of the tuples one and two
ahead (in E when they are used) are flops: D registers its tuple's outcome
combined with its equalities with the tuple behind it, so neither B's, C's nor D's
logic reads ``e_valid`` (whose fan-out is every entry's flags and every counter's
valid bit). The tuples two and three ahead are in E and h1 when this tuple is in
C (their writes are registers then): they are forwarded in C into the values D
receives, so D forwards only the tuple one ahead. The flag flops are written at
the end of E from E's registers (each flop's next state a 2:1 mux on registered selects: no
path from D's decision into the entries' flops) and C reads their next state, so
only the tuple one ahead is missed by the set's flags read in C: they are taken
from its updated set flags when it was in the same set, or the boundary transform
is applied (in C, to the flags registered for D) when it ended the interval.

Readout: at the boundary the candidate entries (valid, not replaceable) set
their pending bits. Each cycle the lowest pending entry is picked as one-hots
(the first pending set by a prefix OR, the lowest way of each set locally; the
clear of its pending bit uses only these): it reads its tag and its count (bank
of the ended interval) and the next cycle puts the record into a 4-entry FIFO
that drives ``records``; then the end marker. The memories' read address (the
pick's set number, ``ro_set``) is a register: the first pending set of the
pending bits' next state, computed the cycle before (after a boundary from the
new pending bits; after a pick from whether its set has another pending way,
else the first pending set above it; else held), so that no logic sits between
the pending flops and the LUT-RAM read addresses. Same cycles as the encoder on
the flops it replaces (``bench/lockstep_multihash.py``). Above
:data:`PREFIX_PICK_SETS` sets (``component.readout_pick == "address"``) the pick
itself comes from that register, no prefix OR: while an entry is pending ``ro_set``
is the first set with a pending way, so the pick's one-hot is its decode and the
pending sets above it are the others; after a boundary the first set of the flops'
candidates outside stage E's set, or E's set when its candidates are pending and
no candidate set lies below it. The address pick also keeps "anything pending"
as a flop (``ro_any``, equal to ``pending != 0`` every cycle), its next state
from the same cases: after a boundary, a candidate outside E's set or E's set's
candidates; after a pick, another pending way of the picked set or a pending set
above it; else it holds. ``busy`` (hence the stall), the end marker (hence the
FIFO's write enable) and the readout's read enable read that flop instead of
the OR of every pending bit (1,000 at 1M, where the OR -> marker -> FIFO ``level``
enable was the ECP5 critical path; with the flop the critical path is the ``ro_set``
loop through the set tree; the measurements are in docs/notes/multihash.md). The prefix pick
(up to 32 sets, the defaults) keeps the OR: its Verilog is unchanged. The same
records on the same cycles.

Stalls (``tuples.ready`` low), from registers only: the accepted tuple would be
the last of its interval while the previous readout is incomplete, or the
readout is incomplete and the tuple's position in its interval is at least
``T - 1`` (only such a tuple can be promoted: the counters start at 0, so no
allocation can overwrite the tag of an entry not yet read out); both facts are
flags registered with the position (``at_last``, ``past_thr``). With an
always-ready consumer there is no stall when ``threshold >= candidates + 8``
(the readout of ``k > 0`` candidates is complete at the end of cycle ``c + k + 7``
when the last tuple was accepted in cycle ``c``; the cycle-by-cycle rule is
docs/multihash.md's and :mod:`hwprof.golden.multihash_stall`'s).
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory

from ..golden.multihash import MultiHashConfig
from .hashing import Hash, rom_switch
from .multihash_config import (
    PREFIX_PICK_SETS,
    RuntimeConfig,
    Stage,
    counter_tables,
    multihash_signature,
)
from .select import victim

__all__ = ["MultiHashBram", "flag_bit", "LATENCY", "PREFIX_PICK_SETS"]

#: cycles from the accept of a tuple to its block RAM writes (stage E)
LATENCY = 4
#: writes a read misses (non-transparent reads issued in B, writes in E)
_FORWARD = 3


def _tree_mux(values, index):
    """``values[index]`` as a balanced tree of 2:1 muxes (missing entries read as the last)."""
    level = list(values)
    for b in range(len(index)):
        if len(level) % 2:
            level.append(level[-1])
        level = [Mux(index[b], level[k + 1], level[k]) for k in range(0, len(level), 2)]
    return level[0]


def _forwarded(base, sources):
    """``base`` unless one of ``sources`` = [(condition, value)], nearest first, applies."""
    out = base
    for cond, value in reversed(sources):
        out = Mux(cond, value, out)
    return out


def _named(m, value, name):
    """``value`` through a combinational signal of ``m``.

    Amaranth emits an expression again wherever it is used; a subexpression used
    twice at every level of a tree (the comparator's ``eq``, the priority tree's
    ``any``) grows exponentially in the Verilog. yosys merges the copies (the
    netlist is the same), a Verilator model evaluates every copy every cycle.
    """
    sig = Signal(len(value), name=name)
    m.d.comb += sig.eq(value)
    return sig


def _one_hot(m, index, name, low=5):
    """One-hot of ``index`` (``2**len(index)`` bits): bit ``j`` is ``index == j``.

    Predecoded: the ``low`` least significant index bits and the others are
    decoded apart (``2**low`` and ``2**(len - low)`` comparisons) and bit ``j`` is
    the AND of its two predecoded bits; the row of bit ``j >> low`` is the low
    decode or 0 (one native word per row in a Verilator model, instead of one
    comparison per bit packed into a wide vector).
    """
    low = min(low, len(index))
    lo = _decode(m, index[:low], 1 << low, f"{name}_lo")
    if low == len(index):
        return lo
    hi = _decode(m, index[low:], 1 << (len(index) - low), f"{name}_hi")
    return _named(m, Cat(*[Mux(hi[h], lo, 0) for h in range(len(hi))]), name)


def _decode(m, index, count, name):
    """``count`` bits, bit ``j`` = ``index == j``: a ROM of one-hot words
    (:func:`hwprof.rtl.hashing.rom_switch`: comparator logic in yosys, one table
    lookup in a Verilator model)."""
    return rom_switch(m, [1 << j for j in range(count)], index, name, width=count)


def _first_set(m, bits, width):
    """``(any, index)`` of the lowest set bit of ``bits``: a tree of ``log2`` levels."""
    nodes = [(bits[i], None) for i in range(width)]  # (any, index below; None = 0 bits)
    level = 0
    while len(nodes) > 1:
        if len(nodes) % 2:
            nodes.append((Const(0, 1), Const(0, level) if level else None))
        nxt = []
        for k in range(0, len(nodes), 2):
            (a_any, a_idx), (b_any, b_idx) = nodes[k], nodes[k + 1]
            low = Mux(a_any, a_idx, b_idx) if level else None  # no zero-width wires
            nxt.append((_named(m, a_any | b_any, f"first_any{level}"),
                        _named(m, Cat(low, ~a_any) if level else ~a_any, f"first_idx{level}")))
        nodes = nxt
        level += 1
    return nodes[0][0], (nodes[0][1] if nodes[0][1] is not None else Const(0, 1))


def _first_set_of_zero(width):
    """The index :func:`_first_set` gives when no bit is set (its tree follows the
    upper half at each level: the lower half has none), as an integer."""
    nodes = [None] * width  # the index below each node (None = 0 bits)
    level = 0
    while len(nodes) > 1:
        if len(nodes) % 2:
            nodes.append(0 if level else None)
        nodes = [(nodes[k + 1] or 0) | (1 << level) for k in range(0, len(nodes), 2)]
        level += 1
    return nodes[0] or 0


def _compare(m, a, b):
    """``(a < b, a == b)`` for unsigned values as a tree (``2 log2(width)`` levels).

    A carry-chain comparator is ``width`` levels deep in gates (ABC's balancing
    cannot reassociate it); this is a balanced tree over the bits, the more
    significant half first: ``lt = lt_hi | eq_hi & lt_lo``. It is written with
    word-wide operations, one per tree level (a Verilator model evaluates a few
    word operations instead of one per tree node; the gates are the same tree):
    the operands are zero-extended to a power of two ``N`` (padding bits compare
    equal), and level ``k`` (``d = 2**k``) computes, at every bit position ``p``,
    ``lt[p] = lt[p + d] | eq[p + d] & lt[p]`` and ``eq[p] = eq[p + d] & eq[p]``;
    at the positions ``p`` that are multiples of ``2d`` these are the results for
    bits ``p .. p + 2d - 1`` (the other positions feed nothing and are removed by
    synthesis). Bit 0 of the last level is the comparison of the whole operands.
    """
    width = max(len(a), len(b))
    size = 1 << max(0, (width - 1).bit_length())
    a = Cat(a.as_unsigned(), Const(0, size - len(a)))
    b = Cat(b.as_unsigned(), Const(0, size - len(b)))
    lt = _named(m, ~a & b, "cmp_lt")
    eq = _named(m, ~(a ^ b), "cmp_eq")
    d = 1
    while d < size:
        lt, eq = (_named(m, (lt >> d) | ((eq >> d) & lt), "cmp_lt"),
                  _named(m, (eq >> d) & eq, "cmp_eq"))  # fmt: skip
        d *= 2
    return lt[0], eq[0]


def _step(m, x, up, name="step"):
    """``x + 1`` (``up``) or ``x - 1`` modulo ``2**len(x)``, with balanced carries.

    yosys maps ``x + 1`` to a ripple carry that ABC does not rebalance (``len(x)``
    levels); here bit ``i`` flips when every bit below it is 1 (0 for ``- 1``): the
    prefix ANDs ``all(x[:i])`` by ``log2`` word-wide steps (Kogge-Stone: after the
    step of distance ``d`` bit ``i`` holds the AND of bits ``i - 2d + 1 .. i``),
    ``log2(len(x))`` levels of 2-input ANDs, a few word operations in Verilator.
    """
    width = len(x)
    x = x.as_unsigned()
    pre = _named(m, x if up else ~x, f"{name}_p")
    d = 1
    while d < width:
        pre = _named(m, pre & Cat(_ones(d), pre[: width - d]), f"{name}_p")
        d *= 2
    # bit i flips when bits 0 .. i-1 are all 1 (0): bit 0 always
    return x ^ Cat(Const(1, 1), pre[: width - 1])


def _ones(width):
    """``width`` one bits, unsigned (``Const(-1, width)`` is signed: in a ``Mux`` with an
    unsigned operand it widens by a bit)."""
    return Const((1 << width) - 1, width)


def _or_all(vectors):
    """Bitwise OR of equal-width ``vectors`` (a balanced tree)."""
    level = list(vectors)
    while len(level) > 1:
        level = [level[k] | level[k + 1] if k + 1 < len(level) else level[k]
                 for k in range(0, len(level), 2)]  # fmt: skip
    return level[0]


def flag_bit(sets, s, wy):
    """Bit of entry (set ``s``, way ``wy``) in the flag vectors ``valid``, ``repl``,
    ``fresh``, ``pending`` and their next states (way-major)."""
    return wy * sets + s


def _less(m, a, b):
    return _compare(m, a, b)[0]


def _transform(c, fv, fr, ff):
    """The boundary's effect on a set's flags (P1/P0 of sec. 5.4.1)."""
    if c.retain:
        return fv & ~fr, Const(-1, c.ways), Const(0, c.ways)
    return Const(0, c.ways), Const(-1, c.ways), Const(0, c.ways)


def _way_slice(c, flags, wy):
    """Way ``wy``'s flags of every set (a slice of a way-major flag vector)."""
    return flags[wy * c.sets : (wy + 1) * c.sets]


def _set_flags(c, flags, index):
    """The ways' flags of set ``index`` (sets beyond the last read as the last, as
    :func:`_tree_mux`): a bit select per way, a 2:1 mux tree after techmap."""
    pad = (1 << len(index)) - c.sets
    out = []
    for wy in range(c.ways):
        row = _way_slice(c, flags, wy)
        row = Cat(row, Mux(row[-1], _ones(pad), 0)) if pad > 0 else row
        out.append(row.bit_select(index, 1))
    return Cat(*out)


def _registers(name, fields):
    """A stage's pipeline registers ``{field: Signal}``, named ``<stage>_<field>``."""
    return {k: Signal(v, name=f"{name}_{k}") for k, v in fields.items()}


class MultiHashBram(wiring.Component):
    """Multi-hash interval profiler with a set-associative accumulator in block RAM.

    Built by :func:`hwprof.rtl.multihash.MultiHash` with ``ways > 0`` (its parameters,
    ports and records). The submodules ``config``, ``stage_a`` .. ``stage_e`` and
    ``readout`` are the stages of the module docstring; the memories are the
    design's own (``table<i>``, ``tags<w>``, ``counts<p>_<w>``).

    Parameters
    ----------
    config : MultiHashConfig
        Checked parameters (``ways > 0``).
    bypass : bool
        Forward the writes a read misses (default). ``False`` builds a broken design
        for the checker's mutant test only.
    readout_pick : str
        ``"prefix"`` or ``"address"`` (:func:`hwprof.rtl.multihash_config.readout_pick_for`).

    Attributes
    ----------
    tuples, records, cfg_we, cfg_interval, cfg_threshold
        As :func:`hwprof.rtl.multihash.MultiHash`.

    Latency: accepted in cycle c, tables and accumulator written at the end of
    c + :data:`LATENCY`; the first record of an interval is valid in c + 8 when its
    last tuple was accepted in c, one record per cycle after.
    """

    def __init__(self, config: MultiHashConfig, *, bypass: bool = True,
                 readout_pick: str = "prefix"):  # fmt: skip
        self.config = config
        self.bypass = bool(bypass)
        self.readout_pick = readout_pick
        super().__init__(multihash_signature(config))

    def elaborate(self, platform):
        m = Module()
        p = _namespace(self)
        _memories(p, m)
        for name, build in (("config", _config), ("stage_a", _stage_a), ("stage_b", _stage_b),
                            ("stage_c", _stage_c), ("stage_d", _stage_d), ("stage_e", _stage_e),
                            ("readout", _readout)):  # fmt: skip
            m.submodules[name] = stage = Stage()
            build(p, stage.m)
        return m


def _namespace(component):
    """The design's shared state: the pipeline registers of every stage and the signals
    a stage reads before the stage that drives them is built."""
    c = component.config
    n, w, kb, ib, ways, sets = (c.tables, c.counter_bits, c.key_bits, c.index_bits,
                                c.ways, c.sets)  # fmt: skip
    set_bits = max(1, (sets - 1).bit_length())
    p = SimpleNamespace(component=component, c=c, set_bits=set_bits)
    p.fields = {"valid": 1, "key": kb, "last": 1, "epoch": 2, "thr1": w,
                **{f"idx{i}": ib for i in range(n)}}  # fmt: skip
    p.a = _registers("a", p.fields)
    p.b, p.c_, p.d = (_registers(s, p.fields | {"set": set_bits}) for s in "bcd")
    # E (the write stage) and two history registers: the three writes a read misses
    p.efields = {"valid": 1, "epoch": 2, "set": set_bits, "key": kb, "cwrite": 1,
                 "awrite": 1, "alloc": 1, "way": max(1, (ways - 1).bit_length()), "acount": w,
                 **{f"idx{i}": ib for i in range(n)}, **{f"cval{i}": w for i in range(n)}}
    p.e = _registers("e", p.efields | {"boundary": 1, "fv": ways, "fr": ways, "ff": ways,
                                       "fp": ways, "sethot": max(1, sets)})  # fmt: skip
    p.hist = [p.e] + [_registers(f"h{j}", p.efields) for j in (1, 2)]
    p.busy = Signal(name="busy")  # a readout (or a boundary on its way to D) is incomplete
    # the readout's set address: a register, the set of the lowest pending entry (computed
    # the cycle before from that cycle's state, see the readout)
    p.ro_set = Signal(set_bits, init=_first_set_of_zero(sets), name="ro_set")
    p.ro_issue = Signal(name="ro_issue")
    p.ro_clear = Signal(c.accumulator, name="ro_clear")
    # C's selects of the tuple two ahead and B's of the tuple three ahead, registered in D
    # (see _stage_c)
    p.c_ab2 = Signal(name="c_ab2")  # e_valid & e_boundary
    p.c_same2 = Signal(name="c_same2")  # e_valid & e_set == c_set
    p.c_idx2 = [Signal(name=f"c_idx2_{i}") for i in range(n)]  # e_valid & e_idx_i == c_idx_i
    p.e_vcw = Signal(name="e_vcw")  # e_valid & e_cwrite (B's copy, written in D)
    # the entries' flags as vectors, way-major: entry (set s, way wy) is bit
    # ``wy * sets + s`` (:func:`flag_bit`), so that a way's flags of every set are one
    # slice and the per-entry logic is a few word-wide operations
    entries = c.accumulator
    p.valid, p.repl = Signal(entries, name="valid"), Signal(entries, name="repl")
    p.fresh, p.pending = Signal(entries, name="fresh"), Signal(entries, name="pending")
    # the flags' next state: the flops with stage E's update applied (see stage E)
    p.valid_n, p.repl_n = Signal(entries, name="valid_n"), Signal(entries, name="repl_n")
    p.fresh_n = Signal(entries, name="fresh_n")
    p.counter_valid = [Signal(c.table_size, name=f"counter_valid{i}") for i in range(n)]
    return p


def _memories(p, m):
    """The block RAMs (submodules of the design): the counter tables, per way a tag
    memory and the two count banks; their read ports (B reads at the tuple's indices
    and set, the readout at ``ro_set``) and write ports (stage E)."""
    c = p.c
    p.counter_reads, p.counter_writes = counter_tables(m, c)
    p.tag_read, p.tag_ro, p.tag_write = [], [], []
    p.cnt_read, p.cnt_ro, p.cnt_write = [[], []], [[], []], [[], []]
    for wy in range(c.ways):
        m.submodules[f"tags{wy}"] = mem = Memory(shape=c.key_bits, depth=max(2, c.sets),
                                                 init=[])  # fmt: skip
        p.tag_read.append(mem.read_port(domain="sync"))
        p.tag_ro.append(mem.read_port(domain="sync"))
        p.tag_write.append(mem.write_port())
        for par in (0, 1):
            m.submodules[f"counts{par}_{wy}"] = mem = Memory(
                shape=c.counter_bits, depth=max(2, c.sets), init=[])
            p.cnt_read[par].append(mem.read_port(domain="sync"))
            p.cnt_ro[par].append(mem.read_port(domain="sync"))
            p.cnt_write[par].append(mem.write_port())


def _config(p, m):
    """The configuration registers (applied by stage A at an interval's last tuple)."""
    p.cfg = RuntimeConfig(m, p.component, p.c.counter_bits)
    p.cfg_module = m


def _stage_a(p, m):
    """A: accept, the hash units, the tuple's place in its interval (``position``, the
    interval number ``epoch``, the registered flags ``at_last`` and ``past_thr``)."""
    c, component, cfg, a = p.c, p.component, p.cfg, p.a
    w, kb = c.counter_bits, c.key_bits
    interval, threshold = cfg.interval, cfg.threshold
    position = Signal(w, name="position")
    epoch = Signal(2, name="epoch")
    stall = Signal(name="stall")
    accept = Signal(name="accept")
    # the stall and the interval's last tuple read two flags registered with position
    # (their next state compares position with configuration constants kept in
    # registers, in parallel with accept: no increment or compare before accept)
    mod = 1 << w
    last_in = Signal(init=int((c.interval_length - 1) % mod == 0), name="at_last")
    past_thr = Signal(init=int((c.threshold - 1) % mod == 0), name="past_thr")
    interval_m2 = Signal(w, init=(c.interval_length - 2) % mod, name="interval_m2")
    threshold_m2 = Signal(w, init=(c.threshold - 2) % mod, name="threshold_m2")
    thr1 = _named(m, _step(m, threshold, False, "thr1_step"), "thr1")  # T - 1
    m.d.comb += [
        stall.eq(p.busy & (last_in | past_thr)),
        component.tuples.ready.eq(~stall),
        accept.eq(component.tuples.valid & ~stall),
    ]
    key_in = Signal(kb, name="key_in")
    m.d.comb += key_in.eq(component.tuples.payload.as_value())
    for i in range(c.tables):
        m.submodules[f"hash{i}"] = h = Hash(c.index_bits, kb, c.hash_seed + i, c.pc_bits,
                                            rom="switch")  # fmt: skip
        m.d.comb += h.key.eq(key_in)
        m.d.sync += a[f"idx{i}"].eq(h.index)
    m.d.sync += [
        a["valid"].eq(accept),
        a["key"].eq(key_in),
        a["last"].eq(last_in),
        a["epoch"].eq(epoch),
        a["thr1"].eq(thr1),
    ]
    # (the steps' named signals outside the If: a comb assignment inside it would be
    # gated by its condition)
    position1 = _step(m, position, True, "position_step")
    interval_m2_new = _step(m, _step(m, cfg.pending_interval, False, "im1"), False, "im2")
    threshold_m2_new = _step(m, _step(m, cfg.pending_threshold, False, "tm1"), False, "tm2")
    with m.If(accept):
        m.d.sync += position.eq(Mux(last_in, 0, position1))
        with m.If(last_in):
            # position 0 of the next interval, of the configuration it starts with
            new_interval = Mux(cfg.pend, cfg.pending_interval, interval)
            new_threshold = Mux(cfg.pend, cfg.pending_threshold, threshold)
            m.d.sync += [epoch.eq(epoch + 1), last_in.eq(new_interval == 1),
                         past_thr.eq(new_threshold == 1)]  # fmt: skip
            with m.If(cfg.pend):
                m.d.sync += [interval_m2.eq(interval_m2_new),
                             threshold_m2.eq(threshold_m2_new)]  # fmt: skip
        with m.Else():
            # position + 1 == interval - 1; position + 1 >= T - 1 (position + 1 does not
            # wrap: position < interval)
            m.d.sync += [last_in.eq(position == interval_m2),
                         past_thr.eq(past_thr | (position == threshold_m2))]  # fmt: skip
    cfg.apply(p.cfg_module, accept & last_in)


def _stage_b(p, m):
    """B: the accumulator set from the hash indices, the synchronous reads, the
    equalities of this tuple with the three tuples ahead (registered for C)."""
    c, a, b, c_, d, e = p.c, p.a, p.b, p.c_, p.d, p.e
    n, sets, xbits = c.tables, c.sets, c.set_source_bits
    x = Signal(xbits, name="x")
    m.d.comb += x.eq(Cat(*[a[f"idx{i}"] for i in range(n)])[:xbits])
    for k in p.fields:
        m.d.sync += b[k].eq(a[k])
    # (x * sets) >> xbits as constant logic (a ROM of 2**xbits entries: no adder chain)
    set_rom = [(v * sets) >> xbits for v in range(1 << xbits)]
    set_of = rom_switch(m, set_rom, x, "set_rom", width=p.set_bits) if sets > 1 else 0
    m.d.sync += b["set"].eq(set_of)

    # equalities of the tuple in B with the three tuples ahead (in C, D, E now: they are
    # E, h1, h2 when this tuple is in D)
    p.b_eq = b_eq = {}
    for j, other in enumerate([c_, d, e], start=1):
        b_eq[f"key{j}"] = b["key"] == other["key"]
        b_eq[f"set{j}"] = b["set"] == other["set"]
        b_eq[f"ep{j}"] = b["epoch"] == other["epoch"]
        for i in range(n):
            b_eq[f"idx{j}_{i}"] = b[f"idx{i}"] == other[f"idx{i}"]
    p.c_eq = {k: Signal(name=f"c_eq_{k}") for k in b_eq}
    for k, v in b_eq.items():
        m.d.sync += p.c_eq[k].eq(v)

    for i in range(n):
        m.d.comb += p.counter_reads[i].addr.eq(b[f"idx{i}"])
    for wy in range(c.ways):
        m.d.comb += p.tag_read[wy].addr.eq(b["set"])
        for par in (0, 1):
            m.d.comb += p.cnt_read[par][wy].addr.eq(b["set"])


def _stage_c(p, m):
    """C: the read data into registers for D, the writes of the tuples two and three
    ahead forwarded into them, each counter's valid bit and the set's flags with
    stage E's update applied."""
    c, b, c_, d, e, hist, c_eq = p.c, p.b, p.c_, p.d, p.e, p.hist, p.c_eq
    n, z, w, ways, sets = c.tables, c.table_size, c.counter_bits, c.ways, c.sets
    for k in p.fields | {"set": 0}:
        m.d.sync += c_[k].eq(b[k])
    p.d_eq_key1 = Signal(name="d_eq_key1")  # (D's other selects are combined in D)
    m.d.sync += p.d_eq_key1.eq(c_eq["key1"])
    # The tuple two ahead (in E now) as C sees it, registered at the end of D for the
    # tuple then in B (``eq`` compares the two): whether it ended the interval, is valid
    # and in this set, is valid and at this counter index (p.c_ab2, p.c_same2, p.c_idx2).
    # C's selects are then flops of a small fan-out, not ``e_valid`` (which drives every
    # entry's flags and every counter's valid bit). (c_ab2 is then e_valid & e_boundary
    # every cycle.)
    # A counter's valid bit with stage E's updates applied (the flops are written in E),
    # at this tuple's index: selected from the flops in B, on B's index register, with
    # the update of the tuple then in E (three ahead) applied: c_counter_valid is the
    # flop's value when this tuple is in C; C applies the update of the tuple in E then
    # (two ahead)
    c_cvbit = [Signal(name=f"c_counter_valid{i}") for i in range(n)]
    counter_valid_n_at_c = []
    for i in range(n):
        # a bit select: the index's 32-bit row by a mux tree, then the bit (a 2:1 mux
        # tree in gates, as a bit select of the whole vector after techmap; a Verilator
        # model shifts a whole wide vector for the latter, all 16 words, every cycle)
        idx = b[f"idx{i}"]
        row = _tree_mux([p.counter_valid[i][r : min(r + 32, z)] for r in range(0, z, 32)],
                        idx[5:])
        flop = row.bit_select(idx[:5], 1)
        m.d.sync += c_cvbit[i].eq(~p.c_ab2 & (flop | (p.e_vcw & p.b_eq[f"idx3_{i}"])))
        counter_valid_n_at_c.append(~p.c_ab2 & (c_cvbit[i] | (p.c_idx2[i] & e["cwrite"])))

    # counter i as read, flushed, with the writes of the tuples two and three ahead
    # forwarded here (they are in E and h1 now: their values are registers), so that D
    # forwards only the tuple one ahead
    p.d_base = [Signal(w, name=f"d_counter_base{i}") for i in range(n)]
    c_after_boundary = d["valid"] & d["last"]  # in D: e_valid & e_boundary
    for i in range(n):
        fresh_c = counter_valid_n_at_c[i] & ~c_after_boundary
        conds = [p.c_idx2[i] & e["cwrite"] & c_eq["ep2"],
                 hist[1]["valid"] & hist[1]["cwrite"] & c_eq[f"idx3_{i}"] & c_eq["ep3"]]
        vals = [hist[j - 2][f"cval{i}"] for j in (2, 3)]
        sources = list(zip(conds, vals, strict=True)) if p.component.bypass else []
        m.d.sync += p.d_base[i].eq(_forwarded(Mux(fresh_c, p.counter_reads[i].data, 0),
                                              sources))  # fmt: skip
    parity = c_["epoch"][0]
    # per way likewise: the tag match and the entry count's writes of the tuples two and
    # three ahead forwarded here (d_fwd_any: one of them wrote the count, d_fwd_count)
    p.d_tageq = Signal(ways, name="d_tageq")  # way wy's tag == this tuple's key (but E's)
    p.d_acnt = [Signal(w, name=f"d_count{wy}") for wy in range(ways)]
    p.d_fwd_any = Signal(ways, name="d_fwd_any")
    p.d_fwd_count = [Signal(w, name=f"d_fwd_count{wy}") for wy in range(ways)]
    for wy in range(ways):
        same = [p.c_same2, hist[1]["valid"] & c_eq["set3"]]  # (j = 2, 3)
        tag_src = [(same[j - 2] & hist[j - 2]["alloc"] & (hist[j - 2]["way"] == wy),
                    c_eq[f"key{j}"]) for j in (2, 3)]
        cnt_src = [(same[j - 2] & hist[j - 2]["awrite"] & (hist[j - 2]["way"] == wy)
                    & c_eq[f"ep{j}"], hist[j - 2]["acount"]) for j in (2, 3)]  # fmt: skip
        m.d.sync += [
            p.d_tageq[wy].eq(_forwarded(p.tag_read[wy].data == c_["key"], tag_src)),
            p.d_acnt[wy].eq(Mux(parity, p.cnt_read[1][wy].data, p.cnt_read[0][wy].data)),
            p.d_fwd_any[wy].eq(cnt_src[0][0] | cnt_src[1][0]),
            p.d_fwd_count[wy].eq(_forwarded(cnt_src[1][1], cnt_src[:1])),
        ]
    # the set's flags with stage E's update applied (the flops' next state at this set,
    # from the flops and C's selects: the set's flags the tuple in E registered when it
    # is in this set, else the boundary transform when it ended the interval), then the
    # boundary transform when the tuple one ahead (in D now, in E when this one is in D)
    # ends the interval
    f_v, f_r, f_f = (_set_flags(c, f, c_["set"]) for f in (p.valid, p.repl, p.fresh))
    e_tv, e_tr, e_tf = _transform(c, f_v, f_r, f_f)
    c_fv = Mux(p.c_same2, e["fv"], Mux(p.c_ab2, e_tv, f_v))
    c_fr = Mux(p.c_same2, e["fr"], Mux(p.c_ab2, e_tr, f_r))
    c_ff = Mux(p.c_same2, e["ff"], Mux(p.c_ab2, e_tf, f_f))
    c_tv, c_tr, c_tf = _transform(c, c_fv, c_fr, c_ff)
    p.d_fv, p.d_fr = Signal(ways, name="d_fv"), Signal(ways, name="d_fr")
    p.d_ff, p.d_sethot = Signal(ways, name="d_ff"), Signal(sets, name="d_sethot")
    m.d.sync += [
        p.d_fv.eq(Mux(c_after_boundary, c_tv, c_fv)),
        p.d_fr.eq(Mux(c_after_boundary, c_tr, c_fr)),
        p.d_ff.eq(Mux(c_after_boundary, c_tf, c_ff)),
        p.d_sethot.eq(_decode(m, c_["set"], sets, "sethot_decode")),
    ]


def _stage_d(p, m):
    """D: forwarding of the write one ahead, hit, conservative update, promotion, the
    victim way, the set's new flags and, on the interval's last tuple, the boundary;
    the E registers and the forwarding selects of the tuple behind."""
    c, c_, d = p.c, p.c_, p.d
    for k in p.fields | {"set": 0}:
        m.d.sync += d[k].eq(c_[k])

    # "value >= T - 1" of every candidate value compared in parallel on its register and
    # forwarded by the same selects as the value itself (no compare after a forward mux)
    def at_least(value):
        return ~_less(m, value, d["thr1"])

    p.at_least = at_least
    p.thr_zero = d["thr1"] == 0  # 0 >= T - 1
    # The selects of the forwarding of the tuple one ahead, registered: its writes are
    # decided in D, and the equalities of the tuple behind it (in C then) with it are
    # registers, so the cycle before their use the two are combined into one flop per
    # select (written at the end of this stage, below). The E registers themselves
    # (``e_valid`` above all: it drives the flags of every entry and every counter's
    # valid bit) are then not in D's logic: the selects are flops of a small fan-out.
    p.fwd_sel = [Signal(name=f"d_fwd1_{i}") for i in range(c.tables)]  # e_valid & e_cwrite..
    p.same1 = Signal(name="d_same1")  # e_valid & same set
    p.mine_alloc = Signal(c.ways, name="d_mine_alloc")  # ... & e_way == wy & e_alloc
    p.mine_aw = Signal(c.ways, name="d_mine_aw")  # ... & e_way == wy & e_awrite & same epoch
    _d_counters(p, m)
    _d_lookup(p, m)
    _d_decide(p, m)


def _d_counters(p, m):
    """D's counters: the write one ahead forwarded, every counter's ``>= T - 1``, the
    minimum (parallel compares of every pair) and the (conservative) update."""
    c, e, at_least, fwd_sel = p.c, p.e, p.at_least, p.fwd_sel
    n, w = c.tables, c.counter_bits
    old, old_ge = [], []
    for i in range(n):
        v = Signal(w, name=f"counter{i}")
        v_ge = Signal(name=f"counter_ge{i}")  # v >= T - 1
        # the tuple one ahead (the others were forwarded into d_base in C)
        sources = [(fwd_sel[i], e[f"cval{i}"])] if p.component.bypass else []
        sources_ge = [(cd, at_least(val)) for cd, val in sources]
        m.d.comb += [v.eq(_forwarded(p.d_base[i], sources)),
                     v_ge.eq(_forwarded(at_least(p.d_base[i]), sources_ge))]  # fmt: skip
        old.append(v)
        old_ge.append(v_ge)
    p.old_ge = old_ge
    # c_i is a minimum iff c_i <= c_j for every j (parallel compares, no minimum tree);
    # the minimum + 1 (a new entry's count) is c_j + 1 of the first minimal c_j
    # one compare per pair i < j: c_i <= c_j is lt | eq, c_j <= c_i is ~lt. Like the
    # ``>= T - 1`` compares, on the candidates' registers (counter i is the value of C,
    # or the write of the tuple one ahead when fwd_sel[i]): every pair of candidates
    # compared in parallel, the result bits selected by the two counters' selects (no
    # compare after a forward mux); likewise each counter's ``+ 1``
    cands = [[p.d_base[i], e[f"cval{i}"]] if p.component.bypass else [p.d_base[i]]
             for i in range(n)]  # fmt: skip

    def chosen(values, i):
        """``values[k]`` for counter ``i``'s candidate ``k`` -> the one its select picks."""
        return Mux(fwd_sel[i], values[1], values[0]) if len(values) > 1 else values[0]

    le = {}
    for i in range(n):
        for j in range(i + 1, n):
            pairs = [[_compare(m, a, b) for b in cands[j]] for a in cands[i]]
            lt = chosen([chosen([r[0] for r in row], j) for row in pairs], i)
            eq = chosen([chosen([r[1] for r in row], j) for row in pairs], i)
            le[i, j], le[j, i] = _named(m, lt | eq, f"le{i}_{j}"), _named(m, ~lt, f"le{j}_{i}")
    is_min = []
    for i in range(n):
        others = [le[i, j] for j in range(n) if j != i]
        is_min.append(Cat(*others).all() if others else Const(1, 1))
    plus = [Signal(w, name=f"counter_plus{i}") for i in range(n)]
    for i in range(n):
        m.d.comb += plus[i].eq(chosen([_step(m, v, True, f"counter_step{i}")
                                       for v in cands[i]], i))  # fmt: skip
    p.low1 = Signal(w, name="low1")  # min(c_i) + 1: an AND-OR (every minimal c_i the same)
    m.d.comb += p.low1.eq(_or_all([Mux(is_min[i], plus[i], 0) for i in range(n)]))
    p.new = [Mux(is_min[i], plus[i], old[i]) if c.conservative else plus[i] for i in range(n)]


def _d_lookup(p, m):
    """D's accumulator lookup: the set's flags and each way's tag match and count + 1
    with the write one ahead forwarded; hit, the hit entry's count + 1, requalify."""
    c, d, e, at_least = p.c, p.d, p.e, p.at_least
    w, ways = c.counter_bits, c.ways
    e_acount_ge = _named(m, at_least(e["acount"]), "e_acount_ge")  # (one compare, every way)
    p.fv, p.fr, p.ff = (Signal(ways, name=f"flags_{k}") for k in ("v", "r", "f"))
    m.d.comb += [
        p.fv.eq(Mux(p.same1, e["fv"], p.d_fv)),
        p.fr.eq(Mux(p.same1, e["fr"], p.d_fr)),
        p.ff.eq(Mux(p.same1, e["ff"], p.d_ff)),
    ]
    match = Signal(ways, name="match")
    counts1, counts_ge = [], []
    e_acount1 = _named(m, _step(m, e["acount"], True, "e_acount_step"), "e_acount_plus")
    for wy in range(ways):
        # the tuple one ahead (in E); the two before it were forwarded in C
        m.d.comb += match[wy].eq(Mux(p.mine_alloc[wy], p.d_eq_key1, p.d_tageq[wy]))
        cnt = Signal(w, name=f"entry_count_plus{wy}")
        cnt_src = [(p.mine_aw[wy], e["acount"]),
                   (p.d_fwd_any[wy], p.d_fwd_count[wy])]  # fmt: skip
        # cnt + 1 (a hit's new count): each candidate incremented on its register
        fwd1 = _step(m, p.d_fwd_count[wy], True, "fwd_step")
        m.d.comb += cnt.eq(_forwarded(Mux(p.ff[wy], _step(m, p.d_acnt[wy], True, "acnt_step"),
                                          1),
                                      [(cnt_src[0][0], e_acount1), (cnt_src[1][0], fwd1)]))
        cnt_ge = Signal(name=f"entry_count_ge{wy}")  # cnt >= T - 1
        m.d.comb += cnt_ge.eq(_forwarded(Mux(p.ff[wy], at_least(p.d_acnt[wy]), p.thr_zero),
                                        [(cnt_src[0][0], e_acount_ge),
                                         (cnt_src[1][0], at_least(p.d_fwd_count[wy]))]))
        counts1.append(cnt)
        counts_ge.append(cnt_ge)

    p.hits = hits = Signal(ways, name="hits")
    m.d.comb += hits.eq(p.fv & match)
    p.hit = Signal(name="hit")
    m.d.comb += p.hit.eq(d["valid"] & hits.any())
    p.hit_count1 = Signal(w, name="hit_count1")  # the hit entry's count + 1
    m.d.comb += p.hit_count1.eq(_forwarded(Const(1, w), [(hits[wy], counts1[wy])
                                                          for wy in range(ways)]))  # fmt: skip
    hit_ge = Signal(name="hit_ge")  # hit_count >= T - 1
    m.d.comb += hit_ge.eq(_forwarded(p.thr_zero, [(hits[wy], counts_ge[wy])
                                                 for wy in range(ways)]))  # fmt: skip
    p.requalify = Signal(name="requalify")
    m.d.comb += p.requalify.eq((hits & p.fr).any() & hit_ge)


def _d_decide(p, m):
    """D's decision: promotion, the victim way, the set's new flags, the boundary; the
    E registers and the forwarding selects of the tuples behind."""
    c, d, e, hit, hits = p.c, p.d, p.e, p.hit, p.hits
    ways = c.ways
    promote = Signal(name="promote")  # min(c_i) + 1 >= T, as every c_i >= T - 1
    m.d.comb += promote.eq(d["valid"] & ~hit & Cat(*p.old_ge).all())
    target = victim(m, p.fv, p.fr)
    alloc = Signal(name="alloc")
    m.d.comb += alloc.eq(promote & target.any())
    p.boundary = Signal(name="boundary")
    m.d.comb += p.boundary.eq(d["valid"] & d["last"])
    way_of = Signal.like(e["way"], name="way_of")
    onehot = Mux(hit, hits, target)
    m.d.comb += way_of.eq(_forwarded(Const(0, len(way_of)),
                                    [(onehot[wy], Const(wy, len(way_of)))
                                     for wy in range(ways)]))  # fmt: skip

    # the set's flags after this tuple (and after the boundary transform)
    nv, nr, nf = (Signal(ways, name=f"new_flags_{k}") for k in ("v", "r", "f"))
    alloc_w = Mux(alloc, target, 0)
    m.d.comb += [
        nv.eq(p.fv | alloc_w),
        nr.eq((p.fr & ~alloc_w) & ~Mux(hit & p.requalify, hits, 0)),
        nf.eq(p.ff | alloc_w | Mux(hit, hits, 0)),
    ]
    bv, br, bf = _transform(c, nv, nr, nf)

    zero_them = alloc if c.reset else Const(0, 1)
    m.d.sync += [
        e["valid"].eq(d["valid"]),
        e["epoch"].eq(d["epoch"]),
        e["set"].eq(d["set"]),
        e["key"].eq(d["key"]),
        e["cwrite"].eq(~hit),
        e["awrite"].eq(hit | alloc),
        e["alloc"].eq(alloc),
        e["way"].eq(way_of),
        e["acount"].eq(Mux(hit, p.hit_count1, p.low1)),
        e["boundary"].eq(d["last"]),
        e["fv"].eq(Mux(p.boundary, bv, nv)),
        e["fr"].eq(Mux(p.boundary, br, nr)),
        e["ff"].eq(Mux(p.boundary, bf, nf)),
        e["fp"].eq(nv & ~nr),  # the set's candidates (pending bits) when it ends the interval
        e["sethot"].eq(p.d_sethot),
    ]
    for i in range(c.tables):
        m.d.sync += [e[f"idx{i}"].eq(d[f"idx{i}"]),
                     e[f"cval{i}"].eq(Mux(zero_them, 0, p.new[i]))]  # fmt: skip
    # the forwarding selects of the tuple behind (in C now: c_eq compares it with this one)
    c_eq, b_eq = p.c_eq, p.b_eq
    mine_set = d["valid"] & c_eq["set1"]
    m.d.sync += [p.same1.eq(mine_set),
                 p.mine_alloc.eq(Cat(*[mine_set & alloc & (way_of == wy)
                                       for wy in range(ways)])),
                 p.mine_aw.eq(Cat(*[mine_set & (hit | alloc) & (way_of == wy) & c_eq["ep1"]
                                    for wy in range(ways)]))]  # fmt: skip
    for i in range(c.tables):
        m.d.sync += p.fwd_sel[i].eq(d["valid"] & ~hit & c_eq[f"idx1_{i}"] & c_eq["ep1"])
    # C's selects of the tuple in B (two behind this one: eq compares them)
    m.d.sync += [p.c_ab2.eq(p.boundary), p.c_same2.eq(d["valid"] & b_eq["set2"]),
                 p.e_vcw.eq(d["valid"] & ~hit)]  # fmt: skip
    for i in range(c.tables):
        m.d.sync += p.c_idx2[i].eq(d["valid"] & b_eq[f"idx2_{i}"])


def _stage_e(p, m):
    """E: the block RAM writes (counters, the tag of an allocation, the entry count);
    the entries' flag flops, pending bits and the counters' valid bits; the two history
    registers of E's writes."""
    c, e, hist = p.c, p.e, p.hist
    n, sets, ways, entries = c.tables, c.sets, c.ways, c.accumulator
    for j in (1, 2):
        for k in p.efields:
            m.d.sync += hist[j][k].eq(hist[j - 1][k])
    p.after_boundary = after_boundary = Signal(name="after_boundary")
    m.d.comb += after_boundary.eq(e["valid"] & e["boundary"])  # the tuple ahead ended it
    # The flag flops take the set flags the tuple in E registered (a 2:1 mux on registered
    # selects; on the interval's last tuple the other sets get the boundary transform). C
    # reads the next state, so the flags D receives miss only the tuple one ahead.
    # Per entry (set s, way wy): sel = e_sethot[s] & e_valid, and
    #   valid_n = sel ? e_fv[wy] : after_boundary ? valid & ~repl (P1; 0 for P0) : valid
    #   repl_n  = sel ? e_fr[wy] : after_boundary | repl
    #   fresh_n = sel ? e_ff[wy] : ~after_boundary & fresh
    #   pending <= after_boundary ? (sel ? e_fp[wy] : valid & ~repl) : pending & ~ro_clear
    # written on the way-major vectors: sel is e_sethot repeated per way, the set's new
    # flags are each way's bit spread over its slice; the 2:1 muxes as AND-OR.
    # (a bit spread over a slice as a 2:1 mux of constants, not a replication: Verilator
    # builds a replication bit by bit)
    p.sel_set = sel_set = _named(m, Mux(e["valid"], e["sethot"][:sets], 0), "flag_sel_set")
    sel = _named(m, Cat(*[sel_set] * ways), "flag_sel")

    def spread(bits):
        return Cat(*[Mux(bits[wy], _ones(sets), 0) for wy in range(ways)])

    def pick(new, other):
        return (sel & spread(new)) | (~sel & other)

    valid, repl, fresh = p.valid, p.repl, p.fresh
    tv = valid & ~repl if c.retain else Const(0, entries)  # the boundary transform
    m.d.comb += [
        p.valid_n.eq(pick(e["fv"], Mux(after_boundary, tv, valid))),
        p.repl_n.eq(pick(e["fr"], Mux(after_boundary, _ones(entries), repl))),
        p.fresh_n.eq(pick(e["ff"], Mux(after_boundary, 0, fresh))),
    ]
    m.d.sync += [valid.eq(p.valid_n), repl.eq(p.repl_n), fresh.eq(p.fresh_n),
                 p.pending.eq(Mux(after_boundary, pick(e["fp"], valid & ~repl),
                                  p.pending & ~p.ro_clear))]  # fmt: skip
    # the counters' valid bits: set by a counter write, cleared by the interval's last tuple
    counter_valid_n = [Signal(c.table_size, name=f"counter_valid_n{i}") for i in range(n)]
    for i in range(n):
        decode = _one_hot(m, e[f"idx{i}"], f"decode{i}")
        m.d.comb += counter_valid_n[i].eq(Mux(after_boundary, 0, p.counter_valid[i]
                                              | Mux(e["valid"] & e["cwrite"], decode, 0)))
        m.d.sync += p.counter_valid[i].eq(counter_valid_n[i])
    for i in range(n):
        m.d.comb += [p.counter_writes[i].addr.eq(e[f"idx{i}"]),
                     p.counter_writes[i].data.eq(e[f"cval{i}"]),
                     p.counter_writes[i].en.eq(e["valid"] & e["cwrite"])]  # fmt: skip
    for wy in range(ways):
        mine = e["valid"] & (e["way"] == wy)
        m.d.comb += [p.tag_write[wy].addr.eq(e["set"]), p.tag_write[wy].data.eq(e["key"]),
                     p.tag_write[wy].en.eq(mine & e["alloc"])]  # fmt: skip
        for par in (0, 1):
            m.d.comb += [p.cnt_write[par][wy].addr.eq(e["set"]),
                         p.cnt_write[par][wy].data.eq(e["acount"]),
                         p.cnt_write[par][wy].en.eq(mine & e["awrite"]
                                                    & (e["epoch"][0] == par))]  # fmt: skip


def _readout(p, m):
    """The readout: the lowest pending entry picked each cycle, its tag and count read
    (bank of the ended interval) into a 4-entry FIFO that drives ``records``, then the
    end marker; the readout's set address register ``ro_set``; ``busy``."""
    c = p.c
    w, kb, sets, ways = c.counter_bits, c.key_bits, c.sets, c.ways
    set_bits = p.set_bits
    for wy in range(ways):
        m.d.comb += [p.tag_ro[wy].addr.eq(p.ro_set), p.tag_ro[wy].en.eq(p.ro_issue)]
        for par in (0, 1):
            m.d.comb += [p.cnt_ro[par][wy].addr.eq(p.ro_set),
                         p.cnt_ro[par][wy].en.eq(p.ro_issue)]  # fmt: skip
    m.submodules.fifo = fifo = SyncFIFO(width=kb + w + 1, depth=4)
    ro_parity = Signal()
    ro_end = Signal()  # the end marker is still to be queued
    ro_inflight = Signal()  # a record read last cycle, queued this cycle
    ro_way = Signal.like(p.e["way"])
    pend_way = [_way_slice(c, p.pending, wy) for wy in range(ways)]  # a way's bit of every set
    set_any = _named(m, _or_all(pend_way), "set_any")
    # (the tree's OR, not the prefix's last bit: ABC turns the prefix into a chain when
    # it is only on short paths; any_set feeds busy -> stall)
    if p.component.readout_pick == "prefix":
        any_set, _ = _first_set(m, set_any, sets)
    else:
        # "anything pending" as a flop (``ro_any``, equal to ``pending != 0`` every
        # cycle), its next state computed below from the same facts as ro_set's: the
        # OR of 1,000 pending bits (at 1M) fed the end marker -> the FIFO's write
        # enable and busy -> the stall; from the flop neither waits for it
        any_set = Signal(name="ro_any")
    if p.component.readout_pick == "prefix":
        # the pick as one-hots, so that no encoded set and no set mux sit in the
        # pending -> pending loop: the first pending set by a prefix OR of the sets' ORs,
        # each set's lowest pending way locally; ro_set (the encoded set) only addresses
        # the memories
        # before[s]: a set below s has a pending bit (bit s - 1 of the prefix ORs,
        # computed as _step's prefix ANDs: log2(sets) word-wide steps, a tree of that
        # depth per bit)
        prefix = set_any
        dist = 1
        while dist < sets:
            prefix = _named(m, prefix | Cat(Const(0, dist), prefix[: sets - dist]),
                            "set_prefix")
            dist *= 2
        before = Cat(Const(0, 1), prefix[: sets - 1])
        first_hot = _named(m, set_any & ~before, "first_hot")
        above = set_any & before
    else:
        # the pick from the address register: while an entry is pending ro_set is the
        # first set with a pending way (see ro_next below), so the first pending set as
        # a one-hot is ro_set's decode where its set has a pending way, and the pending
        # sets above the first are the others. No prefix OR over the sets (ABC turns
        # one over 250 sets into a chain of about 30 gates; generic depth 56 at 1M),
        # the same pick every cycle (pending = 0: no set, as the prefix gives).
        ro_hot = _one_hot(m, p.ro_set, "ro_hot")[:sets]
        first_hot = _named(m, set_any & ro_hot, "first_hot")
        above = set_any & ~ro_hot
    # each set's lowest pending way (lowest_one of its ways' bits), all sets at once:
    # way_first[wy] (a bit per set) = way wy pending and no lower way pending
    way_first = [_named(m, pend_way[wy] & ~_or_all(pend_way[:wy]) if wy else pend_way[0],
                        f"way_first{wy}") for wy in range(ways)]  # fmt: skip
    first_way = _named(m, Cat(*[(first_hot & way_first[wy]).any() for wy in range(ways)]),
                       "first_way")  # fmt: skip
    space = Signal()
    m.d.comb += space.eq(fifo.level + ro_inflight < fifo.depth)
    m.d.comb += p.ro_issue.eq(any_set & space & ~p.after_boundary)
    # (first_hot implies any_set: the clear does not wait for the 100-bit OR)
    go = _named(m, space & ~p.after_boundary, "ro_go")
    m.d.comb += p.ro_clear.eq(Cat(*[Mux(go, first_hot & way_first[wy], 0) for wy in range(ways)]))
    # ro_set next cycle = the first pending set of pending's next state (the encoded
    # first set of ``pending`` each cycle, the same function as a tree on the flops, but
    # registered, so that the memories' read address comes from a flop):
    # * after the boundary: the new pending bits (E's set from e_fp, the other sets from
    #   their valid & ~repl), the first set of their per-set ORs;
    # * a pick cleared (go): the same set if another of its ways is pending, else the
    #   first pending set above it (the sets with a pending set below them);
    # * else pending does not change: ro_set holds.
    cand_any = _or_all([_way_slice(c, p.valid & ~p.repl, wy) for wy in range(ways)])
    fp_any = p.e["fp"].any()
    if p.component.readout_pick == "prefix":
        new_any = _named(m, (p.sel_set & Mux(fp_any, _ones(sets), 0)) | (~p.sel_set & cand_any),
                         "ro_new_any")
        _, first_new = _first_set(m, new_any, sets)
    else:
        # the same set, with E's set apart: the tree on the flops' candidates outside
        # it (no e_fp in it: the route of fp_any to every set's bit was the 1M
        # configuration's critical path on the ECP5, e_fp -> ro_set), and E's set when
        # its candidates are pending and no candidate set lies below it
        old_any = _named(m, ~p.sel_set & cand_any, "ro_old_any")
        old_any_any, first_old = _first_set(m, old_any, sets)
        below = Cat(*[p.e["set"] > s for s in range(sets)])  # set s below E's set
        below_any = _named(m, (old_any & below).any(), "ro_old_below")
        e_first = _named(m, p.e["valid"] & fp_any & ~below_any, "ro_e_first")
        first_new = Mux(e_first, p.e["set"], first_old[:set_bits])
    above_any, second = _first_set(m, _named(m, above, "set_after_first"), sets)
    if ways > 1:
        rest_any = _or_all([pend_way[wy] & ~way_first[wy] for wy in range(1, ways)])
        keep = _named(m, (first_hot & rest_any).any(), "ro_keep")
    else:
        keep = Const(0, 1)
    if p.component.readout_pick == "address":
        # ro_any next cycle = pending's next state != 0, as ro_set's cases: after the
        # boundary, a candidate outside E's set or E's set's candidates (after_boundary
        # implies e_valid); a pick cleared (go): another way of its set or a pending set
        # above it (ro_set is the first pending set: go with nothing pending clears
        # nothing, and keep = above = 0 then); else pending, hence ro_any, holds
        m.d.sync += any_set.eq(Mux(p.after_boundary, old_any_any | fp_any,
                                   Mux(go, keep | above_any, any_set)))
    ro_next = Signal(set_bits, name="ro_set_next")
    m.d.comb += ro_next.eq(Mux(p.after_boundary, first_new[:set_bits],
                               Mux(go & ~keep, second[:set_bits], p.ro_set)))
    m.d.sync += p.ro_set.eq(ro_next)
    m.d.sync += ro_inflight.eq(p.ro_issue)
    with m.If(p.ro_issue):
        m.d.sync += ro_way.eq(_forwarded(Const(0, len(ro_way)),
                                        [(first_way[wy], Const(wy, len(ro_way)))
                                         for wy in range(ways)]))  # fmt: skip
    ro_key = _tree_mux([p.tag_ro[wy].data for wy in range(ways)], ro_way)
    ro_count = _tree_mux([Mux(ro_parity, p.cnt_ro[1][wy].data, p.cnt_ro[0][wy].data)
                          for wy in range(ways)], ro_way)  # fmt: skip
    marker = Signal()
    m.d.comb += marker.eq(ro_end & ~any_set & ~ro_inflight & space & ~p.after_boundary)
    m.d.comb += [
        fifo.w_en.eq(ro_inflight | marker),
        fifo.w_data.eq(Mux(ro_inflight, Cat(ro_key, ro_count, Const(0, 1)),
                           Const(1 << (kb + w), kb + w + 1))),
    ]
    with m.If(marker):
        m.d.sync += ro_end.eq(0)
    with m.If(p.boundary):
        m.d.sync += [ro_end.eq(1), ro_parity.eq(p.d["epoch"][0])]
    m.d.comb += [
        p.component.records.valid.eq(fifo.r_rdy),
        p.component.records.payload.as_value().eq(fifo.r_data),
        fifo.r_en.eq(p.component.records.ready),
    ]
    in_flight_last = (p.a["valid"] & p.a["last"]) | (p.b["valid"] & p.b["last"]) \
        | (p.c_["valid"] & p.c_["last"]) | (p.d["valid"] & p.d["last"])
    pending_any = p.pending.any() if p.component.readout_pick == "prefix" else any_set
    m.d.comb += p.busy.eq(pending_any | ro_inflight | ro_end | in_flight_last)
