"""The brr layout (LFSR steps per brr, outcome positions) against the paper's goal.

Paper sec. 3.3: AND "non-contiguous bits with varied spacing" so that nearby brr
outcomes are independent. Target (issue 14): for every freq with 2(f+1) <= W-4
and every lag 1..8 (brr lag decodes apart, LFSR clocked only on decode),
P(both taken) / P(taken)^2 within [1/2, 2]. Checked two ways that share no code
with the layout search: exact GF(2) ranks of a matrix built by advancing basis
states with the LFSR model, and counts over a whole period.
"""

from functools import cache
from pathlib import Path

import numpy as np
import pytest

import hwprof.golden.brr as brr_module
from hwprof.golden.brr import (
    FREQS,
    LAYOUTS,
    Brr,
    BrrConfig,
    NoLayoutError,
    outcome_layout,
    search_positions,
    search_steps,
    target_freqs,
)
from hwprof.golden.gf2 import gf2_rank
from hwprof.golden.lfsr import TAPS, LfsrConfig

LAGS = range(1, 9)
LOW, HIGH = 0.5, 2.0
#: The layout before issue 14: one step per brr, even stages first (W = 20).
EVEN_STAGE_LAYOUT_20 = (1, (0, 10, 18, 4, 14, 6, 16, 2, 12, 8, 5, 11, 1, 9, 19, 13))


@cache
def advance_rows(width, taps, steps, lag):
    """Row masks of the map "lag brr on", built by advancing each basis state."""
    lfsr = LfsrConfig(width=width, taps=taps, steps=steps, lockup_escape=False)
    columns = []
    for j in range(width):
        state = 1 << j
        for _ in range(lag):
            state = lfsr.advance(state)
        columns.append(state)
    return [sum(((columns[j] >> i) & 1) << j for j in range(width)) for i in range(width)]


def factor_from_ranks(width, taps, steps, positions, freq, lag):
    """Exact P(both)/P(taken)^2 over a period: the affine system "every stage read is 1"
    has 2^(W-r) solutions (r = rank) or none (inconsistent)."""
    rows = advance_rows(width, taps, steps, lag)
    chosen = positions[: freq + 1]
    functionals = [1 << p for p in chosen] + [rows[p] for p in chosen]
    rank = gf2_rank(functionals)
    if gf2_rank(f | 1 << width for f in functionals) > rank:
        return 0.0
    period = 2**width - 1
    return 2 ** (width - rank) * period / 2 ** (2 * (width - freq - 1))


def violations_by_rank(width, taps, steps, positions):
    factors = ((f, lag, factor_from_ranks(width, taps, steps, positions, f, lag))
               for f in target_freqs(width) for lag in LAGS)  # fmt: skip
    return [v for v in factors if not LOW <= v[2] <= HIGH]


def period_counts(width, taps, steps, positions):
    """(taken[f], both[lag][f]) counted over one whole period of the golden model."""
    model = Brr(width=width, taps=taps, lfsr_steps=steps, positions=positions)
    period = 2**width - 1
    states = model.states(period)
    assert model.state == model.config.seed, "not a whole period"
    masks = np.array(model.config.outcome_masks, dtype=np.uint64)
    taken = (states[:, None] & masks) == masks
    both = {lag: (taken & np.roll(taken, -lag, axis=0)).sum(axis=0) for lag in LAGS}
    return taken.sum(axis=0), both


def violations_by_count(width, taps, steps, positions):
    taken, both = period_counts(width, taps, steps, positions)
    period = 2**width - 1
    return [(f, lag) for f in target_freqs(width) for lag in LAGS
            if not LOW <= both[lag][f] * period / taken[f] ** 2 <= HIGH]


def test_target_range():
    assert list(target_freqs(20)) == list(range(8))  # 2 * 8 = 16 = 20 - 4
    assert list(target_freqs(16)) == list(range(6))
    assert list(target_freqs(32)) == list(range(14))


@pytest.mark.parametrize("width", sorted(LAYOUTS))
def test_default_layout_meets_the_target_exactly(width):
    steps, positions = LAYOUTS[width]
    assert BrrConfig(width=width).lfsr_steps == steps
    assert BrrConfig(width=width).positions == positions
    assert violations_by_rank(width, TAPS[width], steps, positions) == []


@pytest.mark.parametrize("width", [16, 20])
def test_full_period_counts_meet_the_target_and_the_rank_prediction(width):
    """Counted over all 2^W - 1 states: the paper's rate exactly, the factor bound,
    and every (freq <= 15, lag 1..8) pair count equal to the rank prediction."""
    steps, positions = LAYOUTS[width]
    taken, both = period_counts(width, TAPS[width], steps, positions)
    assert [int(t) for t in taken] == [2 ** (width - f - 1) for f in range(FREQS)]
    assert violations_by_count(width, TAPS[width], steps, positions) == []
    period = 2**width - 1
    for lag in LAGS:
        for f in range(FREQS):
            predicted = factor_from_ranks(width, TAPS[width], steps, positions, f, lag)
            assert both[lag][f] == round(predicted * taken[f] ** 2 / period), (lag, f)


