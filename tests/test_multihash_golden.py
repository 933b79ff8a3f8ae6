"""Multi-hash profiler golden model (sections 5-6): rules by hand, metric, bound, fast path."""

from __future__ import annotations

import numpy as np
import pytest

from hwprof.cocotb_tests.multihash_streams import (
    at_threshold_stream,
    collision_stream,
    random_keys,
    repeated_stream,
    zipf_keys,
)
from hwprof.golden.multihash import (
    PRESETS,
    MultiHashConfig,
    MultiHashProfiler,
    error_rate,
    false_positive_bound,
    perfect_profile,
    run_fast,
    run_plain,
    threshold_for,
)

SMALL = {"pc_bits": 8, "value_bits": 8}


@pytest.mark.parametrize(
    ("kwargs", "exc", "text"),
    [
        ({"tables": 0}, ValueError, "tables must be between 1 and 16, not 0"),
        ({"tables": 3}, ValueError, "counters / tables must be a power of two, not 2048 / 3"),
        ({"counters": 96, "tables": 2}, ValueError,
         "counters / tables must be a power of two, not 96 / 2"),
        ({"counter_bits": 40}, ValueError, "counter_bits must be between 8 and 32, not 40"),
        ({"accumulator": 0}, ValueError, "accumulator must be between 1 and 4096, not 0"),
        ({"pc_bits": 40}, ValueError, "pc_bits + value_bits must be at most 64, not 72"),
        ({"interval_length": 1 << 24}, ValueError,
         "interval_length must be between 1 and 16777215, not 16777216"),
        ({"threshold": 0}, ValueError, "threshold must be between 1 and 10000, not 0"),
        ({"threshold": 10001}, ValueError, "threshold must be between 1 and 10000, not 10001"),
        ({"retain": 1}, TypeError, "retain must be a bool, not 1"),
        ({"tables": 4.0}, TypeError, "tables must be an integer, not 4.0"),
    ],
)  # fmt: skip
def test_config_errors(kwargs, exc, text):
    with pytest.raises(exc) as info:
        MultiHashConfig(**kwargs)
    assert str(info.value) == text


def test_paper_presets():
    assert threshold_for(10_000, 1) == PRESETS["10k"]["threshold"] == 100
    assert threshold_for(1_000_000, 0.1) == PRESETS["1m"]["threshold"] == 1000
    c = MultiHashConfig()
    assert (c.tables, c.table_size, c.counter_bits) == (4, 512, 24)
    assert c.counters * c.counter_bits == 6 * 1024 * 8  # the paper's 6 KB of counters


def find_keys(config, rng, relation):
    """Two keys whose indices satisfy ``relation(ia, ib)`` (lists of per-table indices)."""
    hashes = config.hashes()
    while True:
        a, b = (int(k) for k in rng.integers(0, 1 << config.key_bits, size=2))
        ia, ib = [h(a) for h in hashes], [h(b) for h in hashes]
        if a != b and relation(ia, ib):
            return a, b, ia, ib


def test_single_key_promoted_at_threshold_then_shielded():
    p = MultiHashProfiler(interval_length=50, threshold=5, **SMALL)
    key = 0x1234
    idx = [h(key) for h in p.hashes]
    for _ in range(4):
        assert p.step(key) is None
    assert p.lookup(key) is None and [p.counts[i][idx[i]] for i in range(4)] == [4] * 4
    p.step(key)  # 5th occurrence: all counters reach 5 -> promoted with count 5
    slot = p.lookup(key)
    assert slot == 0 and p.count[0] == 5 and not p.replaceable[0]
    for _ in range(44):
        p.step(key)
    assert [p.counts[i][idx[i]] for i in range(4)] == [5] * 4  # shielded
    assert p.step(key) == [(key, 50)]
    assert all(v == 0 for table in p.counts for v in table)  # flushed
    assert p.valid[0] and p.replaceable[0] and p.count[0] == 0  # retained (P1)


@pytest.mark.parametrize("conservative", [True, False])
def test_conservative_update_increments_only_the_minimum(conservative, seed):
    params = {"tables": 2, "counters": 64, "interval_length": 100, "threshold": 50, **SMALL}
    rng = np.random.default_rng(seed)
    config = MultiHashConfig(**params)
    a, b, ia, ib = find_keys(config, rng, lambda x, y: x[0] == y[0] and x[1] != y[1])
    p = MultiHashProfiler(conservative=conservative, **params)
    for _ in range(3):
        p.step(a)
    p.step(b)  # b's counters: table 0 at 3 (shared with a), table 1 at 0
    if conservative:
        assert (p.counts[0][ia[0]], p.counts[1][ib[1]]) == (3, 1)
    else:
        assert (p.counts[0][ia[0]], p.counts[1][ib[1]]) == (4, 1)
    q = MultiHashProfiler(conservative=conservative, **params)
    q.step(b)  # a tie (0, 0): both incremented
    assert (q.counts[0][ib[0]], q.counts[1][ib[1]]) == (1, 1)


