"""Branch-on-random unit (Lee & Zilles, CGO 2008, section 3.3)."""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.brr import FREQS, BrrConfig
from ._params import Checked
from .lfsr import Lfsr

__all__ = ["Brr", "and_chain", "mux_tree"]


def and_chain(value, positions):
    """The 16 outcome terms: ``terms[f]`` ANDs ``value[positions[0..f]]`` (15 AND2)."""
    terms = [value[positions[0]]]
    for p in positions[1:]:
        terms.append(terms[-1] & value[p])
    return Cat(*terms)


def mux_tree(terms, select):
    """``terms[select]`` as a balanced tree of 2:1 muxes (15 MUX2 for 16 terms)."""
    level = [terms[i] for i in range(len(terms))]
    for bit in range(len(select)):
        level = [Mux(select[bit], level[i + 1], level[i]) for i in range(0, len(level), 2)]
    return level[0]


class Brr(Checked, wiring.Component):
    """Decode-stage branch-on-random unit.

    A brr is taken with probability ``2^-(freq+1)``: the AND of ``freq + 1`` LFSR
    stages (15 AND gates, one 16:1 mux on ``freq``). The LFSR advances once per
    cycle with ``decode_valid`` (``lfsr_steps`` single steps in one XOR layer: the
    searched layout that keeps brr up to 8 decodes apart nearly independent, see
    docs/brr.md). The brr is always predicted not-taken and is resolved here, so
    ``redirect`` is the decode-stage front-end redirect.

    Parameters
    ----------
    width : int
        LFSR width, 16..32 (default 20).
    seed : int
        LFSR reset state (non-zero).
    pipelined : bool
        Latch the 16 AND terms of the *next* state in flops (paper: "outputs of the
        AND gates are computed in the previous cycle and latched"); ``taken`` is
        then one 16:1 mux deep. Outcomes are identical to ``pipelined=False``.
    lockup_escape : bool
        Leave the all-zero LFSR state on the next brr (default on).
    positions, taps : tuple of int, optional
        Override the outcome stages / LFSR taps (defaults from ``hwprof.golden``).
    lfsr_steps : int, optional
        LFSR steps per brr (one XOR layer); default the searched layout's
        (:func:`hwprof.golden.brr.outcome_layout`).

    Attributes
    ----------
    decode_valid : In(1)
        A brr is in decode this cycle; the LFSR steps at the clock edge.
    freq : In(4)
        The brr's frequency field.
    taken : Out(1)
        Outcome for the current state and ``freq`` (combinational, latency 0),
        whether or not ``decode_valid`` is set.
    redirect : Out(1)
        ``decode_valid & taken``: redirect fetch to the brr target.
    state : Out(width)
        LFSR state (software read).
    load_valid : In(1)
        Write ``load_data`` into the LFSR at the clock edge (wins over decode).
    load_data : In(width)
        Software-written LFSR state.

    Latency: ``taken``/``redirect`` 0 cycles (same cycle as ``decode_valid``);
    ``state`` reflects a step or load one cycle later. Reset is synchronous.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range (see :class:`hwprof.golden.brr.BrrConfig`).
    """

    config_class = BrrConfig

    def __init__(self, width=20, seed=1, pipelined=False, lockup_escape=True, positions=None,
                 taps=None, lfsr_steps=None):  # fmt: skip
        super().__init__({
            "decode_valid": In(1),
            "freq": In(4),
            "taken": Out(1),
            "redirect": Out(1),
            "state": Out(width),
            "load_valid": In(1),
            "load_data": In(width),
        })  # fmt: skip

    def elaborate(self, platform):
        cfg = self.config
        m = Module()
        m.submodules.lfsr = lfsr = Lfsr(width=cfg.width, seed=cfg.seed, taps=cfg.taps,
                                        steps=cfg.lfsr_steps,
                                        lockup_escape=cfg.lockup_escape)  # fmt: skip
        m.d.comb += [
            lfsr.enable.eq(self.decode_valid),
            lfsr.load.eq(self.load_valid),
            lfsr.load_data.eq(self.load_data),
            self.state.eq(lfsr.state),
        ]
        if cfg.pipelined:
            seed_terms = 0
            for f, mask in enumerate(cfg.outcome_masks):
                seed_terms |= int(cfg.seed & mask == mask) << f
            terms = Signal(FREQS, init=seed_terms)
            with m.If(self.load_valid | self.decode_valid):
                m.d.sync += terms.eq(and_chain(lfsr.next_state, cfg.positions))
        else:
            terms = Signal(FREQS)  # named: mux_tree slices it 16 times (else 100 KB of Verilog)
            m.d.comb += terms.eq(and_chain(lfsr.state, cfg.positions))
        m.d.comb += [
            self.taken.eq(mux_tree(terms, self.freq)),
            self.redirect.eq(self.decode_valid & self.taken),
        ]
        return m
