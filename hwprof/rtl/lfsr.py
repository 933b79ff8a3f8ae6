"""Maximal-length LFSR component (Fibonacci or Galois, k steps per cycle)."""

from __future__ import annotations

from functools import reduce
from operator import xor

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.lfsr import LfsrConfig
from ._params import Checked

__all__ = ["Lfsr", "step_masks"]


def step_masks(width: int, taps: tuple[int, ...], form: str, steps: int) -> list[int]:
    """Next-state stage ``i`` after ``steps`` steps as an XOR mask over current stages.

    The LFSR update is linear over GF(2). One step is written here directly from
    the register's wiring; ``steps`` of them are composed symbolically, so a
    k-step LFSR is one layer of XOR trees with no chain of k registers.
    """
    rows = [1 << i for i in range(width)]  # identity: stage i is stage i
    middle = taps[1:]
    for _ in range(steps):
        if form == "fibonacci":
            # Every stage moves one toward 0; stage width-1 takes the feedback.
            feedback = reduce(xor, (rows[t] for t in middle), rows[0])
            rows = rows[1:] + [feedback]
        else:
            # Galois: the top stage wraps to 0 and is XORed into each middle tap.
            top = rows[width - 1]
            rows = [top] + [rows[i - 1] ^ (top if i in middle else 0) for i in range(1, width)]
    return rows


class Lfsr(Checked, wiring.Component):
    """Linear feedback shift register with software load and optional lock-up escape.

    Parameters
    ----------
    width : int
        Number of stages, 3..64 (any width in :data:`hwprof.golden.lfsr.TAPS`).
    seed : int
        Reset value; non-zero (zero is the lock-up state).
    steps : int
        LFSR steps per enabled cycle, ``k >= 1``.
    form : str
        ``"fibonacci"`` (default) or ``"galois"``.
    taps : tuple of int, optional
        Feedback exponents; default from the XAPP052 table. Must be primitive.
    lockup_escape : bool
        If the register holds 0 (loaded or upset) an enabled cycle moves it to 1.
        Costs a ``width``-input zero detector and one OR gate.

    Attributes
    ----------
    enable : In(1)
        Advance ``steps`` steps at the next clock edge.
    load : In(1)
        Write ``load_data`` into the register at the next edge (wins over enable).
    load_data : In(width)
        Software-written state.
    state : Out(width)
        The register (the state a consumer uses this cycle).
    next_state : Out(width)
        What the register takes at the next edge when ``load`` or ``enable`` is set
        (``load_data`` or the advanced state), for consumers that precompute
        functions of the state (pipelined brr); it holds otherwise.

    Latency: ``state`` changes one cycle after ``enable``/``load``; reset
    (synchronous, the ``sync`` domain's) returns it to ``seed``.

    Raises
    ------
    TypeError, ValueError
        On a parameter outside the ranges above (see :class:`LfsrConfig`).
    """

    config_class = LfsrConfig

    def __init__(self, width=20, seed=1, steps=1, form="fibonacci", taps=None,
                 lockup_escape=True):  # fmt: skip
        super().__init__({
            "enable": In(1),
            "load": In(1),
            "load_data": In(width),
            "state": Out(width),
            "next_state": Out(width),
        })  # fmt: skip

    def elaborate(self, platform):
        cfg = self.config
        m = Module()
        register = Signal(cfg.width, init=cfg.seed)
        masks = step_masks(cfg.width, cfg.taps, cfg.form, cfg.steps)
        stages = [
            reduce(xor, (register[j] for j in range(cfg.width) if mask >> j & 1), Const(0, 1))
            for mask in masks
        ]
        if cfg.lockup_escape:
            # From all-zero every stage would stay 0; force stage 0 to 1 instead.
            stages[0] = stages[0] | ~register.any()
        advanced = Signal(cfg.width)
        m.d.comb += advanced.eq(Cat(*stages))
        m.d.comb += self.next_state.eq(Mux(self.load, self.load_data, advanced))
        with m.If(self.load | self.enable):
            m.d.sync += register.eq(self.next_state)
        m.d.comb += self.state.eq(register)
        return m