@pytest.mark.parametrize("tables", [1, 2])
def test_promotion_needs_every_table(tables, seed):
    """b aliases with a promoted key in table 0: a single table promotes it (false positive)."""
    params = {"tables": tables, "counters": 64, "interval_length": 100, "threshold": 4,
              "conservative": False, **SMALL}  # fmt: skip
    rng = np.random.default_rng(seed)
    config = MultiHashConfig(**params)
    a, b, _, _ = find_keys(config, rng, lambda x, y: x[0] == y[0] and x[-1] != y[-1] or
                           len(x) == 1 and x == y)  # fmt: skip
    p = MultiHashProfiler(**params)
    for _ in range(4):
        p.step(a)
    p.step(b)
    assert (p.lookup(b) is not None) == (tables == 1)


def test_reset_clears_the_promoted_counters(seed):
    params = {"tables": 1, "counters": 64, "interval_length": 100, "threshold": 4, **SMALL}
    rng = np.random.default_rng(seed)
    config = MultiHashConfig(**params)
    a, b, ia, _ = find_keys(config, rng, lambda x, y: x == y)
    p = MultiHashProfiler(reset=True, **params)
    for _ in range(4):
        p.step(a)
    assert p.lookup(a) == 0 and p.count[0] == 4 and p.counts[0][ia[0]] == 0
    p.step(b)  # with R0 this alias would be promoted; with R1 its counter is 1
    assert p.lookup(b) is None and p.counts[0][ia[0]] == 1


def test_allocation_empty_then_replaceable_then_none():
    p = MultiHashProfiler(accumulator=2, interval_length=3, threshold=1, **SMALL)
    assert p.step(11) is None and p.step(12) is None
    assert p.step(13) == [(11, 1), (12, 1)]  # full: 13 is not put into the table
    # next interval: 11 and 12 retained as replaceable with count 0
    assert p.step(14) is None  # evicts the lowest replaceable entry (11)
    assert p.tag[0] == 14 and p.lookup(11) is None
    p.step(12)  # requalifies (count 1 >= T)
    assert not p.replaceable[1]
    assert p.step(11) == [(14, 1), (12, 1)]  # 11 found no free entry


def test_empty_entries_before_replaceable_ones():
    p = MultiHashProfiler(accumulator=3, interval_length=2, threshold=1, **SMALL)
    p.step(21)
    assert p.step(22) == [(21, 1), (22, 1)]
    p.step(23)
    assert p.lookup(23) == 2  # entry 2 was empty; 0 and 1 are replaceable


def test_without_retaining_the_accumulator_is_emptied():
    p = MultiHashProfiler(accumulator=3, interval_length=2, threshold=1, retain=False, **SMALL)
    p.step(21)
    assert p.step(22) == [(21, 1), (22, 1)]
    assert not any(p.valid)
    p.step(23)
    assert p.lookup(23) == 0


def test_retained_entry_below_threshold_is_not_reported():
    p = MultiHashProfiler(accumulator=4, interval_length=6, threshold=3, **SMALL)
    assert p.run([5, 5, 5, 6, 7, 8]) == [[(5, 3)]]
    assert p.run([5, 5, 9, 9, 9, 9]) == [[(9, 4)]]  # 5 only twice: retained, not reported
    assert p.lookup(5) is None and p.lookup(9) is not None  # 5 emptied, 9 retained


def test_configuration_takes_effect_at_the_next_interval():
    p = MultiHashProfiler(interval_length=4, threshold=2, **SMALL)
    p.run([1, 1, 2])
    p.configure(2, 1)
    assert p.step(3) == [(1, 2)]  # this interval still 4 tuples, threshold 2
    assert p.run([7, 8]) == [[(7, 1), (8, 1)]]
    with pytest.raises(ValueError, match="threshold must be between 1 and 2, not 3"):
        p.configure(2, 3)


# --- perfect profile, error metric, bound -------------------------------------------------


def test_perfect_profile():
    keys = [1] * 5 + [2] * 3 + [3] * 2 + [4] * 10
    assert perfect_profile(keys, 10, 3) == [{1: 5, 2: 3}, {4: 10}]
    assert perfect_profile(keys[:15], 10, 3) == [{1: 5, 2: 3}]  # incomplete interval dropped


