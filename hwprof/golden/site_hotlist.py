"""One Gibbons-Matias hotlist per load site, fed by randomized periodic sampling.

Burrows et al., "Efficient and Flexible Value Sampling" (sec. 2.2, 2.4, 3.4) keep
"only one value hotlist for each PC": one instance of the algorithm of
:class:`hwprof.golden.hotlist.Hotlist` (``N = 16``, ``f = 16/15``) per program
location, fed the values sampled there. Samples come from randomized periodic
interrupts: DCPI interrupts "on the average every 62K instructions" with "a small
amount of randomization" (sec. 2.1, 3.4), and *vprof* interprets 4 instructions at
one interrupt in two (Table 2a).

* :class:`SiteHotlists`: the readable reference, a :class:`~hwprof.golden.hotlist.Hotlist`
  per site, created when the site is first sampled.
* :class:`RandomizedPeriodic`: the sampler of a load stream: an interrupt every
  ``period`` loads on average (each gap uniform on ``period +- jitter``, the first
  one uniform on ``1..period``: a random phase), and at each interrupt the next
  ``burst`` loads are sampled (the interpret length). A load is sampled with
  probability ``burst / period``, so an estimate is ``C[v] / p * period / burst``.
* :func:`site_profiles`: the same two, compiled, over whole intervals of 64-bit
  profile keys (``pc << 32 | value field``: the site is the key's pc field); the
  hotlists are emptied at every interval start, the sampler runs on. It returns each
  interval's entries with an estimate of at least ``threshold`` as ``(keys, counts,
  ends)`` records, the form :mod:`hwprof.golden.interval_error` scores with formula (1)
  of Narayanasamy et al.

Storage (:func:`site_storage_bits`): a site's hotlist is its pc tag (32 bits), its
thinning level ``k`` (``p = f**-k``, 16 bits) and ``N`` entries of a value field (32
bits) and a counter wide enough for an interval's samples; the sites of an interval
are those sampled in it.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .hotlist import Hotlist
from .lfsr import check_int

__all__ = ["SiteHotlists", "RandomizedPeriodic", "SiteProfiler", "site_profiles",
           "site_storage_bits", "default_factor", "PC_TAG_BITS", "LEVEL_BITS",
           "VALUE_FIELD_BITS", "MAX_SITES"]  # fmt: skip

#: Bits of a site's pc tag, of its thinning level and of an entry's value field.
PC_TAG_BITS = 32
LEVEL_BITS = 16
VALUE_FIELD_BITS = 32
#: Sites one interval of :func:`site_profiles` can hold.
MAX_SITES = 1 << 16


def default_factor(entries: int) -> float:
    """The paper's ``f = N / (N - 1)`` (2 for ``N = 1``)."""
    return entries / (entries - 1) if entries > 1 else 2.0


def counter_bits(interval_length: int) -> int:
    """Bits of a counter that holds any count of an interval of ``interval_length`` loads."""
    return int(interval_length).bit_length()


def site_storage_bits(sites: int, entries: int, interval_length: int) -> int:
    """Bits of ``sites`` hotlists of ``entries`` entries (module docstring)."""
    entry = VALUE_FIELD_BITS + counter_bits(interval_length)
    return int(sites) * (PC_TAG_BITS + LEVEL_BITS + entries * entry)


class SiteHotlists:
    """One :class:`~hwprof.golden.hotlist.Hotlist` per site (the readable reference).

    Parameters
    ----------
    entries : int
        ``N`` of every site's hotlist (default 16).
    factor : float, optional
        ``f`` (default ``N / (N - 1)``).
    seed : int
        Seeds the sites' coin streams (site ``i`` created gets ``seed`` and ``i``).
    """

    def __init__(self, entries=16, factor=None, seed=0):
        check_int("entries", entries, 1)
        self.entries = entries
        self.factor = default_factor(entries) if factor is None else factor
        self.seed = seed
        self.sites: dict[int, Hotlist] = {}

    def add(self, site: int, value: int) -> None:
        """One sampled ``value`` at ``site``."""
        hot = self.sites.get(site)
        if hot is None:
            seq = np.random.SeedSequence([self.seed, len(self.sites)])
            hot = Hotlist(self.entries, self.factor, seed=int(seq.generate_state(1)[0]))
            self.sites[site] = hot
        hot.add(value)

    def estimate(self, site: int, value: int) -> float:
        """``C[v] / p`` of ``value`` at ``site`` (0 for a site never sampled)."""
        hot = self.sites.get(site)
        return 0.0 if hot is None else hot.estimate(value)

    def hot(self, site: int) -> list[tuple[int, float]]:
        """The ``(value, estimate)`` pairs of ``site``, most frequent first."""
        hot = self.sites.get(site)
        return [] if hot is None else hot.hot()


