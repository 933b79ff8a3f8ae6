"""The set-associative accumulator option of the multi-hash golden model (``ways > 0``).

The paper's accumulator is fully associative (sec. 5.2); a block RAM holds a
set-associative one. These tests state what the option must keep of the paper's
rules (lookup, shielding, "empty entries first, then replaceable", "not put into
the accumulator table" when there is no free entry) with the set as the scope of
the search, and that one set of ``accumulator`` ways *is* the paper's model. Each
rule check returns its failures and is run on a mutant that ignores the set.
"""

from __future__ import annotations

import numpy as np
import pytest

from hwprof.cocotb_tests.multihash_streams import collision_stream, zipf_keys
from hwprof.golden.multihash import (
    SET_SOURCE_BITS,
    MultiHashConfig,
    MultiHashProfiler,
    run_fast,
    run_plain,
)
from tests.test_multihash_paper import mutant

BASE = {"tables": 4, "counters": 64, "pc_bits": 8, "value_bits": 8}


def keys_of_set(config, rng, count, wanted=None, avoid=()):
    """``count`` distinct keys of one set (``wanted``, or the set of the first key drawn)."""
    hashes = config.hashes()
    found = []
    while len(found) < count:
        key = int(rng.integers(0, 1 << config.key_bits))
        s = config.set_index([h(key) for h in hashes])
        if wanted is None:
            wanted = s
        if s == wanted and key not in found and key not in avoid:
            found.append(key)
    return found, wanted


