"""Fetch-stage profile-flag predictor (Vaswani, Srikant & Thazhuthaveetil, sec. III-B.2, IV)."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.data import ArrayLayout, StructLayout
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..golden.isa_profile import PFLEN_MASK, PFLEN_MATCH
from ..golden.predictor import PredictorConfig
from ._params import checked_config
from .dispatch_filter import decode_fields

__all__ = ["ProfileFlagPredictor"]


class ProfileFlagPredictor(wiring.Component):
    """Block descriptor table, prediction bits and leader address register.

    Behaviour is that of :mod:`hwprof.golden.predictor`: fetch lanes are looked
    up in the block descriptor table (a PI that leads an unlocked block predicted
    ignored, of at least ``min_block`` instructions, is a ``skip`` to ``follow``)
    and checked against the prediction bits (a PI transfer whose bit is off is
    ``not_taken``); decode lanes update the leader register and, for the first
    profile block of the decode group, one table row (read-modify-write).

    Parameters
    ----------
    lanes : int
        Fetch and decode width, 1..4.
    n_flags : int
        Profile flags, 1..8 (one prediction bit each).
    sets : int
        Table sets, a power of two (default 64).
    ways : int
        Table ways, 1 or 2 (default 2, LRU).
    min_block : int
        Smallest block skipped, in instructions (default 4).
    addr_width : int
        Instruction address width, 8..64.
    length_check : bool
        Appendix A.2 block-length check against ``pflen`` hints (default off).

    Attributes
    ----------
    fetch_valid : In(lanes)
        Lanes fetched this cycle (a prefix, in program order).
    fetch_insn : In(ArrayLayout(32, lanes))
    fetch_pc : In(ArrayLayout(addr_width, lanes))
    skip : Out(lanes)
        Lane ``i`` leads a block predicted ignored: continue fetch at ``follow[i]``.
    follow : Out(ArrayLayout(addr_width, lanes))
        Block follow address (0 unless ``skip``).
    not_taken : Out(lanes)
        Lane ``i`` is a PI transfer whose prediction bit is off.

    ``skip``, ``follow`` and ``not_taken`` of lane ``i`` are computed as if lanes
    ``0..i`` were fetched and do not depend on ``fetch_valid`` at all (their value
    for a lane that is not fetched means nothing): the fetch unit may compute
    ``fetch_valid`` from them (stop after a skip or a predicted-taken transfer)
    without a combinational loop. ``fetch_valid`` only selects the prediction bits
    and ``pflen`` state written at the clock edge.
    bits : Out(n_flags)
        The prediction bits.
    upd_valid : In(lanes)
        Lanes decoded this cycle (in order).
    upd_insn : In(ArrayLayout(32, lanes))
    upd_pc : In(ArrayLayout(addr_width, lanes))
    upd_flag : In(lanes)
        The profile flag each decoded PI saw (dispatched: 1, dropped: 0).
    squash : In(1)
        Branch mis-prediction: clear the leader register, ignore ``upd_*``.

    Latency: lookups are combinational (asynchronous table read, 0 cycles) and see
    the table as it was at the start of the cycle; updates are written at the
    clock edge. Reset (synchronous) invalidates every entry.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.predictor.PredictorConfig`).
    """

    def __init__(self, *, lanes=4, n_flags=1, sets=64, ways=2, min_block=4, addr_width=32,
                 length_check=False):
        config = checked_config(self, lambda: PredictorConfig(
            lanes=lanes, n_flags=n_flags, sets=sets, ways=ways, min_block=min_block,
            addr_width=addr_width, length_check=length_check))
        self.config = config
        w, a = config.lanes, config.addr_width
        super().__init__({
            "fetch_valid": In(w),
            "fetch_insn": In(ArrayLayout(32, w)),
            "fetch_pc": In(ArrayLayout(a, w)),
            "skip": Out(w),
            "follow": Out(ArrayLayout(a, w)),
            "not_taken": Out(w),
            "bits": Out(config.n_flags),
            "upd_valid": In(w),
            "upd_insn": In(ArrayLayout(32, w)),
            "upd_pc": In(ArrayLayout(a, w)),
            "upd_flag": In(w),
            "squash": In(1),
        })  # fmt: skip
        self.entry = StructLayout({"tag": config.tag_bits, "follow": config.word_bits,
                                   "pred": 1, "lock": 1})  # fmt: skip

    def _split(self, pc):
        c = self.config
        word = pc[2:]
        return word, word[:c.index_bits] if c.index_bits else Const(0, 1), word[c.index_bits:]

    def _checked(self, length, declared, declared_valid):
        """Appendix A.2: the entry's length matches the preceding ``pflen`` (if enabled)."""
        if not self.config.length_check:
            return Const(1)
        return declared_valid & (length == declared)

    def _output_gate(self, lane_valid):
        """Fetch outputs do not depend on ``fetch_valid`` (see ``elaborate``)."""
        return Const(1)

    def _aligned(self, pc):
        """Leaders are 4-byte aligned (a PI at 4n + 2 is never looked up nor learnt)."""
        return ~pc[0:2].any()

    def _grows(self, entry, nxt_word, flag):
        """``follow`` grows only while locked, from an ignored PI, if larger."""
        return entry.lock & ~flag & (nxt_word > entry.follow)

    def _new_leader(self, leader_valid, leader_k, k):
        """A PI leads a block when the register is clear or holds another type."""
        return ~leader_valid | (k != leader_k)

    def _readable(self, entry):
        """A hit may skip: predicted ignored and unlocked (sec. IV-A)."""
        return ~entry.pred & ~entry.lock

    def elaborate(self, platform):
        c = self.config
        m = Module()
        row_layout = ArrayLayout(self.entry, c.ways)
        m.submodules.table = table = Memory(shape=row_layout, depth=c.sets, init=[])
        valid = Signal(ArrayLayout(c.ways, c.sets))
        mru = Signal(c.sets)
        bits = Signal(c.n_flags)
        leader = Signal(c.addr_width)
        leader_valid = Signal()
        leader_k = Signal(3)  # profile type of the leader
        m.d.comb += self.bits.eq(bits)
        word_mask = (1 << c.word_bits) - 1

        # ------------------------------------------------------------- fetch
        # The outputs of lane i are computed as if lanes 0..i were fetched (valid is
        # a prefix): they never depend on fetch_valid, so an integrator may compute
        # fetch_valid from skip/not_taken (no combinational loop); fetch_valid only
        # chooses the state (prediction bits, pflen) written at the clock edge.
        cur_bits = bits
        # appendix A.2: the pflen length of the previous fetched / decoded instruction
        fetch_decl, fetch_decl_valid = Signal(12), Signal()
        decode_decl, decode_decl_valid = Signal(12), Signal()
        cur_decl, cur_decl_valid = fetch_decl, fetch_decl_valid
        state_bits, state_decl, state_decl_valid = bits, fetch_decl, fetch_decl_valid
        for i in range(c.lanes):
            pc, insn, lane_valid = self.fetch_pc[i], self.fetch_insn[i], self.fetch_valid[i]
            out_on = self._output_gate(lane_valid)
            is_pci, op, is_pi, is_cti, k = decode_fields(m, insn, f"fetch{i}")
            bit = Signal(name=f"fetch{i}_bit")
            ext = cur_bits if c.n_flags == 8 else Cat(cur_bits, Const(0, 8 - c.n_flags))
            m.d.comb += bit.eq(ext.bit_select(k, 1))
            m.d.comb += self.not_taken[i].eq(out_on & is_cti & ~bit)
            nxt = Signal(c.n_flags, name=f"fetch{i}_bits")
            onehot = (Const(1, 8) << k)[:c.n_flags]
            m.d.comb += nxt.eq(cur_bits)
            with m.If(is_pci & (op == 0)):
                m.d.comb += nxt.eq(cur_bits | onehot)
            with m.If(is_pci & (op == 1)):
                m.d.comb += nxt.eq(cur_bits & ~onehot)
            cur_bits = nxt
            lane_decl, lane_decl_valid = cur_decl, cur_decl_valid
            is_pflen = (insn & PFLEN_MASK) == PFLEN_MATCH
            cur_decl, cur_decl_valid = insn[20:32], is_pflen
            st_bits, st_decl, st_decl_valid = Signal(c.n_flags, name=f"fetch{i}_st_bits"), \
                Signal(12, name=f"fetch{i}_st_decl"), Signal(name=f"fetch{i}_st_decl_valid")
            m.d.comb += [st_bits.eq(Mux(lane_valid, nxt, state_bits)),
                         st_decl.eq(Mux(lane_valid, cur_decl, state_decl)),
                         st_decl_valid.eq(Mux(lane_valid, cur_decl_valid, state_decl_valid))]
            state_bits, state_decl, state_decl_valid = st_bits, st_decl, st_decl_valid

            port = table.read_port(domain="comb")
            word, index, tag = self._split(pc)
            m.d.comb += port.addr.eq(index)
            ways_valid = valid[index] if c.sets > 1 else valid[0]
            hit_way, hit = Signal(range(max(2, c.ways)), name=f"fetch{i}_way"), Signal(
                name=f"fetch{i}_hit")
            for way in reversed(range(c.ways)):
                with m.If(ways_valid[way] & (port.data[way].tag == tag)):
                    m.d.comb += [hit.eq(1), hit_way.eq(way)]
            entry = port.data[hit_way] if c.ways > 1 else port.data[0]
            length = Signal(c.word_bits, name=f"fetch{i}_length")
            m.d.comb += length.eq(entry.follow - word)
            with m.If(out_on & is_pi & self._aligned(pc) & hit & self._readable(entry)
                      & (length >= c.min_block) & self._checked(
                          length, lane_decl, lane_decl_valid)):
                m.d.comb += [self.skip[i].eq(1), self.follow[i].eq(entry.follow << 2)]
        m.d.sync += bits.eq(state_bits)

        # ------------------------------------------------------------ update
        # Leader register chain; the row of the group's first leader is updated.
        m.d.sync += [fetch_decl.eq(state_decl), fetch_decl_valid.eq(state_decl_valid)]
        cur_leader, cur_lv, cur_k = leader, leader_valid, leader_k
        cur_decl, cur_decl_valid = decode_decl, decode_decl_valid
        row_leader, row_found = Signal(c.addr_width), Signal()
        found = Const(0)
        lanes = []
        for i in range(c.lanes):
            _, _, is_pi, _, upd_k = decode_fields(m, self.upd_insn[i], f"upd{i}")
            lane_on = self.upd_valid[i] & ~self.squash
            new_leader = Signal(c.addr_width, name=f"upd{i}_leader")
            new_lv = Signal(name=f"upd{i}_lv")
            new_k = Signal(3, name=f"upd{i}_k")
            m.d.comb += [new_leader.eq(cur_leader), new_lv.eq(cur_lv), new_k.eq(cur_k)]
            with m.If(lane_on):
                with m.If(~is_pi):
                    m.d.comb += new_lv.eq(0)
                with m.Elif(self._new_leader(cur_lv, cur_k, upd_k)):
                    m.d.comb += [new_leader.eq(self.upd_pc[i]), new_lv.eq(1), new_k.eq(upd_k)]
            applies = lane_on & is_pi
            # the first PI lane fixes the row
            with m.If(applies & ~found):
                m.d.comb += [row_leader.eq(new_leader), row_found.eq(1)]
            found = found | applies
            lanes.append((applies, new_leader, self.upd_pc[i], self.upd_flag[i], cur_decl,
                          cur_decl_valid))  # fmt: skip
            upd_insn = self.upd_insn[i]
            nxt_decl, nxt_decl_valid = Signal(12, name=f"upd{i}_decl"), Signal(
                name=f"upd{i}_decl_valid")
            m.d.comb += [
                nxt_decl.eq(Mux(lane_on, upd_insn[20:32], cur_decl)),
                nxt_decl_valid.eq(Mux(lane_on, (upd_insn & PFLEN_MASK) == PFLEN_MATCH,
                                      cur_decl_valid)),
            ]  # fmt: skip
            cur_leader, cur_lv, cur_k = new_leader, new_lv, new_k
            cur_decl, cur_decl_valid = nxt_decl, nxt_decl_valid
        with m.If(self.squash):
            m.d.sync += [leader_valid.eq(0), decode_decl_valid.eq(0)]
        with m.Else():
            m.d.sync += [leader.eq(cur_leader), leader_valid.eq(cur_lv), leader_k.eq(cur_k),
                         decode_decl.eq(cur_decl), decode_decl_valid.eq(cur_decl_valid)]

        rport = table.read_port(domain="comb")
        lword, lindex, ltag = self._split(row_leader)
        m.d.comb += rport.addr.eq(lindex)
        row = rport.data
        row_valid = valid[lindex] if c.sets > 1 else valid[0]
        row_mru = mru.bit_select(lindex, 1) if c.sets > 1 else mru[0]
        for i, (applies, lane_leader, pc, flag, decl, decl_valid) in enumerate(lanes):
            new_row = Signal(row_layout, name=f"upd{i}_row")
            new_valid = Signal(c.ways, name=f"upd{i}_valid")
            new_mru = Signal(name=f"upd{i}_mru")
            m.d.comb += [new_row.eq(row), new_valid.eq(row_valid), new_mru.eq(row_mru)]
            word = pc[2:]
            nxt_word = (word + 1)[:c.word_bits]
            hit, hit_way = Signal(name=f"upd{i}_hit"), Signal(range(max(2, c.ways)),
                                                              name=f"upd{i}_way")
            for way in reversed(range(c.ways)):
                with m.If(row_valid[way] & (row[way].tag == ltag)):
                    m.d.comb += [hit.eq(1), hit_way.eq(way)]
            with m.If(applies & (lane_leader == row_leader)):
                with m.If(~hit):
                    with m.If(~flag):
                        if c.ways == 2:
                            victim = Mux(~row_valid[0], 0, Mux(~row_valid[1], 1, ~row_mru))
                        else:
                            victim = Const(0)
                        for way in range(c.ways):
                            with m.If(victim == way):
                                m.d.comb += [
                                    new_row[way].tag.eq(ltag),
                                    new_row[way].follow.eq((lword + 1) & word_mask),
                                    new_row[way].pred.eq(0),
                                    new_row[way].lock.eq(1),
                                    new_valid[way].eq(1),
                                ]
                        m.d.comb += new_mru.eq(victim)
                with m.Else():
                    for way in range(c.ways):
                        with m.If(hit_way == way):
                            e, ne = row[way], new_row[way]
                            with m.If(self._grows(e, nxt_word, flag)):
                                m.d.comb += ne.follow.eq(nxt_word)
                            with m.If(word == lword):
                                entry_length = (e.follow - lword)[:c.word_bits]
                                stale = ~self._checked(entry_length, decl, decl_valid) \
                                    & decl_valid
                                with m.If(stale):  # appendix A.2: learn it again
                                    m.d.comb += [ne.follow.eq((lword + 1) & word_mask),
                                                 ne.lock.eq(1)]  # fmt: skip
                                with m.Else():
                                    m.d.comb += ne.lock.eq(0)
                            m.d.comb += ne.pred.eq(flag)
                    m.d.comb += new_mru.eq(hit_way)
            row, row_valid, row_mru = new_row, new_valid, new_mru

        wport = table.write_port()
        write = row_found & self._aligned(row_leader)  # a leader at 4n + 2 gets no entry
        m.d.comb += [wport.addr.eq(lindex), wport.data.eq(row), wport.en.eq(write)]
        with m.If(write):
            if c.sets > 1:
                m.d.sync += [valid[lindex].eq(row_valid), mru.bit_select(lindex, 1).eq(row_mru)]
            else:
                m.d.sync += [valid[0].eq(row_valid), mru[0].eq(row_mru)]
        return m
