"""Priority selects shared by the blocks: the lowest set bit, and the accumulator victim."""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal

__all__ = ["lowest_one", "victim"]


def lowest_one(bits):
    """One-hot of the lowest set bit of ``bits`` (``x & -x``; 0 when none is set)."""
    return bits & (~bits + 1)[: len(bits)]


def victim(m: Module, valid, replaceable) -> Signal:
    """The entry a promotion takes (multi-hash paper, sec. 5): the lowest empty one,
    else the lowest replaceable one; one-hot, 0 when there is neither.

    ``valid`` and ``replaceable`` are per-entry bit vectors of one width (every
    entry of a fully associative table, or the ways of one set). Drives the
    combinational signals ``empty`` and ``target`` in ``m``; returns ``target``.
    """
    empty = Signal(len(valid), name="empty")
    target = Signal(len(valid), name="target")
    m.d.comb += [empty.eq(~valid),
                 target.eq(Mux(empty.any(), lowest_one(empty), lowest_one(replaceable)))]
    return target
