"""GF(2) arithmetic behind the primitive-polynomial proofs."""

import math

import pytest

from hwprof.golden.gf2 import gf2_rank, is_primitive, poly_mulmod, poly_powmod, prime_factors


def test_mulmod_small_field():
    # GF(4) = GF(2)[x]/(x^2+x+1): x * x = x + 1
    assert poly_mulmod(0b10, 0b10, 0b111) == 0b11
    assert poly_powmod(0b10, 3, 0b111) == 1


@pytest.mark.parametrize(
    "poly, primitive",
    [
        (0b111, True),  # x^2+x+1
        (0b1011, True),  # x^3+x+1
        (0b11111, False),  # x^4+x^3+x^2+x+1: irreducible, but x has order 5, not 15
        (0b10101, False),  # x^4+x^2+1 = (x^2+x+1)^2: reducible
        (0b10011, True),  # x^4+x+1
        (0b1010, False),  # no constant term
    ],
)
def test_is_primitive_known_polynomials(poly, primitive):
    assert is_primitive(poly) is primitive


@pytest.mark.parametrize("n", [1, 12, 2**32 - 1, 2**64 - 1, 2**61 - 1, 600851475143])
def test_prime_factors_multiply_back(n):
    factors = prime_factors(n)
    product = 1
    for q in factors:
        assert all(q % d for d in range(2, min(q, 10_000))), q
        k = n
        while k % q == 0:
            k //= q
            product *= q
    assert product == n


def test_prime_factors_of_mersenne_64():
    assert prime_factors(2**64 - 1) == (3, 5, 17, 257, 641, 65537, 6700417)
    assert math.prod(prime_factors(2**64 - 1)) == 2**64 - 1


def test_gf2_rank():
    assert gf2_rank([0b01, 0b10, 0b11]) == 2
    assert gf2_rank([0b100, 0b010, 0b001]) == 3
    assert gf2_rank([0, 0]) == 0
