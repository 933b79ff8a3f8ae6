"""Golden models of the stratified-sampling paper (Sastry et al.): samplers, tagged
compressor, A_k, buffer, hotlist, overhead. Expected values are written from the
paper's rules by hand; statistics use exact binomial bounds."""

import random

import numpy as np
import pytest

from hwprof.golden.hashing import HashFunction
from hwprof.golden.hotlist import Hotlist, interrupt_cycles_per_message, overhead_cycles
from hwprof.golden.samplers import (
    Counter,
    CountingRandomSampler,
    PeriodicSampler,
    Pipeline,
    RandomSampler,
    Stratified,
    _cr_estimate,
    figure4_estimates,
)
from hwprof.golden.stats import binomial_acceptance
from hwprof.golden.tagged import (
    AssocTable,
    MessageBuffer,
    TaggedCompressor,
    aliasing_keys,
    tag_of,
)


def streams(rng, n, key_bits=64):
    """Random, all-alias (one key), ping-pong pair and a hot/cold mix."""
    a, b = rng.getrandbits(key_bits), rng.getrandbits(key_bits)
    hot = [rng.getrandbits(key_bits) for _ in range(8)]
    return {
        "random": [rng.getrandbits(key_bits) for _ in range(n)],
        "one-key": [a] * n,
        "ping-pong": [a if i % 2 else b for i in range(n)],
        "mix": [rng.choice(hot) if rng.random() < 0.7 else rng.getrandbits(key_bits)
                for _ in range(n)],
    }  # fmt: skip


def small_tagged(**kw):
    params = {"entries": 16, "ways": 2, "hit_bits": 5, "evict_hits": 3, "replace_misses": 3}
    params.update(kw)
    return TaggedCompressor(**params)


PRESERVING = {
    "P": lambda: PeriodicSampler(rate=7),
    "C": lambda: Counter(count_bits=5),
    "CR": lambda: CountingRandomSampler(rate=5, count_bits=4, seed=99),
    "H[P]": lambda: Stratified(rate=6, entries=8),
    "H[CR]": lambda: Stratified(rate=6, entries=8, sampler="cr", count_bits=4),
    "tagged": small_tagged,
    "tagged-default": TaggedCompressor,
}


@pytest.mark.parametrize("name", sorted(PRESERVING))
def test_count_preserving(name, seed):
    """Reported counts + what the tables hold == tuples consumed, exactly, every prefix."""
    for kind, stream in streams(random.Random(seed), 3000).items():
        model = PRESERVING[name]()
        for i, key in enumerate(stream):
            model.feed(key)
            if i % 97 == 0 or i == len(stream) - 1:
                total = sum(c for _, c in model.messages) + model.residual()
                assert total == i + 1, f"{name} {kind} tuple {i}, seed {seed}"


def test_assoc_table_count_preserving(seed):
    rng = random.Random(seed)
    model = AssocTable(entries=4, in_count_bits=6, count_bits=8)
    fed = 0
    for _ in range(5000):
        key, count = rng.choice([1, 2, 3, 4, 5, rng.getrandbits(64)]), rng.randrange(1, 64)
        model.feed(key, count)
        fed += count
        assert sum(c for _, c in model.messages) + model.residual() == fed, f"seed {seed}"


def test_periodic_reports_every_rth_tuple():
    model = PeriodicSampler(rate=4)
    out = [model.feed(k) for k in range(12)]
    assert out == [None, None, None, (3, 4)] * 1 + [None, None, None, (7, 4)] + [
        None, None, None, (11, 4)]  # fmt: skip


def test_counter_reports_on_saturation():
    model = Counter(count_bits=3)
    out = [model.feed(k) for k in range(15)]
    assert [i for i, m in enumerate(out) if m] == [6, 13]
    assert out[6] == (6, 7) and model.residual() == 1


def test_cr_counts_since_last_message():
    model = CountingRandomSampler(rate=4, seed=12345)
    out = [model.feed(k) for k in range(400)]
    picks = [i for i, m in enumerate(out) if m]
    gaps = [b - a for a, b in zip([-1] + picks, picks, strict=False)]
    assert [out[i][1] for i in picks] == gaps


# R_r's probability 1/r and the countdown's gaps: tests/test_samplers_statistics.py


def test_stratified_counts_per_hash_index():
    model = Stratified(rate=3, entries=4, pc_bits=32)
    h = HashFunction(2, 64, 1, 32)
    keys = list(range(100))
    out = [model.feed(k) for k in keys]
    seen = [0] * 4
    for k, m in zip(keys, out, strict=True):
        seen[h(k)] += 1
        assert (m is not None) == (seen[h(k)] % 3 == 0)
        if m:
            assert m == (k, 3)


def keys_in_one_set(model, count):
    return aliasing_keys(model, count)


