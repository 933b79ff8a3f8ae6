"""Decode-stage selective-dispatch filter (Vaswani, Srikant & Thazhuthaveetil, sec. III-B, V)."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.data import ArrayLayout
from amaranth.lib.wiring import In, Out

from ..golden.dispatch import DispatchConfig
from ..golden.isa_profile import CUSTOM1, CUSTOM2, MAX_FLAGS, PCI_MASK, PI_OPS
from ._params import checked_config

__all__ = ["DispatchFilter", "decode_fields"]

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


class DispatchFilter(wiring.Component):
    """Profile flag register, flag stack and the selective-dispatch decision of W lanes.

    Each cycle the filter sees the ``lanes`` oldest fetch-queue entries (valid as a
    prefix) and decides, in program order, which are decoded (``take``; the queue
    pops them), which are dispatched and which profile instructions are dropped.
    The rules are those of :mod:`hwprof.golden.dispatch` (paper sec. III-B): setpf/
    resetpf/pushpf/poppf act here and are not dispatched; a PI of type ``k`` is
    dispatched only when flag ``k`` is set; a dropped, predicted-taken PI branch is
    a profile mis-fetch (``redirect`` to its ``pc + 4``, the queue is squashed); a
    PI marked ``skipped`` by the profile-flag predictor whose flag is on is a
    profile-flag mis-prediction (appendix A.1, ``redirect`` to ``pc + 4``); a flag
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

    Attributes
    ----------
    valid, pred_taken, skipped : In(lanes)
        Per lane: an entry is present; fetch predicted it taken; the profile-flag
        predictor skipped the block it leads.
    insn : In(ArrayLayout(32, lanes))
        Instruction words.
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
    cycles); the state is updated at the clock edge. Reset is synchronous. The
    lane decisions are computed in parallel from each lane's decode (what lane i
    sees of lanes 0..i-1 needs only their decode, see ``elaborate``); only the
    flag and stack values of the checkpoints are chained through the lanes.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.dispatch.DispatchConfig`).
    """

    def __init__(self, *, lanes=1, n_flags=1, stack_depth=8, addr_width=32):
        config = checked_config(self, lambda: DispatchConfig(
            lanes=lanes, n_flags=n_flags, stack_depth=stack_depth, addr_width=addr_width))
        self.config = config
        w = config.lanes
        super().__init__({
            "valid": In(w),
            "pred_taken": In(w),
            "skipped": In(w),
            "insn": In(ArrayLayout(32, w)),
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

        # Chain start: the registers, or the restored checkpoint on a squash.
        r_sp = self.restore[n + depth:]
        base_flags, base_stack, base_sp = Signal(n), Signal(depth), Signal(c.sp_width)
        if (1 << c.sp_width) - 1 > depth:  # an out-of-range restored pointer is clamped
            r_sp = Mux(r_sp > depth, depth, r_sp)
        m.d.comb += [base_flags.eq(Mux(self.squash, self.restore[:n], flags)),
                     base_stack.eq(Mux(self.squash, self.restore[n:n + depth], stack)),
                     base_sp.eq(Mux(self.squash, r_sp, sp))]  # fmt: skip

        # Decode of every lane, and what lane i sees of the lanes before it, computed in
        # parallel from the decode alone (timing: no lane waits for the previous lane's
        # result). Lane i only acts when every lane before it was taken without an
        # exception or a redirect (otherwise decode stopped before it), so:
        # * the flags popped before it are the poppf operands of lanes 0..i-1;
        # * the stack pointer it sees is the start pointer plus the pushpf and minus
        #   the poppf of lanes 0..i-1 (flags that exist: the others change nothing);
        # * the flag k it reads (a PI, or a pushpf) is the value of the last
        #   setpf/resetpf of k in lanes 0..i-1, else the register's: a poppf of k
        #   before it is a RAW hazard (a stall), so it never reads a popped value.
        lanes = []
        for i in range(w):
            is_pci, op, is_pi, is_cti, k = decode_fields(m, self.insn[i], f"lane{i}")
            onehot = Signal(MAX_FLAGS, name=f"lane{i}_onehot")
            m.d.comb += onehot.eq(Const(1, MAX_FLAGS) << k)
            exists = (k < n) if n < MAX_FLAGS else Const(1)
            lanes.append((is_pci, op, is_pi, is_cti, k, onehot, exists))
        # A lane decides only when no squash is pending (a squash stops every lane),
        # so its decisions read the registers, not the restored checkpoint.
        flags_ext = Cat(flags, Const(0, MAX_FLAGS - n)) if n < MAX_FLAGS else flags
        popped = Const(0, MAX_FLAGS)
        pushes, pops = Const(0, 2), Const(0, 2)  # successful pushpf / poppf before lane i
        seen = []  # per lane: popped before it, its pointer, flag read, stack full / empty
        for i, (is_pci, op, _is_pi, _, k, onehot, exists) in enumerate(lanes):
            lane_popped, lane_sp = Signal(MAX_FLAGS, name=f"lane{i}_popped_before"), \
                Signal(c.sp_width, name=f"lane{i}_sp_in")
            fbit = Signal(name=f"lane{i}_fbit")
            full, empty = Signal(name=f"lane{i}_full"), Signal(name=f"lane{i}_empty")
            value = flags_ext.bit_select(k, 1)
            for j in range(i):
                j_pci, j_op, _, _, j_k, _, j_exists = lanes[j]
                writes = j_pci & ~j_op[1] & j_exists & (j_k == k)  # setpf/resetpf of k
                value = Mux(writes, ~j_op[0], value)
            # the pointer lane i sees is sp + pushes - pops: full/empty compare the
            # register with each possible offset in parallel, the offset selects
            full_terms, empty_terms = [Const(0)], [Const(0)]
            for p in range(i + 1):
                for q in range(i + 1 - p):
                    at = (pushes == p) & (pops == q)
                    if 0 <= depth - (p - q) < (1 << c.sp_width):
                        full_terms.append(at & self._full(sp, depth - (p - q)))
                    if q >= p and q - p < (1 << c.sp_width):
                        empty_terms.append(at & (sp == q - p))
            m.d.comb += [lane_popped.eq(popped),
                         lane_sp.eq((sp + pushes - pops)[:c.sp_width]),
                         fbit.eq(value), full.eq(_or_all(full_terms)),
                         empty.eq(_or_all(empty_terms))]  # fmt: skip
            seen.append((lane_popped, lane_sp, fbit, full, empty))
            push = is_pci & (op == 2) & exists
            pop = is_pci & (op == 3) & exists
            popped = popped | Mux(is_pci & (op == 3), onehot, 0)
            pushes, pops = (pushes + push)[:2], (pops + pop)[:2]

        # In program order: the decision of each lane, and the flag state after it
        # (flags and stack contents chained through 2:1 muxes whose selects come
        # from the parallel part above).
        cur_flags, cur_stack, cur_sp = base_flags, base_stack, base_sp
        stopped = self.squash | halted
        redirects = []
        for i, (is_pci, op, is_pi, is_cti, _k, onehot, exists) in enumerate(lanes):
            popped, lane_sp, fbit, full, empty = seen[i]
            reads = is_pi | (is_pci & (op == 2))
            hazard = self._hazard(reads, popped, onehot)
            fl, st, sp_o = Signal(n, name=f"lane{i}_flags"), Signal(depth, name=f"lane{i}_stack"), \
                Signal(c.sp_width, name=f"lane{i}_sp")
            stop_o = Signal(name=f"lane{i}_stop")
            redirect = Signal(name=f"lane{i}_redirect")
            m.d.comb += [fl.eq(cur_flags), st.eq(cur_stack), sp_o.eq(cur_sp), stop_o.eq(stopped)]
            fall_through = Signal(c.addr_width, name=f"lane{i}_fall_through")
            m.d.comb += fall_through.eq((self.pc[i] + 4)[:c.addr_width])
            redirects.append((redirect, fall_through))
            sp_mask = (Const(1, depth) << lane_sp)[:depth]
            top = Signal(c.sp_width, name=f"lane{i}_top")
            m.d.comb += top.eq(lane_sp - 1)
            mask_n = onehot[:n]
            with m.If(~stopped):
                with m.If(~self.valid[i]):
                    m.d.comb += stop_o.eq(1)
                with m.Elif(hazard):
                    m.d.comb += [stop_o.eq(1), self.stall.eq(1)]
                with m.Else():
                    m.d.comb += self.take[i].eq(1)
                    with m.If(is_pci):
                        with m.If(op == 0):
                            m.d.comb += fl.eq(cur_flags | mask_n)
                        with m.Elif(op == 1):
                            m.d.comb += fl.eq(cur_flags & ~mask_n)
                        with m.Elif(op == 2):
                            with m.If(exists):
                                with m.If(full):
                                    m.d.comb += [self.overflow[i].eq(1), self.dispatch[i].eq(1),
                                                 stop_o.eq(1)]  # fmt: skip
                                with m.Else():
                                    m.d.comb += [
                                        st.eq(Mux(fbit, cur_stack | sp_mask,
                                                  cur_stack & ~sp_mask)),
                                        sp_o.eq(lane_sp + 1),
                                    ]  # fmt: skip
                        with m.Else():
                            with m.If(exists):
                                with m.If(empty):
                                    m.d.comb += [self.underflow[i].eq(1), self.dispatch[i].eq(1),
                                                 stop_o.eq(1)]  # fmt: skip
                                with m.Else():
                                    bit = cur_stack.bit_select(top, 1)
                                    m.d.comb += [
                                        sp_o.eq(top),
                                        fl.eq(Mux(bit, cur_flags | mask_n,
                                                  cur_flags & ~mask_n)),
                                    ]  # fmt: skip
                    with m.Elif(is_pi):
                        with m.If(fbit):
                            m.d.comb += self.dispatch[i].eq(1)
                            with m.If(self.skipped[i]):
                                m.d.comb += [redirect.eq(1), self.flag_mispredict.eq(1),
                                             stop_o.eq(1)]  # fmt: skip
                        with m.Else():
                            m.d.comb += self.drop[i].eq(1)
                            with m.If(is_cti & self.pred_taken[i]):
                                m.d.comb += [redirect.eq(1), self.misfetch.eq(1),
                                             stop_o.eq(1)]  # fmt: skip
                    with m.Else():
                        m.d.comb += self.dispatch[i].eq(1)
            m.d.comb += self.ckpt[i].eq(Cat(fl, st, sp_o))
            cur_flags, cur_stack, cur_sp, stopped = fl, st, sp_o, stop_o
        # At most one lane redirects (decode stops behind it): an AND-OR, not a chain.
        m.d.comb += [
            self.redirect.eq(Cat(r for r, _ in redirects).any()),
            self.redirect_pc.eq(_or_all([Mux(r, ft, 0) for r, ft in redirects])),
        ]  # fmt: skip
        m.d.sync += [flags.eq(cur_flags), stack.eq(cur_stack), sp.eq(cur_sp)]
        with m.If(self.squash):
            m.d.sync += halted.eq(0)
        with m.Elif(self.overflow.any() | self.underflow.any()):
            m.d.sync += halted.eq(1)
        return m

    def _full(self, sp, depth):
        """A pushpf faults (instead of writing) when the stack pointer is at the depth.

        ``depth`` here is the depth less the pushes (plus the pops) of the lanes
        before it in the cycle (the register is compared with each such offset).
        """
        return sp == depth


def _or_all(values):
    result = values[0]
    for value in values[1:]:
        result = result | value
    return result
