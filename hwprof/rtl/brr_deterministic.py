"""Deterministic brr: shift-back history for squash recovery, CSR and scan access (sec. 3.4)."""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.brr_deterministic import BrrDeterministicConfig, count_bits
from ._params import Checked
from .brr import and_chain, mux_tree
from .brr_superscalar import advanced_by
from .lfsr import step_masks

__all__ = ["BrrDeterministic", "shift_back"]


def shift_back(chain, count):
    """The LFSR+history register shifted back ``count`` brr: their shifted-off bits return.

    A log-depth barrel shifter toward the top (one stage when ``count`` is 1 bit).
    """
    return (chain << count)[:len(chain)]


class BrrDeterministic(Checked, wiring.Component):
    """Branch-on-random whose committed outcomes do not depend on squashes.

    The Fibonacci LFSR shifts toward stage 0; the stage that falls off the end
    at each brr is kept in a ``max_inflight``-bit history register placed below
    it, so LFSR and history form one ``width + max_inflight``-bit shift register:
    a brr shifts it right (feedback into the top stage), and a squash of ``n``
    brr shifts it left by ``n``, which restores the state the first squashed brr
    read (the feedback bit that is shifted out is recomputable). A counter of the
    brr in flight (decoded, not committed) guards the history: a brr decoded
    while ``max_inflight`` are in flight is refused and reported (``overflow``).

    Parameters
    ----------
    width, seed, positions, taps
        As :class:`hwprof.rtl.brr.Brr` (no lock-up escape: it is not a shift).
    max_inflight : int
        History bits, 1..64.
    rob_walk : bool
        Reverse-execution recovery: ``squash`` is a strobe, one brr removed
        from the ROB per cycle, and the register shifts back one stage (no
        barrel shifter). Default: any count per cycle (checkpointed counter).

    Attributes
    ----------
    decode_valid : In(1)
        A brr is in decode.
    freq : In(4)
        Its frequency field.
    commit : In(range(max_inflight + 1))
        The oldest ``commit`` brr in flight retire this cycle.
    squash : In(range(max_inflight + 1)), or In(1) with ``rob_walk``
        The youngest ``squash`` brr in flight (after this cycle's commits) are
        squashed; a brr in decode in the same cycle is squashed with them.
    write_valid, write_data : In(1), In(width)
        CSR-style write of the LFSR state (serializing: forgets brr in flight).
    scan_enable, scan_in : In(1), In(1)
        Scan-chain mode: the LFSR shifts one stage toward 0 per cycle, ``scan_in``
        enters the top stage (serializing, like a write).
    taken : Out(1)
        Outcome for the current state and ``freq``.
    accept : Out(1)
        The brr in decode is served this cycle (LFSR steps at the edge): not
        ``full``, no squash, no write or scan shift this cycle.
    redirect : Out(1)
        ``accept & taken``.
    overflow : Out(1)
        ``decode_valid`` while ``full``: the brr is refused, decode must stall.
    protocol_error : Out(1)
        ``commit + squash`` exceeds the brr in flight (no write or scan this
        cycle): the core lost count. The cycle's commit, squash and decode take
        no effect (state and counter hold, ``accept`` low).
    full : Out(1)
        ``max_inflight`` brr are in flight.
    inflight : Out(range(max_inflight + 1))
        brr in flight.
    state : Out(width)
        LFSR state (CSR-style read).
    scan_out : Out(1)
        Stage 0 (the bit the next scan shift moves out).

    Latency: outputs combinational; state and counters move at the clock edge.
    Priority at the edge: reset, write, scan, then commit/squash/decode.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range
        (:class:`hwprof.golden.brr_deterministic.BrrDeterministicConfig`).
    """

    config_class = BrrDeterministicConfig

    def __init__(self, width=20, seed=1, max_inflight=8, rob_walk=False, positions=None,
                 taps=None):  # fmt: skip
        count = range(max_inflight + 1)
        super().__init__({
            "decode_valid": In(1), "freq": In(4), "commit": In(count),
            "squash": In(1) if rob_walk else In(count),
            "write_valid": In(1), "write_data": In(width), "scan_enable": In(1),
            "scan_in": In(1),
            "taken": Out(1), "accept": Out(1), "redirect": Out(1), "overflow": Out(1),
            "protocol_error": Out(1),
            "full": Out(1), "inflight": Out(count), "state": Out(width),
            "scan_out": Out(1),
        })  # fmt: skip

    def elaborate(self, platform):
        cfg = self.config
        m = Module()
        w, h = cfg.width, cfg.max_inflight
        bits = count_bits(h)
        # One shift register: history in bits [0, h), LFSR in [h, h + w).
        chain = Signal(w + h, init=cfg.seed << h)
        state = chain[h:]
        inflight = Signal(bits)
        full = inflight >= h
        serial = self.write_valid | self.scan_enable
        # In flight after this cycle's commits and squashes; negative: the core lost count.
        remaining = Signal(signed(bits + 2))
        m.d.comb += remaining.eq(inflight - self.commit - self.squash)
        lost_count = ~serial & remaining[-1]
        accept = self.decode_valid & ~full & ~self.squash.any() & ~serial & ~lost_count
        terms = Signal(len(cfg.positions))  # named: mux_tree slices it 16 times
        m.d.comb += terms.eq(and_chain(state, cfg.positions))
        taken = mux_tree(terms, self.freq)
        feedback = advanced_by(state, step_masks(w, cfg.taps, "fibonacci", 1))[w - 1]
        m.d.comb += [
            self.taken.eq(taken),
            self.accept.eq(accept),
            self.redirect.eq(accept & taken),
            self.overflow.eq(self.decode_valid & full),
            self.protocol_error.eq(lost_count),
            self.full.eq(full),
            self.inflight.eq(inflight),
            self.state.eq(state),
            self.scan_out.eq(state[0]),
        ]
        forward = Cat(chain[1:], feedback)
        with m.If(self.write_valid):
            m.d.sync += [state.eq(self.write_data), inflight.eq(0)]
        with m.Elif(self.scan_enable):
            m.d.sync += [state.eq(Cat(state[1:], self.scan_in)), inflight.eq(0)]
        with m.Else():
            # A lost count holds everything (accept is low then too).
            with m.If(~lost_count):
                m.d.sync += inflight.eq(remaining + accept)
            with m.If(self.squash.any() & ~lost_count):
                m.d.sync += chain.eq(shift_back(chain, self.squash))
            with m.Elif(accept):
                m.d.sync += chain.eq(forward)
        return m