def test_tagged_transitions_e1_e3_e4_e5a_e6():
    model = TaggedCompressor(entries=8, ways=1, hit_bits=4, evict_hits=3, replace_misses=3)
    a, b = keys_in_one_set(model, 2)
    index = model.hash(a)
    entry = model.table[index][0]
    assert model.feed(a) is None and entry[1:] == [entry[1], 1, 0]  # E1
    assert model.feed(a) is None and entry[2] == 2  # E3
    assert model.feed(b) is None and model.state(entry) == "Evict" and entry[3] == 1  # E4
    assert model.feed(b) is None and entry[3] == 2  # E5a
    assert model.feed(a) == (a, 3)  # E6a reaches ShouldEvict (3 hits): E6 reports 3
    assert model.state(entry) == "Empty" and entry[2] == 2 and entry[3] == 0  # hit := miss
    assert model.feed(b) is None and entry[2] == 3 and model.state(entry) == "Valid"  # E1
    assert model.transitions == {"E1": 2, "E2": 0, "E3": 1, "E4": 1, "E5": 0, "E5a": 1,
                                 "E6": 1, "E6a": 1}  # fmt: skip


def test_tagged_e5_keeps_hit_and_miss_counts():
    model = TaggedCompressor(entries=8, ways=1, hit_bits=4, evict_hits=3, replace_misses=3)
    a, b = keys_in_one_set(model, 2)
    entry = model.table[model.hash(a)][0]
    for k in (a, a, b, b, b):
        assert model.feed(k) is None
    # E5: b takes the entry with hit = 2 (a's) + 3 (misses), miss = 0
    assert model.state(entry) == "Valid" and entry[2] == 5 and entry[3] == 0
    assert entry[1] == tag_of(b, 2, 64, 32)


def test_tagged_e2_reports_saturated_hit_counter():
    model = TaggedCompressor(entries=8, ways=1, hit_bits=4)
    out = [model.feed(77) for _ in range(31)]
    assert [i for i, m in enumerate(out) if m] == [14, 29] and out[14] == (77, 15)


def test_tagged_e5_overflow_reports_the_new_tuple():
    model = TaggedCompressor(entries=8, ways=1, hit_bits=3, miss_bits=2, evict_hits=7,
                             replace_misses=3)  # fmt: skip
    a, b = keys_in_one_set(model, 2)
    for k in (a,) * 5 + (b, b):
        assert model.feed(k) is None
    assert model.feed(b) == (b, 8)  # hit 5 + miss 3 >= 7: reported at once
    assert model.residual() == 0


def test_tagged_two_way_allocates_empty_way_then_charges_evict_way():
    model = TaggedCompressor(entries=8, ways=2, hit_bits=4, evict_hits=2, replace_misses=3)
    a, b, c = keys_in_one_set(model, 3)
    ways = model.table[model.hash(a)]
    for k in (a, a, b):
        model.feed(k)
    assert [e[2] for e in ways] == [2, 1]  # b in the empty way 1
    model.feed(c)  # miss charged to the way with the smaller hit count (way 1)
    assert model.state(ways[1]) == "Evict" and model.state(ways[0]) == "Valid"
    model.feed(c)  # a way already in Evict takes the next miss
    assert ways[1][3] == 2


def test_assoc_table_rules():
    model = AssocTable(entries=2, in_count_bits=4, count_bits=4)
    assert model.feed(1, 5) is None and model.feed(2, 3) is None
    assert model.feed(1, 4) is None  # 9
    assert model.feed(1, 7) == (1, 9)  # 16 > 15: report 9, restart at 7
    assert model.feed(3, 1) == (1, 7)  # full: round-robin pointer 0
    assert model.feed(4, 2) == (2, 3)  # pointer 1
    assert model.residual() == 3


def test_message_buffer_interrupt_when_full():
    buf = MessageBuffer(depth=3)
    shown = [buf.step(in_valid=1, in_key=i, in_count=1, out_ready=0) for i in range(5)]
    assert [s["in_ready"] for s in shown] == [1, 1, 1, 0, 0]
    assert [s["irq"] for s in shown] == [0, 0, 0, 1, 1]
    out = buf.step(out_ready=1)
    assert (out["out_valid"], out["out_key"]) == (1, 0)