@pytest.mark.parametrize(("bits", "sets"), [(12, 25), (12, 250), (12, 3), (12, 1024), (4, 3)])
def test_set_index_spreads_the_hash_evenly(bits, sets):
    """Every set gets floor or ceil(2**bits / sets) of the 2**bits hash values."""
    tables = 4
    index_bits = max(1, -(-bits // tables))
    config = MultiHashConfig(tables=tables, counters=tables << index_bits, accumulator=sets,
                             ways=1, pc_bits=8, value_bits=8)  # fmt: skip
    assert config.set_source_bits == min(SET_SOURCE_BITS, tables * index_bits)
    width = config.set_source_bits
    hits = np.zeros(sets, int)
    for x in range(1 << width):
        parts = [(x >> (i * index_bits)) & ((1 << index_bits) - 1) for i in range(tables)]
        s = config.set_index(parts)
        assert 0 <= s < sets
        hits[s] += 1
    low = (1 << width) // sets
    assert set(hits.tolist()) <= {low, low + 1}, hits


def test_parameter_errors():
    with pytest.raises(ValueError, match="accumulator must be a multiple of ways, not 100 / 3"):
        MultiHashConfig(ways=3)
    with pytest.raises(ValueError, match="ways must be between 0 and 100, not 101"):
        MultiHashConfig(ways=101)


def test_one_set_is_the_fully_associative_model(seed):
    params = BASE | {"accumulator": 8, "interval_length": 300, "threshold": 5}
    rng = np.random.default_rng(seed)
    keys = zipf_keys(rng, 3000, 16, distinct=400) + collision_stream(
        MultiHashConfig(**params), rng, 1500)  # fmt: skip
    want = run_plain(keys, **params)
    assert sum(map(len, want)) > 20
    assert run_plain(keys, ways=8, **params) == want
    assert run_fast(keys, ways=8, **params) == want


# --- rule checks (each returns its failures) ---------------------------------------------


def check_conflict_refuses_only_in_the_full_set(model, rng):
    """W + 1 tuples of one set reach T: the last is not put into the accumulator.

    A tuple of another set promoted afterwards still gets an entry, and the fully
    associative model (same stream, same size) keeps all of them.
    """
    failures = []
    ways, t = 2, 3
    params = BASE | {"accumulator": 8, "interval_length": (ways + 2) * t, "threshold": t}
    config = MultiHashConfig(ways=ways, **params)
    same, s = keys_of_set(config, rng, ways + 1)
    other, _ = keys_of_set(config, rng, 1, wanted=(s + 1) % config.sets)
    keys = [k for k in same + other for _ in range(t)]
    profile = model(ways=ways, **params).run(keys)[0]
    got = [k for k, _ in profile]
    if got != same[:ways] + other and got != other + same[:ways]:
        failures.append(f"set-associative profile {got}, want {same[:ways]} and {other}")
    full = [k for k, _ in model(**params).run(keys)[0]]
    if full != same + other:
        failures.append(f"fully associative profile {full}, want {same + other}")
    return failures


def check_empty_before_replaceable_in_the_set(model, rng):
    """Sec. 5.4.1 within a set: a retained entry is evicted only when its set has no empty way."""
    failures = []
    params = BASE | {"accumulator": 8, "ways": 2, "interval_length": 4, "threshold": 1}
    config = MultiHashConfig(**params)
    (a, b, c), s = keys_of_set(config, rng, 3)
    (d,), s2 = keys_of_set(config, rng, 1, wanted=(s + 1) % config.sets)
    p = model(**params)
    p.run([a, d, d, d])  # interval 1: a in set s (way 0), d in set s2; both retained
    p.run([b])  # set s: way 1 is empty -> b goes there, a stays
    if p.lookup(a) != s * 2 or p.lookup(b) != s * 2 + 1:
        failures.append(f"b should fill the empty way: a at {p.lookup(a)}, b at {p.lookup(b)}")
    p.run([c])  # set s full (a retained/replaceable, b non-replaceable): c evicts a
    if p.lookup(c) != s * 2 or p.lookup(a) is not None:
        failures.append(f"c should evict the replaceable a: c at {p.lookup(c)}")
    if p.lookup(d) != s2 * 2:
        failures.append("the retained entry of another set was touched")
    return failures


CHECKS = [check_conflict_refuses_only_in_the_full_set, check_empty_before_replaceable_in_the_set]


@pytest.mark.parametrize("check", CHECKS, ids=lambda f: f.__name__)
def test_rule(check, seed):
    assert check(MultiHashProfiler, np.random.default_rng(seed)) == [], f"seed {seed}"


@pytest.mark.parametrize("check", CHECKS, ids=lambda f: f.__name__)
def test_rule_check_catches_a_mutant_that_ignores_the_set(check, seed):
    ignores_set = mutant(MultiHashProfiler, "if not c.ways:", "if True:")
    assert check(ignores_set, np.random.default_rng(seed)) != [], f"seed {seed}"


def test_fast_path_check_catches_a_wrong_set(seed):
    """Bulk vs cycle model (test_multihash_golden) differs when the set index differs."""
    params = BASE | {"accumulator": 8, "ways": 2, "interval_length": 300, "threshold": 4}
    rng = np.random.default_rng(seed)
    keys = zipf_keys(rng, 6000, 16, distinct=3000, a=1.1)
    want = run_plain(keys, **params)
    wrong = mutant(MultiHashConfig,
                   "return (self.set_source(indices) * self.sets) >> self.set_source_bits",
                   "return (self.set_source(indices) * self.sets) >> self.set_source_bits ^ 1 "
                   "if self.sets > 1 else 0")  # fmt: skip
    import hwprof.golden.multihash as mh

    original = mh.MultiHashConfig
    try:
        mh.MultiHashConfig = wrong
        got = mh.run_plain(keys, **params)
    finally:
        mh.MultiHashConfig = original
    assert run_fast(keys, **params) == want
    assert got != want, f"seed {seed}"


def test_rtl_balanced_increment_and_compare_exhaustively():
    """The block RAM design's ``_step`` (x +- 1) and ``_compare`` (x < y, x == y): 6 bits
    (padded to 8 in the compare tree), and 5 against 7 bits (operands of two widths)."""
    from amaranth.hdl import Module, Signal
    from amaranth.sim import Simulator

    from hwprof.rtl.multihash_bram import _compare, _step

    m = Module()
    x, y = Signal(6), Signal(6)
    inc, dec, lt, eq = Signal(6), Signal(6), Signal(), Signal()
    less, equal = _compare(m, x, y)
    m.d.comb += [inc.eq(_step(m, x, True)), dec.eq(_step(m, x, False)), lt.eq(less),
                 eq.eq(equal)]  # fmt: skip
    u, v = Signal(5), Signal(7)
    lt_uv, eq_uv, lt_vu = Signal(), Signal(), Signal()
    less_uv, equal_uv = _compare(m, u, v)
    m.d.comb += [lt_uv.eq(less_uv), eq_uv.eq(equal_uv), lt_vu.eq(_compare(m, v, u)[0])]
    bad = []

    async def bench(ctx):
        for a in range(64):
            for b in range(64):
                ctx.set(x, a)
                ctx.set(y, b)
                got = (ctx.get(inc), ctx.get(dec), ctx.get(lt), ctx.get(eq))
                if got != ((a + 1) % 64, (a - 1) % 64, int(a < b), int(a == b)):
                    bad.append((a, b, got))
        for a in range(32):
            for b in range(128):
                ctx.set(u, a)
                ctx.set(v, b)
                got = (ctx.get(lt_uv), ctx.get(eq_uv), ctx.get(lt_vu))
                if got != (int(a < b), int(a == b), int(b < a)):
                    bad.append((a, b, got))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    assert bad == []
