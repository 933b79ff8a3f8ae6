"""Tagged compressor of Sastry et al., sec. 4 (Figure 6), one tuple per cycle.

Rules: :mod:`hwprof.golden.tagged` (E1-E6, the count-preserving E5/E6, the
set-associative way choice). Structure: the shared hash
(:class:`hwprof.rtl.hashing.Hash`) gives the set index; the partial tag is the
xor-fold of ``pc ^ value``; each way is an ``amaranth.lib.memory.Memory`` of
``sets`` entries ``{valid, tag, hit, miss}`` (``1 + tag_bits + hit_bits +
miss_bits`` bits; Evict = valid with a non-zero miss counter, as in sec. 4.2)
with a read port and a write port. ``latency=1``: in the accept cycle all ways
are read (asynchronously), the way is chosen, the FSM transition computed and
the chosen way written back; a message goes to the one-message output register
(:func:`hwprof.rtl.samplers.output_register`). ``latency=3`` (default): the same
update one stage later, after a synchronous read (block RAM) and a register
stage, with forwarding of the two writes a tuple's read misses; the newer one is
selected last (:meth:`TaggedCompressor._update_late`: every candidate computed
from flops, the forwarding case picking among them), not muxed in front of the
update.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data
from amaranth.lib.memory import Memory

from ..golden.samplers import check_latency
from ..golden.tagged import TaggedConfig
from .hashing import Hash
from .samplers import _Sampler, output_register
from .stream_pipeline import ReadModifyWrite, load_message, message_output

__all__ = ["TaggedCompressor", "entry_layout"]


def entry_layout(tag_bits, hit_bits, miss_bits):
    return data.StructLayout({"valid": 1, "tag": tag_bits, "hit": hit_bits, "miss": miss_bits})


def _at_least(value, k):
    """``value >= k`` for a constant ``k``, as and/or gates from the top bit down (no
    carry chain: yosys maps a ``>=`` to a CCU2C chain on the ECP5)."""
    width = len(value)
    if k <= 0:
        return Const(1)
    if k >= 1 << width:
        return Const(0)
    out = Const(1)  # the bits below the lowest are equal: >= holds
    for i in range(width):
        out = (value[i] & out) if (k >> i) & 1 else (value[i] | out)
    return out


def _sum_at_least(a, b, k):
    """``a + b >= k`` for a narrow ``b``: one constant compare of ``a`` per value of
    ``b`` (no adder, no carry chain)."""
    return Cat(*[(b == v) & _at_least(a, k - v) for v in range(1 << len(b))]).any()


def _priority(bits):
    """One-hot of the lowest set bit of ``bits`` (0 when none), as gates."""
    return Cat(*[bits[i] & ~bits[:i].any() if i else bits[0] for i in range(len(bits))])


def _xor_fold(value, bits):
    out = value[:bits]
    for lo in range(bits, len(value), bits):
        out = out ^ value[lo : lo + bits]
    return out


class TaggedCompressor(_Sampler):
    """Tagged compressor (Figure 6): partial tags, hit and miss counters, E1-E6.

    Parameters
    ----------
    entries, ways, tag_bits, hit_bits, miss_bits : int
        Table geometry (default 2048 entries, 2-way, 2-bit tags, 8-bit hit and
        3-bit miss counters).
    evict_hits : int
        *ShouldEvict* threshold (hits needed to report an Evict entry).
    replace_misses : int
        *ShouldReplace* threshold (misses after which an Evict entry is replaced).
    key_bits, pc_bits, hash_seed : int
        Tuple width, pc field width, table seed of the shared hash.
    latency : int
        3 (default): a three-stage pipeline around synchronous (block RAM) reads
        with a bypass, for timing closure on an FPGA (docs/fpga.md). 1: the
        table is read (asynchronously), updated and written in the accept cycle.
    keep_counts : bool
        ``True`` (the paper's E5/E6). ``False`` builds the mutant that resets
        the counters on E5/E6 instead, for the checker's own test.
    skid : bool
        ``False`` (default): ``tuples.ready = ~messages.valid | messages.ready``,
        combinational from ``messages.ready`` (the integrator's constraint, see
        docs/samplers.md). ``True``: a :class:`~hwprof.rtl.stream_pipeline.SkidBuffer`
        after the output register makes ``tuples.ready`` and ``messages.valid``
        registers; messages come one cycle later.
    bypass : bool
        ``True``. ``False`` builds the mutant of ``latency=3`` without forwarding,
        for the checker's own test.

    Attributes
    ----------
    tuples : In(stream.Signature(key_bits))
    messages : Out(stream.Signature(message_layout(key_bits, hit_bits + 1)))

    Latency: ``latency`` cycles from the tuple's acceptance to its message on
    ``messages`` (1 or 3; one more with ``skid``); one tuple per cycle either way.
    ``tuples.ready = ~messages.valid | messages.ready`` (combinational, as in every
    sampler; with ``skid`` the skid buffer's registered ready stands for
    ``messages.ready``): the whole pipeline stalls only while a message waits.

    Raises
    ------
    TypeError, ValueError
        See :class:`hwprof.golden.tagged.TaggedConfig`.
    """

    @classmethod
    def check_params(cls, entries, ways, tag_bits, hit_bits, miss_bits, evict_hits,
                     replace_misses, key_bits, pc_bits, hash_seed, latency, **options):
        check_latency(latency, (1, 3))
        return TaggedConfig(entries, ways, tag_bits, hit_bits, miss_bits, evict_hits,
                            replace_misses, key_bits, pc_bits, hash_seed)  # fmt: skip

    def __init__(self, entries=2048, ways=2, tag_bits=2, hit_bits=8, miss_bits=3, evict_hits=8,
                 replace_misses=7, key_bits=64, pc_bits=32, hash_seed=1, latency=3, skid=False,
                 *, keep_counts=True, bypass=True):  # fmt: skip
        self.latency = latency
        self.skid = bool(skid)
        self.keep_counts = keep_counts
        self.bypass = bypass
        super().__init__(key_bits, self.config.count_bits)

    def elaborate(self, platform):
        m = Module()
        c = self.config
        layout = entry_layout(c.tag_bits, c.hit_bits, c.miss_bits)
        key = self.tuples.payload
        messages = message_output(m, self)
        m.submodules.hash = h = Hash(c.index_bits, c.key_bits, c.hash_seed, c.pc_bits)
        m.d.comb += h.key.eq(key)
        value_bits = c.key_bits - c.pc_bits
        width = max(c.pc_bits, value_bits)
        mixed = Signal(width)
        m.d.comb += mixed.eq(key[:value_bits] ^ (key[value_bits:] if c.pc_bits else 0))
        tag = Signal(c.tag_bits)
        m.d.comb += tag.eq(_xor_fold(mixed, c.tag_bits))

        mems = []
        for w in range(c.ways):
            m.submodules[f"way{w}"] = mem = Memory(shape=layout, depth=c.sets, init=[])
            mems.append(mem)
        if self.latency == 1:
            # read, update and write back in the accept cycle (asynchronous reads)
            write_ports = [mem.write_port() for mem in mems]
            read_ports = [mem.read_port(domain="comb") for mem in mems]
            for rp, wp in zip(read_ports, write_ports, strict=True):
                m.d.comb += [rp.addr.eq(h.index), wp.addr.eq(h.index)]
            onehot, new, emit, count = self._update(m, [rp.data for rp in read_ports], tag)
            accept = output_register(m, self.tuples, messages, emit, key, count)
            for w, wp in enumerate(write_ports):
                m.d.comb += [wp.en.eq(accept & onehot[w]), wp.data.eq(new)]
            return m

        # latency 3, three stages advancing together (only when the output register is
        # free: ``advance``) around a synchronous (block RAM) read of every way, with
        # the two writes a read misses forwarded (:class:`ReadModifyWrite`). S2: way
        # choice, Figure 6 transition, write back, message.
        advance = Signal()
        m.d.comb += [
            advance.eq(~messages.valid | messages.ready),
            self.tuples.ready.eq(advance),
        ]
        rmw = ReadModifyWrite(m, mems, h.index, advance,
                              {"valid": self.tuples.valid, "key": key, "tag": tag},
                              bypass=self.bypass)  # fmt: skip
        onehot, new, emit, count = self._update_late(m, rmw.words, rmw.last_new,
                                                     rmw.forwarded, rmw.s2["tag"])
        update = rmw.write(onehot, new)
        load_message(m, messages, update, emit, rmw.s2["key"], count)
        return m

    def _choice(self, m, flags, below, name):
        """The way choice: a tag hit, else the lowest empty way, else the lowest Evict
        way, else the smallest hit count (lowest index on a tie). ``flags[w] = (hit,
        empty, evict)`` of way ``w``; ``below(a, b, strict)`` is way ``a``'s hit count
        ``<`` way ``b``'s (``<=`` if not ``strict``). Returns the one-hot way."""
        c = self.config
        hits, empty, evict = (Cat(*[f[i] for f in flags]) for i in range(3))
        smallest = [Signal(name=f"{name}_smallest{w}") for w in range(c.ways)]
        for w in range(c.ways):
            lower = [below(w, o, True) for o in range(w)]  # strictly below earlier ways
            not_higher = [below(w, o, False) for o in range(w + 1, c.ways)]
            cond = 1
            for term in lower + not_higher:
                cond = cond & term
            m.d.comb += smallest[w].eq(cond)
        onehot = Signal(c.ways, name=name)
        m.d.comb += onehot.eq(Mux(hits.any(), hits, Mux(
            empty.any(), _priority(empty), Mux(
                evict.any(), _priority(evict), _priority(Cat(*smallest))))))  # fmt: skip
        return onehot

    @staticmethod
    def _flags(entry, tag):
        """``(tag hit, empty, Evict)`` of one entry for a tuple with ``tag``."""
        return entry.valid & (entry.tag == tag), ~entry.valid, entry.valid & (entry.miss != 0)

    def _update(self, m, entries, tag):
        """Way choice and the Figure 6 transition: ``(onehot way, new entry, emit, count)``."""
        def below(a, b, strict):
            """``entries[a].hit < entries[b].hit`` (``<=`` if not ``strict``)."""
            ha, hb = entries[a].hit, entries[b].hit
            return ha < hb if strict else ha <= hb
        c = self.config
        layout = entry_layout(c.tag_bits, c.hit_bits, c.miss_bits)
        flags = [self._flags(e, tag) for e in entries]
        onehot = self._choice(m, flags, below, "onehot")
        # The transition of every way computed in parallel, as if it were chosen (a
        # chosen way is a tag hit exactly when it hits), then selected by ``onehot``:
        # the way choice and the counter arithmetic are side by side, not in series.
        new = Signal(layout)
        emit = Signal()
        count = Signal(c.hit_bits + 1)
        cur = Signal(layout, name="cur")  # the chosen way's entry (named for hwprof prove)
        for w, e in enumerate(entries):
            new_w, emit_w, count_w = self._transition(m, e, flags[w][0], tag, w)
            with m.If(onehot[w]):
                m.d.comb += [new.eq(new_w), emit.eq(emit_w), count.eq(count_w), cur.eq(e)]
        return onehot, new, emit, count

    def _update_late(self, m, words, last_new, forwarded, tag):
        """:meth:`_update` of ``entries[w] = last_new if forwarded[w] else words[w]``
        (``forwarded`` one-hot or zero) with the select last, not first.

        Every candidate is computed from flops: the transition of each word and of
        ``last_new``, and one way choice per case (no way forwarded, or way ``L``
        forwarded: ``words`` with ``last_new`` in way ``L``), its hit-count compares
        between the candidates themselves. ``forwarded`` then picks the case's choice
        and the chosen transition. Same results as :meth:`_update` of the muxed
        entries; the forwarding mux is no longer in front of the compares.
        """
        c = self.config
        k = c.ways
        layout = entry_layout(c.tag_bits, c.hit_bits, c.miss_bits)
        sources = [*words, last_new]  # index k: the previous write
        flags = [self._flags(e, tag) for e in sources]
        trans = [self._transition(m, e, flags[i][0], tag, i if i < k else "n")
                 for i, e in enumerate(sources)]  # fmt: skip
        compares = {}

        def compare(i, j, strict):
            if (i, j, strict) not in compares:
                hi, hj = sources[i].hit, sources[j].hit
                out = Signal(name=f"below_{i}_{j}_{'lt' if strict else 'le'}")
                m.d.comb += out.eq(hi < hj if strict else hi <= hj)
                compares[i, j, strict] = out
            return compares[i, j, strict]

        choices = {}
        for case in [None, *range(k)]:
            idx = [k if w == case else w for w in range(k)]
            choices[case] = self._choice(
                m, [flags[i] for i in idx],
                lambda a, b, strict, idx=idx: compare(idx[a], idx[b], strict),
                f"onehot_{'none' if case is None else f'fwd{case}'}")  # fmt: skip
        none = ~forwarded.any()
        pick_last = Signal()  # the chosen way is the forwarded one: ``last_new``'s transition
        m.d.comb += pick_last.eq(Cat(*[forwarded[w] & choices[w][w] for w in range(k)]).any())
        pick = Signal(k)  # the chosen way's word, not forwarded
        for w in range(k):
            m.d.comb += pick[w].eq(Cat(none & choices[None][w], *[
                forwarded[f] & choices[f][w] for f in range(k) if f != w]).any())
        onehot = Signal(k)
        m.d.comb += onehot.eq(pick | (forwarded & pick_last.replicate(k)))
        new = Signal(layout)
        emit = Signal()
        count = Signal(c.hit_bits + 1)
        for w in range(k):
            with m.If(pick[w]):
                m.d.comb += [new.eq(trans[w][0]), emit.eq(trans[w][1]), count.eq(trans[w][2])]
        with m.If(pick_last):
            m.d.comb += [new.eq(trans[k][0]), emit.eq(trans[k][1]), count.eq(trans[k][2])]
        return onehot, new, emit, count

    def _transition(self, m, cur, is_hit, tag, w):
        """Figure 6 for entry ``cur`` of way ``w``: ``(new entry, emit, count)``.

        The thresholds are compared on the stored counters (``hit + 1 == H`` as
        ``hit == H - 1``, and so on), so no compare waits for an increment.
        """
        c = self.config
        layout = entry_layout(c.tag_bits, c.hit_bits, c.miss_bits)
        hit_max = c.hit_max
        plus = Signal(c.hit_bits + 1, name=f"plus{w}")
        m.d.comb += plus.eq(cur.hit + 1)
        miss_plus = Signal(c.miss_bits + 1, name=f"miss_plus{w}")
        m.d.comb += miss_plus.eq(cur.miss + 1)
        total = Signal(c.hit_bits + 1, name=f"total{w}")
        m.d.comb += total.eq(cur.hit + miss_plus)
        saturates = cur.hit == hit_max - 1  # plus == hit_max
        should_evict = _at_least(cur.hit, c.evict_hits - 1) | saturates  # plus >= evict_hits
        should_replace = _at_least(cur.miss, c.replace_misses - 1)  # miss_plus >= replace_misses
        total_max = _sum_at_least(cur.hit, cur.miss, hit_max - 1)  # total >= hit_max
        new = Signal(layout, name=f"new{w}")
        emit = Signal(name=f"emit{w}")
        count = Signal(c.hit_bits + 1, name=f"count{w}")
        keep = self.keep_counts
        with m.If(~cur.valid):  # Empty: E1
            m.d.comb += [new.valid.eq(1), new.tag.eq(tag), new.hit.eq(plus), new.miss.eq(0)]
        with m.Elif(cur.miss == 0):  # Valid
            with m.If(is_hit):  # E3, E2 on saturation
                with m.If(saturates):
                    m.d.comb += [emit.eq(1), count.eq(hit_max), new.eq(0)]
                with m.Else():
                    m.d.comb += [new.eq(cur), new.hit.eq(plus)]
            with m.Else():  # E4
                m.d.comb += [new.eq(cur), new.miss.eq(1)]
        with m.Else():  # Evict
            with m.If(is_hit):  # E6a, E6 on ShouldEvict
                with m.If(should_evict):
                    m.d.comb += [emit.eq(1), count.eq(plus), new.valid.eq(0), new.tag.eq(0),
                                 new.hit.eq(cur.miss if keep else 0), new.miss.eq(0)]  # fmt: skip
                with m.Else():
                    m.d.comb += [new.eq(cur), new.hit.eq(plus)]
            with m.Else():  # E5a, E5 on ShouldReplace
                with m.If(should_replace):
                    with m.If(total_max):
                        m.d.comb += [emit.eq(1), count.eq(total), new.eq(0)]
                    with m.Else():
                        m.d.comb += [new.valid.eq(1), new.tag.eq(tag),
                                     new.hit.eq(total if keep else 1), new.miss.eq(0)]  # fmt: skip
                with m.Else():
                    m.d.comb += [new.eq(cur), new.miss.eq(miss_plus)]
        return new, emit, count
