"""Fetch-stage profile-flag predictor (Vaswani, Srikant & Thazhuthaveetil, sec. III-B.2, IV)."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.data import ArrayLayout, StructLayout
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..golden.isa_profile import PFLEN_MASK, PFLEN_MATCH
from ..golden.predictor import PredictorConfig
from ._params import Checked
from .dispatch_filter import decode_fields

__all__ = ["ProfileFlagPredictor"]


class ProfileFlagPredictor(Checked, wiring.Component):
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
        Sec. IV-A.2 block-length check against ``pflen`` hints (default off).
    update_latency : int
        Cycles from a decode group to its table write, 0..3 (the class default is
        0; the catalog's is in hwprof/tops/selective_dispatch.py). 0: the row is
        read, updated and written in the decode cycle (the paper). 1: the row
        selection (stage A: the leader register's select, row leader, the lanes of the
        row, the compares between lanes) is registered and the row is read,
        updated and written in the next cycle. 2: a third stage: the row read
        (asynchronous, from the registered index) goes into flops in stage B with
        ``first`` and the lanes' compares with it, and stage C computes the
        entry's new value from flops and writes the row; when the group ahead (in
        C a cycle earlier) wrote the same set, its row, held in flops, is used
        instead of the one read (forwarding). 3: a fourth stage D holds the row C
        computed (and its index, valid and LRU bits) in flops and writes it at the end
        of c + 3; the row read in B takes D's row when D writes that set (the group two
        ahead), C's forwarding takes the group ahead's row from D's flops as with 2.
        A fetch in the ``update_latency``
        cycles after the decode still sees the old row (docs/fpga.md measures the
        effect). The leader register and the prediction bits are not delayed.
    fetch_latency : int
        0 (default): ``skip``, ``follow`` and ``not_taken`` are combinational from
        ``fetch_insn``/``fetch_pc`` through the W + 1 asynchronous table reads (an
        input-to-output path the integrator must time). 1: they are registered:
        the lookup of the lanes fetched in cycle c (the table as it was at the
        start of cycle c) appears in cycle c + 1; the table is read in cycle c
        (synchronous read ports, not transparent) and compared in c + 1.

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

    Latency: ``skip``/``follow``/``not_taken`` ``fetch_latency`` cycles after
    ``fetch_*`` (0: combinational through the asynchronous table reads), seeing the
    table as it was at the start of the fetch cycle; ``bits`` is the register (the
    fetched ``setpf``/``resetpf`` of cycle c show from c + 1); ``upd_*``/``squash``
    move the leader register at the end of their cycle and write the table row at
    the end of cycle c + ``update_latency``. Reset (synchronous) invalidates every
    entry.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.predictor.PredictorConfig`).
    """

    config_class = PredictorConfig

    def __init__(self, *, lanes=4, n_flags=1, sets=64, ways=2, min_block=4, addr_width=32,
                 length_check=False, update_latency=0, fetch_latency=0):
        config = self.config  # set by Checked before __init__
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

    #: update_latency >= 2 forwards the row written by the group ahead into stage C
    #: (False: a mutant)
    _forward = True
    #: update_latency=3 forwards the row in stage D (written at the end of the cycle)
    #: into the row read of stage B (False: a mutant)
    _forward_d = True

    #: fetch_latency=1 reads the row as it was at the start of the fetch cycle (True:
    #: a mutant that reads the row written at the end of that cycle)
    _fetch_transparent = False

    def _split(self, pc):
        c = self.config
        word = pc[2:]
        return word, word[:c.index_bits] if c.index_bits else Const(0, 1), word[c.index_bits:]

    def _checked(self, follow, word, declared, declared_valid):
        """Sec. IV-A.2: ``follow - word`` matches the preceding ``pflen`` (if enabled).

        Computed as ``follow == word + declared`` (the sum needs only the fetched
        address and word, so it is ready when the table read is: timing).
        """
        if not self.config.length_check:
            return Const(1)
        w = self.config.word_bits
        fits = declared[w:] == 0 if w < len(declared) else Const(1)
        return declared_valid & fits & (follow == (word + declared)[:w])

    def _at_least(self, follow, word, m):
        """``(follow - word) mod 2**word_bits >= m`` without a full-width subtraction.

        With ``L`` low bits (``2**L >= m``): the difference is below ``m`` exactly when
        its high part is 0, i.e. ``follow_high == word_high + borrow`` (the borrow of
        the low parts' subtraction), and its low part is below ``m``.
        """
        w = self.config.word_bits
        low = max(1, (m - 1).bit_length())
        if low >= w:
            return (follow - word)[:w] >= m
        fl, wl, fh, wh = follow[:low], word[:low], follow[low:], word[low:]
        borrow = fl < wl
        high_zero = Mux(borrow, fh == (wh + 1)[:w - low], fh == wh)
        return ~(high_zero & ((fl - wl)[:low] < m))

    def _output_gate(self, lane_valid):
        """Fetch outputs do not depend on ``fetch_valid`` (see ``elaborate``)."""
        return Const(1)

    def _aligned(self, pc):
        """Leaders are 4-byte aligned (a PI at 4n + 2 is never looked up nor learnt)."""
        return ~pc[0:2].any()

    def _grows_bit(self, lock, larger, flag):
        """``follow`` grows only while locked, from an ignored PI, if larger (``larger``)."""
        return lock & ~flag & larger

    def _new_leader(self, leader_valid, leader_k, k):
        """A PI leads a block when the register is clear or holds another type."""
        return ~leader_valid | (k != leader_k)

    def _readable(self, entry):
        """A hit may skip: predicted ignored and unlocked (sec. IV-A)."""
        return ~entry.pred & ~entry.lock

    def elaborate(self, platform):
        c = self.config
        m = Module()
        # LUT-RAM: a block RAM's output (about 6 ns from the clock on ECP5) would start
        # stage C's path, its output register being merged into the update read port
        m.submodules.table = table = Memory(shape=ArrayLayout(self.entry, c.ways),
                                            depth=c.sets, init=[],
                                            attrs={"ram_style": "distributed"})  # fmt: skip
        t = _Table(c, table)
        m.submodules.fetch, out = self._fetch_stage(t)
        m.d.comb += [self.bits.eq(out["bits"]), self.skip.eq(out["skip"]),
                     self.follow.eq(out["follow"])]  # fmt: skip
        if c.fetch_latency:
            m.d.sync += self.not_taken.eq(out["not_taken"])
        else:
            m.d.comb += self.not_taken.eq(out["not_taken"])
        # the update: stages A (decode cycle), B, C and D (c + 1 .. c + 3), each a
        # submodule; update_latency registers the first stages' outputs
        m.submodules.stage_a, ab = self._stage_a()
        m.submodules.stage_b, bc = self._stage_b(t, ab)
        m.submodules.stage_c, written = self._stage_c(t, ab, bc)
        m.submodules.stage_d = self._stage_d(t, written)
        return m

    def _fetch_stage(self, t):
        """The fetch lanes' lookups and the prediction bits (a submodule).

        The outputs of lane i are computed as if lanes 0..i were fetched (valid is
        a prefix): they never depend on fetch_valid, so an integrator may compute
        fetch_valid from skip/not_taken (no combinational loop); fetch_valid only
        chooses the state (prediction bits, pflen) written at the clock edge.
        """
        c = self.config
        m = Module()
        bits = Signal(c.n_flags)
        skip_o = Signal(c.lanes, name="fetch_skip")
        not_taken_o = Signal(c.lanes, name="fetch_not_taken")
        follow_o = Signal(ArrayLayout(c.addr_width, c.lanes), name="fetch_follow")
        # fetch_latency=1: the lookup of cycle c on the outputs in c + 1, split at the
        # table read: a synchronous read port (the row as it was at the start of cycle
        # c: not transparent), the lane's address, its valid bits and decode results in
        # flops; the tag and follow compares in c + 1 (timing: the read and the
        # compares are in different cycles). ``not_taken`` is a register.
        late = bool(c.fetch_latency)

        def fetched(value, name):
            """``value`` in cycle c + 1 (a flop) with fetch_latency=1, else itself."""
            if not late or isinstance(value, Const):
                return value
            reg = Signal(value.shape(), name=name)
            m.d.sync += reg.eq(value)
            return reg

        cur_bits = bits
        # sec. IV-A.2: the pflen length of the previous fetched instruction
        fetch_decl, fetch_decl_valid = Signal(12), Signal()
        cur_decl, cur_decl_valid = fetch_decl, fetch_decl_valid
        state_bits, state_decl, state_decl_valid = bits, fetch_decl, fetch_decl_valid
        for i in range(c.lanes):
            pc, insn, lane_valid = self.fetch_pc[i], self.fetch_insn[i], self.fetch_valid[i]
            out_on = self._output_gate(lane_valid)
            is_pci, op, is_pi, is_cti, k = decode_fields(m, insn, f"fetch{i}")
            bit = Signal(name=f"fetch{i}_bit")
            ext = cur_bits if c.n_flags == 8 else Cat(cur_bits, Const(0, 8 - c.n_flags))
            m.d.comb += bit.eq(ext.bit_select(k, 1))
            m.d.comb += not_taken_o[i].eq(out_on & is_cti & ~bit)
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

            port = t.memory.read_port(domain="comb") if not late else t.memory.read_port(
                domain="sync", transparent_for=(t.wport,) if self._fetch_transparent else ())
            word, index, tag = self._split(pc)
            m.d.comb += port.addr.eq(index)
            ways_valid = fetched(t.valid[index] if c.sets > 1 else t.valid[0],
                                 f"fetch{i}_valid")  # fmt: skip
            word = fetched(word, f"fetch{i}_word")
            tag = word[c.index_bits:]
            lookup = fetched(out_on & is_pi & self._aligned(pc), f"fetch{i}_lookup")
            if c.length_check:
                lane_decl = fetched(lane_decl, f"fetch{i}_decl")
                lane_decl_valid = fetched(lane_decl_valid, f"fetch{i}_decl_valid")
            hit_way, hit = Signal(range(max(2, c.ways)), name=f"fetch{i}_way"), Signal(
                name=f"fetch{i}_hit")
            for way in reversed(range(c.ways)):
                with m.If(ways_valid[way] & (port.data[way].tag == tag)):
                    m.d.comb += [hit.eq(1), hit_way.eq(way)]
            # every way's skip condition in parallel with the tag compare (timing)
            ok = Signal(c.ways, name=f"fetch{i}_ok")
            for way in range(c.ways):
                entry = port.data[way]
                m.d.comb += ok[way].eq(
                    self._readable(entry) & self._at_least(entry.follow, word, c.min_block)
                    & self._checked(entry.follow, word, lane_decl, lane_decl_valid))
            chosen = port.data[hit_way] if c.ways > 1 else port.data[0]
            lane_ok = ok.bit_select(hit_way, 1) if c.ways > 1 else ok[0]
            with m.If(lookup & hit & lane_ok):
                m.d.comb += [skip_o[i].eq(1), follow_o[i].eq(chosen.follow << 2)]
        m.d.sync += bits.eq(state_bits)
        m.d.sync += [fetch_decl.eq(state_decl), fetch_decl_valid.eq(state_decl_valid)]
        return m, {"bits": bits, "skip": skip_o, "not_taken": not_taken_o, "follow": follow_o}

    def _decode_lanes(self, m):
        """The leader register and the decode lanes (in stage A's module ``m``).

        The row of the group's first leader is updated. Computed as a parallel
        select, not a chain through the lanes (timing): the leader lane i sees is the
        address of the last lane j <= i that starts a block (a candidate: lane j's
        pc), or the register's (candidate 0). A lane starts a block when it is a PI
        and the register before it, whose valid bit and type are those of the last
        lane before it that was decoded (valid: it was a PI; type: the last PI's, a
        PI that starts no block having the register's type) or the register's, is
        clear or of another type. "Lane i's leader equals the row leader" is then an
        AND-OR of the candidates' pairwise address compares (from the inputs alone)
        selected by the two candidates' one-hots.

        Returns ``(lanes, row_found, row_leader)``: per lane ``(on_row, is_leader,
        pc, flag, decl, decl_valid)``.
        """
        c = self.config
        leader = Signal(c.addr_width)
        leader_valid = Signal()
        leader_k = Signal(3)  # profile type of the leader
        # sec. IV-A.2: the pflen length of the previous decoded instruction
        decode_decl, decode_decl_valid = Signal(12), Signal()
        cur_decl, cur_decl_valid = decode_decl, decode_decl_valid
        cands = [leader, *(self.upd_pc[i] for i in range(c.lanes))]
        lv_before, k_before = leader_valid, leader_k
        applies_l, starts, decls = [], [], []
        for i in range(c.lanes):
            _, _, is_pi, _, upd_k = decode_fields(m, self.upd_insn[i], f"upd{i}")
            lane_on = self.upd_valid[i] & ~self.squash
            applies = Signal(name=f"upd{i}_applies")
            start = Signal(name=f"upd{i}_starts")
            m.d.comb += [applies.eq(lane_on & is_pi),
                         start.eq(applies & self._new_leader(lv_before, k_before, upd_k))]
            applies_l.append(applies)
            starts.append(start)
            lv_before = Mux(lane_on, is_pi, lv_before)
            k_before = Mux(applies, upd_k, k_before)
            decls.append((cur_decl, cur_decl_valid))
            upd_insn = self.upd_insn[i]
            nxt_decl, nxt_decl_valid = Signal(12, name=f"upd{i}_decl"), Signal(
                name=f"upd{i}_decl_valid")
            m.d.comb += [
                nxt_decl.eq(Mux(lane_on, upd_insn[20:32], cur_decl)),
                nxt_decl_valid.eq(Mux(lane_on, (upd_insn & PFLEN_MASK) == PFLEN_MATCH,
                                      cur_decl_valid)),
            ]  # fmt: skip
            cur_decl, cur_decl_valid = nxt_decl, nxt_decl_valid
        # the candidate lane i's leader is (one-hot over 1 + lanes)
        sources = []
        for i in range(c.lanes):
            src = Signal(1 + c.lanes, name=f"upd{i}_leader_src")
            later = Const(0)
            for j in reversed(range(i + 1)):
                m.d.comb += src[1 + j].eq(starts[j] & ~later)
                later = later | starts[j]
            m.d.comb += src[0].eq(~later)
            sources.append(src)
        # the row's candidate: that of the first PI lane (none: all zero)
        row_src = Signal(1 + c.lanes, name="upd_row_src")
        before = Const(0)
        for i in range(c.lanes):
            with m.If(applies_l[i] & ~before):
                m.d.comb += row_src.eq(sources[i])
            before = before | applies_l[i]
        row_found = Signal(name="upd_row_found")
        m.d.comb += row_found.eq(Cat(applies_l).any())
        row_leader = Signal(c.addr_width, name="upd_row_leader")
        m.d.comb += row_leader.eq(_and_or(row_src, cands))
        # pairwise compares of the candidates' word addresses and low bits
        eq_word, eq_full = {}, {}
        for a in range(1 + c.lanes):
            for b in range(a, 1 + c.lanes):
                if a == b:
                    eq_word[a, b] = eq_full[a, b] = Const(1)
                    continue
                ew, ef = Signal(name=f"upd_eqw_{a}_{b}"), Signal(name=f"upd_eq_{a}_{b}")
                m.d.comb += [ew.eq(cands[a][2:] == cands[b][2:]),
                             ef.eq(ew & (cands[a][:2] == cands[b][:2]))]
                eq_word[a, b] = eq_word[b, a] = ew
                eq_full[a, b] = eq_full[b, a] = ef

        def same(src_a, src_b, table):
            """The candidates selected by one-hots ``src_a`` and ``src_b`` are equal."""
            return Cat(src_a[a] & src_b[b] & table[a, b] for a in range(1 + c.lanes)
                       for b in range(1 + c.lanes)).any()

        onehot_lane = [Const(1 << (1 + i), 1 + c.lanes) for i in range(c.lanes)]
        lanes = []
        for i in range(c.lanes):
            on_row = Signal(name=f"upd{i}_on_row")
            is_leader = Signal(name=f"upd{i}_is_leader")
            m.d.comb += [on_row.eq(applies_l[i] & same(sources[i], row_src, eq_full)),
                         is_leader.eq(same(onehot_lane[i], row_src, eq_word))]
            lanes.append((on_row, is_leader, self.upd_pc[i], self.upd_flag[i], *decls[i]))
        last = sources[-1]
        with m.If(self.squash):
            m.d.sync += [leader_valid.eq(0), decode_decl_valid.eq(0)]
        with m.Else():
            m.d.sync += [leader.eq(_and_or(last, cands)), leader_valid.eq(lv_before),
                         leader_k.eq(k_before), decode_decl.eq(cur_decl),
                         decode_decl_valid.eq(cur_decl_valid)]  # fmt: skip
        return lanes, row_found, row_leader

    def _stage_a(self):
        """Stage A (the decode cycle, a submodule): the leader register, the row
        selection (leader select, row leader, which lanes belong to the row) and the
        compares that need neither the table nor the row leader's successor.
        update_latency >= 1 registers them (A -> B); with 0 every stage is in the
        decode cycle. Returns the module and what stage B receives."""
        c = self.config
        m = Module()
        lanes, row_found, row_leader = self._decode_lanes(m)
        words = [pc[2:] for (_, _, pc, *_rest) in lanes]
        wraps = [word.all() for word in words]
        lanes_a = []
        for i, (on_row, is_leader, _pc, flag, decl, decl_valid) in enumerate(lanes):
            nxt = Signal(c.word_bits, name=f"upd{i}_nxt")
            m.d.comb += nxt.eq((words[i] + 1)[:c.word_bits])
            lanes_a.append({
                "on_row": on_row, "nxt": nxt, "flag": flag,
                "is_leader": is_leader, "decl_valid": decl_valid,
                "decl": decl if c.length_check else Const(0, 12),
                # nxt_i > nxt_j (j < i), the follow compares between lanes, on the decoded
                # addresses alone: word_i + 1 > word_j + 1 is word_i > word_j unless an
                # increment wraps to 0
                "gt_new": [Mux(wraps[i], 0, Mux(wraps[j], 1, _greater(words[i], words[j])))
                           for j in range(i)],
            })  # fmt: skip
        write_a = row_found & self._aligned(row_leader)  # a leader at 4n + 2 gets no entry
        ab = _staged(m, {"row_leader": row_leader, "write": write_a, "lanes": lanes_a}, "b",
                     c.update_latency >= 1)  # fmt: skip
        return m, ab

    def _stage_b(self, t, ab):
        """Stage B (cycle c + 1 with update_latency 1 or 2, a submodule): the row read
        (asynchronous, from the registered index) and what needs the row leader but
        not its row: ``first`` (the follow of a new entry) and the lanes' compares
        with it. update_latency=2 registers them with the row (B -> C); with 0 or 1
        stage C is in the same cycle as B. With 3, the row read misses the write of
        stage D (the group two ahead): when D writes the set B reads, D's row replaces
        the one read (a 2:1 select before the flops)."""
        c = self.config
        m = Module()
        lword, lindex, ltag = self._split(ab["row_leader"])
        rport = t.memory.read_port(domain="comb")
        m.d.comb += rport.addr.eq(lindex)
        first = Signal(c.word_bits, name="upd_first")  # follow of a new entry
        m.d.comb += first.eq((lword + 1)[:c.word_bits])
        for i, lane in enumerate(ab["lanes"]):
            lane["gt_first"] = _greater(lane["nxt"], first)
            if c.length_check:
                lane["len_new"] = [(ab["lanes"][j]["nxt"] - lword)[:c.word_bits] == lane["decl"]
                                   for j in range(i)]  # fmt: skip
                lane["len_first"] = Const(1, c.word_bits) == lane["decl"]
            else:
                lane["len_new"], lane["len_first"] = [Const(1)] * i, Const(1)
        row_read = Signal(t.row_layout, name="upd_row_read")
        valid_read, mru_read = Signal(c.ways, name="upd_valid_read"), Signal(name="upd_mru_read")
        m.d.comb += [row_read.eq(rport.data),
                     valid_read.eq(t.valid[lindex] if c.sets > 1 else t.valid[0]),
                     mru_read.eq(t.mru.bit_select(lindex, 1) if c.sets > 1 else t.mru[0])]
        if c.update_latency == 3:
            forward_d = Signal(name="b_forward_d")
            m.d.comb += forward_d.eq(Const(int(self._forward_d)) & t.d_write
                                     & (t.d_index == lindex))
            with m.If(forward_d):
                m.d.comb += [row_read.eq(t.last_row), valid_read.eq(t.last_valid),
                             mru_read.eq(t.last_mru)]  # fmt: skip
        bc = _staged(m, {"lword": lword, "lindex": lindex, "ltag": ltag, "first": first,
                         "write": ab["write"], "lanes": ab["lanes"], "row": row_read,
                         "row_valid": valid_read, "row_mru": mru_read}, "c",
                     c.update_latency >= 2)  # fmt: skip
        return m, bc

    def _stage_c(self, t, ab, bc):
        """Stage C (c + update_latency, a submodule): the entry's new follow / lock /
        prediction from flops. With 2 or 3, the row read in B misses the write of the
        group in C then (one cycle ahead): when that group wrote the same set, its row
        (and valid and LRU bits), held in flops, replaces the one read. Returns the
        module and the write: ``(write, index, row, valid bits, LRU bit)``."""
        c = self.config
        m = Module()
        lword, lindex, ltag, first = bc["lword"], bc["lindex"], bc["ltag"], bc["first"]
        write, lanes_c = bc["write"], bc["lanes"]
        three = c.update_latency >= 2
        if three:
            forward = Signal(name="c_forward")
            # (the group in C now is the one ahead of the group in B: compared a cycle early)
            lindex_b = self._split(ab["row_leader"])[1]
            m.d.sync += forward.eq(Const(int(self._forward)) & write & (lindex == lindex_b))
            row = Signal(t.row_layout, name="upd_row_in")
            row_valid, row_mru = Signal(c.ways, name="upd_row_valid"), Signal(name="upd_row_mru")
            with m.If(forward):
                m.d.comb += [row.eq(t.last_row), row_valid.eq(t.last_valid),
                             row_mru.eq(t.last_mru)]  # fmt: skip
            with m.Else():
                m.d.comb += [row.eq(bc["row"]), row_valid.eq(bc["row_valid"]),
                             row_mru.eq(bc["row_mru"])]  # fmt: skip
        else:
            row, row_valid, row_mru = bc["row"], bc["row_valid"], bc["row_mru"]
        hit, hit_way = Signal(name="upd_hit"), Signal(range(max(2, c.ways)), name="upd_way")
        match = Signal(c.ways, name="upd_match")
        m.d.comb += [match.eq(Cat(row_valid[w] & (row[w].tag == ltag) for w in range(c.ways))),
                     hit.eq(match.any())]  # fmt: skip
        if c.ways == 2:  # way 0 unless it misses (the way only matters on a hit)
            m.d.comb += hit_way.eq(~match[0])
        if c.ways == 2:
            victim = Mux(~row_valid[0], 0, Mux(~row_valid[1], 1, ~row_mru))
        else:
            victim = Const(0)
        cur_follow, cur_pred, cur_lock, touched = self._entry_follow(m, row, lword, first,
                                                                     lanes_c, match, hit)
        cur_way = Signal(range(max(2, c.ways)), name="upd_entry_way")
        m.d.comb += cur_way.eq(Mux(hit, hit_way, victim))

        new_row = Signal(t.row_layout, name="upd_row")
        new_valid = Signal(c.ways, name="upd_valid_bits")
        m.d.comb += [new_row.eq(row), new_valid.eq(row_valid)]
        for way in range(c.ways):
            with m.If(touched & (cur_way == way)):
                m.d.comb += [new_row[way].tag.eq(ltag), new_row[way].follow.eq(cur_follow),
                             new_row[way].pred.eq(cur_pred), new_row[way].lock.eq(cur_lock),
                             new_valid[way].eq(1)]  # fmt: skip
        new_mru = Mux(touched, cur_way, row_mru)
        if three:  # the row, valid and LRU bits written, for the next group's forwarding
            m.d.sync += [t.last_row.eq(new_row), t.last_valid.eq(new_valid),
                         t.last_mru.eq(new_mru)]  # fmt: skip
        return m, (write, lindex, new_row, new_valid, new_mru)

    def _entry_follow(self, m, row, lword, first, lanes_c, match, hit):
        """The entry of the group's leader, lane after lane (stage C's module ``m``).

        Every lane of the row has the same tag, so the way is the hit way, or the
        victim once a lane creates the entry. Its follow is the stored one, ``first``
        or some lane's ``nxt``; each lane's compares against it are selected among
        precomputed ones (``gt``: nxt > follow; ``lok``: follow - lword == decl).
        Computed for every hypothesis in parallel with the tag compare (timing): "way
        w hits" for each way (the stored entry is row[w]) and "no way hits"; the tag
        compare then selects one (a one-hot), and the follow is an AND-OR of its
        candidates (the ways' stored follows, ``first``, the lanes' ``nxt``) under the
        selected hypothesis' one-hot source. Returns ``(follow, pred, lock, touched)``.
        """
        c = self.config
        gt_ways = []  # nxt > each way's stored follow
        for i, lane in enumerate(lanes_c):
            gt_way = Signal(c.ways, name=f"upd{i}_gt_way")
            m.d.comb += gt_way.eq(Cat(_greater(lane["nxt"], row[w].follow)
                                      for w in range(c.ways)))
            gt_ways.append(gt_way)
        sources = ["stored", "first", *(f"nxt{i}" for i in range(c.lanes))]
        # the hypotheses (way 0 hits, way 1 hits, none) and their one-hot selection
        hyps = [(f"_h{w}", 1, w) for w in range(c.ways)] + [("_miss", 0, None)]
        chosen = [match[0]]
        if c.ways == 2:
            chosen.append(~match[0] & match[1])
        chosen.append(~hit)
        touched, cur_pred, cur_lock = Const(0), Const(0), Const(0)
        pick = {}  # the follow's candidate -> its select bit
        for (h, found0, way), on in zip(hyps, chosen, strict=True):
            t, p, lk, src = self._entry_update(m, h, found0, way, row, lword, lanes_c,
                                               gt_ways, sources)  # fmt: skip
            touched = touched | (on & t)
            cur_pred = cur_pred | (on & p)
            cur_lock = cur_lock | (on & lk)
            for k in sources:
                # without a hit, "stored" is only the source while nothing is touched
                key = f"way{way}" if k == "stored" else k
                if k == "stored" and way is None:
                    continue
                pick[key] = pick.get(key, Const(0)) | (on & src[k])
        candidates = {**{f"way{w}": row[w].follow for w in range(c.ways)}, "first": first,
                      **{f"nxt{i}": lane["nxt"] for i, lane in enumerate(lanes_c)}}
        cur_follow = Signal(c.word_bits, name="upd_new_follow")
        m.d.comb += cur_follow.eq(_and_or(Cat(pick[k] for k in candidates),
                                          list(candidates.values())))
        return cur_follow, cur_pred, cur_lock, touched

    def _entry_update(self, m, h, found0, stored, row, lword, lanes_c, gt_ways, sources):
        """The entry after the group's lanes if it is found (``found0``) in way
        ``stored`` (or not found: None): touched, pred, lock, the follow's source
        (a one-hot over ``sources``) and whether a lane created it."""
        c = self.config
        zero = Const(0)
        cur_found = Const(found0)
        cur_pred = row[stored].pred if stored is not None else zero
        cur_lock = row[stored].lock if stored is not None else zero
        cur_src = {k: Const(int(k == "stored")) for k in sources}
        cur_gt = [gt_ways[i][stored] if stored is not None else zero
                  for i in range(c.lanes)]  # fmt: skip
        cur_lok = [((row[stored].follow - lword)[:c.word_bits] == lane["decl"])
                   if c.length_check and stored is not None else Const(1)
                   for lane in lanes_c]  # fmt: skip
        gt_stored = list(cur_gt)
        touched, created_any = Const(0), Const(0)
        eligible, firsts = [], []  # per lane: may grow the follow; sets it to first
        for i, lane in enumerate(lanes_c):
            on_row, flag, is_leader = lane["on_row"], lane["flag"], lane["is_leader"]
            decl_valid, gt_new_i, gt_first_i = lane["decl_valid"], lane["gt_new"], \
                lane["gt_first"]
            if not c.length_check:
                # Without the stale reset, a follow only grows (to the larger value)
                # or is set to first when the entry is created: the follow lane i
                # sees is the max of the base (first if created before i, else the
                # stored one) and the nxt of the lanes after that which could grow
                # it. So "nxt_i is larger" is an AND of precomputed compares, not a
                # chain through lanes.
                created = Cat(firsts).any() if firsts else Const(0)
                larger = Mux(created, gt_first_i, gt_stored[i])
                for j in range(i):
                    later = Cat(firsts[j + 1:i]).any() if j + 1 < i else Const(0)
                    larger = larger & (~(eligible[j] & ~later) | gt_new_i[j])
                gt_i = Signal(name=f"upd{h}_{i}_larger")
                m.d.comb += gt_i.eq(larger)
                cur_gt[i] = gt_i
            elig = Signal(name=f"upd{h}_{i}_eligible")
            m.d.comb += elig.eq(on_row & cur_found & cur_lock & ~flag)
            eligible.append(elig)
            found = Signal(name=f"upd{h}_{i}_found")
            pred, lock = Signal(name=f"upd{h}_{i}_pred"), Signal(name=f"upd{h}_{i}_lock")
            set_nxt = Signal(name=f"upd{h}_{i}_set_nxt")
            set_first = Signal(name=f"upd{h}_{i}_set_first")
            create = Signal(name=f"upd{h}_{i}_create")
            m.d.comb += [found.eq(cur_found), pred.eq(cur_pred), lock.eq(cur_lock)]
            with m.If(on_row):
                with m.If(~cur_found):
                    with m.If(~flag):  # create: follow = lword + 1, predicted ignored, locked
                        m.d.comb += [found.eq(1), create.eq(1), set_first.eq(1),
                                     pred.eq(0), lock.eq(1)]  # fmt: skip
                with m.Else():
                    with m.If(self._grows_bit(cur_lock, cur_gt[i], flag)):
                        m.d.comb += set_nxt.eq(1)
                    with m.If(is_leader):
                        stale = ~cur_lok[i] & decl_valid if c.length_check else Const(0)
                        with m.If(stale):  # sec. IV-A.2: learn it again
                            m.d.comb += [set_first.eq(1), lock.eq(1)]
                        with m.Else():
                            m.d.comb += lock.eq(0)
                    m.d.comb += pred.eq(flag)
            src = {}
            for k in sources:
                src[k] = Signal(name=f"upd{h}_{i}_src_{k}")
                m.d.comb += src[k].eq(Mux(set_first, int(k == "first"),
                                          Mux(set_nxt, int(k == f"nxt{i}"), cur_src[k])))
            touched = touched | (on_row & found)
            created_any = created_any | create
            firsts.append(set_first)
            # the compares of the later lanes against the new follow (length check:
            # the chain; without, the parallel form above)
            for j in range(i + 1, c.lanes if c.length_check else 0):
                lane_j = lanes_c[j]
                cur_gt[j] = Mux(set_first, lane_j["gt_first"],
                                Mux(set_nxt, lane_j["gt_new"][i], cur_gt[j]))
                if c.length_check:
                    cur_lok[j] = Mux(set_first, lane_j["len_first"],
                                     Mux(set_nxt, lane_j["len_new"][i], cur_lok[j]))
            cur_found, cur_pred, cur_lock, cur_src = found, pred, lock, src
        return touched, cur_pred, cur_lock, cur_src

    def _stage_d(self, t, written):
        """The table write (a submodule): at the end of stage C's cycle, or with
        update_latency=3 from stage D's flops (the row C computed a cycle earlier, the
        ``last_*`` registers, with its index and write enable) at the end of c + 3."""
        c = self.config
        m = Module()
        write, lindex, new_row, new_valid, new_mru = written
        if c.update_latency == 3:
            m.d.sync += [t.d_write.eq(write), t.d_index.eq(lindex)]
            lindex, write, new_row, new_valid, new_mru = t.d_index, t.d_write, t.last_row, \
                t.last_valid, t.last_mru
        m.d.comb += [t.wport.addr.eq(lindex), t.wport.data.eq(new_row), t.wport.en.eq(write)]
        with m.If(write):
            if c.sets > 1:
                m.d.sync += [t.valid[lindex].eq(new_valid),
                             t.mru.bit_select(lindex, 1).eq(new_mru)]  # fmt: skip
            else:
                m.d.sync += [t.valid[0].eq(new_valid), t.mru[0].eq(new_mru)]
        return m


