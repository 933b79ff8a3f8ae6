"""The papers' statistics, pinned with explicit confidence bounds (hwprof.golden.stats),
each shown to catch a mutant of the golden model.

* Sastry et al. sec. 3.1: ``R_r`` selects each tuple with probability ``1/r`` (the
  expected count is ``n / r`` from the paper, not from the implementation's threshold);
  the countdown sampler's gap to the next selection has mean ``r`` (its messages
  claim ``r``).
* Burrows et al. sec. 2.2 "Data Reduction" (Gibbons-Matias concise samples): a value is counted with
  probability ``p`` whether or not it is in the hotlist; a thinning keeps each recorded
  instance with probability ``1/f`` and divides ``p`` by ``f``; ``C[v] / p`` is unbiased.

Every check is a function returning ``None`` or a failure text, so the same check runs
on the model (must pass) and on a monkeypatched mutant (must fail). False-alarm
probability per check: ``DEFAULT_ALPHA`` (1e-6).
"""

from __future__ import annotations

import numpy as np
import pytest

from hwprof.golden import hotlist as hl
from hwprof.golden import samplers as gs
from hwprof.golden.stats import (
    DEFAULT_ALPHA,
    binomial_acceptance,
    hoeffding_halfwidth,
    normal_halfwidth,
)

SEED_MOD = 2**32 - 1


# --- R_r: probability 1/r ------------------------------------------------------------


def check_random_rate(make, rate, n, seed):
    """Selections of ``n`` tuples ~ Binomial(n, 1/r) (the paper's probability)."""
    model = make(rate=rate, seed=seed % SEED_MOD + 1)
    hits = sum(model.feed(k) is not None for k in range(n))
    lo, hi = binomial_acceptance(n, 1.0 / rate)
    if not lo <= hits <= hi:
        return f"rate {rate}: {hits} selections of {n} not in [{lo}, {hi}] (1/r), seed {seed}"
    return None


RANDOM_MAKERS = {
    "R": gs.RandomSampler,
    "H[R]": lambda rate, seed: gs.Stratified(rate=rate, entries=4, sampler="random", seed=seed),
}
# name -> (rate, tuples); at r = 10 and 100,000 tuples an off-by-one rate (1/(r +- 1))
# falls outside the bound (the mutant tests below).
RATES = {"R": ((2, 20_000), (10, 100_000), (256, 100_000)), "H[R]": ((10, 30_000),)}


@pytest.mark.parametrize("name", sorted(RANDOM_MAKERS))
def test_random_sampler_selects_with_probability_one_over_r(name, seed):
    for rate, n in RATES[name]:
        assert check_random_rate(RANDOM_MAKERS[name], rate, n, seed) is None


def _threshold_of_next_rate(rate):
    return max(1, round(65536 / (rate + 1)))


def _threshold_of_previous_rate(rate):
    return max(1, round(65536 / (rate - 1)))


@pytest.mark.parametrize("mutant", [_threshold_of_next_rate, _threshold_of_previous_rate])
def test_random_rate_check_catches_off_by_one_rate(mutant, seed, monkeypatch):
    monkeypatch.setattr(gs, "random_threshold", mutant)
    assert check_random_rate(gs.RandomSampler, 10, 100_000, seed) is not None


def test_random_rate_check_catches_a_stuck_lfsr(seed, monkeypatch):
    """Reading the same 16 bits every tuple selects all tuples or none."""
    monkeypatch.setattr(gs.Lfsr, "step", lambda self, **kw: self.state)
    assert check_random_rate(gs.RandomSampler, 10, 20_000, seed) is not None


# --- countdown sampler: mean gap r ---------------------------------------------------


def check_countdown_mean_gap(rate, gaps_wanted, seed):
    """The mean gap between selections is r, within Hoeffding's bound for gaps in [1, 2r]."""
    model = gs.CountdownSampler(rate=rate, seed=seed % SEED_MOD + 1)
    picks, key = [], 0
    while len(picks) <= gaps_wanted:
        if model.feed(key) is not None:
            picks.append(key)
        key += 1
    gaps = np.diff(picks)
    half = hoeffding_halfwidth(len(gaps), 2 * rate - 1)
    mean = float(gaps.mean())
    if abs(mean - rate) > half:
        return f"rate {rate}: mean gap {mean:.4f} not within {half:.4f} of r, seed {seed}"
    return None


@pytest.mark.parametrize("rate", [10, 64])
def test_countdown_mean_gap_is_r(rate, seed):
    assert check_countdown_mean_gap(rate, 50_000, seed) is None


def test_countdown_check_catches_reload_in_1_to_2r(seed, monkeypatch):
    """The literal ``<1, 2r>`` reload (mean r + 1/2, no fold) is the bias this fixes."""
    monkeypatch.setattr(gs, "countdown_reload", lambda u, rate: 1 + ((u * 2 * rate) >> 16))
    assert check_countdown_mean_gap(10, 50_000, seed) is not None


