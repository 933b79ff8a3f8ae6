"""Superscalar brr: one LFSR per lane, or one LFSR shared in program order (sec. 3.3)."""

from __future__ import annotations

from functools import reduce
from operator import or_, xor

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.brr_variants import XLEN, BrrReplicatedConfig, BrrSharedConfig
from ._params import Checked
from .brr import Brr, and_chain, mux_tree
from .brr_decode import BrrLane
from .lfsr import step_masks

__all__ = ["BrrReplicated", "BrrShared", "advanced_by"]

_COMMON_DOC = """
    Attributes
    ----------
    insn : In(32 * lanes)
        Instruction words of the packet, lane 0 (oldest) in the low 32 bits.
    pc : In(32 * lanes)
        Their addresses (only with ``target_adder``).
    valid : In(lanes)
        Bit ``i``: lane ``i`` holds an instruction.
    is_brr : Out(lanes)
        Valid brr words.
    request : Out(lanes)
        The lane's brr is served this cycle (its LFSR step happens at the edge).
    redirect_valid : Out(lanes)
        The lane's brr is served and taken (the front end follows the oldest).
    redirect_target : Out(32 * lanes)
        ``pc + offset`` per lane (only with ``target_adder``).
    btb_inhibit : Out(lanes)
        Never insert a BTB entry for these instructions (every brr word).
"""


def _lane_members(lanes: int, target_adder: bool) -> dict:
    members = {
        "insn": In(XLEN * lanes), "valid": In(lanes), "is_brr": Out(lanes),
        "request": Out(lanes), "redirect_valid": Out(lanes), "btb_inhibit": Out(lanes),
    }  # fmt: skip
    if target_adder:
        members.update(pc=In(XLEN * lanes), redirect_target=Out(XLEN * lanes))
    return members


def _lanes(m, component, lanes: int, target_adder: bool) -> list[BrrLane]:
    """Instantiate and wire one :class:`BrrLane` per slot of the packet."""
    result = []
    for i in range(lanes):
        lane = BrrLane(target_adder)
        m.submodules[f"lane{i}"] = lane
        word = slice(i * XLEN, (i + 1) * XLEN)
        m.d.comb += [lane.insn.eq(component.insn[word]), lane.valid.eq(component.valid[i])]
        if target_adder:
            m.d.comb += [lane.pc.eq(component.pc[word]),
                         component.redirect_target[word].eq(lane.target)]  # fmt: skip
        m.d.comb += [component.is_brr[i].eq(lane.is_brr),
                     component.btb_inhibit[i].eq(lane.is_brr)]  # fmt: skip
        result.append(lane)
    return result


class BrrReplicated(Checked, wiring.Component):
    __doc__ = """Superscalar brr with one decoupled LFSR per decode lane (``brr_replicated``).

    Paper: "replicate the hardware at each instruction decoder ... multiple,
    completely decoupled LFSRs". Lane ``i``'s LFSR starts at ``seed`` jumped
    ``i * spacing`` steps (about equally spaced on the cycle, spacing chosen by
    :func:`hwprof.golden.brr_variants.lane_spacing` so that the lanes are exactly
    independent at reset) and steps only when its lane decodes a brr; lanes that
    drift apart are independent at most, not all, relative positions
    (:func:`hwprof.golden.brr_variants.lane_distance_profile`, docs/brr-variants.md).
    Every lane's brr is served.

    Parameters
    ----------
    lanes : int
        Decode width, 1..16.
    width, seed, lockup_escape, target_adder, positions, taps
        As :class:`hwprof.rtl.brr_decode.BrrDecode`.
    """ + _COMMON_DOC + """    state : Out(width * lanes)
        The lanes' LFSR states.

    Latency: outputs combinational; states move one cycle after ``request``.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (:class:`hwprof.golden.brr_variants.BrrReplicatedConfig`).
    """

    config_class = BrrReplicatedConfig

    def __init__(self, lanes=4, width=20, seed=1, lockup_escape=False, target_adder=True,
                 positions=None, taps=None):  # fmt: skip
        members = _lane_members(lanes, target_adder)
        members["state"] = Out(width * lanes)
        super().__init__(members)

    def elaborate(self, platform):
        cfg = self.config
        m = Module()
        lanes = _lanes(m, self, cfg.lanes, cfg.target_adder)
        for i, (lane, seed) in enumerate(zip(lanes, cfg.seeds, strict=True)):
            unit = Brr(width=cfg.width, seed=seed, lockup_escape=cfg.lockup_escape,
                       positions=cfg.positions, taps=cfg.taps)  # fmt: skip
            m.submodules[f"unit{i}"] = unit
            m.d.comb += [
                unit.decode_valid.eq(lane.is_brr),
                unit.freq.eq(lane.freq),
                unit.load_valid.eq(0),
                self.request[i].eq(lane.is_brr),
                self.redirect_valid[i].eq(unit.redirect),
                self.state[i * cfg.width:(i + 1) * cfg.width].eq(unit.state),
            ]
        return m


def advanced_by(register, masks):
    """The register after the steps whose next-state masks are ``masks`` (XOR trees)."""
    width = len(register)
    return Cat(*(
        reduce(xor, (register[j] for j in range(width) if mask >> j & 1), Const(0, 1))
        for mask in masks
    ))  # fmt: skip