class _Table:
    """The block descriptor table and the state the update stages share: the memory,
    its write port, the valid and LRU bits, and (update_latency >= 2) the row stage C
    wrote last (stage D's with 3: its index and write enable)."""

    def __init__(self, config, memory):
        c = config
        self.memory = memory
        self.row_layout = memory.shape
        self.wport = memory.write_port()
        self.valid = Signal(ArrayLayout(c.ways, c.sets), name="valid")
        self.mru = Signal(c.sets, name="mru")
        if c.update_latency >= 2:
            self.last_row = Signal(self.row_layout, name="c_last_row")
            self.last_valid = Signal(c.ways, name="c_last_valid")
            self.last_mru = Signal(name="c_last_mru")
        if c.update_latency == 3:
            self.d_write = Signal(name="d_write")
            self.d_index = Signal(max(1, c.index_bits), name="d_index")


def _staged(m, value, name, on):
    """``value`` (a value, or a dict / list of them) through flops of ``m`` when ``on``."""
    if not on or isinstance(value, Const):
        return value
    if isinstance(value, dict):
        return {k: _staged(m, v, f"{name}_{k}", on) for k, v in value.items()}
    if isinstance(value, list):
        return [_staged(m, v, f"{name}{j}", on) for j, v in enumerate(value)]
    reg = Signal(value.shape(), name=name)  # a view (the row) stays a view
    m.d.sync += reg.eq(value)
    return reg


def _and_or(onehot, values):
    """The value of ``values`` that the one-hot ``onehot`` selects (0 when none)."""
    out = 0
    for j, value in enumerate(values):
        out = out | Mux(onehot[j], value, 0)
    return out


def _greater(a, b):
    """Unsigned ``a > b`` as a comparison tree (log depth, not a ripple compare)."""
    if len(a) == 1:
        return a[0] & ~b[0]
    half = len(a) // 2
    return _greater(a[half:], b[half:]) | ((a[half:] == b[half:]) & _greater(a[:half], b[:half]))
