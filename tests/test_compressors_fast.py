"""The bulk paths of hwprof.golden.compressors_fast equal the golden models' feed(),
message for message, on streams that exercise every rule (random keys, a hot/cold
mix, keys aliasing to one set of the tagged table, a long one-key run); and the
comparison catches a mutant of the golden model."""

import random

import numpy as np
import pytest

from hwprof.golden import compressors_fast as cf
from hwprof.golden import samplers as gs
from hwprof.golden import tagged as gt
from hwprof.golden.hashing import pack_key
from hwprof.golden.samplers import _lfsr, random_bits


def mixed_stream(seed, n=6000):
    rng = random.Random(seed)
    probe = gt.TaggedCompressor(entries=64, ways=2)
    alias = gt.aliasing_keys(probe, 4, rng.getrandbits(20))
    hot = [pack_key(rng.getrandbits(32), rng.getrandbits(8), 32) for _ in range(6)]
    keys = []
    for phase in range(4):
        for _ in range(n // 4):
            x = rng.random()
            if phase == 0:
                keys.append(rng.getrandbits(64))
            elif phase == 1:
                keys.append(rng.choice(hot) if x < 0.8 else rng.getrandbits(64))
            elif phase == 2:
                keys.append(rng.choice(alias) if x < 0.9 else rng.choice(hot))
            else:
                keys.append(hot[0] if x < 0.95 else rng.choice(alias))
    return np.array(keys, dtype=np.uint64)


def golden_counts(model, keys):
    out = np.zeros(len(keys), dtype=np.int64)
    for t, key in enumerate(keys.tolist()):
        message = model.feed(key)
        if message is not None:
            assert message[0] == key
            out[t] = message[1]
    return out


def test_lfsr_bits_equal_the_sampler_lfsr(seed):
    s = seed % (2**32 - 1) + 1
    lfsr = _lfsr(s)
    expected = []
    for _ in range(3000):
        expected.append(random_bits(lfsr))
        lfsr.step(enable=True)
    assert cf.lfsr_random_bits(s, 3000).tolist() == expected, f"seed {seed}"


CASES = {
    "R": (lambda s: gs.RandomSampler(rate=16, seed=s % 1000 + 1),
          lambda k, s: cf.random_counts(k, 16, s % 1000 + 1)),
    "P": (lambda s: gs.PeriodicSampler(rate=16), lambda k, s: cf.periodic_counts(k, 16)),
    "H[P]": (lambda s: gs.Stratified(rate=8, entries=64, hash_seed=s % 7),
             lambda k, s: cf.stratified_counts(k, 8, 64, s % 7)),
    "tagged": (lambda s: gt.TaggedCompressor(entries=64, ways=2, hash_seed=s % 7),
               lambda k, s: cf.tagged_counts(k, entries=64, ways=2, hash_seed=s % 7)[0]),
    "tagged-1way": (lambda s: gt.TaggedCompressor(entries=32, ways=1, hit_bits=4, evict_hits=3,
                                                  replace_misses=3, hash_seed=s % 5),
                    lambda k, s: cf.tagged_counts(k, entries=32, ways=1, hit_bits=4,
                                                  evict_hits=3, replace_misses=3,
                                                  hash_seed=s % 5)[0]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_bulk_path_equals_golden_feed(name, seed):
    keys = mixed_stream(seed)
    make, fast = CASES[name]
    golden = golden_counts(make(seed), keys)
    assert golden.sum() > 0
    assert np.array_equal(fast(keys, seed), golden), f"{name}, seed {seed}"


def test_tagged_residual_equals_golden(seed):
    keys = mixed_stream(seed)
    model = gt.TaggedCompressor(entries=64, ways=2)
    golden_counts(model, keys)
    counts, residual = cf.tagged_counts(keys, entries=64, ways=2)
    assert residual == model.residual() and counts.sum() + residual == len(keys)


def test_comparison_catches_a_golden_mutant(seed, monkeypatch):
    """E6 resets the hit counter instead of keeping the misses: the bulk path differs."""
    keys = mixed_stream(seed)
    original = gt.TaggedCompressor.process

    def mutant(self, key, count=1):
        message = original(self, key, count)
        if message is not None:
            for ways in self.table:
                for entry in ways:
                    if not entry[0]:
                        entry[2] = 0
        return message

    monkeypatch.setattr(gt.TaggedCompressor, "process", mutant)
    golden = golden_counts(gt.TaggedCompressor(entries=64, ways=2), keys)
    assert not np.array_equal(cf.tagged_counts(keys, entries=64, ways=2)[0], golden)


def assoc_stream(seed, n=6000):
    """Messages for A_k in phases: few hot keys with large counts (overflow of small
    counters), many distinct keys (round-robin replacement), and a mix."""
    rng = np.random.default_rng(seed)
    hot = rng.integers(1, 1 << 63, 5, dtype=np.uint64)
    distinct = rng.integers(1, 1 << 63, n // 3, dtype=np.uint64)
    mixed = np.where(rng.random(n // 3) < 0.5, rng.choice(hot, n // 3),
                     rng.integers(1, 50, n // 3).astype(np.uint64))  # fmt: skip
    keys = np.concatenate([rng.choice(hot, n // 3), distinct, mixed])
    counts = rng.integers(1, 300, len(keys))
    return keys, counts


def golden_assoc(keys, counts, entries, count_bits):
    table = gt.AssocTable(entries=entries, key_bits=64, in_count_bits=9, count_bits=count_bits)
    for key, count in zip(keys.tolist(), counts.tolist(), strict=True):
        table.feed(key, count)
    return len(table.messages), sum(table.valid)


@pytest.mark.parametrize("entries,count_bits", [(16, 16), (16, 10), (3, 9), (1, 12)])
def test_assoc_messages_equal_golden_feed(entries, count_bits, seed):
    keys, counts = assoc_stream(seed)
    golden = golden_assoc(keys, counts, entries, count_bits)
    assert golden[0] > 0, "the stream must make A_k send messages"
    assert cf.assoc_messages(keys, counts, entries, count_bits) == golden, f"seed {seed}"


def test_assoc_comparison_catches_a_golden_mutant(seed, monkeypatch):
    """The replacement pointer never advances: the compiled path differs."""
    keys, counts = assoc_stream(seed)
    original = gt.AssocTable.process

    def mutant(self, key, count=1):
        message = original(self, key, count)
        self.pointer = 0
        return message

    monkeypatch.setattr(gt.AssocTable, "process", mutant)
    assert cf.assoc_messages(keys, counts, 16, 10) != golden_assoc(keys, counts, 16, 10)
