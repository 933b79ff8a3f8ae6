"""Decode-stage brr: instruction recognition, redirect and BTB inhibit (paper sec. 3.3)."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.brr_isa import MATCH_MASK, MATCH_VALUE
from ..golden.brr_variants import XLEN, BrrDecodeConfig
from ._params import Checked
from .brr import Brr

__all__ = ["brr_word", "BrrLane", "BrrDecode"]


def brr_word(insn):
    """``(match, freq, offset)`` of a 32-bit word: brr recognition and its fields.

    ``match`` compares the opcode, funct3, the reserved rs1 field and bit 24 with
    the brr encoding (docs/isa.md); ``offset`` is the signed B-type immediate.
    """
    match = (insn & MATCH_MASK) == MATCH_VALUE
    freq = insn[20:24]
    offset = Cat(Const(0, 1), insn[8:12], insn[25:31], insn[7], insn[31]).as_signed()
    return match, freq, offset


class BrrLane(wiring.Component):
    """One decoder lane's brr logic, combinational (no LFSR).

    Parameters
    ----------
    target_adder : bool
        Include the ``pc + offset`` adder (else the core's B-type adder is used).

    Attributes
    ----------
    insn : In(32)
        The instruction word in this decode slot.
    pc : In(32)
        Its address (only with ``target_adder``).
    valid : In(1)
        The slot holds an instruction.
    is_brr : Out(1)
        ``valid`` and the word is a brr.
    freq : Out(4)
        Its frequency field (for the outcome mux).
    target : Out(32)
        ``pc + offset`` (B-type immediate of the word, whatever the word is).

    Latency: 0 (combinational).
    """

    def __init__(self, target_adder=True):
        self.target_adder = target_adder
        members = {"insn": In(XLEN), "valid": In(1), "is_brr": Out(1), "freq": Out(4)}
        if target_adder:
            members.update(pc=In(XLEN), target=Out(XLEN))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        match, freq, offset = brr_word(self.insn)
        m.d.comb += [self.is_brr.eq(self.valid & match), self.freq.eq(freq)]
        if self.target_adder:
            m.d.comb += self.target.eq((self.pc + offset)[:XLEN])
        return m


class BrrDecode(Checked, wiring.Component):
    """Decode-stage branch-on-random for one decoder lane (catalog ``brr_decode``).

    Recognises the brr word, steps the LFSR of its brr unit
    (:class:`hwprof.rtl.brr.Brr`) at the end of a cycle in which a brr decodes,
    and redirects the front end when the brr is taken (it is always predicted
    not-taken, so a taken brr is a decode-stage misprediction). A brr never
    allocates a BTB entry. Any other word: no redirect, no LFSR step.

    Parameters
    ----------
    width, seed, lockup_escape, positions, taps
        The brr unit's (see :class:`hwprof.rtl.brr.Brr`); ``lockup_escape``
        defaults off: there is no write port, so state 0 is unreachable.
    target_adder : bool
        Compute ``redirect_target`` here; off, the core's decode-stage B-type
        target adder gives the target (the immediate is in the B-type bits).

    Attributes
    ----------
    insn : In(32)
        Instruction word in decode.
    pc : In(32)
        Its address (only with ``target_adder``).
    valid : In(1)
        ``insn`` is a real instruction this cycle.
    is_brr : Out(1)
        ``valid`` and the word is a brr.
    request : Out(1)
        The LFSR steps at this clock edge (equals ``is_brr``).
    redirect_valid : Out(1)
        A taken brr: redirect fetch to ``redirect_target`` (decode-stage redirect).
    redirect_target : Out(32)
        ``pc + offset`` (only with ``target_adder``; meaningful with
        ``redirect_valid``).
    btb_inhibit : Out(1)
        Do not insert a BTB entry for this instruction (set for every brr).
    state : Out(width)
        The LFSR state.

    Latency: every output is combinational in the decode cycle; ``state`` moves
    one cycle after ``request``. Reset (synchronous) reloads ``seed``.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.brr_variants.BrrDecodeConfig`).
    """

    config_class = BrrDecodeConfig

    def __init__(self, width=20, seed=1, lockup_escape=False, target_adder=True, positions=None,
                 taps=None):  # fmt: skip
        members = {"insn": In(XLEN), "valid": In(1), "is_brr": Out(1), "request": Out(1),
                   "redirect_valid": Out(1), "btb_inhibit": Out(1), "state": Out(width)}
        if target_adder:
            members.update(pc=In(XLEN), redirect_target=Out(XLEN))
        super().__init__(members)

    def elaborate(self, platform):
        cfg = self.config
        m = Module()
        m.submodules.lane = lane = BrrLane(cfg.target_adder)
        m.submodules.unit = unit = Brr(width=cfg.width, seed=cfg.seed,
                                       lockup_escape=cfg.lockup_escape,
                                       positions=cfg.positions, taps=cfg.taps)  # fmt: skip
        m.d.comb += [
            lane.insn.eq(self.insn),
            lane.valid.eq(self.valid),
            unit.decode_valid.eq(lane.is_brr),
            unit.freq.eq(lane.freq),
            unit.load_valid.eq(0),
            self.is_brr.eq(lane.is_brr),
            self.request.eq(lane.is_brr),
            self.btb_inhibit.eq(lane.is_brr),
            self.redirect_valid.eq(unit.redirect),
            self.state.eq(unit.state),
        ]
        if cfg.target_adder:
            m.d.comb += [lane.pc.eq(self.pc), self.redirect_target.eq(lane.target)]
        return m
