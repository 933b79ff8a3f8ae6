"""Bulk paths of the section 5 compressors (Sastry et al.) for whole value streams.

Each function takes a numpy array of tuples (``key = pc << 32 | value``, the
:func:`hwprof.golden.hashing.pack_key` layout of ``key_bits = 64, pc_bits = 32``)
and returns, per tuple, the count of the message that tuple caused (0: none). The
message's key is always the tuple itself, so ``counts[t] > 0`` at position ``t`` is
the message ``(keys[t], counts[t])`` of the golden model's :meth:`feed`. They are
the golden models' rules on arrays, checked bit for bit against
:class:`~hwprof.golden.samplers.RandomSampler`,
:class:`~hwprof.golden.samplers.PeriodicSampler`,
:class:`~hwprof.golden.samplers.Stratified` and
:class:`~hwprof.golden.tagged.TaggedCompressor` in tests/test_compressors_fast.py;
they use the same hash (:meth:`HashFunction.many`), LFSR taps and tag fold.

* :func:`random_counts`: ``R_r``; the LFSR's 16-bit windows come from
  :func:`lfsr_random_bits` (compiled, the 32-bit Fibonacci LFSR advanced 16 steps
  per tuple).
* :func:`periodic_counts`: ``P_r``, every ``r``-th tuple.
* :func:`stratified_counts`: ``H[P_r]_n``; a tuple is sent when it is the
  ``r``-th, ``2r``-th, ... of its hash index (a stable sort by index).
* :func:`tagged_counts`: the tagged compressor (Figure 6), a compiled loop over
  the tuples with the same transitions and way choice as the golden model.
* :func:`assoc_messages`: ``A_k`` (:class:`~hwprof.golden.tagged.AssocTable`) fed a
  message stream: the messages it sends and the entries it still holds, a compiled
  loop with the golden model's lookup, fill, round-robin replacement and overflow.
"""

from __future__ import annotations

import numpy as np

from .hashing import HashFunction
from .lfsr import LfsrConfig
from .samplers import LFSR_WIDTH, RAND_BITS, SamplerConfig, StratifiedConfig, random_threshold
from .tagged import TaggedConfig

__all__ = [
    "lfsr_random_bits",
    "random_counts",
    "periodic_counts",
    "stratified_counts",
    "tag_array",
    "hash_index",
    "tagged_counts",
    "assoc_messages",
]

_JIT = {}


def _njit(name, build):
    if name not in _JIT:
        from numba import njit

        _JIT[name] = njit(cache=True)(build())
    return _JIT[name]


def _build_lfsr():
    def lfsr_bits(state, n, taps, steps, width, out):
        for t in range(n):
            out[t] = state & 0xFFFF
            for _ in range(steps):
                feedback = state & 1
                for tap in taps:
                    feedback ^= (state >> tap) & 1
                state = (state >> 1) | (feedback << (width - 1))
        return state

    return lfsr_bits


def lfsr_random_bits(seed: int, n: int) -> np.ndarray:
    """The 16 random bits ``u`` read for ``n`` decisions by ``R_r`` from reset ``seed``.

    The low 16 stages of the 32-bit Fibonacci LFSR shown in a cycle, advanced 16
    steps per decision (the samplers' :class:`~hwprof.golden.lfsr.Lfsr`).
    """
    config = LfsrConfig(width=LFSR_WIDTH, seed=seed, steps=RAND_BITS)
    out = np.empty(n, dtype=np.uint16)
    taps = np.array(config.taps[1:], dtype=np.int64)
    _njit("lfsr", _build_lfsr)(np.int64(config.seed), n, taps, config.steps, config.width, out)
    return out


def random_counts(keys, rate: int = 256, seed: int = 1) -> np.ndarray:
    """``R_r``: ``r`` where the tuple is selected (``u < round(2**16 / r)``), else 0."""
    SamplerConfig(rate=rate, seed=seed)
    u = lfsr_random_bits(seed, len(keys))
    return np.where(u < random_threshold(rate), rate, 0).astype(np.int64)


def periodic_counts(keys, rate: int = 256) -> np.ndarray:
    """``P_r``: ``r`` at every ``r``-th tuple."""
    SamplerConfig(rate=rate)
    counts = np.zeros(len(keys), dtype=np.int64)
    counts[rate - 1 :: rate] = rate
    return counts


def hash_index(keys, index_bits: int, hash_seed: int) -> np.ndarray:
    """The shared profiler hash of every tuple (``key_bits = 64, pc_bits = 32``)."""
    return HashFunction(index_bits, 64, hash_seed, 32).many(keys)


def stratified_counts(keys, rate: int = 256, entries: int = 2048, hash_seed: int = 1,
                      index=None) -> np.ndarray:  # fmt: skip
    """``H[P_r]_n``: ``r`` where the tuple is the ``k r``-th of its substream.

    ``index``: :func:`hash_index` of ``keys`` with ``log2(entries)`` bits and
    ``hash_seed``, if already computed.
    """
    c = StratifiedConfig(rate=rate, entries=entries, key_bits=64, pc_bits=32, hash_seed=hash_seed)
    if index is None:
        index = hash_index(keys, c.index_bits, hash_seed)
    # the stable sort of indices below 2^16 as uint16 is numpy's O(n) radix sort (the same
    # order as any stable sort; an int64 index would be merge-sorted)
    small = index.astype(np.uint16) if index.max(initial=0) < 1 << 16 else index
    order = np.argsort(small, kind="stable")
    sorted_index = index[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_index)) + 1]
    group_start = np.repeat(starts, np.diff(np.r_[starts, len(keys)]))
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys)) - group_start
    return np.where((rank + 1) % rate == 0, rate, 0).astype(np.int64)


