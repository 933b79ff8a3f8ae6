"""Golden brr model: exact full-period counts, the dependence analysis, statistics."""

import random

import numpy as np
import pytest

from hwprof.golden.brr import (
    FREQS,
    Brr,
    BrrConfig,
    conditional_taken_probability,
    taken_probability,
)
from hwprof.golden.stats import DEFAULT_ALPHA, binomial_acceptance


def full_period_states(width):
    model = Brr(width=width)
    states = model.states(2**width - 1)
    assert model.state == model.config.seed  # back to the start: one whole period
    return states


@pytest.fixture(scope="module")
def period16():
    return full_period_states(16)


@pytest.fixture(scope="module")
def period20():
    return full_period_states(20)


def taken_matrix(states, config):
    masks = np.array(config.outcome_masks, dtype=np.uint64)
    return (states[:, None] & masks[None, :]) == masks[None, :]


@pytest.mark.parametrize("width", [16, 20])
def test_exact_taken_count_over_a_full_period(width, period16, period20):
    """Paper sec. 3.3: freq f is taken in exactly 2^(W-f-1) of the 2^W-1 states."""
    states = period16 if width == 16 else period20
    assert len(np.unique(states)) == 2**width - 1 and 0 not in states
    taken = taken_matrix(states, BrrConfig(width=width)).sum(axis=0)
    for freq in range(FREQS):
        assert taken[freq] == 2 ** (width - freq - 1), freq


def test_rank_analysis_matches_full_period_counts(period16):
    """The exact conditional probabilities of the rank analysis are what the LFSR does."""
    config = BrrConfig(width=16)
    taken = taken_matrix(period16, config)
    for lag in (1, 2, 3, 5):
        later = np.roll(taken, -lag, axis=0)  # the period is a cycle
        for freq in range(FREQS):
            both = int((taken[:, freq] & later[:, freq]).sum())
            predicted = conditional_taken_probability(16, config.positions, freq, lag,
                                                      steps=config.lfsr_steps)  # fmt: skip
            assert both == predicted * 2 ** (16 - freq - 1), (lag, freq)


def consecutive_pair_check(outcomes, p, alpha, lag=1):
    """(ok, n_prev_taken, n_both, interval) for P(taken | taken lag brr before) == p."""
    prev, cur = outcomes[:-lag], outcomes[lag:]
    n_prev = int(prev.sum())
    n_both = int((prev & cur).sum())
    lo, hi = binomial_acceptance(n_prev, p, alpha)
    return lo <= n_both <= hi, n_prev, n_both, (lo, hi)


SAMPLE = 2**18


def random_window(width, seed, positions=None, lfsr_steps=None):
    """Outcomes of SAMPLE consecutive brr at every freq, from a random start state."""
    start = random.Random(seed).randrange(1, 2**width)
    model = Brr(width=width, seed=start, positions=positions, lfsr_steps=lfsr_steps)
    states = model.states(SAMPLE)
    return taken_matrix(states, model.config)


@pytest.mark.parametrize("width", [16, 20, 32])
def test_taken_rate_every_freq(width, seed):
    outcomes = random_window(width, seed)
    alpha = DEFAULT_ALPHA / FREQS
    for freq in range(FREQS):
        lo, hi = binomial_acceptance(SAMPLE, taken_probability(freq), alpha)
        count = int(outcomes[:, freq].sum())
        assert lo <= count <= hi, f"freq {freq}: {count} not in [{lo}, {hi}], seed {seed}"


@pytest.mark.parametrize("width", [20, 32])
def test_nearby_outcomes_follow_the_exact_prediction(width, seed):
    """P(taken | taken lag brr before) at lags 1, 2, 4, 8 and every freq with enough
    samples is the rank analysis' figure (W = 32 has no full-period count)."""
    outcomes = random_window(width, seed)
    config = BrrConfig(width=width)
    checks = [(f, lag) for f in range(10) for lag in (1, 2, 4, 8)]
    for freq, lag in checks:
        p = conditional_taken_probability(width, config.positions, freq, lag,
                                          steps=config.lfsr_steps)  # fmt: skip
        ok, n_prev, n_both, bounds = consecutive_pair_check(
            outcomes[:, freq], p, DEFAULT_ALPHA / len(checks), lag
        )
        assert ok, f"freq {freq} lag {lag}: {n_both}/{n_prev}, bounds {bounds}, seed {seed}"


