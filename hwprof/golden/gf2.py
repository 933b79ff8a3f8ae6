"""Arithmetic over GF(2): polynomials as Python ints, factoring, ranks.

A polynomial ``p(x) = sum c_i x^i`` over GF(2) is the integer whose bit ``i`` is
``c_i``. Everything here is exact integer arithmetic; nothing is sampled.
"""

from __future__ import annotations

import math
from functools import cache

__all__ = [
    "poly_mulmod",
    "poly_powmod",
    "is_primitive",
    "prime_factors",
    "is_probable_prime",
    "gf2_rank",
    "gf2_apply",
]


def poly_mulmod(a: int, b: int, modulus: int) -> int:
    """Return ``a * b mod modulus`` for polynomials over GF(2)."""
    degree = modulus.bit_length() - 1
    result = 0
    while b:
        if b & 1:
            result ^= a
        b >>= 1
        a <<= 1
        if (a >> degree) & 1:
            a ^= modulus
    return result


def poly_powmod(base: int, exponent: int, modulus: int) -> int:
    """Return ``base ** exponent mod modulus`` for polynomials over GF(2)."""
    result = 1
    while exponent:
        if exponent & 1:
            result = poly_mulmod(result, base, modulus)
        base = poly_mulmod(base, base, modulus)
        exponent >>= 1
    return result


def is_probable_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for ``n < 3.3e24`` (every ``2**k - 1``, k <= 64)."""
    if n < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    for p in small:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _pollard_rho(n: int) -> int:
    """Return a non-trivial factor of the composite ``n`` (Brent's variant)."""
    if n % 2 == 0:
        return 2
    for c in range(1, n):
        y, m, g, r, q = 2, 128, 1, 1, 1
        x = ys = y
        while g == 1:
            x = y
            for _ in range(r):
                y = (y * y + c) % n
            k = 0
            while k < r and g == 1:
                ys = y
                for _ in range(min(m, r - k)):
                    y = (y * y + c) % n
                    q = q * abs(x - y) % n
                g = math.gcd(q, n)
                k += m
            r *= 2
        if g == n:
            g = 1
            while g == 1:
                ys = (ys * ys + c) % n
                g = math.gcd(abs(x - ys), n)
        if g != n:
            return g
    raise ArithmeticError(f"no factor found for {n}")  # pragma: no cover


@cache
def prime_factors(n: int) -> tuple[int, ...]:
    """Return the distinct prime factors of ``n >= 1`` in increasing order."""
    if n < 1:
        raise ValueError(f"n must be a positive integer, not {n!r}")
    factors: set[int] = set()
    stack = [n]
    while stack:
        m = stack.pop()
        if m == 1:
            continue
        if is_probable_prime(m):
            factors.add(m)
            continue
        f = _pollard_rho(m)
        stack += [f, m // f]
    return tuple(sorted(factors))


def is_primitive(poly: int) -> bool:
    """Whether ``poly`` (degree n >= 1) is primitive over GF(2).

    ``p`` is primitive iff ``x^(2^n-1) = 1 mod p`` and ``x^((2^n-1)/q) != 1 mod p``
    for every prime ``q`` dividing ``2^n - 1``; then the multiplicative order of
    ``x`` is exactly ``2^n - 1`` and an LFSR with this characteristic polynomial
    has maximal period.
    """
    degree = poly.bit_length() - 1
    if degree < 1 or not poly & 1:
        return False
    order = (1 << degree) - 1
    if poly_powmod(2, order, poly) != 1:
        return False
    return all(poly_powmod(2, order // q, poly) != 1 for q in prime_factors(order))


def gf2_rank(vectors) -> int:
    """Rank over GF(2) of an iterable of bit-vectors given as ints."""
    basis: dict[int, int] = {}  # leading bit -> vector
    rank = 0
    for v in vectors:
        while v:
            top = v.bit_length() - 1
            if top not in basis:
                basis[top] = v
                rank += 1
                break
            v ^= basis[top]
    return rank


def gf2_apply(rows, state: int) -> int:
    """A GF(2) matrix times a bit-vector: bit ``i`` of the result is the parity of
    ``rows[i] & state`` (rows and state as ints, e.g. an LFSR's step masks)."""
    return sum((bin(row & state).count("1") & 1) << i for i, row in enumerate(rows))
