"""Golden model of the branch-on-random (brr) unit of Lee & Zilles, CGO 2008.

Paper, section 3.2: a brr carries a 4-bit frequency field ``freq`` and is taken
with probability ``(1/2)^(freq+1)``. Section 3.3: the outcome is the AND of
``freq + 1`` bits of an LFSR (15 AND gates computing all 16 frequencies, a 16:1
mux selected by ``freq``); the LFSR is clocked only when a brr is decoded; the
branch is resolved at decode and always predicted not-taken, so a taken brr is a
decode-stage redirect. ANDing adjacent bits makes consecutive outcomes
dependent, which "can be mitigated ... by ANDing non-contiguous bits with varied
spacing"; a 20-bit LFSR "may be a reasonable design point".

Which bits (the *layout*: LFSR steps per brr and outcome positions)
-------------------------------------------------------------------
The LFSR is the Fibonacci register of :mod:`hwprof.golden.lfsr`; one brr moves it
``lfsr_steps`` (k) single steps (the LFSR library's ``steps``: one XOR layer, no
chain), so brr number ``t + L`` reads the state ``M^(kL) s`` where ``s`` is the
state brr ``t`` read. Every stage of ``M^(kL) s`` is a linear function (over
GF(2)) of ``s``. For frequency ``f`` the outcome ANDs the stages of the position
set ``P_f = positions[:f + 1]``. Over one full period (every non-zero state
once), a set of ``r`` linearly independent functionals is all-ones in exactly
``2^(W - r)`` states. Hence, exactly::

    P(taken_t)                   = 2^(W-f-1) / (2^W - 1)
    P(taken_t+L and taken_t)     = 2^(W - r_L(f)) / (2^W - 1)

where ``r_L(f)`` is the GF(2) rank of the ``2(f + 1)`` functionals read by the two
brr (and exactly 0 when the affine system "all of them are 1" has no solution).
The *dependence factor* ``P(both) / P(taken)^2`` is ``2^(2(f+1) - r_L) (1 - 2^-W)``:
about 1 at full rank, 2 with one dependent functional, and so on.

With one step per brr (the paper's register, ``k = 1``) stage ``p`` of the next
state *is* stage ``p + 1`` now, so any two positions ``d <= 8`` apart make the
brr ``d`` decodes later dependent; 16 positions in 20 stages cannot all be
more than 8 apart, and even-stage layouts (independent at lag 1) give a factor
of 512 at lag 2 and freq 9. Advancing ``k`` steps per brr (``gcd(k, 2^W - 1) = 1``
keeps the full period) spreads the shifts: lag ``L`` moves a stage ``kL`` places,
beyond the register for most ``L``, where the feedback mixes stages.

:func:`search_positions` picks the positions for given taps and ``k`` by a
depth-first search over GF(2) ranks: the target is a dependence factor of at
most 2 (deficiency ``2(f+1) - r_L <= 1``, consistent) for every freq with
``2(f + 1) <= W - 4`` and every lag 1..8 (:data:`TARGET_LAGS`); each position is
chosen among the candidates meeting the target in increasing order of (worst
deficiency over the lags, total deficiency, stage index), backtracking when a
prefix has no extension, within a node budget. The positions after the target
range are picked greedily by (total deficiency, worst deficiency, index).
:func:`search_steps` tries the ``k`` coprime with the period in increasing order
of the XOR gates of the k-step next-state function (the area cost) and returns
the first for which :func:`search_positions` meets the target. :data:`LAYOUTS`
pins the result for the default taps of every width (re-derived in the soak
tests); a user's ``taps=`` get their own layout (:func:`outcome_layout`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .gf2 import gf2_rank
from .lfsr import TAPS, LfsrConfig

__all__ = [
    "FREQS",
    "MIN_WIDTH",
    "MAX_WIDTH",
    "TARGET_LAGS",
    "LAYOUTS",
    "NoLayoutError",
    "BrrConfig",
    "adopt_layout",
    "BrrOutputs",
    "Brr",
    "target_freqs",
    "outcome_positions",
    "outcome_layout",
    "search_positions",
    "search_steps",
    "step_xor_cost",
    "lag_functionals",
    "pair_deficiency",
    "dependence_factor",
    "conditional_taken_probability",
    "dependence_table",
    "taken_probability",
]

FREQS = 16  # a 4-bit frequency field
MIN_WIDTH = 16  # freq = 15 ANDs 16 distinct stages
MAX_WIDTH = 32
#: Lags (in brr) at which the layout search bounds the dependence factor.
TARGET_LAGS = range(1, 9)
#: Most search nodes :func:`search_positions` visits before giving up.
NODE_BUDGET = 2000

#: The layout for the default taps ``TAPS[W]``: ``LAYOUTS[W] = (lfsr_steps,
#: positions)``, the result of :func:`search_steps` and :func:`search_positions`,
#: pinned so that no search runs for the defaults (tests/test_brr_layout.py
#: re-derives W = 16 and 19 in the fast tier and every width in the soak tier).
LAYOUTS: dict[int, tuple[int, tuple[int, ...]]] = {
    16: (2, (0, 1, 2, 5, 8, 15, 9, 13, 10, 7, 6, 4, 11, 3, 12, 14)),
    17: (3, (0, 1, 2, 6, 11, 13, 7, 12, 5, 3, 4, 8, 9, 10, 14, 15)),
    18: (5, (0, 1, 2, 3, 6, 12, 15, 5, 7, 11, 4, 10, 9, 8, 13, 14)),
    19: (2, (0, 1, 18, 3, 8, 17, 12, 15, 10, 14, 6, 4, 7, 13, 11, 16)),
    20: (8, (0, 1, 3, 5, 10, 12, 14, 19, 4, 2, 9, 15, 13, 6, 7, 8)),
    21: (8, (0, 1, 2, 3, 12, 15, 18, 9, 11, 10, 20, 19, 17, 16, 8, 4)),
    22: (16, (0, 1, 2, 7, 10, 13, 15, 20, 4, 14, 17, 8, 21, 3, 5, 6)),
    23: (9, (0, 1, 2, 3, 4, 15, 16, 17, 18, 19, 21, 5, 7, 6, 20, 13)),
    24: (8, (0, 1, 2, 3, 4, 5, 6, 15, 8, 18, 11, 17, 14, 20, 9, 12)),
    25: (12, (0, 1, 2, 4, 9, 10, 11, 18, 19, 21, 14, 22, 12, 8, 3, 13)),
    26: (8, (0, 1, 2, 3, 4, 5, 15, 22, 11, 17, 24, 18, 8, 6, 25, 20)),
    27: (8, (0, 1, 2, 3, 4, 13, 14, 23, 8, 18, 25, 19, 11, 16, 22, 10)),
    28: (22, (0, 1, 2, 3, 4, 11, 12, 16, 17, 18, 21, 25, 20, 10, 27, 15)),
    29: (21, (0, 1, 2, 3, 4, 7, 13, 14, 19, 20, 26, 25, 21, 22, 28, 12)),
    30: (13, (0, 1, 2, 3, 4, 5, 8, 9, 19, 20, 24, 25, 15, 18, 27, 14)),
    31: (20, (0, 1, 2, 3, 4, 5, 9, 10, 18, 19, 26, 17, 15, 16, 11, 30)),
    32: (14, (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 31, 28, 20)),
}  # fmt: skip


class NoLayoutError(ValueError):
    """The taps admit no layout meeting the independence target (a bad parameter)."""


def taken_probability(freq: int) -> float:
    """The architected taken probability of a brr, ``(1/2)^(freq+1)``."""
    return 2.0 ** -(freq + 1)


def target_freqs(width: int) -> range:
    """The freqs whose lag 1..8 dependence factor the layout bounds: ``2(f+1) <= W-4``."""
    return range(min(FREQS, (width - 4) // 2))


@cache
def lag_functionals(width: int, taps: tuple[int, ...], lag: int) -> tuple[int, ...]:
    """Stage ``i`` of the Fibonacci state ``lag`` single steps on, as a mask over today's.

    Element ``i`` is an int whose bit ``j`` says whether stage ``j`` of the current
    state enters (XOR) stage ``i`` of the state after ``lag`` steps. Computed by
    stepping the identity (the step is linear), squared for large lags.
    """
    if lag > 4 * width:
        half = lag_functionals(width, taps, lag // 2)
        rows = _compose(half, half)
        if lag & 1:
            rows = _compose(lag_functionals(width, taps, 1), rows)
        return tuple(rows)
    rows = [1 << i for i in range(width)]
    for _ in range(lag):
        feedback = rows[0]
        for t in taps[1:]:
            feedback ^= rows[t]
        rows = rows[1:] + [feedback]
    return tuple(rows)


def _compose(a, b) -> list[int]:
    """Row masks of ``a @ b`` (apply ``b``, then ``a``) over GF(2)."""
    out = []
    for row in a:
        acc, j = 0, 0
        while row:
            if row & 1:
                acc ^= b[j]
            row >>= 1
            j += 1
        out.append(acc)
    return out


def step_xor_cost(width: int, taps: tuple[int, ...], steps: int) -> int:
    """Two-input XOR gates of the ``steps``-step next-state function (the area proxy)."""
    return sum(bin(row).count("1") - 1 for row in lag_functionals(width, taps, steps))


def pair_deficiency(width, taps, steps, positions, lag) -> int | None:
    """``len(functionals) - rank`` for two brr ``lag`` apart reading ``positions``.

    ``None`` when "every functional is 1" is inconsistent: the two brr are never
    both taken.
    """
    later = lag_functionals(width, tuple(taps), lag * steps)
    functionals = [1 << p for p in positions] + [later[p] for p in positions]
    rank = gf2_rank(functionals)
    # "all functionals = 1" is an affine system; with dependent functionals it can
    # be inconsistent: append the right-hand side.
    if gf2_rank(f | (1 << width) for f in functionals) > rank:
        return None
    return len(functionals) - rank


def dependence_factor(width, taps, steps, positions, freq, lag) -> float:
    """Exact ``P(both taken) / P(taken)^2`` over a full period for brr ``lag`` apart."""
    d = pair_deficiency(width, taps, steps, positions[: freq + 1], lag)
    if d is None:
        return 0.0
    rank = 2 * (freq + 1) - d
    return 2.0 ** (2 * (freq + 1) - rank) * (1 - 2.0**-width)


def conditional_taken_probability(
    width: int, positions: tuple[int, ...], freq: int, lag: int = 1,
    taps: tuple[int, ...] | None = None, steps: int = 1,
) -> float:
    """Exact ``P(taken_{t+lag} | taken_t)`` over a full period, both at ``freq``.

    ``steps`` is the LFSR steps per brr (``lag * steps`` single steps apart).
    """
    taps = TAPS[width] if taps is None else tuple(taps)
    d = pair_deficiency(width, taps, steps, list(positions[: freq + 1]), lag)
    if d is None:
        return 0.0
    return 2.0 ** (d - (freq + 1))


def _cost(width, taps, steps, positions) -> tuple[int, int]:
    """(worst, total) deficiency over :data:`TARGET_LAGS`; inconsistency counts 99."""
    ds = [pair_deficiency(width, taps, steps, positions, lag) for lag in TARGET_LAGS]
    ds = [99 if d is None else d for d in ds]
    return max(ds), sum(ds)


def _complete(width, taps, steps, chosen) -> tuple[int, ...]:
    """Greedy picks after the target range: (total, worst deficiency, index)."""
    chosen = list(chosen)
    while len(chosen) < FREQS:
        best = min(
            (_cost(width, taps, steps, chosen + [c])[::-1], c)
            for c in range(width) if c not in chosen
        )
        chosen.append(best[1])
    return tuple(chosen)


@cache
def search_positions(width: int, taps: tuple[int, ...], steps: int,
                     node_budget: int = NODE_BUDGET) -> tuple[int, ...] | None:
    """Positions meeting the target (factor <= 2 for :func:`target_freqs`, lags 1..8).

    Depth-first over GF(2) ranks (module docstring); ``None`` when no layout
    is found within ``node_budget`` nodes.
    """
    taps = tuple(taps)
    depth = len(target_freqs(width))
    nodes = 0

    def extend(chosen):
        nonlocal nodes
        if len(chosen) == depth:
            return chosen
        candidates = []
        for c in range(width):
            if c not in chosen:
                cost = _cost(width, taps, steps, chosen + [c])
                if cost[0] <= 1:
                    candidates.append((cost, c))
        for _, c in sorted(candidates):
            nodes += 1
            if nodes > node_budget:
                return None
            found = extend(chosen + [c])
            if found is not None:
                return found
        return None

    prefix = extend([])
    return None if prefix is None else _complete(width, taps, steps, prefix)


def _step_candidates(width, taps) -> list[int]:
    period = (1 << width) - 1
    ks = [k for k in range(2, 2 * width) if math.gcd(k, period) == 1]
    return sorted(ks, key=lambda k: (step_xor_cost(width, taps, k), k))


@cache
def search_steps(width: int, taps: tuple[int, ...]) -> int | None:
    """The cheapest ``k`` (XOR gates, then k) in ``2..2W-1``, coprime with the
    period, for which :func:`search_positions` meets the target; ``None`` if none."""
    for k in _step_candidates(width, tuple(taps)):
        if search_positions(width, tuple(taps), k) is not None:
            return k
    return None


@cache
def outcome_layout(width: int, taps: tuple[int, ...] | None = None) -> tuple[int, tuple]:
    """``(lfsr_steps, positions)`` for ``width`` and ``taps`` (default ``TAPS[width]``).

    Raises
    ------
    NoLayoutError
        No ``k`` and positions meet the target for these taps.
    """
    taps = TAPS[width] if taps is None else tuple(taps)
    if taps == TAPS[width] and width in LAYOUTS:
        return LAYOUTS[width]
    steps = search_steps(width, taps)
    if steps is None:
        raise NoLayoutError(
            f"taps {taps!r} admit no brr layout with P(both taken)/P(taken)^2 <= 2 for "
            f"freq 0..{len(target_freqs(width)) - 1} at lags 1..8 (searched "
            f"lfsr_steps 2..{2 * width - 1}); choose other taps, or give lfsr_steps "
            "and positions explicitly"
        )
    return steps, search_positions(width, taps, steps)


@cache
def outcome_positions(width: int, taps: tuple[int, ...] | None = None,
                      steps: int | None = None) -> tuple[int, ...]:
    """The 16 LFSR stages ANDed by the brr, in order (``freq`` uses the first freq+1).

    ``steps=None``: the layout's own (:func:`outcome_layout`). For a given
    ``steps`` the searched positions when the target is met, else the best
    effort: every pick greedy by (worst, total deficiency, index) (with
    ``steps=1`` the target cannot be met, see the module docstring).
    """
    taps = TAPS[width] if taps is None else tuple(taps)
    if steps is None:
        return outcome_layout(width, taps)[1]
    if taps == TAPS[width] and LAYOUTS.get(width, (None,))[0] == steps:
        return LAYOUTS[width][1]
    found = search_positions(width, taps, steps)
    if found is not None:
        return found
    chosen: list[int] = []
    while len(chosen) < FREQS:
        best = min(
            (_cost(width, taps, steps, chosen + [c]), c)
            for c in range(width) if c not in chosen
        )
        chosen.append(best[1])
    return tuple(chosen)


def dependence_table(width: int, lags=TARGET_LAGS, taps=None, steps=None,
                     positions=None) -> list[dict]:
    """One row per freq: ``P(taken)`` and the exact dependence factor at each lag."""
    taps = TAPS[width] if taps is None else tuple(taps)
    if steps is None:
        steps = outcome_layout(width, taps)[0]
    if positions is None:
        positions = outcome_positions(width, taps, steps)
    return [
        {"freq": freq, "p_taken": taken_probability(freq),
         "factor": {lag: dependence_factor(width, taps, steps, positions, freq, lag)
                    for lag in lags}}
        for freq in range(FREQS)
    ]  # fmt: skip


def _outcome_masks(positions: tuple[int, ...]) -> tuple[int, ...]:
    masks, mask = [], 0
    for p in positions:
        mask |= 1 << p
        masks.append(mask)
    return tuple(masks)


@cache
def _byte_tables(width: int, taps: tuple[int, ...], steps: int) -> tuple[list[int], ...]:
    """The ``steps``-step map as four 256-entry tables, one per state byte (linear)."""
    rows = lag_functionals(width, taps, steps)
    # Column j: the image of stage j.
    columns = [sum(((rows[i] >> j) & 1) << i for i in range(width)) for j in range(width)]
    tables = []
    for byte in range(4):
        table = [0] * 256
        for value in range(1, 256):
            low = value & -value
            j = 8 * byte + low.bit_length() - 1
            table[value] = table[value ^ low] ^ (columns[j] if j < width else 0)
        tables.append(table)
    return tuple(tables)


@cache
def _states_kernel():
    """Compiled (numba) loop of :meth:`Brr.states`: fills ``out`` with the states read
    by consecutive brr (the byte tables of the advance; 0 escapes to 1) and returns
    the state after them."""
    from numba import njit

    @njit(cache=True)
    def kernel(tables, state, out):
        for i in range(out.shape[0]):
            out[i] = state
            if state == 0:
                state = np.uint64(1)
            else:
                state = (tables[0, state & np.uint64(255)]
                         ^ tables[1, (state >> np.uint64(8)) & np.uint64(255)]
                         ^ tables[2, (state >> np.uint64(16)) & np.uint64(255)]
                         ^ tables[3, (state >> np.uint64(24)) & np.uint64(255)])  # fmt: skip
        return state

    return kernel


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
        The 16 outcome positions; default :func:`outcome_positions` (the layout
        searched for ``taps`` and ``lfsr_steps``).
    taps : tuple of int, optional
        LFSR feedback taps; default ``TAPS[width]``.
    lfsr_steps : int, optional
        LFSR steps per brr, ``k >= 1``; default the layout's (:func:`outcome_layout`,
        :data:`LAYOUTS` for the default taps). 1 is the paper's register.

    Raises
    ------
    TypeError, ValueError
        On parameters out of range; :class:`NoLayoutError` when ``taps`` are given
        without ``lfsr_steps`` and no layout meets the independence target.
    """

    width: int = 20
    seed: int = 1
    pipelined: bool = False
    lockup_escape: bool = True
    positions: tuple[int, ...] | None = None
    taps: tuple[int, ...] | None = None
    lfsr_steps: int | None = None
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
        if self.lfsr_steps is not None and (
            isinstance(self.lfsr_steps, bool) or not isinstance(self.lfsr_steps, int)
        ):
            raise TypeError(f"lfsr_steps must be an integer, not {self.lfsr_steps!r}")
        if self.lfsr_steps is not None and self.lfsr_steps < 1:
            raise ValueError(f"lfsr_steps must be at least 1, not {self.lfsr_steps!r}")
        # Validates seed, taps (primitive) and the escape before any layout search.
        lfsr = LfsrConfig(
            width=self.width, seed=self.seed, taps=self.taps,
            lockup_escape=self.lockup_escape,
        )  # fmt: skip
        object.__setattr__(self, "taps", lfsr.taps)
        if self.lfsr_steps is None:
            object.__setattr__(self, "lfsr_steps", outcome_layout(self.width, lfsr.taps)[0])
        if math.gcd(self.lfsr_steps, (1 << self.width) - 1) != 1:
            raise ValueError(
                f"lfsr_steps must be coprime with 2^{self.width} - 1 (else the LFSR "
                f"period shrinks), not {self.lfsr_steps!r}"
            )
        lfsr = LfsrConfig(
            width=self.width, seed=self.seed, taps=self.taps, steps=self.lfsr_steps,
            lockup_escape=self.lockup_escape,
        )  # fmt: skip
        object.__setattr__(self, "lfsr", lfsr)
        if self.positions is None:
            positions = outcome_positions(self.width, lfsr.taps, self.lfsr_steps)
            object.__setattr__(self, "positions", positions)
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


def adopt_layout(config, brr: BrrConfig) -> None:
    """Set the frozen variant ``config``'s ``positions`` and ``taps`` to those ``brr``
    resolved (the defaults are derived once, by :class:`BrrConfig`)."""
    object.__setattr__(config, "positions", brr.positions)
    object.__setattr__(config, "taps", brr.taps)


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
            tables = np.array(_byte_tables(lfsr.width, lfsr.taps, lfsr.steps), dtype=np.uint64)
            state = int(_states_kernel()(tables, np.uint64(state), out))
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