def test_contiguous_bits_fail_the_independence_test(seed):
    """The paper's warning: ANDing adjacent bits of a register stepped once per brr makes
    P(taken | taken) = 1/2 at 25%."""
    contiguous = tuple(range(FREQS))
    outcomes = random_window(20, seed, positions=contiguous, lfsr_steps=1)
    ok, n_prev, n_both, bounds = consecutive_pair_check(
        outcomes[:, 1], taken_probability(1), DEFAULT_ALPHA
    )
    assert not ok
    # instead, P(taken | taken) = 1/2: one of the two bits ANDed is the one already seen set
    lo, hi = binomial_acceptance(n_prev, 0.5, DEFAULT_ALPHA)
    assert lo <= n_both <= hi, f"{n_both}/{n_prev} not in [{lo}, {hi}], seed {seed}"


def test_model_step_priorities_and_outputs():
    model = Brr(width=16, seed=0xFFFF)
    out = model.step(decode_valid=1, freq=15)
    assert (out.taken, out.redirect, out.state) == (1, 1, 0xFFFF)
    out = model.step(decode_valid=0, freq=0)
    assert out.redirect == 0 and out.state == model.state
    model.step(load_valid=1, load_data=0, decode_valid=1)
    assert model.state == 0
    out = model.step(decode_valid=1, freq=0)
    assert out.taken == 0 and model.state == 1  # lock-up escape
    model.step(reset=1, load_valid=1, load_data=5)
    assert model.state == 0xFFFF


def test_fast_path_matches_step():
    a, b = Brr(seed=12345), Brr(seed=12345)
    freqs = np.arange(500) % FREQS
    fast = a.outcomes(freqs)
    slow = [b.step(decode_valid=1, freq=int(f)).taken for f in freqs]
    assert list(fast.astype(int)) == slow
    assert a.state == b.state


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"width": 15}, ValueError, "width must be between 16 and 32, not 15"),
        ({"width": 33}, ValueError, "width must be between 16 and 32, not 33"),
        ({"width": 20.0}, TypeError, "width must be an integer, not 20.0"),
        ({"seed": 0}, ValueError, "seed must be non-zero"),
        ({"pipelined": "yes"}, TypeError, "pipelined must be a bool, not 'yes'"),
        ({"positions": (0, 1)}, ValueError, "positions must be 16 distinct stages"),
        ({"positions": tuple(range(15)) + (20,)}, ValueError, "between 0 and 19"),
    ],
)
def test_config_errors(params, error, message):
    with pytest.raises(error, match=message):
        BrrConfig(**params)


def test_freq_out_of_range():
    with pytest.raises(ValueError, match="freq must be between 0 and 15, not 16"):
        Brr().outcome(1, 16)


@pytest.mark.parametrize("width", [16, 20, 32])
def test_fast_states_equal_the_cycle_model(width, seed):
    """The compiled fast path reads the same states as decode steps of the cycle model,
    including the lock-up escape from a loaded all-zero state."""
    start = random.Random(seed).randrange(1, 2**width)
    fast, cycle = Brr(width=width, seed=start), Brr(width=width, seed=start)
    expected = []
    for _ in range(3000):
        expected.append(cycle.step(decode_valid=1).state)
    assert fast.states(3000).tolist() == expected, f"seed {seed}"
    assert fast.state == cycle.state
    fast.step(load_valid=1, load_data=0)
    cycle.step(load_valid=1, load_data=0)
    expected = [cycle.step(decode_valid=1).state for _ in range(5)]
    assert fast.states(5).tolist() == expected
