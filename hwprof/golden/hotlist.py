"""Software baselines: the Gibbons-Matias hotlist and the section 5 overhead model.

Hotlist (Burrows et al., "Efficient and Flexible Value Sampling", sec. 2.2,
after Gibbons & Matias [SIGMOD 1998]): Gibbons and Matias' *concise samples*
(not their *counting samples*, which count every later occurrence of a value
once it is in the sample). A probability ``p`` (initially 1) and a table ``C``
of at most ``N`` non-zero counters. For each value ``v`` of the stream, ``C[v] +=
1`` with probability ``p`` -- whether or not ``v`` is already in the table. While
that leaves more than ``N`` non-zero counters: ``p := p / f`` and every ``C[v]``
is replaced by the number of heads in ``C[v]`` tosses of a coin with heads
probability ``1/f`` (:meth:`Hotlist.thin`). ``C[v] / p`` is an unbiased estimate
of the occurrences of ``v`` (``C[v] / p - n(v)`` is a martingale: an add changes
it by 0 in expectation, and so does a thinning). Burrows et al. use ``N = 16``,
``f = 16/15``, and run one hotlist *per program location* (per static load pc
and kind of value): a :class:`Hotlist` is one such instance, fed the values
seen at one pc, not a summary of a whole ``<pc, value>`` stream.

Overhead (Sastry et al., sec. 5.3.2): at least 100 messages per interrupt
amortize the 214-cycle interrupt cost to under 3 cycles per message; with the
10-30 cycles of processing per message the worst case is 30 cycles per message,
``overhead = 30 * messages`` cycles, a percentage of the run's cycles.
"""

from __future__ import annotations

import numpy as np

from .samplers import check_int

__all__ = ["Hotlist", "overhead_cycles", "overhead_percent", "CYCLES_PER_MESSAGE",
           "MESSAGES_PER_INTERRUPT", "INTERRUPT_CYCLES"]  # fmt: skip

CYCLES_PER_MESSAGE = 30
MESSAGES_PER_INTERRUPT = 100
INTERRUPT_CYCLES = 214


class Hotlist:
    """Gibbons-Matias concise-sample hotlist of one program location (``N`` entries,
    factor ``f``).

    Parameters
    ----------
    entries : int
        ``N``, at least 1 (default 16).
    factor : float
        ``f > 1`` (default ``N / (N - 1)``; for ``N = 1``, 2).
    seed : int
        Seed of the ``numpy.random.default_rng`` that flips the coins.
    """

    def __init__(self, entries=16, factor=None, seed=0):
        check_int("entries", entries, 1)
        if factor is None:
            factor = entries / (entries - 1) if entries > 1 else 2.0
        if not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor <= 1:
            raise ValueError(f"factor must be a number above 1, not {factor!r}")
        self.entries = entries
        self.factor = float(factor)
        self.p = 1.0
        self.counts: dict[int, int] = {}
        self.rng = np.random.default_rng(seed)

    def add(self, value: int) -> None:
        if self.p < 1.0 and self.rng.random() >= self.p:
            return
        self.counts[value] = self.counts.get(value, 0) + 1
        while len(self.counts) > self.entries:
            self.thin()

    def thin(self) -> None:
        """One thinning round: ``p := p / f``; each recorded instance kept with
        probability ``1/f`` (``C[v] := Binomial(C[v], 1/f)``; zero counts leave)."""
        self.p /= self.factor
        kept = {}
        for v, c in self.counts.items():
            heads = int(self.rng.binomial(c, 1.0 / self.factor))
            if heads:
                kept[v] = heads
        self.counts = kept

    def estimate(self, value: int) -> float:
        """``C[v] / p``: the estimated occurrences of ``value``."""
        return self.counts.get(value, 0) / self.p

    def hot(self) -> list[tuple[int, float]]:
        """``(value, estimate)`` pairs, most frequent first."""
        return sorted(((v, c / self.p) for v, c in self.counts.items()), key=lambda x: -x[1])


def overhead_cycles(messages: int, cycles_per_message: int = CYCLES_PER_MESSAGE) -> int:
    """Profiling overhead in cycles: ``30 * NumMessages`` (sec. 5.3.2)."""
    check_int("messages", messages, 0)
    return cycles_per_message * messages


def overhead_percent(messages: int, total_cycles: int,
                     cycles_per_message: int = CYCLES_PER_MESSAGE) -> float:  # fmt: skip
    """Overhead as a percentage of ``total_cycles`` (the run's simulated time)."""
    check_int("total_cycles", total_cycles, 1)
    return 100.0 * overhead_cycles(messages, cycles_per_message) / total_cycles


def interrupt_cycles_per_message(messages_per_interrupt: int = MESSAGES_PER_INTERRUPT) -> float:
    """The amortized interrupt cost per message: 214 / 100 < 3 cycles."""
    check_int("messages_per_interrupt", messages_per_interrupt, 1)
    return INTERRUPT_CYCLES / messages_per_interrupt