class RandomizedPeriodic:
    """Which loads an interrupt-driven sampler sees (the readable reference).

    Parameters
    ----------
    period : int
        Mean loads from one interrupt to the next, at least 1.
    jitter : int
        Each later gap is uniform on ``period - jitter .. period + jitter``
        (``0 <= jitter < period``).
    burst : int
        Loads sampled at each interrupt (``1 <= burst <= period - jitter``).
    seed : int
    """

    def __init__(self, period: int, jitter: int = 0, burst: int = 1, seed: int = 0):
        check_int("period", period, 1)
        check_int("jitter", jitter, 0, period - 1)
        check_int("burst", burst, 1, period - jitter)
        self.period, self.jitter, self.burst = period, jitter, burst
        self.rng = np.random.default_rng(seed)
        self.countdown = int(self.rng.integers(1, period + 1))
        self.left = 0

    def step(self) -> bool:
        """The next load: True if it is sampled."""
        self.countdown -= 1
        if self.countdown == 0:
            j = self.jitter
            self.countdown = self.period + (int(self.rng.integers(-j, j + 1)) if j else 0)
            self.left = self.burst
        if self.left:
            self.left -= 1
            return True
        return False


@cache
def _kernel():
    from numba import njit

    @njit(cache=True, nogil=True)
    def kernel(
        keys,
        length,
        entries,
        factor,
        keep,
        seed,
        period,
        jitter,
        burst,
        scale,
        threshold,
        cap,
        state,
        out_key,
        out_count,
        out_raw,
        ends,
        sites_used,
        held,
        sampled,
        site_pc,
        site_samples,
        site_level,
    ):
        np.random.seed(seed)
        hsize = cap * 2
        hmask = hsize - 1
        hkey = np.zeros(hsize, np.uint64)
        hslot = np.full(hsize, -1, np.int64)
        used_h = np.empty(cap, np.int64)
        skey = np.zeros((cap, entries + 1), np.uint64)
        scount = np.zeros((cap, entries + 1), np.int64)
        snz = np.zeros(cap, np.int64)
        sp = np.ones(cap, np.float64)
        sn = np.zeros(cap, np.int64)
        sk = np.zeros(cap, np.int64)
        countdown = state[0]
        left = state[1]
        m = 0
        n_int = keys.shape[0] // length
        for r in range(n_int):
            nsites = 0
            taken = 0
            for j in range(r * length, (r + 1) * length):
                countdown -= 1
                if countdown == 0:
                    countdown = period
                    if jitter > 0:
                        countdown += np.random.randint(-jitter, jitter + 1)
                    left = burst
                if left == 0:
                    continue
                left -= 1
                taken += 1
                key = keys[j]
                pc = key >> np.uint64(32)
                h = np.int64((pc * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)) & hmask
                while hslot[h] >= 0 and hkey[h] != pc:
                    h = (h + 1) & hmask
                if hslot[h] < 0:
                    if nsites == cap:
                        return -1
                    hslot[h] = nsites
                    hkey[h] = pc
                    used_h[nsites] = h
                    snz[nsites] = 0
                    sp[nsites] = 1.0
                    sn[nsites] = 0
                    sk[nsites] = 0
                    nsites += 1
                s = hslot[h]
                sn[s] += 1
                p = sp[s]
                if p < 1.0 and np.random.random() >= p:
                    continue
                nz = snz[s]
                found = False
                for e in range(nz):
                    if skey[s, e] == key:
                        scount[s, e] += 1
                        found = True
                        break
                if found:
                    continue
                skey[s, nz] = key
                scount[s, nz] = 1
                nz += 1
                while nz > entries:
                    p /= factor
                    sk[s] += 1
                    kept = 0
                    for e in range(nz):
                        c = np.random.binomial(scount[s, e], keep)
                        if c > 0:
                            skey[s, kept] = skey[s, e]
                            scount[s, kept] = c
                            kept += 1
                    nz = kept
                snz[s] = nz
                sp[s] = p
            total = 0
            for s in range(nsites):
                total += snz[s]
                for e in range(snz[s]):
                    est = np.floor(scount[s, e] / sp[s] * scale + 0.5)
                    if est >= threshold:
                        out_key[m] = skey[s, e]
                        out_count[m] = np.int64(est)
                        out_raw[m] = scount[s, e]
                        m += 1
                hslot[used_h[s]] = -1
                site_pc[s] = hkey[used_h[s]]
                site_samples[s] = sn[s]
                site_level[s] = sk[s]
            ends[r] = m
            sites_used[r] = nsites
            held[r] = total
            sampled[r] = taken
        state[0] = countdown
        state[1] = left
        return m

    return kernel


