"""Decode-stage selective-dispatch filter (Vaswani, Srikant & Thazhuthaveetil, sec. III-B, V)."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.data import ArrayLayout, StructLayout
from amaranth.lib.wiring import In, Out

from ..golden.dispatch import DispatchConfig
from ..golden.isa_profile import CUSTOM1, CUSTOM2, MAX_FLAGS, PCI_MASK, PI_OPS
from ._params import Checked

__all__ = ["PREDECODE", "DispatchFilter", "decode_fields", "predecode"]

_CTI = [PI_OPS.index(op) for op in ("jalr", "beq", "bne")]


def decode_fields(m: Module, word, name: str):
    """Decode a 32-bit word (docs/isa.md): ``(is_pci, pci_op, is_pi, is_cti, k)``."""
    is_pci = Signal(name=f"{name}_is_pci")
    is_pi = Signal(name=f"{name}_is_pi")
    is_cti = Signal(name=f"{name}_is_cti")
    k = Signal(3, name=f"{name}_k")
    funct3 = word[12:15]
    m.d.comb += [
        is_pci.eq((word & PCI_MASK) == CUSTOM1),
        # add/b with bits 28:25 set is not a PI (reserved)
        is_pi.eq((word[0:7] == CUSTOM2) & ~((funct3 == 0) & word[25:29].any())),
        is_cti.eq(is_pi & ((funct3 == _CTI[0]) | (funct3 == _CTI[1]) | (funct3 == _CTI[2]))),
        k.eq(Mux(is_pci, word[15:18], word[29:32])),
    ]
    return is_pci, word[12:14], is_pi, is_cti, k


#: The predecode bits of one instruction word (``predecoded=True``): what the filter
#: would otherwise decode from the word in its own cycle (docs/isa.md; the golden
#: form is :func:`hwprof.golden.isa_profile.predecode`).
PREDECODE = StructLayout({"is_pci": 1, "is_pi": 1, "is_cti": 1})


def predecode(m: Module, word, name: str):
    """The :data:`PREDECODE` bits of a 32-bit word, for the fetch queue's write side."""
    bits = Signal(PREDECODE, name=f"{name}_predecode")
    is_pci, _op, is_pi, is_cti, _k = decode_fields(m, word, name)
    m.d.comb += [bits.is_pci.eq(is_pci), bits.is_pi.eq(is_pi), bits.is_cti.eq(is_cti)]
    return bits


