"""Golden LFSR: every tap-table entry is maximal-length, proven two ways."""

import itertools

import pytest

from hwprof.golden.gf2 import is_primitive, poly_mulmod, poly_powmod
from hwprof.golden.lfsr import FORMS, MAX_WIDTH, MIN_WIDTH, TAPS, Lfsr, LfsrConfig, polynomial


def period(config: LfsrConfig) -> int:
    """Steps until the state returns to the seed (the step map is a bijection)."""
    state = config.step(config.seed)
    steps = 1
    limit = 1 << config.width
    while state != config.seed:
        state = config.step(state)
        steps += 1
        assert steps <= limit, "no return to the seed"
    return steps


def test_table_covers_3_to_64():
    assert sorted(TAPS) == list(range(3, 65))
    assert (MIN_WIDTH, MAX_WIDTH) == (3, 64)
    for width, taps in TAPS.items():
        assert taps[0] == width


@pytest.mark.parametrize("width", sorted(TAPS))
def test_every_table_entry_is_primitive(width):
    assert is_primitive(polynomial(TAPS[width]))


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("width", [w for w in sorted(TAPS) if w <= 20])
def test_exhaustive_period_walk(width, form):
    assert period(LfsrConfig(width=width, form=form)) == 2**width - 1


@pytest.mark.parametrize("width", [3, 4, 5, 6, 7, 8])
def test_primitivity_check_agrees_with_period_walk_for_every_polynomial(width):
    """Both proofs agree on *every* polynomial of small degree, including the
    non-maximal ones, so neither can pass everything by accident."""
    primitive_count = 0
    for middle in itertools.chain.from_iterable(
        itertools.combinations(range(1, width), r) for r in range(width)
    ):
        taps = (width, *middle)
        poly = polynomial(taps)
        config = LfsrConfig.__new__(LfsrConfig)  # bypass the primitivity check
        object.__setattr__(config, "width", width)
        object.__setattr__(config, "seed", 1)
        object.__setattr__(config, "form", "fibonacci")
        object.__setattr__(config, "taps", taps)
        maximal = period(config) == 2**width - 1
        assert maximal == is_primitive(poly), taps
        primitive_count += maximal
    # Number of primitive polynomials of degree n is phi(2^n - 1) / n.
    expected = {3: 2, 4: 2, 5: 6, 6: 6, 7: 18, 8: 16}[width]
    assert primitive_count == expected


def recurrence_states(width, taps, seed, count):
    """Fibonacci states from the defining recurrence, not from ``step``.

    The register holds ``a[t], ..., a[t+n-1]`` (stage i = ``a[t+i]``) of the sequence
    ``a[t+n] = a[t] + sum(a[t+tap] for the middle taps)`` whose characteristic
    polynomial is ``p(x)`` (module docstring of hwprof.golden.lfsr).
    """
    a = [(seed >> i) & 1 for i in range(width)]
    while len(a) < width + count:
        t = len(a) - width
        a.append((a[t] + sum(a[t + tap] for tap in taps[1:])) % 2)
    return [sum(a[t + i] << i for i in range(width)) for t in range(count)]


def advance_matches_the_definition(config, advances) -> bool:
    """``advances`` advances of ``config`` against the form's definition: the
    recurrence (Fibonacci) or ``r(x) * x^k mod p(x)`` with gf2's arithmetic (Galois)."""
    p = polynomial(config.taps)
    if config.form == "fibonacci":
        expected = recurrence_states(config.width, config.taps, config.seed,
                                     advances * config.steps + 1)[:: config.steps]  # fmt: skip
    else:
        xk = poly_powmod(2, config.steps, p)
        expected = [config.seed]
        for _ in range(advances):
            expected.append(poly_mulmod(expected[-1], xk, p))
    state = config.seed
    for want in expected[1:]:
        state = config.advance(state)
        if state != want:
            return False
    return True


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("steps", [1, 2, 3, 7, 8, 13, 64])
def test_advance_follows_the_polynomial(form, steps, seed):
    """k steps per advance, checked against the recurrence / polynomial arithmetic
    (not against a loop of ``step``, which is how ``advance`` is written)."""
    import random

    rng = random.Random(seed)
    for width in (5, 20, 33, 64):
        config = LfsrConfig(width=width, steps=steps, form=form, seed=rng.randrange(1, 2**width))
        assert advance_matches_the_definition(config, 20), f"width {width}, seed {seed}"


@pytest.mark.parametrize("form", FORMS)
def test_advance_check_catches_a_wrong_tap(form, monkeypatch):
    """The check above fails when the step map uses another tap than the polynomial."""
    import hwprof.golden.lfsr as lfsr_module

    config = LfsrConfig(width=20, steps=8, form=form, seed=0x9A5C3)
    step = lfsr_module._STEP[form]
    monkeypatch.setitem(lfsr_module._STEP, form, lambda s, w, taps: step(s, w, (20, 3)))
    assert not advance_matches_the_definition(config, 20)


def test_lockup_escape():
    escaping = LfsrConfig(width=8)
    assert escaping.advance(0) == 1
    stuck = LfsrConfig(width=8, lockup_escape=False)
    assert stuck.advance(0) == 0
    model = Lfsr(width=8)
    model.step(load=True, load_data=0)
    assert model.state == 0
    model.step(enable=True)
    assert model.state == 1


def test_model_priority_reset_load_enable():
    model = Lfsr(width=8, seed=5)
    assert model.step(enable=True) == 5
    after_one = model.state
    assert after_one == LfsrConfig(width=8, seed=5).advance(5)
    model.step(load=True, enable=True, load_data=0x3C)
    assert model.state == 0x3C
    model.step(reset=True, load=True, load_data=1)
    assert model.state == 5
    model.step()
    assert model.state == 5


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"width": 2}, ValueError, "width must be between 3 and 64, not 2"),
        ({"width": 65}, ValueError, "width must be between 3 and 64, not 65"),
        ({"width": "8"}, TypeError, "width must be an integer, not '8'"),
        ({"seed": 0}, ValueError, "seed must be non-zero: the all-zero state is the LFSR's"),
        ({"width": 4, "seed": 16}, ValueError, "seed must be between 0 and 15, not 16"),
        ({"steps": 0}, ValueError, "steps must be at least 1, not 0"),
        ({"form": "xnor"}, ValueError, "form must be one of fibonacci, galois, not 'xnor'"),
        ({"width": 4, "taps": (4, 2)}, ValueError, "do not give a primitive polynomial"),
        ({"width": 4, "taps": (5, 1)}, ValueError, "taps must start with the width 4"),
        ({"lockup_escape": 1}, TypeError, "lockup_escape must be a bool, not 1"),
    ],
)
def test_config_errors(params, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        LfsrConfig(**params)


def test_figure_6_update_is_exponents_4_1():
    """Paper, Figure 6: "A 4-bit LFSR with the right two bits selected for XOR will
    update from the value 0110 to 1011. All bits are shifted right on an update
    except the left-most bit which gets the result of the XOR." Our Fibonacci form
    also shifts toward bit 0 (the right) and feeds bit n - 1 (the left); its feedback
    always includes bit 0, so the right two bits are exponents (4, 1). TAPS[4] = (4, 3)
    XORs the two end bits instead and runs the reciprocal polynomial."""
    fig6 = LfsrConfig(width=4, seed=0b0110, taps=(4, 1))
    assert fig6.step(0b0110) == 0b1011
    assert LfsrConfig(width=4, seed=0b0110).step(0b0110) == 0b0011  # TAPS[4]