def test_the_even_stage_layout_is_caught():
    """Mutant: the layout before issue 14 (one step per brr, even stages first).
    Both checks flag it: at freq 7 a brr two decodes after a taken one is 32x likelier."""
    steps, positions = EVEN_STAGE_LAYOUT_20
    by_rank = violations_by_rank(20, TAPS[20], steps, positions)
    assert (7, 2, pytest.approx(32, rel=1e-5)) in by_rank
    assert (7, 2) in violations_by_count(20, TAPS[20], steps, positions)


def test_one_wrong_step_count_is_caught():
    """Mutant: the default positions with one LFSR step per brr instead of the layout's."""
    _, positions = LAYOUTS[20]
    assert violations_by_rank(20, TAPS[20], 1, positions)


@pytest.mark.parametrize("width", [16, 19])
def test_search_reproduces_the_pinned_layout(width):
    steps = search_steps(width, TAPS[width])
    assert (steps, search_positions(width, TAPS[width], steps)) == LAYOUTS[width]


@pytest.mark.soak
@pytest.mark.parametrize("width", sorted(LAYOUTS))
def test_search_reproduces_every_pinned_layout(width):
    steps = search_steps(width, TAPS[width])
    assert (steps, search_positions(width, TAPS[width], steps)) == LAYOUTS[width]


ISSUE_TAPS = (17, 16, 13, 12)
#: The W = 17 default positions before issue 14 (one step per brr), which a custom
#: polynomial kept.
EVEN_STAGE_POSITIONS_17 = (0, 10, 16, 4, 12, 6, 8, 2, 14, 1, 7, 11, 5, 9, 3, 13)


def test_user_taps_get_their_own_layout():
    """Issue 14: width 17, taps (17, 16, 13, 12). With the old default positions two
    consecutive freq-4 brr are never both taken; the layout derived for these taps
    meets the target (ranks and a full-period count)."""
    assert factor_from_ranks(17, ISSUE_TAPS, 1, EVEN_STAGE_POSITIONS_17, 4, 1) == 0.0
    config = BrrConfig(width=17, taps=ISSUE_TAPS)
    assert (config.lfsr_steps, config.positions) == outcome_layout(17, ISSUE_TAPS)
    assert violations_by_rank(17, ISSUE_TAPS, config.lfsr_steps, config.positions) == []
    assert violations_by_count(17, ISSUE_TAPS, config.lfsr_steps, config.positions) == []


def test_user_taps_without_a_layout_are_rejected(monkeypatch):
    """No primitive pentanomial of degree 16 we tried lacks a layout, so the search is
    told to find none; the parameter is then refused with one clear message."""
    monkeypatch.setattr(brr_module, "search_positions", lambda *args, **kwargs: None)
    brr_module.search_steps.cache_clear()
    brr_module.outcome_layout.cache_clear()
    try:
        with pytest.raises(NoLayoutError, match=r"taps \(16, 12, 3, 1\) admit no brr layout"):
            BrrConfig(width=16, taps=(16, 12, 3, 1))
    finally:
        brr_module.search_steps.cache_clear()
        brr_module.outcome_layout.cache_clear()


def test_explicit_steps_and_positions_skip_the_search():
    config = BrrConfig(width=20, lfsr_steps=1, positions=EVEN_STAGE_LAYOUT_20[1])
    assert config.lfsr.steps == 1 and config.positions == EVEN_STAGE_LAYOUT_20[1]


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"lfsr_steps": 0}, ValueError, "lfsr_steps must be at least 1, not 0"),
        ({"lfsr_steps": 3}, ValueError, "lfsr_steps must be coprime with 2\\^20 - 1"),
        ({"lfsr_steps": 2.0}, TypeError, "lfsr_steps must be an integer, not 2.0"),
    ],
)
def test_lfsr_steps_errors(params, error, message):
    with pytest.raises(error, match=message):
        BrrConfig(**params)


def documented_factor_rows():
    """The W = 20 factor table of docs/brr.md: {freq: [lag 1..8 factors]}."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "brr.md").read_text()
    section = text.split("Default layout at W = 20")[1].split("What this means")[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 10 and cells[0].isdigit():
            rows[int(cells[0])] = [int(c) for c in cells[2:]]
    return rows


def test_documented_factors():
    """Every cell of the docs table (freq 0..15, lags 1..8) against the exact factor."""
    steps, positions = LAYOUTS[20]
    rows = documented_factor_rows()
    assert sorted(rows) == list(range(FREQS))
    for f, documented in rows.items():
        exact = [factor_from_ranks(20, TAPS[20], steps, positions, f, lag) for lag in LAGS]
        assert documented == [round(x) for x in exact], f