class DispatchFilter(Checked, wiring.Component):
    """Profile flag register, flag stack and the selective-dispatch decision of W lanes.

    Each cycle the filter sees the ``lanes`` oldest fetch-queue entries (valid as a
    prefix) and decides, in program order, which are decoded (``take``; the queue
    pops them), which are dispatched and which profile instructions are dropped.
    The rules are those of :mod:`hwprof.golden.dispatch` (paper sec. III-B): setpf/
    resetpf/pushpf/poppf act here and are not dispatched; a PI of type ``k`` is
    dispatched only when flag ``k`` is set; a dropped, predicted-taken PI branch is
    a profile mis-fetch (``redirect`` to its ``pc + 4``, the queue is squashed); a
    PI marked ``skipped`` by the profile-flag predictor whose flag is on is a
    profile-flag mis-prediction (sec. IV-A.1, ``redirect`` to ``pc + 4``); a flag
    reader after a ``poppf`` of the same flag in the same cycle waits a cycle
    (``stall``, sec. III-B.3).

    Parameters
    ----------
    lanes : int
        Decode width W, 1..4.
    n_flags : int
        Number of profile flags (profile types), 1..8.
    stack_depth : int
        Entries of the one-bit flag stack, 1..64.
    addr_width : int
        Instruction address width, 8..64 (4-byte instructions).
    predecoded : bool
        False (the class default): the filter decodes each lane's word itself. True
        (the catalog default, timing: docs/fpga.md): the fetch queue supplies each
        entry's :data:`PREDECODE` bits on ``insn_pre`` (:func:`predecode` of the word,
        computed when the entry is written, three bits more per entry), and the
        filter reads the flag operand and PCI opcode from ``insn`` but decodes
        nothing itself. ``insn_pre`` must be the predecode of ``insn`` (the
        integrator's constraint; the formal properties assume it).

    Attributes
    ----------
    valid, pred_taken, skipped : In(lanes)
        Per lane: an entry is present; fetch predicted it taken; the profile-flag
        predictor skipped the block it leads.
    insn : In(ArrayLayout(32, lanes))
        Instruction words.
    insn_pre : In(ArrayLayout(PREDECODE, lanes))
        Only with ``predecoded``: their predecode bits.
    pc : In(ArrayLayout(addr_width, lanes))
        Their addresses.
    squash : In(1)
        Mis-prediction squash or trap return: decode nothing, load ``restore`` into
        the flag state, end ``halted``.
    restore : In(n_flags + stack_depth + sp_width)
        The checkpoint to restore (``ckpt`` of the mispredicted branch).
    take, dispatch, drop : Out(lanes)
        Lanes decoded / dispatched / dropped this cycle.
    stall : Out(1)
        A poppf RAW hazard ended decode before a valid lane.
    redirect, misfetch, flag_mispredict : Out(1)
        Squash the fetch queue and fetch from ``redirect_pc``; the cause.
    redirect_pc : Out(addr_width)
        Fall-through of the redirecting lane (0 without a redirect).
    overflow, underflow : Out(lanes)
        Precise flag-stack exceptions: lane ``i``'s pushpf found the stack full /
        its poppf found it empty. The instruction changes nothing, is taken and
        dispatched (it carries the exception to commit) and decode stops behind it.
    halted : Out(1)
        A stack exception is waiting for commit: decode takes nothing until ``squash``
        (the core's trap writes the handler's state through ``restore``).
    flags : Out(n_flags)
        The profile flag register.
    ckpt : Out(ArrayLayout(n_flags + stack_depth + sp_width, lanes))
        Flag state after each lane (``flags | stack << n | sp << (n + depth)``).

    Latency: all outputs are combinational from the inputs and the state (0
    cycles); the state is updated at the clock edge. Reset is synchronous. Nothing
    is chained through the lanes (timing, see ``elaborate``): what lane i sees of
    lanes 0..i-1 and the flag state after each prefix of lanes are functions of the
    decode and the registers alone, and each lane's "decode goes on" term,
    computed in parallel, selects among them at the end.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.dispatch.DispatchConfig`).
    """

    @classmethod
    def check_params(cls, predecoded, **params):
        if not isinstance(predecoded, bool):
            raise TypeError(f"DispatchFilter: predecoded must be a bool, not {predecoded!r}")
        return DispatchConfig(**params)

    def __init__(self, *, lanes=1, n_flags=1, stack_depth=8, addr_width=32, predecoded=False):
        config = self.config  # set by Checked before __init__
        self.predecoded = predecoded
        w = config.lanes
        pre = {"insn_pre": In(ArrayLayout(PREDECODE, w))} if predecoded else {}
        super().__init__({
            "valid": In(w),
            "pred_taken": In(w),
            "skipped": In(w),
            "insn": In(ArrayLayout(32, w)),
            **pre,
            "pc": In(ArrayLayout(config.addr_width, w)),
            "squash": In(1),
            "restore": In(config.ckpt_width),
            "take": Out(w),
            "dispatch": Out(w),
            "drop": Out(w),
            "stall": Out(1),
            "redirect": Out(1),
            "misfetch": Out(1),
            "flag_mispredict": Out(1),
            "redirect_pc": Out(config.addr_width),
            "overflow": Out(w),
            "underflow": Out(w),
            "halted": Out(1),
            "flags": Out(config.n_flags),
            "ckpt": Out(ArrayLayout(config.ckpt_width, w)),
        })  # fmt: skip

    def _hazard(self, reads, popped, onehot):
        """The poppf RAW hazard of sec. III-B.3: a reader of a flag popped this cycle."""
        return reads & (popped & onehot).any()

    def elaborate(self, platform):
        c = self.config
        n, depth, w = c.n_flags, c.stack_depth, c.lanes
        m = Module()
        flags = Signal(n)
        stack = Signal(depth)
        sp = Signal(c.sp_width)
        halted = Signal()
        m.d.comb += [self.flags.eq(flags), self.halted.eq(halted)]

        # Timing (docs/fpga.md, "dispatch_filter"): lane i only acts when every lane
        # before it was taken without an exception or a redirect (otherwise decode
        # stopped before it). So everything lane i sees of lanes 0..i-1, and the flag
        # state after lanes 0..m-1 when all of them act, are functions of the decode
        # and the registers alone; the decisions (which lanes act) only select among
        # those states at the end. No lane waits for the previous lane's result, and
        # a squash (which stops every lane) is a last mux before the registers.
        lanes = [self._decode(m, i, n) for i in range(w)]
        rels = self._lane_views(m, lanes, flags, sp)
        specs = self._speculative_states(m, lanes, rels, flags, stack, sp)
        run, conts, effs = self._decisions(m, lanes, halted)
        self._checkpoints(m, run, conts, effs, specs)
        last = self.ckpt[w - 1]
        m.d.sync += [flags.eq(last[:n]), stack.eq(last[n:n + depth]),
                     sp.eq(last[n + depth:])]  # fmt: skip
        with m.If(self.squash):
            m.d.sync += halted.eq(0)
        with m.Elif(self.overflow.any() | self.underflow.any()):
            m.d.sync += halted.eq(1)
        return m

    def _lane_views(self, m, lanes, flags, sp):
        """What lane i sees when lanes 0..i-1 all acted; ``rels[i]`` (below).

        * pops_of(x): a poppf of lanes 0..i-1 names flag x (a reader of x stalls);
        * seen[b]: flag b as the setpf/resetpf of lanes 0..i-1 left it (a poppf of b
          before a reader of b is the stall above, so a reader never needs it);
        * rel[d]: the stack pointer is the register plus d (their pushpf less their
          poppf; flags that exist: the others change nothing), one-hot in d, no adder;
          full/empty compare the register with the depth less each d in parallel.

        Sets each lane's ``hazard``, ``fbit_pi``, ``fbit_pci``, ``full``, ``empty``;
        returns ``rels`` (``rels[i]``: ``rel`` before lane i, ``i`` = 0..W).
        """
        n, depth, spw = self.config.n_flags, self.config.stack_depth, self.config.sp_width
        seen = [flags[b] for b in range(n)]
        rels = [{0: Const(1)}]
        for i, ln in enumerate(lanes):
            rel = rels[i]
            ln["hazard"] = Signal(name=f"lane{i}_hazard")
            ln["fbit_pi"], ln["fbit_pci"] = Signal(name=f"lane{i}_fbit_pi"), \
                Signal(name=f"lane{i}_fbit_pci")
            ln["full"], ln["empty"] = Signal(name=f"lane{i}_full"), Signal(name=f"lane{i}_empty")
            full_terms, empty_terms = [Const(0)], [Const(0)]
            for d, at in rel.items():
                if 0 <= depth - d < (1 << spw):
                    full_terms.append(at & self._full(sp, depth - d))
                if 0 <= -d < (1 << spw):
                    empty_terms.append(at & (sp == -d))

            def pops_of(x, i=i):
                return _or_all([Const(0)] + [lq["pop_op"] & (lq["k_pci"] == x)
                                             for lq in lanes[:i]])

            m.d.comb += [
                ln["hazard"].eq(self._hazard(ln["is_pi"], pops_of(ln["k_pi"]), Const(1))
                                | self._hazard(ln["push_op"], pops_of(ln["k_pci"]), Const(1))),
                ln["fbit_pi"].eq(_flag_of(seen, ln["k_pi"])),
                ln["fbit_pci"].eq(_flag_of(seen, ln["k_pci"])),
                ln["full"].eq(_or_all(full_terms)),
                ln["empty"].eq(_or_all(empty_terms)),
            ]  # fmt: skip
            seen = [Mux(ln["setres"] & (ln["k_pci"] == b), ~ln["op"][0], seen[b])
                    for b in range(n)]  # fmt: skip
            keep = ~ln["push"] & ~ln["pop"]
            nxt = {}
            for d in range(-i - 1, i + 2):
                sig = Signal(name=f"lane{i}_after_at_{'m' if d < 0 else 'p'}{abs(d)}")
                m.d.comb += sig.eq(_or_all([Const(0)]
                                           + ([ln["push"] & rel[d - 1]] if d - 1 in rel else [])
                                           + ([ln["pop"] & rel[d + 1]] if d + 1 in rel else [])
                                           + ([keep & rel[d]] if d in rel else [])))
                nxt[d] = sig
            rels.append(nxt)
        return rels

    def _speculative_states(self, m, lanes, rels, flags, stack, sp):
        """The flag state after lanes 0..j-1 when all of them act (index j = 0..W).

        The stack pointer is the register plus the offset; a pushpf writes its flag
        at its pointer; a poppf of k reads the entry below its pointer: the value of
        the last pushpf before it in the cycle at that position, else the register's
        entry; each flag bit is the value of its last writer (setpf, resetpf, poppf).
        Only the states of lanes that did act are selected later, so the pointers
        used are in range. sp + d and stack[sp + d - 1] come from the registers alone.
        Returns each state as ``Cat(flags, stack, sp)``.
        """
        n, depth, w, spw = (self.config.n_flags, self.config.stack_depth, self.config.lanes,
                            self.config.sp_width)  # fmt: skip
        sp_at, stack_below = {}, {}
        for d in range(-w, w + 1):
            tag = f"{'m' if d < 0 else 'p'}{abs(d)}"
            sp_at[d], stack_below[d] = Signal(spw, name=f"sp_{tag}"), Signal(name=f"below_{tag}")
            m.d.comb += [sp_at[d].eq((sp + d)[:spw]),
                         stack_below[d].eq(stack.bit_select((sp + d - 1)[:spw], 1))]
        s_flags, s_stack, s_sp = [flags], [stack], [sp]
        for j, ln in enumerate(lanes):
            rel = rels[j]
            # the register's entry (behind an 8:1 mux on the pointer) enters last: the
            # value forwarded from an older pushpf of this cycle, and whether there is
            # one, come from the decode and the flags alone (timing)
            from_stack = _or_all([Const(0)] + [at & stack_below[d] for d, at in rel.items()])
            forwarded, any_forward = Const(0), Const(0)
            for q in range(j):
                lq = lanes[q]
                below = _or_all([Const(0)] + [at & rels[q][d - 1] for d, at in rel.items()
                                              if d - 1 in rels[q]])
                forwarded = Mux(lq["push"] & below, lq["fbit_pci"], forwarded)
                any_forward = any_forward | (lq["push"] & below)
            popval = Mux(any_forward, forwarded, from_stack)
            pv = Signal(name=f"lane{j}_popval")
            m.d.comb += pv.eq(popval)
            value = Mux(ln["setres"], ~ln["op"][0], pv)
            fl = Signal(n, name=f"spec{j + 1}_flags")
            m.d.comb += fl.eq(Cat(Mux((ln["setres"] | ln["pop"]) & (ln["k_pci"] == b),
                                      value, s_flags[j][b]) for b in range(n)))
            st = Signal(depth, name=f"spec{j + 1}_stack")
            m.d.comb += st.eq(Cat(
                Mux(ln["push"] & _or_all([Const(0)] + [at & (sp_at[d] == b)
                                                       for d, at in rel.items()]),
                    ln["fbit_pci"], s_stack[j][b])
                for b in range(depth)))  # fmt: skip
            nsp = Signal(spw, name=f"spec{j + 1}_sp")
            m.d.comb += nsp.eq(_or_all([Const(0, spw)] + [Mux(at, sp_at[d], 0)
                                                          for d, at in rels[j + 1].items()]))
            s_flags.append(fl)
            s_stack.append(st)
            s_sp.append(nsp)
        return [Cat(f, s, p) for f, s, p in zip(s_flags, s_stack, s_sp, strict=True)]

    def _decisions(self, m, lanes, halted):
        """The outputs of the lanes that act; ``(run, conts, effs)``.

        Lane i is reached when no lane before it stopped decode: each output of lane
        i is an early term (its own decode and what it sees, with no squash and no
        pending exception) ANDed with the late "continues" of lanes 0..i-1, which are
        computed in parallel. ``run``: decode may act; ``conts[i]``: decode goes on
        after lane i; ``effs[i]``: lane i's flag state change is made.
        """
        c = self.config
        run = Signal(name="run")  # decode may act: no squash, no pending stack exception
        m.d.comb += run.eq(~self.squash & ~halted)
        conts, effs, rdata = [], [], []
        for i, ln in enumerate(lanes):
            ok = self.valid[i] & ~ln["hazard"]  # taken when reached
            ovf = ln["push"] & ln["full"]
            unf = ln["pop"] & ln["empty"]
            on_pi = ln["is_pi"] & ln["fbit_pi"] & self.skipped[i]
            off_pi = ln["is_pi"] & ~ln["fbit_pi"] & ln["is_cti"] & self.pred_taken[i]
            cont, eff = Signal(name=f"lane{i}_cont"), Signal(name=f"lane{i}_eff")
            m.d.comb += [cont.eq(ok & ~ovf & ~unf & ~on_pi & ~off_pi),  # decode goes on
                         eff.eq(ok & ~ovf & ~unf)]  # its flag state change is made

            def reached(name, term, i=i):
                early = Signal(name=f"lane{i}_{name}_if_reached")
                m.d.comb += early.eq(run & term)
                return Cat(early, *conts).all()

            m.d.comb += [
                self.take[i].eq(reached("take", ok)),
                self.overflow[i].eq(reached("overflow", ok & ovf)),
                self.underflow[i].eq(reached("underflow", ok & unf)),
                self.dispatch[i].eq(reached("dispatch", ok & (
                    (~ln["is_pci"] & ~(ln["is_pi"] & ~ln["fbit_pi"])) | ovf | unf))),
                self.drop[i].eq(reached("drop", ok & ln["is_pi"] & ~ln["fbit_pi"])),
            ]  # fmt: skip
            with m.If(reached("stall", self.valid[i] & ln["hazard"])):
                m.d.comb += self.stall.eq(1)
            with m.If(reached("flag_mispredict", ok & on_pi)):
                m.d.comb += [self.flag_mispredict.eq(1), self.redirect.eq(1)]
            with m.If(reached("misfetch", ok & off_pi)):
                m.d.comb += [self.misfetch.eq(1), self.redirect.eq(1)]
            data = Signal(c.addr_width, name=f"lane{i}_redirect_pc")
            m.d.comb += data.eq(Mux(run & ok & (on_pi | off_pi),
                                    (self.pc[i] + 4)[:c.addr_width], 0))  # fmt: skip
            conts.append(cont)
            effs.append(eff)
            rdata.append(data)
        # redirect_pc: the fall-through of the first lane that stopped decode if it
        # redirects (its data is 0 otherwise); lane W-1 when none before it stopped.
        m.d.comb += self.redirect_pc.eq(_first_stop(conts[:c.lanes - 1], rdata))
        return run, conts, effs

    def _checkpoints(self, m, run, conts, effs, specs):
        """The checkpoint after each lane (``ckpt``).

        After lane i: the state after lanes 0..a-1, where lane a is the first of lanes
        0..i whose state change is not made (a = i + 1 when all are); with no decode
        (squash, pending exception) a = 0, and on a squash the restored checkpoint (an
        out-of-range restored pointer is clamped).
        """
        c = self.config
        n, depth = c.n_flags, c.stack_depth
        r_sp = self.restore[n + depth:]
        if (1 << c.sp_width) - 1 > depth:
            r_sp = Mux(r_sp > depth, depth, r_sp)
        restored = Cat(self.restore[:n + depth], r_sp)
        start = Signal(c.ckpt_width, name="state_start")
        m.d.comb += start.eq(Mux(self.squash, restored, specs[0]))
        for i in range(c.lanes):
            goes = [*conts[:i], effs[i]]
            first = Signal(name=f"lane{i}_first_goes")
            m.d.comb += first.eq(run & goes[0])
            m.d.comb += self.ckpt[i].eq(_first_stop([first, *goes[1:]],
                                                    [start, *specs[1:i + 2]]))

    def _decode(self, m, i, n):
        """Lane ``i``'s decode; the flag operands without the PCI/PI select (timing)."""
        if self.predecoded:
            pre = self.insn_pre[i]
            is_pci, op, is_pi, is_cti = pre.is_pci, self.insn[i][12:14], pre.is_pi, pre.is_cti
        else:
            is_pci, op, is_pi, is_cti, _k = decode_fields(m, self.insn[i], f"lane{i}")
        k_pci, k_pi = self.insn[i][15:18], self.insn[i][29:32]
        exists = (k_pci < n) if n < MAX_FLAGS else Const(1)
        ln = {"is_pci": is_pci, "op": op, "is_pi": is_pi, "is_cti": is_cti,
              "k_pci": k_pci, "k_pi": k_pi}  # fmt: skip
        for name, value in (("setres", is_pci & ~op[1]), ("push_op", is_pci & (op == 2)),
                            ("pop_op", is_pci & (op == 3)),
                            ("push", is_pci & (op == 2) & exists),
                            ("pop", is_pci & (op == 3) & exists)):  # fmt: skip
            sig = Signal(name=f"lane{i}_{name}")
            m.d.comb += sig.eq(value)
            ln[name] = sig
        return ln

    def _full(self, sp, depth):
        """A pushpf faults (instead of writing) when the stack pointer is at the depth.

        ``depth`` here is the depth less the pushes (plus the pops) of the lanes
        before it in the cycle (the register is compared with each such offset).
        """
        return sp == depth


def _first_stop(goes, values):
    """``values[f]`` for the first ``f`` with ``goes[f]`` low (``values[-1]`` if none).

    ``len(values) == len(goes) + 1``; a balanced tree of muxes whose selects are ANDs
    of ``goes`` (they arrive last), not a chain.
    """
    if not goes:
        return values[0]
    if len(goes) == 1:
        return Mux(goes[0], values[1], values[0])
    h = len(goes) // 2
    return Mux(Cat(*goes[:h]).all(), _first_stop(goes[h:], values[h:]),
               _first_stop(goes[:h], values[:h + 1]))


def _flag_of(values, k):
    """Flag ``k`` of the bits ``values`` (flags that do not exist read 0)."""
    result = Const(0)
    for b, value in enumerate(values):
        result = result | ((k == b) & value)
    return result


def _or_all(values):
    result = values[0]
    for value in values[1:]:
        result = result | value
    return result
