"""One Gibbons-Matias hotlist per load site (hwprof.golden.site_hotlist) against the
statements of Burrows et al., "Efficient and Flexible Value Sampling", sec. 2.2 and 2.4:

* "the invariant that C[v]/p is an unbiased estimate of the number of times v has been
  seen";
* "NZ(C) <= N", for "only one value hotlist for each PC": the bound holds per site;
* "p is reduced to p/f", "a typical value for f is N/(N - 1)";
* "each value instance recorded in C is retained with probability 1/f".

Each check returns ``None`` or a failure text, so the same check runs on the model
(must pass) and on a mutant (must fail); bounds from hwprof.golden.stats, false-alarm
probability per check at most 1e-6. The compiled path (what the experiment runs) and
the readable reference are both checked.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hwprof.golden import site_hotlist as sh
from hwprof.golden.stats import DEFAULT_ALPHA, binomial_acceptance, normal_halfwidth

#: Three sites, each a skewed stream of 40 values seen 1..40 times (820 loads a site).
SITES = (0x401000, 0x402468, 0x7F0010)
WATCHED = ((0, 39), (1, 30), (2, 20))  # (site index, value): a hot, a middling, a cold value
#: Two-sided standard normal bound with tail probability about 1e-7.
Z_BOUND = 5.33


def _key(pc, value):
    return (pc << 32) | value


def _skewed_stream(rng):
    stream = np.array([_key(pc, v) for pc in SITES for v in range(40) for _ in range(v + 1)],
                      np.uint64)  # fmt: skip
    rng.shuffle(stream)
    return stream


def _group(profile):
    """``{site pc: {key: (estimate, raw C)}}`` of a one-interval profile."""
    out = {}
    for k, est, raw in zip(profile["keys"].tolist(), profile["counts"].tolist(),
                           profile["raw"].tolist(), strict=True):  # fmt: skip
        out.setdefault(k >> 32, {})[k] = (est, raw)
    return out


# --- NZ(C) <= N per site; p = f**-k with f = N / (N - 1) -----------------------------------


def check_bound_and_levels(seed, entries=4, runs=20, **params):
    """Every site holds at most N values, p is f**-k (f = N / (N - 1)), all sites
    together hold more than N (one hotlist per PC, not one in all)."""
    rng = np.random.default_rng(seed)
    f = entries / (entries - 1)
    for r in range(runs):
        stream = _skewed_stream(rng)
        out = sh.site_profiles(stream, len(stream), 1, entries=entries,
                               seed=int(rng.integers(1 << 31)), **params)  # fmt: skip
        groups = _group(out)
        if sorted(groups) != sorted(SITES) or sorted(out["site_pc"].tolist()) != sorted(SITES):
            return f"run {r}: sites {sorted(groups)}, not {sorted(SITES)}, seed {seed}"
        for pc, held in groups.items():
            if len(held) > entries:
                return f"run {r}: site {pc:#x} holds {len(held)} > N = {entries}, seed {seed}"
        if out["held"][0] <= entries:
            return f"run {r}: {out['held'][0]} held in all sites, seed {seed}"
        level = dict(zip(out["site_pc"].tolist(), out["site_level"].tolist(), strict=True))
        for pc, held in groups.items():
            for est, raw in held.values():
                if est != math.floor(raw * f ** level[pc] + 0.5):
                    return (f"run {r}: site {pc:#x} estimate {est} is not C f^k = "
                            f"{raw} * {f:.4f}^{level[pc]}, seed {seed}")  # fmt: skip
    return None


def test_each_site_holds_at_most_n_values_and_p_is_a_power_of_one_over_f(seed):
    assert check_bound_and_levels(seed) is None


def test_bound_check_catches_a_wrong_factor(seed):
    """A model that divides p by N / (N - 2) while its estimates claim N / (N - 1)."""
    assert check_bound_and_levels(seed, factor=4 / 2) is not None


def test_default_factor_is_n_over_n_minus_1():
    assert sh.default_factor(16) == 16 / 15
    assert sh.default_factor(4) == 4 / 3
    assert sh.default_factor(1) == 2.0


def test_reference_holds_at_most_n_values_per_site(seed):
    rng = np.random.default_rng(seed)
    hot = sh.SiteHotlists(entries=4, seed=seed)
    for key in _skewed_stream(rng).tolist():
        hot.add(key >> 32, key)
        assert len(hot.sites[key >> 32].counts) <= 4, f"seed {seed}"
    assert sum(len(h.counts) for h in hot.sites.values()) > 4
    for h in hot.sites.values():
        k = math.log(h.p) / math.log(3 / 4)
        assert abs(k - round(k)) < 1e-9, f"p = {h.p} is not (3/4)^k, seed {seed}"


# --- C[v] / p unbiased -----------------------------------------------------------------


def check_unbiased(seed, runs=1000, **params):
    """Mean of C[v] / p over independent runs (each interval a fresh shuffle, the
    hotlists emptied between them) is n(v) within the CLT bound, per watched value."""
    rng = np.random.default_rng(seed)
    stream = np.concatenate([_skewed_stream(rng) for _ in range(runs)])
    length = len(stream) // runs
    out = sh.site_profiles(stream, length, 1, entries=16, seed=int(rng.integers(1 << 31)),
                           **params)  # fmt: skip
    starts = np.r_[0, out["ends"][:-1]]
    estimates = {w: np.zeros(runs) for w in WATCHED}
    for r, (a, b) in enumerate(zip(starts, out["ends"], strict=True)):
        found = dict(zip(out["keys"][a:b].tolist(), out["counts"][a:b].tolist(), strict=True))
        for site, value in WATCHED:
            estimates[(site, value)][r] = found.get(_key(SITES[site], value), 0)
    for (site, value), x in estimates.items():
        half = normal_halfwidth(x, alpha=DEFAULT_ALPHA / len(WATCHED)) + 0.5  # + rounding
        if abs(x.mean() - (value + 1)) > half:
            return (f"site {site} value {value}: mean estimate {x.mean():.2f}, not "
                    f"{value + 1} +- {half:.2f}, seed {seed}")  # fmt: skip
    return None


def test_compiled_estimate_is_unbiased(seed):
    assert check_unbiased(seed) is None


def test_unbiased_check_catches_a_wrong_retention(seed):
    assert check_unbiased(seed, keep=(15 / 16) ** 2) is not None


def test_reference_estimate_is_unbiased(seed):
    """The reference, 1000 runs of a shorter stream (values seen 1..20 times at each
    site, N = 8 so that it thins)."""
    rng = np.random.default_rng(seed)
    stream = np.array([_key(pc, v) for pc in SITES for v in range(20) for _ in range(v + 1)],
                      np.uint64)  # fmt: skip
    watched = ((0, 19), (1, 10), (2, 5))
    estimates = {w: [] for w in watched}
    for _ in range(1000):
        rng.shuffle(stream)
        hot = sh.SiteHotlists(entries=8, seed=int(rng.integers(1 << 31)))
        for key in stream.tolist():
            hot.add(key >> 32, key)
        for site, value in watched:
            estimates[(site, value)].append(hot.estimate(SITES[site], _key(SITES[site], value)))
    for (site, value), x in estimates.items():
        half = normal_halfwidth(x, alpha=DEFAULT_ALPHA / len(watched))
        assert abs(np.mean(x) - (value + 1)) <= half, f"site {site} value {value}, seed {seed}"


# --- a thinning keeps each recorded instance with probability 1/f ------------------------


def check_retention(seed, runs=1000, entries=4, copies=5000, **params):
    """A site holds N values seen ``copies`` times each (p = 1), then one new value: the
    table is thinned until NZ(C) <= N. Each round keeps the new value's one instance
    with probability 1/f, so the rounds k are geometric with mean f / (f - 1) (= N);
    the old instances left after k rounds are Binomial(N copies, f**-k)."""
    rng = np.random.default_rng(seed)
    f = entries / (entries - 1)
    run = np.concatenate([np.repeat(np.arange(entries, dtype=np.uint64), copies),
                          [np.uint64(entries)]]) | np.uint64(SITES[0] << 32)  # fmt: skip
    levels, kept = np.zeros(runs), np.zeros(runs)
    for r in range(runs):
        out = sh.site_profiles(run, len(run), 1, entries=entries,
                               seed=int(rng.integers(1 << 31)), **params)  # fmt: skip
        levels[r] = out["site_level"][0]
        kept[r] = out["raw"][out["keys"] != run[-1]].sum()
    half = normal_halfwidth(levels)
    if abs(levels.mean() - f / (f - 1)) > half:
        return (f"mean rounds {levels.mean():.2f}, not f / (f - 1) = {f / (f - 1):.2f} "
                f"+- {half:.2f}, seed {seed}")  # fmt: skip
    expected = entries * copies * f**-levels
    z = (kept - expected).sum() / math.sqrt(np.sum(expected * (1 - f**-levels)))
    if abs(z) > Z_BOUND:
        return f"kept instances off Binomial(N copies, f^-k) by z = {z:.1f}, seed {seed}"
    return None


def test_thinning_retains_each_instance_with_probability_one_over_f(seed):
    assert check_retention(seed) is None


@pytest.mark.parametrize("keep", [(3 / 4) ** 2, 1 - 3 / 4, 0.8], ids=["1/f^2", "1-1/f", "0.8"])
def test_retention_check_catches_wrong_retention(keep, seed):
    assert check_retention(seed, keep=keep) is not None


# --- randomized periodic sampling -----------------------------------------------------


def check_sampler(make, seed, period=62, jitter=2, burst=1, n=400_000):
    """Gaps between interrupts within ``period +- jitter``, their mean ``period`` within
    the CLT bound; each interrupt samples ``burst`` consecutive loads."""
    model = make(period, jitter, burst, seed)
    taken = np.flatnonzero([model.step() for _ in range(n)])
    starts = taken[::burst]
    gaps = np.diff(starts)
    if gaps.min() < period - jitter or gaps.max() > period + jitter:
        return f"gaps {gaps.min()}..{gaps.max()}, not {period} +- {jitter}, seed {seed}"
    if abs(gaps.mean() - period) > normal_halfwidth(gaps):
        return f"mean gap {gaps.mean():.3f}, not {period}, seed {seed}"
    runs = np.split(taken, np.flatnonzero(np.diff(taken) > 1) + 1)
    if any(len(r) != burst for r in runs[:-1]):
        return f"bursts of {sorted({len(r) for r in runs})}, not {burst}, seed {seed}"
    return None


@pytest.mark.parametrize("burst", [1, 4])
def test_randomized_periodic_sampler(burst, seed):
    assert check_sampler(sh.RandomizedPeriodic, seed, period=62 * burst, burst=burst) is None


class _LateSampler(sh.RandomizedPeriodic):
    """A mutant whose gaps run one load long half of the time."""

    def step(self):
        hit = super().step()
        if hit and self.left == 0 and self.rng.random() < 0.5:
            self.countdown += 1
        return hit


def test_sampler_check_catches_late_interrupts(seed):
    assert check_sampler(_LateSampler, seed, jitter=2) is not None


def test_compiled_sampler_takes_burst_over_period_of_the_loads(seed):
    """Samples of the compiled path over n loads: n b / R within the jitter's CLT spread
    (the gaps' sum) plus one interrupt at either end."""
    n, period, jitter, burst = 2_000_000, 620, 20, 4
    keys = np.full(n, np.uint64(SITES[0] << 32))
    out = sh.site_profiles(keys, 100_000, 1, period=period, jitter=jitter, burst=burst, seed=seed)
    got = int(out["sampled"].sum())
    interrupts = n / period
    spread = Z_BOUND * math.sqrt(interrupts * ((2 * jitter + 1) ** 2 - 1) / 12) / period
    assert abs(got / burst - interrupts) <= spread + 2, f"{got} samples, seed {seed}"


# --- storage ----------------------------------------------------------------------------


def test_storage_bits():
    # 10 sites x (32-bit pc + 16-bit level + 16 x (32-bit value + 14-bit count)), by hand
    assert sh.site_storage_bits(10, 16, 10_000) == 10 * (32 + 16 + 16 * (32 + 14))
    assert sh.site_storage_bits(3, 1, 1_000_000) == 3 * (32 + 16 + 1 * (32 + 20))


@pytest.mark.parametrize(("kwargs", "text"), [
    ({"entries": 0}, "entries must be between 1 and 64, not 0"),
    ({"period": 4, "jitter": 4}, "jitter must be between 0 and 3, not 4"),
    ({"factor": 1.0}, "factor must be above 1, not 1.0"),
    ({"keep": 0.0}, "keep must be in (0, 1], not 0.0"),
])  # fmt: skip
def test_bad_parameters(kwargs, text):
    with pytest.raises(ValueError) as info:
        sh.site_profiles(np.zeros(10, np.uint64), 10, 1, **kwargs)
    assert str(info.value) == text


def test_keys_must_be_whole_intervals():
    with pytest.raises(ValueError, match="11 keys are not whole intervals of 10"):
        sh.site_profiles(np.zeros(11, np.uint64), 10, 1)


def test_binomial_bound_of_the_sampler_probability(seed):
    """Without jitter and burst 1, the first sample falls uniformly in 1..R: over many
    seeds, the share landing in the first half is 1/2 within binomial bounds."""
    period, trials = 64, 2000
    first = [sh.RandomizedPeriodic(period, seed=seed * trials + t).countdown
             for t in range(trials)]  # fmt: skip
    lo, hi = binomial_acceptance(trials, 0.5)
    assert lo <= sum(c <= period // 2 for c in first) <= hi, f"seed {seed}"