def tag_array(keys, tag_bits: int) -> np.ndarray:
    """``xor_fold(pc ^ value, tag_bits)`` of 32-bit pc and value fields (``tag_of``)."""
    keys = np.asarray(keys, dtype=np.uint64)
    x = (keys >> np.uint64(32)) ^ (keys & np.uint64(0xFFFFFFFF))
    out = np.zeros(len(keys), dtype=np.uint64)
    mask = np.uint64((1 << tag_bits) - 1)
    for lo in range(0, 32, tag_bits):
        out ^= (x >> np.uint64(lo)) & mask
    return out.astype(np.int64)


def _build_tagged():
    def tagged_loop(index, tag, sets, ways, hit_max, evict_hits, replace_misses, out):
        valid = np.zeros((sets, ways), np.int64)
        tg = np.zeros((sets, ways), np.int64)
        hit = np.zeros((sets, ways), np.int64)
        miss = np.zeros((sets, ways), np.int64)
        for t in range(index.shape[0]):
            s = index[t]
            T = tag[t]
            w = -1
            is_hit = False
            for k in range(ways):
                if valid[s, k] and tg[s, k] == T:
                    w = k
                    is_hit = True
                    break
            if w < 0:
                for k in range(ways):
                    if not valid[s, k]:
                        w = k
                        break
            if w < 0:
                for k in range(ways):
                    if miss[s, k]:
                        w = k
                        break
            if w < 0:
                w = 0
                for k in range(1, ways):
                    if hit[s, k] < hit[s, w]:
                        w = k
            if not valid[s, w]:  # E1
                valid[s, w] = 1
                tg[s, w] = T
                hit[s, w] += 1
                miss[s, w] = 0
            elif miss[s, w] == 0:  # Valid
                if is_hit:  # E3, E2
                    hit[s, w] += 1
                    if hit[s, w] == hit_max:
                        out[t] = hit_max
                        valid[s, w] = 0
                        tg[s, w] = 0
                        hit[s, w] = 0
                else:  # E4
                    miss[s, w] = 1
            elif is_hit:  # Evict: E6a, E6
                hit[s, w] += 1
                if hit[s, w] >= evict_hits or hit[s, w] == hit_max:
                    out[t] = hit[s, w]
                    valid[s, w] = 0
                    tg[s, w] = 0
                    hit[s, w] = miss[s, w]
                    miss[s, w] = 0
            else:  # E5a, E5
                miss[s, w] += 1
                if miss[s, w] >= replace_misses:
                    total = hit[s, w] + miss[s, w]
                    miss[s, w] = 0
                    if total >= hit_max:
                        out[t] = total
                        valid[s, w] = 0
                        tg[s, w] = 0
                        hit[s, w] = 0
                    else:
                        tg[s, w] = T
                        hit[s, w] = total
        return (hit + miss).sum()

    return tagged_loop


def tagged_counts(keys, index=None, **params) -> tuple[np.ndarray, int]:
    """The tagged compressor (``TaggedConfig`` parameters; ``key_bits = 64, pc_bits =
    32``): the message counts per tuple, and what the table still holds at the end.
    ``index``: :func:`hash_index` of ``keys`` (``log2(sets)`` bits), if already computed."""
    c = TaggedConfig(**{"key_bits": 64, "pc_bits": 32, **params})
    if (c.key_bits, c.pc_bits) != (64, 32):
        raise ValueError("tagged_counts needs key_bits = 64 and pc_bits = 32")
    if index is None:
        index = hash_index(keys, c.index_bits, c.hash_seed)
    tags = tag_array(keys, c.tag_bits)
    out = np.zeros(len(keys), dtype=np.int64)
    loop = _njit("tagged", _build_tagged)
    residual = loop(index, tags, c.sets, c.ways, c.hit_max, c.evict_hits, c.replace_misses, out)
    return out, int(residual)


def _build_assoc():
    def assoc_loop(keys, counts, entries, limit):
        valid = np.zeros(entries, np.bool_)
        held_key = np.zeros(entries, np.uint64)
        held_count = np.zeros(entries, np.int64)
        pointer = 0
        messages = 0
        for j in range(keys.shape[0]):
            key = keys[j]
            count = counts[j]
            hit = -1
            for i in range(entries):
                if valid[i] and held_key[i] == key:
                    hit = i
                    break
            if hit >= 0:
                if held_count[hit] + count > limit:  # overflow: send the old count
                    messages += 1
                    held_count[hit] = count
                else:
                    held_count[hit] += count
                continue
            free = -1
            for i in range(entries):
                if not valid[i]:
                    free = i
                    break
            if free >= 0:
                valid[free] = True
                held_key[free] = key
                held_count[free] = count
                continue
            messages += 1  # the entry at the pointer is sent and replaced
            held_key[pointer] = key
            held_count[pointer] = count
            pointer = (pointer + 1) % entries
        held = 0
        for i in range(entries):
            if valid[i]:
                held += 1
        return messages, held

    return assoc_loop


def assoc_messages(keys, counts, entries: int = 16, count_bits: int = 16) -> tuple[int, int]:
    """``A_k`` fed the messages ``(keys[t], counts[t])`` in order: ``(messages it sent,
    entries it still holds)``, as :class:`~hwprof.golden.tagged.AssocTable`'s ``feed``."""
    from .tagged import AssocConfig

    c = AssocConfig(entries, 64, 9, count_bits)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    if len(keys) != len(counts):
        raise ValueError(f"{len(keys)} keys but {len(counts)} counts")
    loop = _njit("assoc", _build_assoc)
    messages, held = loop(keys, counts, c.entries, (1 << c.count_bits) - 1)
    return int(messages), int(held)