def test_pipeline_preserves_counts_under_backpressure(seed):
    rng = random.Random(seed)
    stages = [Stratified(rate=4, entries=8), AssocTable(entries=2, in_count_bits=3),
              MessageBuffer(depth=5)]  # fmt: skip
    pipe = Pipeline(stages)
    accepted = drained = 0
    for _ in range(4000):
        valid = int(rng.random() < 0.9)
        ready = int(rng.random() < 0.3)
        shown = pipe.step(in_valid=valid, in_key=rng.randrange(40), out_ready=ready)
        accepted += valid and shown["in_ready"]
        drained += shown["out_count"] if shown["out_valid"] and ready else 0
        held = sum(s.residual() for s in stages) + sum(
            s.out_count for s in stages[:2] if s.out_valid
        ) + sum(  # messages on their way through a pipelined stage (latency > 1)
            m[1] for s in stages[:2] for m in s.in_flight if m is not None
        )
        assert drained + held == accepted, f"seed {seed}"


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: PeriodicSampler(rate=1), "rate must be between 2 and 65536, not 1"),
        (lambda: RandomSampler(seed=0), "seed must be between 1 and 4294967295, not 0"),
        (lambda: CountingRandomSampler(rate=300, count_bits=8),
         "count_bits must hold the rate 300, not 8"),
        (lambda: Stratified(entries=1000), "entries must be a power of two, not 1000"),
        (lambda: Stratified(sampler="x"), "sampler must be one of periodic, random, cr, not 'x'"),
        (lambda: TaggedCompressor(miss_bits=8), "miss_bits must be between 1 and 7, not 8"),
        (lambda: TaggedCompressor(replace_misses=8),
         "replace_misses must be between 1 and 7, not 8"),
        (lambda: AssocTable(in_count_bits=17), "in_count_bits must be between 1 and 16, not 17"),
        (lambda: MessageBuffer(depth=0), "depth must be between 1 and 4096, not 0"),
        (lambda: Hotlist(factor=1.0), "factor must be a number above 1, not 1.0"),
    ],
)  # fmt: skip
def test_parameter_errors(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_parameter_type_error():
    with pytest.raises(TypeError, match=r"^rate must be an integer, not 2.5$"):
        PeriodicSampler(rate=2.5)


def test_hotlist_exact_until_full_then_bounded(seed):
    hot = Hotlist(entries=16, seed=seed)
    for v in list(range(16)) * 3:
        hot.add(v)
    assert hot.p == 1.0 and all(hot.estimate(v) == 3 for v in range(16))
    rng = random.Random(seed)
    for _ in range(20_000):
        hot.add(1000 if rng.random() < 0.5 else rng.randrange(10**6))
        assert len(hot.counts) <= 16
    assert hot.p < 1.0 and hot.hot()[0][0] == 1000


def test_overhead_model():
    assert overhead_cycles(100) == 3000
    assert interrupt_cycles_per_message() == 2.14  # < 3 cycles (sec. 5.3.2)


def cr_reference(is_p, selected):
    """CountingRandomSampler's rule written as a loop: messages (is_p, count)."""
    counter, messages = 0, []
    for p, s in zip(is_p, selected, strict=True):
        counter += 1
        if s:
            messages.append((p, counter))
            counter = 0
    reported = sum(c for _, c in messages)
    hits = sum(1 for p, _ in messages if p)
    gaps = sum(c for p, c in messages if p)
    return (hits * reported / len(messages) if messages else 0.0), gaps


def test_figure4_cr_fast_path_matches_loop(seed):
    rng = np.random.default_rng(seed)
    is_p = rng.random((20, 300)) < 0.3
    selected = rng.random((20, 300)) < 0.1
    ratio = _cr_estimate(is_p, selected)
    gaps = _cr_estimate(is_p, selected, ratio=False)
    for row in range(20):
        want_ratio, want_gaps = cr_reference(is_p[row], selected[row])
        assert ratio[row] == pytest.approx(want_ratio) and gaps[row] == want_gaps


def test_figure4_random_samplers_select_binomially(seed):
    """R and H[R]: every copy of p is selected independently with probability 1/r, so the
    samples of p over all runs are Binomial(runs * t, 1/r) exactly."""
    rng = np.random.default_rng(seed)
    for name in ("R", "H[R]"):
        est = figure4_estimates(name, 2000, 10, 400, rng)
        lo, hi = binomial_acceptance(400 * 600, 0.1, alpha=1e-6)
        assert lo <= est.sum() // 10 <= hi, f"{name}, seed {seed}"


def test_figure4_estimators_are_unbiased_and_periodic_exact_at_full_bias(seed):
    rng = np.random.default_rng(seed)
    est = figure4_estimates("P", 1000, 10, 200, rng, share=1.0)
    assert np.all(est == 1000)  # a stream of p only: P counts it exactly
    for name in ("P", "CR", "H[P]", "H[CR]"):
        est = figure4_estimates(name, 2000, 10, 400, rng)
        # The mean of 400 independent estimates of t = 600 within 6 of its standard
        # errors (a normal tail of 2e-9; the estimates are sums of many small terms),
        # plus r: the tuples after the last sample of p's substream are not reported
        # (fewer than r for P, r in expectation for CR), a bias of at most about r.
        bound = 6 * est.std(ddof=1) / np.sqrt(len(est)) + 10
        assert abs(est.mean() - 600) < bound, f"{name}, seed {seed}"