class BrrShared(Checked, wiring.Component):
    __doc__ = """Superscalar brr with one LFSR shared by every lane (``brr_shared``).

    Paper, footnote 3: the decoders arbitrate for a single LFSR with a priority
    encoder in program order; brr beyond what it serves are decoded the next
    cycle (the packet is split). Here one cycle serves up to ``steps`` brr: the
    ``j``-th brr of the packet (``j = 0, 1, ...``, in lane order) reads the
    register advanced ``j`` LFSR steps, and the register advances by the number
    served (the LFSR library's multi-step next-state functions, one XOR layer
    each, then a barrel of 1, 2, 4, ... step stages).

    Structure: a one-hot count of the brr before each lane (the priority
    encoder); per rank ``j`` one 16:1 outcome mux over the AND terms of the
    ``j``-step state, driven by the ``freq`` of the lane holding the ``j``-th
    brr; each lane takes the outcome of its rank. The outcome logic grows with
    ``steps`` (one AND chain and mux per rank), not with ``lanes * steps``.

    Parameters
    ----------
    lanes : int
        Decode width, 1..16.
    steps : int
        brr served per cycle, 1..lanes (``lanes``: never a split).
    width, seed, target_adder, positions, taps
        As :class:`hwprof.rtl.brr_decode.BrrDecode` (no lock-up escape).
    """ + _COMMON_DOC + """    split : Out(1)
        The packet holds more brr than ``steps``: lane ``split_at`` and every
        younger lane get no effect now and must be decoded again next cycle.
    split_at : Out(range(lanes))
        Lane of the first brr not served (0 when ``split`` is low).
    state : Out(width)
        The shared LFSR.

    Latency: outputs combinational; ``state`` moves one cycle after a request.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (:class:`hwprof.golden.brr_variants.BrrSharedConfig`).
    """

    config_class = BrrSharedConfig

    def __init__(self, lanes=4, steps=1, width=20, seed=1, target_adder=True, positions=None,
                 taps=None):  # fmt: skip
        members = _lane_members(lanes, target_adder)
        members.update(split=Out(1), split_at=Out(range(max(lanes, 2))), state=Out(width))
        super().__init__(members)

    def elaborate(self, platform):
        cfg = self.config
        m = Module()
        lanes = _lanes(m, self, cfg.lanes, cfg.target_adder)
        register = Signal(cfg.width, init=cfg.seed)
        # ranked[j]: the register advanced j steps, read by the j-th brr of the packet.
        # Named signals keep the netlist a DAG: a slice of an unnamed Cat would
        # copy the whole expression into every user.
        k = cfg.brr_config.lfsr_steps  # LFSR steps per brr
        ranked = [register]
        for j in range(1, max(cfg.steps, 2)):
            ranked.append(Signal(cfg.width, name=f"advanced{j}"))
            m.d.comb += ranked[j].eq(
                advanced_by(register, step_masks(cfg.width, cfg.taps, "fibonacci", j * k)))
        # Priority encoder in program order, one-hot: before[i][j] is high when j brr
        # precede lane i (saturating at j = steps: the LFSR is spent for this cycle).
        spent = cfg.steps
        before = [Const(1, spent + 1)]
        split = Const(0, 1)
        split_at = Const(0, range(max(cfg.lanes, 2)))
        for i, lane in enumerate(lanes):
            one_more = Cat(Const(0, 1), before[i][:spent]) | (before[i][spent] << spent)
            before.append(Signal(spent + 1, name=f"brr_before{i + 1}"))
            m.d.comb += before[i + 1].eq(Mux(lane.is_brr, one_more, before[i]))
            first_unserved = lane.is_brr & before[i][spent] & ~split
            next_split = Signal(name=f"split{i + 1}")
            next_split_at = Signal.like(self.split_at, name=f"split_at{i + 1}")
            m.d.comb += [next_split.eq(split | first_unserved),
                         next_split_at.eq(Mux(first_unserved, i, split_at))]  # fmt: skip
            split, split_at = next_split, next_split_at
        # One outcome per rank: the j-th brr (in lane j or younger) routes its freq
        # to the mux over terms[j]; each lane then takes the outcome of its rank.
        outcomes = []
        for j in range(cfg.steps):
            freq = lanes[-1].freq
            for i in reversed(range(j, cfg.lanes - 1)):
                freq = Mux(lanes[i].is_brr & before[i][j], lanes[i].freq, freq)
            terms = Signal(len(cfg.positions), name=f"terms{j}")
            rank_freq = Signal(4, name=f"freq_of_rank{j}")
            outcomes.append(Signal(name=f"outcome_of_rank{j}"))
            m.d.comb += [terms.eq(and_chain(ranked[j], cfg.positions)),
                         rank_freq.eq(freq),
                         outcomes[j].eq(mux_tree(terms, rank_freq))]  # fmt: skip
        for i, lane in enumerate(lanes):
            served = lane.is_brr & ~before[i][spent]
            outcome = outcomes[0]
            for j in range(1, min(i + 1, cfg.steps)):
                outcome = Mux(before[i][j], outcomes[j], outcome)
            m.d.comb += [self.request[i].eq(served), self.redirect_valid[i].eq(served & outcome)]
        m.d.comb += [self.split.eq(split), self.split_at.eq(split_at), self.state.eq(register)]
        # Advance by the number served, n = 1 + (n - 1): one step, then a barrel of
        # 2^b-step stages selected by the bits of n - 1.
        served_count = before[-1]
        advanced = ranked[1]
        for b in range((cfg.steps - 1).bit_length()):
            select = reduce(or_, (served_count[n] for n in range(1, spent + 1)
                                  if (n - 1) >> b & 1))  # fmt: skip
            stage = Signal(cfg.width, name=f"advanced_barrel{b}")
            masks = step_masks(cfg.width, cfg.taps, "fibonacci", (1 << b) * k)
            m.d.comb += stage.eq(Mux(select, advanced_by(advanced, masks), advanced))
            advanced = stage
        with m.If(~served_count[0]):
            m.d.sync += register.eq(advanced)
        return m