def test_countdown_estimate_of_stream_length_is_unbiased(seed):
    """r x messages estimates the stream length; over 1000 streams of 997 tuples the
    mean estimate is 997 within the CLT bound (the <1, 2r> reload would give -4.8%)."""
    rate, length = 10, 997
    rng = np.random.default_rng(seed)
    estimates = []
    for _ in range(1000):
        model = gs.CountdownSampler(rate=rate, seed=int(rng.integers(1, SEED_MOD)))
        # start in the stationary regime: a random number of warm-up tuples
        for k in range(int(rng.integers(50, 100))):
            model.feed(k)
        estimates.append(rate * sum(model.feed(k) is not None for k in range(length)))
    half = normal_halfwidth(estimates)
    assert abs(np.mean(estimates) - length) <= half, f"seed {seed}"


def test_countdown_reload_distribution_over_every_u():
    """Over all 2**16 random inputs (r = 8, a power of two): the paper's ``<1, 2r>``
    uniform, with the top gap 2r folded onto r: each gap 1..2r-1 once per 2r inputs
    block, r twice, 2r never; the mean is exactly r."""
    rate = 8
    counts = np.bincount([gs.countdown_reload(u, rate) for u in range(1 << 16)],
                         minlength=2 * rate + 1)  # fmt: skip
    share = (1 << 16) // (2 * rate)
    expected = [0] + [2 * share if g == rate else share for g in range(1, 2 * rate)] + [0]
    assert counts.tolist() == expected
    assert sum(g * n for g, n in enumerate(counts)) == rate * (1 << 16)


def test_countdown_gaps_cover_1_to_2r_minus_1(seed):
    rate = 8
    model = gs.CountdownSampler(rate=rate, seed=seed % SEED_MOD + 1)
    picks = [i for i in range(40_000) if model.feed(i)]
    assert 1 <= picks[0] + 1 <= 2 * rate - 1  # the first gap is drawn too
    assert set(np.diff(picks).tolist()) == set(range(1, 2 * rate))


def first_two_gaps(rate, seed):
    """Positions (1-based) of the first selection, and the gap to the second, from reset."""
    model = gs.CountdownSampler(rate=rate, seed=seed)
    picks, key = [], 1
    while len(picks) < 2:
        if model.feed(key) is not None:
            picks.append(key)
        key += 1
    return picks[0], picks[1] - picks[0]


def test_countdown_first_selection_is_random_in_1_to_2r():
    """Sec. 3.1: the samplers of [2, 15, 33] "select an element via a countdown register
    initialized with a random number from the interval <1, 2r>" -- at reset too, not only
    on a reload. With our fold of 2r onto r (countdown_reload) the first selection's
    position is uniform on 1..2r-1 with r twice as likely, mean exactly r (at r = 10:
    sum of the folded gaps over the 2**16 values of u = 10 * 2**16). Over the seeds
    1..2000 every position 1..19 occurs and the mean is 10 within Hoeffding's bound
    (span 2r - 2); the first countdown fixed at r (the old model: tuple 10 for every
    seed) or drawn from the seed's own low bits (tuple 1 for every small seed) fails.
    The draw advances the LFSR like a reload: the gap to the second selection equals the
    first as often as for two independent draws, with probability q = the sum of the
    squared probabilities of the gaps (22/400 at r = 10, about 1 seed in 18): the count
    of such seeds within the binomial bounds of q (not 0: a reload that avoids the last
    gap; not all: a draw that does not advance the LFSR)."""
    rate, seeds = 10, range(1, 2001)
    assert sum(gs.countdown_reload(u, rate) for u in range(1 << 16)) == rate << 16
    pairs = [first_two_gaps(rate, s) for s in seeds]
    firsts = np.array([first for first, _ in pairs])
    assert set(firsts.tolist()) == set(range(1, 2 * rate))
    half = hoeffding_halfwidth(len(firsts), 2 * rate - 2)
    assert abs(firsts.mean() - rate) <= half, f"mean first position {firsts.mean()}"
    gaps = np.bincount([gs.countdown_reload(u, rate) for u in range(1 << 16)]) / (1 << 16)
    lo, hi = binomial_acceptance(len(pairs), float(np.sum(gaps**2)), DEFAULT_ALPHA)
    repeats = sum(first == second for first, second in pairs)
    assert lo <= repeats <= hi, f"{repeats} of {len(pairs)} seeds repeat their first gap"


# --- hotlist (Gibbons-Matias concise samples) ---------------------------------------


def check_hotlist_adds_with_probability_p(seed, present, trials=100_000, p=0.25):
    """A value is counted with probability p, whether new (``present=False``) or
    already in the table (``present=True``; counting samples would count it always)."""
    hot = hl.Hotlist(entries=16, seed=seed)
    added = 0
    for i in range(trials):
        hot.p = p
        hot.counts = {1: 5} if present else {}
        hot.add(1 if present else 2 + i)
        added += (hot.counts.get(1, 0) - 5) if present else len(hot.counts)
    lo, hi = binomial_acceptance(trials, p)
    if not lo <= added <= hi:
        return f"{added} of {trials} counted, not in [{lo}, {hi}] (p = {p}), seed {seed}"
    return None


