"""Exact acceptance bounds for statistical tests (no magic tolerances).

A statistical test in hwprof states a null hypothesis ``count ~ Binomial(n, p)``
and a false-alarm probability ``alpha``; :func:`binomial_acceptance` returns the
smallest central interval that holds the count with probability >= 1 - alpha,
computed from the exact binomial distribution (no normal approximation, so it is
right for the rare outcomes of low brr frequencies too).

For the mean of ``n`` independent draws the bounds are
:func:`hoeffding_halfwidth` (variables confined to an interval of width
``span``: exact, distribution-free) and :func:`normal_halfwidth` (unbounded
estimators such as a hotlist's ``C[v] / p``: the central limit theorem with the
sample's standard deviation, for ``n`` in the thousands).
"""

from __future__ import annotations

import math

__all__ = ["binomial_acceptance", "hoeffding_halfwidth", "normal_halfwidth", "DEFAULT_ALPHA"]

#: False-alarm probability per statistical check. Tests that make m checks
#: divide it by m (Bonferroni), so a whole test file fails by chance with
#: probability below about 1e-6.
DEFAULT_ALPHA = 1e-6


def _log_pmf(k: int, n: int, p: float) -> float:
    if p == 0.0:
        return 0.0 if k == 0 else -math.inf
    if p == 1.0:
        return 0.0 if k == n else -math.inf
    return (
        math.lgamma(n + 1)
        - math.lgamma(k + 1)
        - math.lgamma(n - k + 1)
        + k * math.log(p)
        + (n - k) * math.log1p(-p)
    )


def binomial_acceptance(n: int, p: float, alpha: float = DEFAULT_ALPHA) -> tuple[int, int]:
    """Interval ``[lo, hi]`` with ``P(lo <= X <= hi) >= 1 - alpha`` for ``X ~ B(n, p)``.

    Each tail outside the interval has probability at most ``alpha / 2``.
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, not {n!r}")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability, not {p!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), not {alpha!r}")
    mode = min(n, int((n + 1) * p))
    half = alpha / 2
    return _tail_bound(n, p, mode, -1, half), _tail_bound(n, p, mode, +1, half)


def _tail_bound(n: int, p: float, mode: int, direction: int, half: float) -> int:
    """Furthest ``k`` from ``mode`` (in ``direction``) whose tail beyond it is <= half.

    Past the mode the pmf falls monotonically (and faster than geometrically), so
    the walk stops once a term is below 1e-300 of the total: the rest of the tail
    is negligible against any ``alpha`` a test uses.
    """
    terms = []
    k = mode + direction
    while 0 <= k <= n:
        value = math.exp(_log_pmf(k, n, p))
        terms.append(value)
        if value < 1e-300:
            break
        k += direction
    # terms[i] is pmf(mode + direction * (i + 1)). From the far end inward, keep
    # the bound closest to the mode whose tail beyond it is still <= half.
    bound = mode + direction * len(terms)
    tail = 0.0
    for i in range(len(terms) - 1, -1, -1):
        if tail > half:
            break
        bound = mode + direction * (i + 1)
        tail += terms[i]
    else:
        if tail <= half:
            bound = mode
    return bound


def hoeffding_halfwidth(n: int, span: float, alpha: float = DEFAULT_ALPHA) -> float:
    """Half-width ``h`` with ``P(|mean - mu| >= h) <= alpha`` for the mean of ``n``
    independent variables confined to an interval of width ``span`` (Hoeffding:
    ``2 exp(-2 n h**2 / span**2) = alpha``)."""
    if n < 1:
        raise ValueError(f"n must be positive, not {n!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), not {alpha!r}")
    return span * math.sqrt(math.log(2.0 / alpha) / (2.0 * n))


def normal_halfwidth(samples, alpha: float = DEFAULT_ALPHA) -> float:
    """Half-width of the two-sided ``1 - alpha`` interval of the mean of ``samples``
    by the central limit theorem: ``z(1 - alpha / 2) * s / sqrt(n)`` (``s`` the
    sample standard deviation). Needs at least 1000 samples."""
    values = [float(x) for x in samples]
    n = len(values)
    if n < 1000:
        raise ValueError(f"normal_halfwidth needs at least 1000 samples, not {n}")
    mean = math.fsum(values) / n
    var = math.fsum((x - mean) ** 2 for x in values) / (n - 1)
    return _z(alpha / 2) * math.sqrt(var / n)


def _z(tail: float) -> float:
    """The standard normal quantile with upper tail ``tail`` (bisection on erfc)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(mid / math.sqrt(2)) > tail:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