def site_profiles(keys, interval_length: int, threshold: int, *, entries: int = 16,
                  factor: float | None = None, keep: float | None = None, period: int = 1,
                  jitter: int = 0, burst: int = 1, seed: int = 0, state=None):  # fmt: skip
    """The per-site hotlists over whole intervals of ``keys``, compiled.

    Parameters
    ----------
    keys : array_like of uint64
        ``len(keys)`` a multiple of ``interval_length``; the site of a key is
        ``key >> 32``.
    interval_length, threshold : int
        Hotlists are emptied at every interval start; an entry is reported when its
        estimate ``round(C[v] / p * period / burst)`` is at least ``threshold``.
    entries : int
        ``N`` (at most 64).
    factor : float, optional
        ``f > 1`` (default ``N / (N - 1)``).
    keep : float, optional
        The probability that a thinning keeps a recorded instance: ``1 / f``, the
        paper's (the default); anything else only shows that a check catches it.
    period, jitter, burst : int
        The sampler (:class:`RandomizedPeriodic`); ``period = 1`` samples every load.
    seed : int
        Seeds numba's generator for this call (coins, gaps).
    state : numpy.ndarray, optional
        Two int64: the sampler's countdown and the loads of the burst left, carried
        from call to call (updated in place); None: a fresh sampler with a random phase.

    Returns
    -------
    dict
        ``keys``, ``counts``, ``ends`` (the records), ``raw`` (each record's
        ``C[v]``), per interval ``sites`` (sites sampled), ``held`` (non-zero
        counters of all sites), ``sampled`` (loads sampled), and for the last
        interval each sampled site's pc field (``site_pc``), loads sampled there
        (``site_samples``: Burrows et al.'s *vtot*) and thinning level
        (``site_level``: ``k`` of ``p = f**-k``).

    Raises
    ------
    ValueError
        Bad parameters, keys that are not whole intervals, or an interval with more
        than :data:`MAX_SITES` sampled sites.
    """
    check_int("interval_length", interval_length, 1)
    check_int("entries", entries, 1, 64)
    check_int("period", period, 1)
    check_int("jitter", jitter, 0, period - 1)
    check_int("burst", burst, 1, period - jitter)
    factor = default_factor(entries) if factor is None else float(factor)
    if not factor > 1:
        raise ValueError(f"factor must be above 1, not {factor!r}")
    keep = 1.0 / factor if keep is None else float(keep)
    if not 0 < keep <= 1:
        raise ValueError(f"keep must be in (0, 1], not {keep!r}")
    keys = np.ascontiguousarray(keys, np.uint64)
    if len(keys) % interval_length:
        raise ValueError(f"{len(keys)} keys are not whole intervals of {interval_length}")
    n = len(keys) // interval_length
    if state is None:
        state = np.array([np.random.default_rng(seed).integers(1, period + 1), 0], np.int64)
    out_key = np.zeros(len(keys), np.uint64)
    out_count = np.zeros(len(keys), np.int64)
    out_raw = np.zeros(len(keys), np.int64)
    ends = np.zeros(n, np.int64)
    sites = np.zeros(n, np.int64)
    held = np.zeros(n, np.int64)
    sampled = np.zeros(n, np.int64)
    cap = 1 << (min(MAX_SITES, interval_length) - 1).bit_length()
    site_pc = np.zeros(cap, np.uint64)
    site_samples = np.zeros(cap, np.int64)
    site_level = np.zeros(cap, np.int64)
    m = _kernel()(keys, interval_length, entries, factor, keep, seed, period, jitter, burst,
                  period / burst, threshold, cap, state, out_key, out_count, out_raw, ends,
                  sites, held, sampled, site_pc, site_samples, site_level)  # fmt: skip
    if m < 0:
        raise ValueError(f"more than {MAX_SITES} sites sampled in one interval")
    last = int(sites[-1]) if n else 0
    return {"keys": out_key[:m].copy(), "counts": out_count[:m].copy(),
            "raw": out_raw[:m].copy(), "ends": ends,
            "sites": sites, "held": held, "sampled": sampled, "site_pc": site_pc[:last],
            "site_samples": site_samples[:last], "site_level": site_level[:last]}  # fmt: skip


class SiteProfiler:
    """:func:`site_profiles` as a :func:`hwprof.golden.interval_error.profile_stream`
    profiler: fed whole intervals, block by block, the sampler running on; it keeps
    each interval's sites, held entries and samples.

    Parameters are those of :func:`site_profiles` (``seed`` seeds the calls' seeds).
    """

    needs_truth = False

    def __init__(self, interval_length: int, threshold: int, *, entries: int = 16,
                 factor: float | None = None, keep: float | None = None, period: int = 1,
                 jitter: int = 0, burst: int = 1, seed: int = 0):  # fmt: skip
        self.params = {"entries": entries, "factor": factor, "keep": keep, "period": period,
                       "jitter": jitter, "burst": burst}  # fmt: skip
        self.interval_length, self.threshold = interval_length, threshold
        self.rng = np.random.default_rng(seed)
        self.state = np.array([self.rng.integers(1, period + 1), 0], np.int64)
        self.sites: list[int] = []
        self.held: list[int] = []
        self.sampled: list[int] = []

    def feed(self, keys, truth=None):
        out = site_profiles(keys, self.interval_length, self.threshold, state=self.state,
                            seed=int(self.rng.integers(1 << 31)), **self.params)  # fmt: skip
        self.sites += out["sites"].tolist()
        self.held += out["held"].tolist()
        self.sampled += out["sampled"].tolist()
        return out["keys"], out["counts"], out["ends"]
