"""The multi-hash profiler with a set-associative accumulator in block RAM, pipelined.

Elaboration of :class:`hwprof.rtl.multihash.MultiHash` for ``ways > 0`` (the
rules are those of :mod:`hwprof.golden.multihash` with the same ``ways``). Five
stages, one tuple per cycle, the pipeline never stops once a tuple is accepted:

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
the OR of every pending bit (1,000 at 1M: the OR -> marker -> FIFO ``level``
enable was that configuration's ECP5 critical path, 55.2 MHz; 56.4 MHz with the
flop, one placement each: no gain beyond placement noise, the critical path then
the ``ro_set`` loop through the 250-set tree, docs/fpga.md). The prefix pick
(up to 32 sets, the defaults) keeps the OR: its Verilog is unchanged. The same
records on the same cycles.

Stalls (``tuples.ready`` low), from registers only: the accepted tuple would be
the last of its interval while the previous readout is incomplete, or the
readout is incomplete and the tuple's position in its interval is at least
``T - 1`` (only such a tuple can be promoted: the counters start at 0, so no
allocation can overwrite the tag of an entry not yet read out); both facts are
flags registered with the position (``at_last``, ``past_thr``). With an
always-ready consumer there is no stall when ``threshold >= candidates + 7``
(the readout of ``k`` candidates is done ``k + 6`` cycles after the last tuple
was accepted) and ``interval_length >= accumulator + 7``.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.memory import Memory

from .hashing import Hash, rom_switch
from .multihash_config import RuntimeConfig
from .select import victim

__all__ = ["elaborate_set_associative", "flag_bit", "LATENCY", "PREFIX_PICK_SETS"]

#: cycles from the accept of a tuple to its block RAM writes (stage E)
LATENCY = 4
#: the readout's pick by a prefix OR over the sets up to this many sets (the defaults'
#: 25), from the set address register above (``MultiHash(readout_pick=...)``)
PREFIX_PICK_SETS = 32
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


def elaborate_set_associative(component):
    c = component.config
    m = Module()
    n, z, w, kb, ib = c.tables, c.table_size, c.counter_bits, c.key_bits, c.index_bits
    ways, sets, entries = c.ways, c.sets, c.accumulator
    set_bits = max(1, (sets - 1).bit_length())
    xbits = c.set_source_bits
    bypass = component.bypass

    def stage(name, fields):
        return {k: Signal(v if isinstance(v, int) else v, name=f"{name}_{k}")
                for k, v in fields.items()}  # fmt: skip

    # --- stage A: accept and hash -------------------------------------------------------
    cfg = RuntimeConfig(m, component, w)
    interval, threshold = cfg.interval, cfg.threshold
    position = Signal(w)
    epoch = Signal(2)

    busy = Signal()  # a readout (or a boundary on its way to D) is incomplete
    stall = Signal()
    accept = Signal()
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
        stall.eq(busy & (last_in | past_thr)),
        self_ready(component).eq(~stall),
        accept.eq(component.tuples.valid & ~stall),
    ]
    key_in = Signal(kb)
    m.d.comb += key_in.eq(component.tuples.payload.as_value())

    fields = {"valid": 1, "key": kb, "last": 1, "epoch": 2, "thr1": w,
              **{f"idx{i}": ib for i in range(n)}}  # fmt: skip
    a = stage("a", fields)
    for i in range(n):
        m.submodules[f"hash{i}"] = h = Hash(ib, kb, c.hash_seed + i, c.pc_bits, rom="switch")
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
    cfg.apply(m, accept & last_in)

    # --- stage B: set, block RAM reads, equalities ----------------------------------------
    x = Signal(xbits)
    m.d.comb += x.eq(Cat(*[a[f"idx{i}"] for i in range(n)])[:xbits])
    b = stage("b", fields | {"set": set_bits})
    c_ = stage("c", fields | {"set": set_bits})
    d = stage("d", fields | {"set": set_bits})
    for k in fields:
        m.d.sync += [b[k].eq(a[k]), c_[k].eq(b[k]), d[k].eq(c_[k])]
    # (x * sets) >> xbits as constant logic (a ROM of 2**xbits entries: no adder chain)
    set_rom = [(v * sets) >> xbits for v in range(1 << xbits)]
    set_of = rom_switch(m, set_rom, x, "set_rom", width=set_bits) if sets > 1 else 0
    m.d.sync += [b["set"].eq(set_of), c_["set"].eq(b["set"]),
                 d["set"].eq(c_["set"])]  # fmt: skip

    # E (the write stage) and two history registers: the three writes a read misses
    efields = {"valid": 1, "epoch": 2, "set": set_bits, "key": kb, "cwrite": 1, "awrite": 1,
               "alloc": 1, "way": max(1, (ways - 1).bit_length()), "acount": w,
               **{f"idx{i}": ib for i in range(n)}, **{f"cval{i}": w for i in range(n)}}
    e = stage("e", efields | {"boundary": 1, "fv": ways, "fr": ways, "ff": ways, "fp": ways,
                              "sethot": max(1, sets)})
    hist = [e] + [stage(f"h{j}", efields) for j in (1, 2)]
    for j in (1, 2):
        for k in efields:
            m.d.sync += hist[j][k].eq(hist[j - 1][k])

    # equalities of the tuple in B with the three tuples ahead (in C, D, E now: they are
    # E, h1, h2 when this tuple is in D)
    ahead = [c_, d, e]
    b_eq = {}
    for j, other in enumerate(ahead, start=1):
        b_eq[f"key{j}"] = b["key"] == other["key"]
        b_eq[f"set{j}"] = b["set"] == other["set"]
        b_eq[f"ep{j}"] = b["epoch"] == other["epoch"]
        for i in range(n):
            b_eq[f"idx{j}_{i}"] = b[f"idx{i}"] == other[f"idx{i}"]
    c_eq = {k: Signal(name=f"c_eq_{k}") for k in b_eq}
    for k, v in b_eq.items():
        m.d.sync += c_eq[k].eq(v)
    d_eq_key1 = Signal(name="d_eq_key1")  # (D's other selects are combined in D, see there)
    m.d.sync += d_eq_key1.eq(c_eq["key1"])

    counter_reads, counter_writes, counter_valid = [], [], []
    for i in range(n):
        m.submodules[f"table{i}"] = mem = Memory(shape=w, depth=z, init=[])
        rp = mem.read_port(domain="sync")
        wp = mem.write_port()
        m.d.comb += rp.addr.eq(b[f"idx{i}"])
        counter_reads.append(rp)
        counter_writes.append(wp)
        counter_valid.append(Signal(z, name=f"counter_valid{i}"))

    tag_read, tag_ro, tag_write = [], [], []
    cnt_read, cnt_ro, cnt_write = [[], []], [[], []], [[], []]
    # the readout's set address: a register, the set of the lowest pending entry (computed
    # the cycle before from that cycle's state, see the readout)
    ro_set = Signal(set_bits, init=_first_set_of_zero(sets), name="ro_set")
    ro_issue = Signal()
    for wy in range(ways):
        m.submodules[f"tags{wy}"] = mem = Memory(shape=kb, depth=max(2, sets), init=[])
        tag_read.append(mem.read_port(domain="sync"))
        tag_ro.append(mem.read_port(domain="sync"))
        tag_write.append(mem.write_port())
        m.d.comb += [tag_read[wy].addr.eq(b["set"]), tag_ro[wy].addr.eq(ro_set),
                     tag_ro[wy].en.eq(ro_issue)]  # fmt: skip
        for p in (0, 1):
            m.submodules[f"counts{p}_{wy}"] = mem = Memory(shape=w, depth=max(2, sets), init=[])
            cnt_read[p].append(mem.read_port(domain="sync"))
            cnt_ro[p].append(mem.read_port(domain="sync"))
            cnt_write[p].append(mem.write_port())
            m.d.comb += [cnt_read[p][wy].addr.eq(b["set"]), cnt_ro[p][wy].addr.eq(ro_set),
                         cnt_ro[p][wy].en.eq(ro_issue)]  # fmt: skip

    # --- stage C: read data and flags into registers -------------------------------------
    # The tuple two ahead (in E now) as C sees it, registered at the end of D for the
    # tuple then in B (``eq`` compares the two; written below, after D): whether it ended
    # the interval, is valid and in this set, is valid and at this counter index. C's
    # selects are then flops of a small fan-out, not ``e_valid`` (which drives every
    # entry's flags and every counter's valid bit).
    # (c_ab2 is then e_valid & e_boundary every cycle: B uses it too, see below)
    c_ab2 = Signal(name="c_ab2")  # e_valid & e_boundary
    c_same2 = Signal(name="c_same2")  # e_valid & e_set == c_set
    c_idx2 = [Signal(name=f"c_idx2_{i}") for i in range(n)]  # e_valid & e_idx_i == c_idx_i
    # a counter's valid bit with stage E's updates applied (the flops are written in E,
    # see there), at this tuple's index. The bit is selected from the flops in B, on B's
    # index register, with the update of the tuple then in E (three ahead) applied:
    # c_counter_valid is the flop's value when this tuple is in C; C applies the update
    # of the tuple in E then (two ahead)
    e_vcw = Signal(name="e_vcw")  # e_valid & e_cwrite (B's copy, written in D)
    c_cvbit = [Signal(name=f"c_counter_valid{i}") for i in range(n)]
    counter_valid_n_at_c = []
    for i in range(n):
        # a bit select: the index's 32-bit row by a mux tree, then the bit (a 2:1 mux
        # tree in gates, as a bit select of the whole vector after techmap; a Verilator
        # model shifts a whole wide vector for the latter, all 16 words, every cycle)
        idx = b[f"idx{i}"]
        row = _tree_mux([counter_valid[i][r : min(r + 32, z)] for r in range(0, z, 32)],
                        idx[5:])
        flop = row.bit_select(idx[:5], 1)
        m.d.sync += c_cvbit[i].eq(~c_ab2 & (flop | (e_vcw & b_eq[f"idx3_{i}"])))
        counter_valid_n_at_c.append(~c_ab2 & (c_cvbit[i] | (c_idx2[i] & e["cwrite"])))
    # the entries' flags as vectors, way-major: entry (set s, way wy) is bit
    # ``wy * sets + s`` (:func:`flag_bit`), so that a way's flags of every set are one
    # slice and the per-entry logic below is a few word-wide operations
    valid = Signal(entries, name="valid")
    repl = Signal(entries, name="repl")
    fresh = Signal(entries, name="fresh")
    pending = Signal(entries, name="pending")
    # the flags' next state: the flops with stage E's update applied (see stage E)
    valid_n = Signal(entries, name="valid_n")
    repl_n = Signal(entries, name="repl_n")
    fresh_n = Signal(entries, name="fresh_n")

    def way_slice(flags, wy):
        return flags[wy * sets : (wy + 1) * sets]

    def set_flags(flags, index):
        """The ways' flags of set ``index`` (sets beyond the last read as the last, as
        :func:`_tree_mux`): a bit select per way, a 2:1 mux tree after techmap."""
        pad = (1 << len(index)) - sets
        out = []
        for wy in range(ways):
            row = way_slice(flags, wy)
            row = Cat(row, Mux(row[-1], _ones(pad), 0)) if pad > 0 else row
            out.append(row.bit_select(index, 1))
        return Cat(*out)

    # counter i as read, flushed, with the writes of the tuples two and three ahead
    # forwarded here (they are in E and h1 now: their values are registers), so that D
    # forwards only the tuple one ahead
    d_base = [Signal(w, name=f"d_counter_base{i}") for i in range(n)]
    d_tageq = Signal(ways, name="d_tageq")  # way wy's tag == this tuple's key (but E's write)
    d_acnt = [Signal(w, name=f"d_count{wy}") for wy in range(ways)]
    d_fv, d_fr, d_ff = Signal(ways), Signal(ways), Signal(ways)
    d_sethot = Signal(sets)
    c_after_boundary = d["valid"] & d["last"]  # in D: e_valid & e_boundary
    for i in range(n):
        fresh_c = counter_valid_n_at_c[i] & ~c_after_boundary
        conds = [c_idx2[i] & e["cwrite"] & c_eq["ep2"],
                 hist[1]["valid"] & hist[1]["cwrite"] & c_eq[f"idx3_{i}"] & c_eq["ep3"]]
        vals = [hist[j - 2][f"cval{i}"] for j in (2, 3)]
        sources = list(zip(conds, vals, strict=True)) if bypass else []
        m.d.sync += d_base[i].eq(_forwarded(Mux(fresh_c, counter_reads[i].data, 0), sources))
    parity = c_["epoch"][0]
    # per way likewise: the tag match and the entry count's writes of the tuples two and
    # three ahead forwarded here (d_fwd_any: one of them wrote the count, d_fwd_count)
    d_fwd_any = Signal(ways)
    d_fwd_count = [Signal(w, name=f"d_fwd_count{wy}") for wy in range(ways)]
    for wy in range(ways):
        same = [c_same2, hist[1]["valid"] & c_eq["set3"]]  # (j = 2, 3)
        tag_src = [(same[j - 2] & hist[j - 2]["alloc"] & (hist[j - 2]["way"] == wy),
                    c_eq[f"key{j}"]) for j in (2, 3)]
        cnt_src = [(same[j - 2] & hist[j - 2]["awrite"] & (hist[j - 2]["way"] == wy)
                    & c_eq[f"ep{j}"], hist[j - 2]["acount"]) for j in (2, 3)]  # fmt: skip
        m.d.sync += [
            d_tageq[wy].eq(_forwarded(tag_read[wy].data == c_["key"], tag_src)),
            d_acnt[wy].eq(Mux(parity, cnt_read[1][wy].data, cnt_read[0][wy].data)),
            d_fwd_any[wy].eq(cnt_src[0][0] | cnt_src[1][0]),
            d_fwd_count[wy].eq(_forwarded(cnt_src[1][1], cnt_src[:1])),
        ]
    def transform(fv, fr, ff):
        """The boundary's effect on a set's flags (P1/P0 of sec. 5.4.1)."""
        if c.retain:
            return fv & ~fr, Const(-1, ways), Const(0, ways)
        return Const(0, ways), Const(-1, ways), Const(0, ways)

    # the set's flags with stage E's update applied (the flops' next state at this set,
    # from the flops and C's selects: the set's flags the tuple in E registered when it
    # is in this set, else the boundary transform when it ended the interval), then the
    # boundary transform when the tuple one ahead (in D now, in E when this one is in D)
    # ends the interval
    f_v, f_r, f_f = (set_flags(f, c_["set"]) for f in (valid, repl, fresh))
    e_tv, e_tr, e_tf = transform(f_v, f_r, f_f)
    c_fv = Mux(c_same2, e["fv"], Mux(c_ab2, e_tv, f_v))
    c_fr = Mux(c_same2, e["fr"], Mux(c_ab2, e_tr, f_r))
    c_ff = Mux(c_same2, e["ff"], Mux(c_ab2, e_tf, f_f))
    c_tv, c_tr, c_tf = transform(c_fv, c_fr, c_ff)
    m.d.sync += [
        d_fv.eq(Mux(c_after_boundary, c_tv, c_fv)),
        d_fr.eq(Mux(c_after_boundary, c_tr, c_fr)),
        d_ff.eq(Mux(c_after_boundary, c_tf, c_ff)),
        d_sethot.eq(_decode(m, c_["set"], sets, "sethot_decode")),
    ]

    # --- stage D: forward, update, decide --------------------------------------------------
    after_boundary = e["valid"] & e["boundary"]  # the tuple ahead ended the interval

    # "value >= T - 1" of every candidate value compared in parallel on its register and
    # forwarded by the same selects as the value itself (no compare after a forward mux)
    def at_least(value):
        return ~_less(m, value, d["thr1"])

    e_acount_ge = _named(m, at_least(e["acount"]), "e_acount_ge")  # (one compare, every way)

    thr_zero = d["thr1"] == 0  # 0 >= T - 1

    # The selects of the forwarding of the tuple one ahead, registered: its writes are
    # decided in D, and the equalities of the tuple behind it (in C then) with it are
    # registers, so the cycle before their use the two are combined into one flop per
    # select (written at the end of this stage, below). The E registers themselves
    # (``e_valid`` above all: it drives the flags of every entry and every counter's
    # valid bit) are then not in D's logic: the selects are flops of a small fan-out.
    fwd_sel = [Signal(name=f"d_fwd1_{i}") for i in range(n)]  # e_valid & e_cwrite & idx & ep
    same1 = Signal(name="d_same1")  # e_valid & same set
    mine_alloc = Signal(ways, name="d_mine_alloc")  # ... & e_way == wy & e_alloc
    mine_aw = Signal(ways, name="d_mine_aw")  # ... & e_way == wy & e_awrite & same epoch

    old, old_ge = [], []
    for i in range(n):
        v = Signal(w, name=f"counter{i}")
        v_ge = Signal(name=f"counter_ge{i}")  # v >= T - 1
        # the tuple one ahead (the others were forwarded into d_base in C)
        sources = [(fwd_sel[i], e[f"cval{i}"])] if bypass else []
        sources_ge = [(cd, at_least(val)) for cd, val in sources]
        m.d.comb += [v.eq(_forwarded(d_base[i], sources)),
                     v_ge.eq(_forwarded(at_least(d_base[i]), sources_ge))]  # fmt: skip
        old.append(v)
        old_ge.append(v_ge)

    fv, fr, ff = Signal(ways), Signal(ways), Signal(ways)
    m.d.comb += [
        fv.eq(Mux(same1, e["fv"], d_fv)),
        fr.eq(Mux(same1, e["fr"], d_fr)),
        ff.eq(Mux(same1, e["ff"], d_ff)),
    ]

    match = Signal(ways)
    counts1, counts_ge = [], []
    e_acount1 = _named(m, _step(m, e["acount"], True, "e_acount_step"), "e_acount_plus")
    for wy in range(ways):
        # the tuple one ahead (in E); the two before it were forwarded in C
        m.d.comb += match[wy].eq(Mux(mine_alloc[wy], d_eq_key1, d_tageq[wy]))
        cnt = Signal(w, name=f"entry_count_plus{wy}")
        cnt_src = [(mine_aw[wy], e["acount"]),
                   (d_fwd_any[wy], d_fwd_count[wy])]  # fmt: skip
        # cnt + 1 (a hit's new count): each candidate incremented on its register
        fwd1 = _step(m, d_fwd_count[wy], True, "fwd_step")
        m.d.comb += cnt.eq(_forwarded(Mux(ff[wy], _step(m, d_acnt[wy], True, "acnt_step"), 1),
                                      [(cnt_src[0][0], e_acount1), (cnt_src[1][0], fwd1)]))
        cnt_ge = Signal(name=f"entry_count_ge{wy}")  # cnt >= T - 1
        m.d.comb += cnt_ge.eq(_forwarded(Mux(ff[wy], at_least(d_acnt[wy]), thr_zero),
                                        [(cnt_src[0][0], e_acount_ge),
                                         (cnt_src[1][0], at_least(d_fwd_count[wy]))]))
        counts1.append(cnt)
        counts_ge.append(cnt_ge)

    hits = Signal(ways)
    m.d.comb += hits.eq(fv & match)
    hit = Signal()
    m.d.comb += hit.eq(d["valid"] & hits.any())
    hit_count1 = Signal(w)  # the hit entry's count + 1
    m.d.comb += hit_count1.eq(_forwarded(Const(1, w), [(hits[wy], counts1[wy])
                                                      for wy in range(ways)]))  # fmt: skip
    hit_ge = Signal()  # hit_count >= T - 1
    m.d.comb += hit_ge.eq(_forwarded(thr_zero, [(hits[wy], counts_ge[wy])
                                               for wy in range(ways)]))  # fmt: skip
    requalify = Signal()
    m.d.comb += requalify.eq((hits & fr).any() & hit_ge)

    promote = Signal()  # min(c_i) + 1 >= T, as every c_i >= T - 1 (parallel compares)
    m.d.comb += promote.eq(d["valid"] & ~hit
                           & Cat(*old_ge).all())  # fmt: skip
    # c_i is a minimum iff c_i <= c_j for every j (parallel compares, no minimum tree);
    # the minimum + 1 (a new entry's count) is c_j + 1 of the first minimal c_j
    # one compare per pair i < j: c_i <= c_j is lt | eq, c_j <= c_i is ~lt. Like the
    # ``>= T - 1`` compares, on the candidates' registers (counter i is the value of C,
    # or the write of the tuple one ahead when fwd_sel[i]): every pair of candidates
    # compared in parallel, the result bits selected by the two counters' selects (no
    # compare after a forward mux); likewise each counter's ``+ 1``
    cands = [[d_base[i], e[f"cval{i}"]] if bypass else [d_base[i]] for i in range(n)]

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
    low1 = Signal(w)  # min(c_i) + 1: an AND-OR (every minimal c_i has the same value)
    m.d.comb += low1.eq(_or_all([Mux(is_min[i], plus[i], 0) for i in range(n)]))
    new = []
    for i in range(n):
        new.append(Mux(is_min[i], plus[i], old[i]) if c.conservative else plus[i])

    target = victim(m, fv, fr)
    alloc = Signal()
    m.d.comb += alloc.eq(promote & target.any())
    boundary = Signal()
    m.d.comb += boundary.eq(d["valid"] & d["last"])
    way_of = Signal.like(e["way"])
    onehot = Mux(hit, hits, target)
    m.d.comb += way_of.eq(_forwarded(Const(0, len(way_of)),
                                    [(onehot[wy], Const(wy, len(way_of)))
                                     for wy in range(ways)]))  # fmt: skip

    # the set's flags after this tuple (and after the boundary transform)
    nv = Signal(ways)
    nr = Signal(ways)
    nf = Signal(ways)
    alloc_w = Mux(alloc, target, 0)
    m.d.comb += [
        nv.eq(fv | alloc_w),
        nr.eq((fr & ~alloc_w) & ~Mux(hit & requalify, hits, 0)),
        nf.eq(ff | alloc_w | Mux(hit, hits, 0)),
    ]
    bv, br, bf = transform(nv, nr, nf)

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
        e["acount"].eq(Mux(hit, hit_count1, low1)),
        e["boundary"].eq(d["last"]),
        e["fv"].eq(Mux(boundary, bv, nv)),
        e["fr"].eq(Mux(boundary, br, nr)),
        e["ff"].eq(Mux(boundary, bf, nf)),
        e["fp"].eq(nv & ~nr),  # the set's candidates (pending bits) when it ends the interval
        e["sethot"].eq(d_sethot),
    ]
    for i in range(n):
        m.d.sync += [e[f"idx{i}"].eq(d[f"idx{i}"]),
                     e[f"cval{i}"].eq(Mux(zero_them, 0, new[i]))]  # fmt: skip
    # the forwarding selects of the tuple behind (in C now: c_eq compares it with this one)
    mine_set = d["valid"] & c_eq["set1"]
    m.d.sync += [same1.eq(mine_set),
                 mine_alloc.eq(Cat(*[mine_set & alloc & (way_of == wy) for wy in range(ways)])),
                 mine_aw.eq(Cat(*[mine_set & (hit | alloc) & (way_of == wy) & c_eq["ep1"]
                                  for wy in range(ways)]))]  # fmt: skip
    for i in range(n):
        m.d.sync += fwd_sel[i].eq(d["valid"] & ~hit & c_eq[f"idx1_{i}"] & c_eq["ep1"])
    # C's selects of the tuple in B (two behind this one: eq compares them)
    m.d.sync += [c_ab2.eq(boundary), c_same2.eq(d["valid"] & b_eq["set2"]),
                 e_vcw.eq(d["valid"] & ~hit)]  # fmt: skip
    for i in range(n):
        m.d.sync += c_idx2[i].eq(d["valid"] & b_eq[f"idx2_{i}"])

    ro_clear = Signal(entries)

    # --- stage E: block RAM writes, the entry flags -----------------------------------------
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
    sel_set = _named(m, Mux(e["valid"], e["sethot"][:sets], 0), "flag_sel_set")
    sel = _named(m, Cat(*[sel_set] * ways), "flag_sel")

    def spread(bits):
        return Cat(*[Mux(bits[wy], _ones(sets), 0) for wy in range(ways)])

    def pick(new, other):
        return (sel & spread(new)) | (~sel & other)

    tv = valid & ~repl if c.retain else Const(0, entries)  # the boundary transform
    m.d.comb += [
        valid_n.eq(pick(e["fv"], Mux(after_boundary, tv, valid))),
        repl_n.eq(pick(e["fr"], Mux(after_boundary, _ones(entries), repl))),
        fresh_n.eq(pick(e["ff"], Mux(after_boundary, 0, fresh))),
    ]
    m.d.sync += [valid.eq(valid_n), repl.eq(repl_n), fresh.eq(fresh_n),
                 pending.eq(Mux(after_boundary, pick(e["fp"], valid & ~repl),
                                pending & ~ro_clear))]  # fmt: skip
    # the counters' valid bits: set by a counter write, cleared by the interval's last tuple
    counter_valid_n = [Signal(z, name=f"counter_valid_n{i}") for i in range(n)]
    for i in range(n):
        decode = _one_hot(m, e[f"idx{i}"], f"decode{i}")
        m.d.comb += counter_valid_n[i].eq(Mux(after_boundary, 0, counter_valid[i]
                                              | Mux(e["valid"] & e["cwrite"], decode, 0)))
        m.d.sync += counter_valid[i].eq(counter_valid_n[i])
    for i in range(n):
        m.d.comb += [counter_writes[i].addr.eq(e[f"idx{i}"]),
                     counter_writes[i].data.eq(e[f"cval{i}"]),
                     counter_writes[i].en.eq(e["valid"] & e["cwrite"])]  # fmt: skip
    for wy in range(ways):
        mine = e["valid"] & (e["way"] == wy)
        m.d.comb += [tag_write[wy].addr.eq(e["set"]), tag_write[wy].data.eq(e["key"]),
                     tag_write[wy].en.eq(mine & e["alloc"])]  # fmt: skip
        for p in (0, 1):
            m.d.comb += [cnt_write[p][wy].addr.eq(e["set"]),
                         cnt_write[p][wy].data.eq(e["acount"]),
                         cnt_write[p][wy].en.eq(mine & e["awrite"] & (e["epoch"][0] == p))]

    # --- readout -----------------------------------------------------------------------------
    m.submodules.fifo = fifo = SyncFIFO(width=kb + w + 1, depth=4)
    ro_parity = Signal()
    ro_end = Signal()  # the end marker is still to be queued
    ro_inflight = Signal()  # a record read last cycle, queued this cycle
    ro_way = Signal.like(e["way"])
    pend_way = [way_slice(pending, wy) for wy in range(ways)]  # a way's bit of every set
    set_any = _named(m, _or_all(pend_way), "set_any")
    # (the tree's OR, not the prefix's last bit: ABC turns the prefix into a chain when
    # it is only on short paths; any_set feeds busy -> stall)
    if component.readout_pick == "prefix":
        any_set, _ = _first_set(m, set_any, sets)
    else:
        # "anything pending" as a flop (``ro_any``, equal to ``pending != 0`` every
        # cycle), its next state computed below from the same facts as ro_set's: the
        # OR of 1,000 pending bits (at 1M) fed the end marker -> the FIFO's write
        # enable and busy -> the stall; from the flop neither waits for it
        any_set = Signal(name="ro_any")
    if component.readout_pick == "prefix":
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
        ro_hot = _one_hot(m, ro_set, "ro_hot")[:sets]
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
    m.d.comb += ro_issue.eq(any_set & space & ~after_boundary)
    # (first_hot implies any_set: the clear does not wait for the 100-bit OR)
    go = _named(m, space & ~after_boundary, "ro_go")
    m.d.comb += ro_clear.eq(Cat(*[Mux(go, first_hot & way_first[wy], 0) for wy in range(ways)]))
    # ro_set next cycle = the first pending set of pending's next state (the encoded
    # first set of ``pending`` each cycle, the same function as a tree on the flops, but
    # registered, so that the memories' read address comes from a flop):
    # * after the boundary: the new pending bits (E's set from e_fp, the other sets from
    #   their valid & ~repl), the first set of their per-set ORs;
    # * a pick cleared (go): the same set if another of its ways is pending, else the
    #   first pending set above it (the sets with a pending set below them);
    # * else pending does not change: ro_set holds.
    cand_any = _or_all([way_slice(valid & ~repl, wy) for wy in range(ways)])
    fp_any = e["fp"].any()
    if component.readout_pick == "prefix":
        new_any = _named(m, (sel_set & Mux(fp_any, _ones(sets), 0)) | (~sel_set & cand_any),
                         "ro_new_any")
        _, first_new = _first_set(m, new_any, sets)
    else:
        # the same set, with E's set apart: the tree on the flops' candidates outside
        # it (no e_fp in it: the route of fp_any to every set's bit was the 1M
        # configuration's critical path on the ECP5, e_fp -> ro_set), and E's set when
        # its candidates are pending and no candidate set lies below it
        old_any = _named(m, ~sel_set & cand_any, "ro_old_any")
        old_any_any, first_old = _first_set(m, old_any, sets)
        below = Cat(*[e["set"] > s for s in range(sets)])  # set s below E's set
        below_any = _named(m, (old_any & below).any(), "ro_old_below")
        e_first = _named(m, e["valid"] & fp_any & ~below_any, "ro_e_first")
        first_new = Mux(e_first, e["set"], first_old[:set_bits])
    above_any, second = _first_set(m, _named(m, above, "set_after_first"), sets)
    if ways > 1:
        rest_any = _or_all([pend_way[wy] & ~way_first[wy] for wy in range(1, ways)])
        keep = _named(m, (first_hot & rest_any).any(), "ro_keep")
    else:
        keep = Const(0, 1)
    if component.readout_pick == "address":
        # ro_any next cycle = pending's next state != 0, as ro_set's cases: after the
        # boundary, a candidate outside E's set or E's set's candidates (after_boundary
        # implies e_valid); a pick cleared (go): another way of its set or a pending set
        # above it (ro_set is the first pending set: go with nothing pending clears
        # nothing, and keep = above = 0 then); else pending, hence ro_any, holds
        m.d.sync += any_set.eq(Mux(after_boundary, old_any_any | fp_any,
                                   Mux(go, keep | above_any, any_set)))
    ro_next = Signal(set_bits, name="ro_set_next")
    m.d.comb += ro_next.eq(Mux(after_boundary, first_new[:set_bits],
                               Mux(go & ~keep, second[:set_bits], ro_set)))
    m.d.sync += ro_set.eq(ro_next)
    m.d.sync += ro_inflight.eq(ro_issue)
    with m.If(ro_issue):
        m.d.sync += ro_way.eq(_forwarded(Const(0, len(ro_way)),
                                        [(first_way[wy], Const(wy, len(ro_way)))
                                         for wy in range(ways)]))  # fmt: skip
    ro_key = _tree_mux([tag_ro[wy].data for wy in range(ways)], ro_way)
    ro_count = _tree_mux([Mux(ro_parity, cnt_ro[1][wy].data, cnt_ro[0][wy].data)
                          for wy in range(ways)], ro_way)  # fmt: skip
    marker = Signal()
    m.d.comb += marker.eq(ro_end & ~any_set & ~ro_inflight & space & ~after_boundary)
    m.d.comb += [
        fifo.w_en.eq(ro_inflight | marker),
        fifo.w_data.eq(Mux(ro_inflight, Cat(ro_key, ro_count, Const(0, 1)),
                           Const(1 << (kb + w), kb + w + 1))),
    ]
    with m.If(marker):
        m.d.sync += ro_end.eq(0)
    with m.If(boundary):
        m.d.sync += [ro_end.eq(1), ro_parity.eq(d["epoch"][0])]
    m.d.comb += [
        component.records.valid.eq(fifo.r_rdy),
        component.records.payload.as_value().eq(fifo.r_data),
        fifo.r_en.eq(component.records.ready),
    ]
    in_flight_last = (a["valid"] & a["last"]) | (b["valid"] & b["last"]) \
        | (c_["valid"] & c_["last"]) | (d["valid"] & d["last"])
    pending_any = pending.any() if component.readout_pick == "prefix" else any_set
    m.d.comb += busy.eq(pending_any | ro_inflight | ro_end | in_flight_last)
    return m


def self_ready(component):
    return component.tuples.ready