def test_error_rate_formula_one_by_hand():
    # interval 1: a x5, b x3, c x2 (T = 3). Hardware: a 5, c 3 -> b false negative (3),
    #   c false positive (|2 - 3| = 1); sum f_p over {a, b, c} = 10 -> FN 0.3, FP 0.1
    # interval 2: a x6, d x4. Hardware: a 7, d 2 -> NP 1, NN 2 over 10 -> 0.1, 0.2
    keys = [1] * 5 + [2] * 3 + [3] * 2 + [1] * 6 + [4] * 4
    hw = [[(1, 5), (3, 3)], [(1, 7), (4, 2)]]
    e = error_rate(keys, hw, 10, 3)
    assert e.intervals == 2
    assert e.false_negative == pytest.approx(0.15)
    assert e.false_positive == pytest.approx(0.05)
    assert e.neutral_positive == pytest.approx(0.05)
    assert e.neutral_negative == pytest.approx(0.10)
    assert e.total == pytest.approx(0.35)
    exact = error_rate(keys, [[(1, 5), (2, 3)], [(1, 6), (4, 4)]], 10, 3)
    assert exact.total == 0


def test_false_positive_bound_section_6():
    assert false_positive_bound(1, 1, 500) == pytest.approx(0.2)  # 100 / (t Z)
    assert false_positive_bound(2, 1, 500) == pytest.approx(0.16)
    # Figure 9, 1000 entries at 1%: best at 4 tables, worse beyond
    curve = [false_positive_bound(n, 1, 1000) for n in range(1, 9)]
    assert min(range(8), key=curve.__getitem__) == 3
    assert curve[4] > curve[3]


# --- fast path == cycle model -------------------------------------------------------------

OPTIONS = [
    {},
    {"conservative": False},
    {"reset": True},
    {"retain": False},
    {"tables": 1, "reset": True},
    {"tables": 8, "conservative": False, "reset": True, "retain": False},
    {"ways": 4},  # 3 sets of 4 (not a power of two)
    {"ways": 3, "reset": True, "retain": False},  # 4 sets of 3
]


def streams(config, rng):
    kb = config.key_bits
    n = 6 * config.interval_length + 123
    return {
        "random": random_keys(rng, n, kb, distinct=45),
        "zipf": zipf_keys(rng, n, kb, distinct=2000),
        "collide": collision_stream(config, rng, n),
        "at_threshold": at_threshold_stream(config, rng, 6),
        "repeated": repeated_stream(config, rng, n),
    }


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(o) or "default")
def test_fast_path_is_bit_identical(options, seed):
    params = {"counters": 128, "accumulator": 12, "interval_length": 1000, "threshold": 20,
              "pc_bits": 16, "value_bits": 16, **options}  # fmt: skip
    rng = np.random.default_rng(seed)
    for name, keys in streams(MultiHashConfig(**params), rng).items():
        want = run_plain(keys, **params)
        assert sum(map(len, want)) > 0, name
        for chunk in (777, 1 << 20):
            assert run_fast(keys, chunk=chunk, **params) == want, (name, chunk, seed)


def test_fast_path_default_configuration(seed):
    rng = np.random.default_rng(seed)
    keys = zipf_keys(rng, 50_000, 64, a=1.2, distinct=20_000)
    assert run_fast(keys, chunk=9999) == run_plain(keys)


def test_checker_catches_a_fast_path_difference(seed):
    """The comparison above reports a difference when the rules differ (C1 vs C0)."""
    rng = np.random.default_rng(seed)
    params = {"counters": 128, "accumulator": 12, "interval_length": 1000, "threshold": 20,
              "pc_bits": 16, "value_bits": 16}  # fmt: skip
    keys = collision_stream(MultiHashConfig(**params), rng, 6000)
    assert run_fast(keys, conservative=False, **params) != run_plain(keys, **params)


def test_indices_are_each_hash_of_the_key_also_past_the_memo(monkeypatch):
    """``indices`` (remembered per key) agrees with the hash functions for keys seen
    again after the memo was emptied; the profiles do not depend on the memo's size."""
    import hwprof.golden.multihash as mh

    rng = np.random.default_rng(5)
    keys = rng.integers(0, 1 << 16, size=3000).tolist() * 2
    params = dict(interval_length=500, threshold=3, **SMALL)
    want = MultiHashProfiler(**params).run(keys)
    monkeypatch.setattr(mh, "INDEX_MEMO", 7)
    p = MultiHashProfiler(**params)
    assert p.run(keys) == want and len(p._index_memo) <= 7
    for key in keys[:50]:
        assert p.indices(key) == [h(key) for h in p.hashes]
