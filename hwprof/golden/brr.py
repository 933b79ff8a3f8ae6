"""Golden model of the branch-on-random (brr) unit of Lee & Zilles, CGO 2008.

Paper, section 3.2: a brr carries a 4-bit frequency field ``freq`` and is taken
with probability ``(1/2)^(freq+1)``. Section 3.3: the outcome is the AND of
``freq + 1`` bits of an LFSR (15 AND gates computing all 16 frequencies, a 16:1
mux selected by ``freq``); the LFSR is clocked only when a brr is decoded; the
branch is resolved at decode and always predicted not-taken, so a taken brr is a
decode-stage redirect. Bits must be "non-contiguous with varied spacing" so that
consecutive outcomes are independent; a 20-bit LFSR is the suggested design
point.

Which bits (the *outcome positions*)
------------------------------------
The LFSR is the Fibonacci register of :mod:`hwprof.golden.lfsr`; one brr moves it
one step, so brr number ``t + L`` reads the state ``M^L s`` where ``s`` is the state
brr ``t`` read. Every stage of ``M^L s`` is a linear function (over GF(2)) of
``s``. For frequency ``f`` the outcome ANDs the stages of the position set
``P_f = positions[:f + 1]``. Over one full period (every non-zero state once), a
set of ``r`` linearly independent functionals is all-ones in exactly
``2^(W - r)`` states. Hence, exactly::

    P(taken_t)                   = 2^(W-f-1) / (2^W - 1)
    P(taken_t+L | taken_t)       = 2^(f + 1 - r_L(f))

where ``r_L(f)`` is the GF(2) rank of the ``2(f + 1)`` functionals read by the two
brr (or exactly 0 when the affine system "all of them are 1" has no solution).
Lag-``L`` outcomes are independent exactly when ``r_L(f) = 2(f + 1)``, which
needs ``2(f + 1) <= W``. Two adjacent positions ``p, p + 1`` make ``r_1`` drop
(stage ``p`` of the next state *is* stage ``p + 1`` now): the paper's warning.

:func:`outcome_positions` picks the positions greedily, one frequency at a
time. The first ``ceil(W/2)`` come from the even stages (no two adjacent), so
consecutive brr are exactly independent for every ``freq`` with
``2(freq + 1) <= W``: for ``W = 20`` that is ``freq <= 9``, the most any 20-bit
state allows, and for ``W = 32`` every frequency. Among the candidates each pick
maximises the rank at lag 1, then at lag 2, and so on to lag 8 (nearer brr
matter more; "varied spacing" is what keeps the low-frequency prefixes
independent at small lags too), then prefers the smaller index. Even positions
shifted by an odd lag never meet even positions, so odd lags stay independent
as far as lag 1 does; even lags cannot (all differences are even) and
are the price of lag-1 independence; :func:`dependence_table` gives the
exact conditional probabilities for the rest, and docs/brr.md lists them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .gf2 import gf2_rank
from .lfsr import TAPS, LfsrConfig, fibonacci_step

__all__ = [
    "FREQS",
    "MIN_WIDTH",
    "MAX_WIDTH",
    "BrrConfig",
    "BrrOutputs",
    "Brr",
    "outcome_positions",
    "lag_functionals",
    "conditional_taken_probability",
    "dependence_table",
    "taken_probability",
]

FREQS = 16  # a 4-bit frequency field
MIN_WIDTH = 16  # freq = 15 ANDs 16 distinct stages
MAX_WIDTH = 32
_LAGS_PRIORITISED = range(1, 9)


def taken_probability(freq: int) -> float:
    """The architected taken probability of a brr, ``(1/2)^(freq+1)``."""
    return 2.0 ** -(freq + 1)


@cache
def lag_functionals(width: int, taps: tuple[int, ...], lag: int) -> tuple[int, ...]:
    """Stage ``i`` of the Fibonacci state ``lag`` steps on, as a mask over today's stages.

    Element ``i`` is an int whose bit ``j`` says whether stage ``j`` of the current
    state enters (XOR) stage ``i`` of the state after ``lag`` steps.
    """
    rows = [1 << i for i in range(width)]
    for _ in range(lag):
        # fibonacci_step is linear: apply it to every column of the identity.
        feedback = rows[0]
        for t in taps[1:]:
            feedback ^= rows[t]
        rows = rows[1:] + [feedback]
    return tuple(rows)


def _lag_functionals_of(width, taps, positions, lag) -> list[int]:
    later = lag_functionals(width, taps, lag)
    return [1 << p for p in positions] + [later[p] for p in positions]


def _lag_rank(width, taps, positions, lag) -> int:
    return gf2_rank(_lag_functionals_of(width, taps, positions, lag))


@cache
def outcome_positions(width: int, taps: tuple[int, ...] | None = None) -> tuple[int, ...]:
    """The 16 LFSR stages ANDed by the brr, in order (``freq`` uses the first freq+1).

    Deterministic greedy choice (module docstring): the first ``ceil(W/2)`` picks
    come from the even stages, which contain no adjacent pair, so consecutive brr
    are exactly independent for every ``freq`` with ``2(freq+1) <= W``; each pick
    maximises the ranks at lags 1, 2, ..., 8 in that order of priority, then
    prefers the smaller stage index.
    """
    taps = TAPS[width] if taps is None else taps
    evens = range(0, width, 2)
    chosen: list[int] = []
    for index in range(FREQS):
        pool = evens if index < len(evens) else range(width)
        best = None
        for candidate in pool:
            if candidate in chosen:
                continue
            trial = chosen + [candidate]
            ranks = tuple(_lag_rank(width, taps, trial, lag) for lag in _LAGS_PRIORITISED)
            key = (*ranks, -candidate)
            if best is None or key > best[0]:
                best = (key, candidate)
        chosen.append(best[1])
    return tuple(chosen)


def conditional_taken_probability(
    width: int, positions: tuple[int, ...], freq: int, lag: int = 1,
    taps: tuple[int, ...] | None = None,
) -> float:
    """Exact ``P(taken_{t+lag} | taken_t)`` over a full period, both at ``freq``."""
    taps = TAPS[width] if taps is None else taps
    functionals = _lag_functionals_of(width, taps, list(positions[: freq + 1]), lag)
    rank = gf2_rank(functionals)
    # "all functionals = 1" is an affine system; with dependent functionals it can
    # be inconsistent (no state has both brr taken): append the right-hand side.
    if gf2_rank(f | (1 << width) for f in functionals) > rank:
        return 0.0
    return 2.0 ** (freq + 1 - rank)


def dependence_table(width: int, lags=range(1, 9)) -> list[dict]:
    """One row per freq: exact ``P(taken)`` and ``P(taken | taken lag brr ago)``."""
    positions = outcome_positions(width)
    rows = []
    for freq in range(FREQS):
        rows.append({
            "freq": freq,
            "p_taken": taken_probability(freq),
            "conditional": {
                lag: conditional_taken_probability(width, positions, freq, lag)
                for lag in lags
            },
        })  # fmt: skip
    return rows


def _outcome_masks(positions: tuple[int, ...]) -> tuple[int, ...]:
    masks, mask = [], 0
    for p in positions:
        mask |= 1 << p
        masks.append(mask)
    return tuple(masks)


@dataclass(frozen=True)
class BrrConfig:
    """Validated parameters of the brr unit.

    Parameters
    ----------
    width : int
        LFSR width, 16..32 (default 20, the paper's design point).
    seed : int
        LFSR reset state, non-zero.
    pipelined : bool
        Latch the AND results one cycle ahead (paper, sec. 3.3). Outcomes are
        identical; only the timing path moves.
    lockup_escape : bool
        Leave the all-zero LFSR state on the next brr (see :mod:`.lfsr`).
    positions : tuple of int, optional
        The 16 outcome positions; default :func:`outcome_positions`.
    taps : tuple of int, optional
        LFSR feedback taps; default ``TAPS[width]``.
    """

    width: int = 20
    seed: int = 1
    pipelined: bool = False
    lockup_escape: bool = True
    positions: tuple[int, ...] | None = None
    taps: tuple[int, ...] | None = None
    lfsr: LfsrConfig = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if isinstance(self.width, bool) or not isinstance(self.width, int):
            raise TypeError(f"width must be an integer, not {self.width!r}")
        if not MIN_WIDTH <= self.width <= MAX_WIDTH:
            raise ValueError(
                f"width must be between {MIN_WIDTH} and {MAX_WIDTH}, not {self.width!r}"
            )
        if not isinstance(self.pipelined, bool):
            raise TypeError(f"pipelined must be a bool, not {self.pipelined!r}")
        lfsr = LfsrConfig(
            width=self.width, seed=self.seed, taps=self.taps,
            lockup_escape=self.lockup_escape,
        )  # fmt: skip
        object.__setattr__(self, "lfsr", lfsr)
        object.__setattr__(self, "taps", lfsr.taps)
        if self.positions is None:
            object.__setattr__(self, "positions", outcome_positions(self.width))
        else:
            positions = tuple(self.positions)
            if (
                len(positions) != FREQS
                or len(set(positions)) != FREQS
                or any(isinstance(p, bool) or not isinstance(p, int) for p in positions)
                or any(not 0 <= p < self.width for p in positions)
            ):
                raise ValueError(
                    f"positions must be {FREQS} distinct stages between 0 and "
                    f"{self.width - 1}, not {self.positions!r}"
                )
            object.__setattr__(self, "positions", positions)

    @property
    def outcome_masks(self) -> tuple[int, ...]:
        """``outcome_masks[f]``: the stages that must all be 1 for a taken brr."""
        return _outcome_masks(self.positions)


def _check_freq(freq) -> int:
    if isinstance(freq, bool) or not isinstance(freq, (int, np.integer)):
        raise TypeError(f"freq must be an integer, not {freq!r}")
    if not 0 <= freq < FREQS:
        raise ValueError(f"freq must be between 0 and {FREQS - 1}, not {freq!r}")
    return int(freq)


@dataclass(frozen=True)
class BrrOutputs:
    """What the unit shows during one cycle (before the clock edge)."""

    taken: int  # outcome for (state, freq), whether or not a brr is decoded
    redirect: int  # decode_valid and taken: the decode-stage redirect
    state: int  # LFSR state


class Brr:
    """Cycle model of the brr unit (:class:`hwprof.rtl.brr.Brr`).

    :meth:`step` is one clock cycle. The outputs are the combinational values
    during the cycle (from the state before the edge); then the edge applies, in
    priority order, ``reset`` (state <- seed), ``load_valid`` (state <-
    ``load_data``) or ``decode_valid`` (one LFSR step). ``pipelined`` does not
    change any output: the RTL precomputes the AND terms of the next state.
    """

    def __init__(self, config: BrrConfig | None = None, **params):
        self.config = config if config is not None else BrrConfig(**params)
        self._masks = self.config.outcome_masks
        self.state = self.config.seed

    def outcome(self, state: int, freq: int) -> int:
        """Whether a brr with ``freq`` is taken in LFSR ``state``."""
        mask = self._masks[_check_freq(freq)]
        return int(state & mask == mask)

    def step(
        self, *, decode_valid=0, freq=0, load_valid=0, load_data=0, reset=0
    ) -> BrrOutputs:
        taken = self.outcome(self.state, freq)
        out = BrrOutputs(taken=taken, redirect=int(bool(decode_valid) and taken),
                         state=self.state)  # fmt: skip
        lfsr = self.config.lfsr
        if reset:
            self.state = lfsr.seed
        elif load_valid:
            self.state = load_data & lfsr.mask
        elif decode_valid:
            self.state = lfsr.advance(self.state)
        return out

    def states(self, count: int) -> np.ndarray:
        """Fast path: the states seen by the next ``count`` brr (advances the model)."""
        lfsr = self.config.lfsr
        out = np.empty(count, dtype=np.uint64)
        state = self.state
        if lfsr.lockup_escape or state != 0:
            width, taps = lfsr.width, lfsr.taps
            for i in range(count):
                out[i] = state
                state = fibonacci_step(state, width, taps) if state else 1
        else:
            out[:] = 0
        self.state = state
        return out

    def outcomes(self, freqs) -> np.ndarray:
        """Fast path: outcomes of consecutive brr with the given ``freqs`` (array)."""
        freqs = np.asarray(freqs)
        if freqs.size and (freqs.min() < 0 or freqs.max() >= FREQS):
            raise ValueError(f"freq must be between 0 and {FREQS - 1}")
        masks = np.array(self._masks, dtype=np.uint64)[freqs]
        return (self.states(len(freqs)) & masks) == masks