@pytest.mark.parametrize("present", [False, True], ids=["new-value", "value-in-table"])
def test_hotlist_counts_a_value_with_probability_p(present, seed):
    assert check_hotlist_adds_with_probability_p(seed, present) is None


def _add_with_p_over_f(self, value):
    if self.rng.random() >= self.p / self.factor:
        return
    self.counts[value] = self.counts.get(value, 0) + 1
    while len(self.counts) > self.entries:
        self.thin()


def _add_counting_samples(self, value):
    """Gibbons-Matias *counting* samples: a value in the table is counted every time."""
    if value not in self.counts and self.rng.random() >= self.p:
        return
    self.counts[value] = self.counts.get(value, 0) + 1
    while len(self.counts) > self.entries:
        self.thin()


@pytest.mark.parametrize(("mutant", "present"), [(_add_with_p_over_f, False),
                                                 (_add_counting_samples, True)])  # fmt: skip
def test_hotlist_add_check_catches_mutants(mutant, present, seed, monkeypatch):
    monkeypatch.setattr(hl.Hotlist, "add", mutant)
    assert check_hotlist_adds_with_probability_p(seed, present) is not None


def check_thinning(seed, rounds=20):
    """A thinning keeps each of the recorded instances with probability 1/f, p := p / f."""
    rng = np.random.default_rng(seed)
    for r in range(rounds):
        hot = hl.Hotlist(entries=16, seed=int(rng.integers(1 << 31)))
        hot.p = p0 = float(rng.uniform(0.01, 1.0))
        hot.counts = {v: int(rng.integers(1, 2000)) for v in range(16)}
        before = sum(hot.counts.values())
        hot.thin()
        if hot.p != p0 / hot.factor:
            return f"round {r}: p = {hot.p}, not p / f = {p0 / hot.factor}, seed {seed}"
        lo, hi = binomial_acceptance(before, 1.0 / hot.factor, alpha=1e-6 / rounds)
        kept = sum(hot.counts.values())
        if not lo <= kept <= hi or 0 in hot.counts.values():
            return f"round {r}: kept {kept} of {before}, not in [{lo}, {hi}], seed {seed}"
    return None


def test_hotlist_thinning_keeps_each_instance_with_probability_one_over_f(seed):
    assert check_thinning(seed) is None


def _thin_with(keep, divide):
    def thin(self):
        self.p /= divide(self.factor)
        kept = {}
        for v, c in self.counts.items():
            heads = int(self.rng.binomial(c, keep(self.factor)))
            if heads:
                kept[v] = heads
        self.counts = kept

    return thin


THINNING_MUTANTS = {
    "keeps 1 - 1/f": _thin_with(lambda f: 1 - 1 / f, lambda f: f),
    "keeps 1/f**2": _thin_with(lambda f: 1 / f**2, lambda f: f),
    "p / f**2": _thin_with(lambda f: 1 / f, lambda f: f * f),
}


@pytest.mark.parametrize("name", sorted(THINNING_MUTANTS))
def test_thinning_check_catches_mutants(name, seed, monkeypatch):
    monkeypatch.setattr(hl.Hotlist, "thin", THINNING_MUTANTS[name])
    assert check_thinning(seed) is not None


#: A skewed stream at one program location: 40 values, counts 1..40 (820 occurrences),
#: so a 16-entry hotlist thins many times.
SKEWED = [v for v in range(40) for _ in range(v + 1)]


def check_unbiased(seed, runs=1000, watched=(39, 30, 20)):
    """Mean of C[v] / p over independent hotlists (random order, fresh coins) is n(v)
    within the CLT bound, for a hot, a middling and a cold value."""
    rng = np.random.default_rng(seed)
    stream = np.array(SKEWED)
    estimates = {v: [] for v in watched}
    for _ in range(runs):
        rng.shuffle(stream)
        hot = hl.Hotlist(entries=16, seed=int(rng.integers(1 << 31)))
        for value in stream.tolist():
            hot.add(value)
        for v in watched:
            estimates[v].append(hot.estimate(v))
    for v in watched:
        half = normal_halfwidth(estimates[v], alpha=1e-6 / len(watched))
        mean = float(np.mean(estimates[v]))
        if abs(mean - (v + 1)) > half:
            return f"value {v}: mean estimate {mean:.2f}, not {v + 1} +- {half:.2f}, seed {seed}"
    return None


def test_hotlist_estimate_is_unbiased(seed):
    assert check_unbiased(seed) is None


def test_unbiased_check_catches_p_divided_by_f_squared(seed, monkeypatch):
    monkeypatch.setattr(hl.Hotlist, "thin", THINNING_MUTANTS["p / f**2"])
    assert check_unbiased(seed) is not None
