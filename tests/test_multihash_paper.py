"""Multi-hash profiler: the paper's statements and hand-computed cases, each with a mutant.

Every check here is a function returning its failures; the test runs it on the
golden model (no failure) and on a mutant of the golden model (made by editing
one line of its source) and expects the mutant to be caught.
"""

from __future__ import annotations

import inspect
import math
import textwrap

import numpy as np
import pytest

from hwprof.cocotb_tests.multihash_streams import (
    at_threshold_stream,
    collision_stream,
    random_keys,
    repeated_stream,
    zipf_keys,
)
from hwprof.golden import hashing, interval_error, multihash
from hwprof.golden.hashing import flip_bytes, make_tables, xor_fold
from hwprof.golden.interval_error import Bulk, IntervalTruth, profile_stream
from hwprof.golden.multihash import (
    MultiHashConfig,
    MultiHashProfiler,
    error_rate,
    run_fast,
    run_plain,
)


def mutant(obj, old: str, new: str):
    """``obj`` (a function or class) recompiled with ``old`` replaced by ``new`` once."""
    module = inspect.getmodule(obj)
    source = textwrap.dedent(inspect.getsource(obj))
    assert source.count(old) == 1, f"mutation site {old!r} not unique in {obj.__name__}"
    namespace = dict(vars(module))
    exec(compile(source.replace(old, new), f"<mutant of {obj.__name__}>", "exec"), namespace)
    return namespace[obj.__name__]


# --- formula (1), by hand -----------------------------------------------------------------

# Interval 1 (T = 3): a x5, b x3, c x2. Hardware: a 6, c 3, e 4 (e never occurs).
#   union {a, b, c, e}: sum f_p = 5 + 3 + 2 + 0 = 10
#   a: neutral positive |5 - 6| = 1; b: false negative 3; c: false positive |2 - 3| = 1;
#   e: false positive |0 - 4| = 4  ->  E = (1 + 3 + 1 + 4) / 10 = 0.9
# Interval 2: a x6, d x4. Hardware: a 4, d 4 -> neutral negative 2 / 10 = 0.2
# Interval 3: ten distinct keys, no true candidate. Hardware reports f 4 (a false
#   positive, f_p = 1): formula (1) sums over the tuples "seen in either perfect or
#   hardware profiler", so E = |1 - 4| / 1 = 3, averaged in.
# Interval 4: ten distinct keys, no true candidate, nothing reported: 0/0, no error
#   rate, left out of the average.
HAND_KEYS = ([1] * 5 + [2] * 3 + [3] * 2 + [1] * 6 + [4] * 4 + list(range(100, 110))
             + list(range(200, 210)))  # fmt: skip
HAND_HW = [[(1, 6), (3, 3), (5, 4)], [(1, 4), (4, 4)], [(100, 4)], []]
HAND = {"total": (0.9 + 0.2 + 3) / 3, "false_positive": (0.5 + 3) / 3,
        "false_negative": 0.3 / 3, "neutral_positive": 0.1 / 3, "neutral_negative": 0.2 / 3,
        "intervals": 4, "no_candidate": 2, "no_candidate_reported": 1, "undefined": 1,
        "averaged": 3}  # fmt: skip


def check_formula_one(error_fn):
    e = error_fn(HAND_KEYS, HAND_HW, 10, 3)
    failures = [(name, getattr(e, name), want) for name, want in HAND.items()
                if not math.isclose(getattr(e, name), want, abs_tol=1e-12)]  # fmt: skip
    per = e.per_interval
    if not (len(per) == 4 and math.isclose(per[0], 0.9) and math.isclose(per[1], 0.2)
            and math.isclose(per[2], 3) and math.isnan(per[3])):  # fmt: skip
        failures.append(("per_interval", per))
    return failures


def fast_error(keys, hw, interval_length, threshold):
    """The streaming metric of :mod:`hwprof.golden.interval_error` on the same input."""
    truth = IntervalTruth(keys, interval_length, threshold)
    flat = [r for profile in hw for r in profile]
    ends = np.cumsum([len(p) for p in hw])
    parts, totals, reported = truth.evaluate(
        np.array([k for k, _ in flat], np.uint64), np.array([c for _, c in flat], np.int64), ends
    )
    return multihash.mean_error(parts, totals, truth.candidates, reported)


@pytest.mark.parametrize("error_fn", [error_rate, fast_error], ids=["reference", "fast"])
def test_formula_one_by_hand(error_fn):
    assert check_formula_one(error_fn) == []


@pytest.mark.parametrize("error_fn", [error_rate, fast_error], ids=["reference", "fast"])
def test_false_positive_only_interval_is_averaged_in(error_fn):
    """Sec. 5.5.2: n counts the candidates "seen in either perfect or hardware profiler"
    and the net error is "a simple average over the error rates seen by all intervals".

    No key of ``[1,1,1,2,2,2,3,3,4,4]`` reaches T = 5; the hardware reports 2 with
    f_h = 6 (f_p = 3): E = |3 - 6| / 3 = 1, all false positive. A second interval of
    ten 5s reported exactly has E = 0: the average is 0.5.
    """
    keys = [1, 1, 1, 2, 2, 2, 3, 3, 4, 4]
    e = error_fn(keys, [[(2, 6)]], 10, 5)
    assert (e.total, e.false_positive, e.averaged, e.undefined) == (1.0, 1.0, 1, 0)
    assert (e.no_candidate, e.no_candidate_reported) == (1, 1)
    e = error_fn(keys + [5] * 10, [[(2, 6)], [(5, 10)]], 10, 5)
    assert (e.total, e.false_positive, e.averaged, e.per_interval) == (0.5, 0.5, 2, (1.0, 0.0))


@pytest.mark.parametrize("error_fn", [error_rate, fast_error], ids=["reference", "fast"])
def test_interval_without_any_candidate_is_left_out(error_fn):
    """Neither profiler has a candidate: formula (1) is 0/0; the interval is counted
    (``undefined``) but not averaged in (and not averaged in as 0)."""
    keys = [5] * 10 + list(range(10))
    e = error_fn(keys, [[(5, 8)], []], 10, 5)
    assert (e.total, e.intervals, e.averaged, e.undefined, e.no_candidate) == (0.2, 2, 1, 1, 1)
    assert e.per_interval[0] == 0.2 and math.isnan(e.per_interval[1])


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("totals.append(math.nan)", "totals.append(0.0)"),  # average the 0/0 intervals in
        ("if denominator == 0:", "if not perfect:"),  # drop the false-positive-only intervals
        ("                part[1] += fp", "                part[1] += 0"),  # no false negatives
        ("numerator = sum(abs(exact.get(k, 0) - hw.get(k, 0)) for k in union)",
         "numerator = sum(exact.get(k, 0) - hw.get(k, 0) for k in union)"),  # signed error
        ("denominator = sum(exact.get(k, 0) for k in union)",
         "denominator = sum(exact.get(k, 0) for k in perfect)"),  # FP tuples left out of sum f_p
    ],
)  # fmt: skip
def test_formula_one_checker_catches_a_mutant(old, new):
    assert check_formula_one(mutant(error_rate, old, new)) != []


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("extra += fp", "extra += 0"),  # a false positive's f_p left out of the denominator
        ("if den == 0:", "if cand_sum[r] == 0:"),  # false-positive-only intervals dropped
    ],
)  # fmt: skip
def test_fast_metric_checker_catches_a_mutant(monkeypatch, old, new):
    """Mutants of the compiled kernel."""
    rle, evaluate = interval_error._kernels()
    source = inspect.getsource(evaluate.py_func)
    assert source.count(old) == 1
    namespace = dict(vars(interval_error))
    exec(textwrap.dedent(source.replace(old, new)).replace(
        "@njit(cache=True, nogil=True)\n", ""), namespace)  # fmt: skip
    monkeypatch.setattr(interval_error, "_kernels", lambda: (rle, namespace["evaluate"]))
    assert check_formula_one(fast_error) != []


def test_parts_sum_to_formula_one_on_random_profiles(seed):
    """On random hardware profiles, the four parts add up to formula (1) computed directly."""
    rng = np.random.default_rng(seed)
    keys = random_keys(rng, 4000, 8, distinct=60)
    hw = [[(int(k), int(rng.integers(0, 200))) for k in rng.choice(256, 8, replace=False)]
          for _ in range(4)]  # fmt: skip
    e = error_rate(keys, hw, 1000, 25)
    assert e.averaged > 0, seed
    parts = e.false_positive + e.false_negative + e.neutral_positive + e.neutral_negative
    assert parts == pytest.approx(e.total, rel=1e-12), seed
    assert fast_error(keys, hw, 1000, 25).total == pytest.approx(e.total, rel=1e-12), seed


def test_fast_metric_equals_reference_on_streams(seed):
    rng = np.random.default_rng(seed)
    keys = np.array(zipf_keys(rng, 30_000, 64, a=1.2, distinct=3000), np.uint64)
    for params in ({"tables": 1}, {"tables": 4, "reset": True}):
        params |= {"counters": 128, "accumulator": 10, "interval_length": 2000, "threshold": 30}
        ref = error_rate(keys, run_fast(keys, **params), 2000, 30)
        chunks = np.array_split(keys, 7)
        got = profile_stream(chunks, [Bulk(**params)], 2000, 30, block=5000, workers=2)
        e = got.errors[0]
        counters = ("intervals", "no_candidate", "no_candidate_reported", "undefined")
        assert [getattr(e, c) for c in counters] == [getattr(ref, c) for c in counters], seed
        np.testing.assert_allclose(e.per_interval, ref.per_interval, rtol=1e-12)
        assert e.total == pytest.approx(ref.total, rel=1e-12), seed


# --- the hash unit: the paper's formula, not the constructor again ---------------------------


def paper_flip(v: int, nbytes: int) -> int:
    """Sec. 5.3: "The function *flip(v)* reverses the bytes of *v*" (``nbytes`` of them)."""
    return int.from_bytes(v.to_bytes(nbytes, "little"), "big")


def paper_xor_fold(v: int, n: int, bits: int) -> int:
    """Sec. 5.3: "*xor-fold(v, n)* splits *v* into chunks of *n*-bits and *xors* those
    chunks". ``v`` is ``bits`` wide; the chunks are taken from the least significant
    end, so the most significant one is short when ``n`` does not divide ``bits`` (it
    is kept: every bit of ``v`` is in one chunk)."""
    digits = format(v, f"0{bits}b")
    out = 0
    while digits:
        digits, chunk = digits[:-n], digits[-n:]
        out ^= int(chunk, 2)
    return out


def test_fold_and_flip_by_hand():
    """A 32-bit field folded to the 11-bit index of 2048 counters: chunks of bits 0-10,
    11-21 and the short 22-31. 0x12345678 = 0b 0001001000 11010001010 11001111000:
    bits 31-22 = 0x048, 21-11 = 0x68A, 10-0 = 0x678; 0x678 ^ 0x68A = 0x0F2,
    ^ 0x048 = 0x0BA. flip: bytes 12 34 56 78 reversed."""
    for fold in (paper_xor_fold, xor_fold):
        assert fold(0x12345678, 11, 32) == 0x0BA
        assert fold(0xFFC0_0000, 11, 32) == 0x3FF  # the short top chunk alone
        assert fold(0xFFFF_FFFF, 11, 32) == 0x7FF ^ 0x7FF ^ 0x3FF
        assert fold(0xDEAD_BEEF, 16, 32) == 0xDEAD ^ 0xBEEF
    for flip in (paper_flip, flip_bytes):
        assert flip(0x12345678, 4) == 0x78563412
        assert flip(0x0000_00AB, 4) == 0xAB00_0000


def paper_index(key, table_seed, index_bits):
    """Sec. 5.3 written out for a 64-bit <pc:32, value:32> key with the documented tables:
    npc = flip(randomize(pc)); nv = randomize(value); index = xor-fold(npc xor nv)."""
    value_tables, pc_tables = make_tables(table_seed, 32, 32)
    pc, value = key >> 32, key & 0xFFFFFFFF
    nv = sum(value_tables[i][(value >> 8 * i) & 255] << 8 * i for i in range(4))
    rpc = sum(pc_tables[i][(pc >> 8 * i) & 255] << 8 * i for i in range(4))
    return paper_xor_fold(paper_flip(rpc, 4) ^ nv, index_bits, 32)


def check_profiler_hashes(profiler_cls, seed):
    """The counter each table increments is table ``i``'s paper hash with seed ``hash_seed + i``."""
    rng = np.random.default_rng(seed)
    failures = []
    for tables, hash_seed in ((4, 7), (2, 30)):
        p = profiler_cls(tables=tables, hash_seed=hash_seed, threshold=10_000, conservative=False)
        for key in (int(k) for k in rng.integers(0, 1 << 63, 20, dtype=np.uint64)):
            before = [list(t) for t in p.counts]
            p.step(key)
            for i in range(tables):
                changed = [j for j, v in enumerate(p.counts[i]) if v != before[i][j]]
                want = paper_index(key, hash_seed + i, p.config.index_bits)
                if changed != [want]:
                    failures.append((tables, hash_seed, i, hex(key), changed, want))
    return failures


def test_profiler_indices_follow_the_paper_hash(seed):
    assert check_profiler_hashes(MultiHashProfiler, seed) == [], seed
    # the compiled path uses pre-folded tables: same profiles on a colliding stream
    params = {"counters": 64, "accumulator": 4, "interval_length": 500, "threshold": 15}
    keys = collision_stream(MultiHashConfig(**params), np.random.default_rng(seed), 2000)
    assert run_fast(keys, **params) == run_plain(keys, **params), seed


@pytest.mark.parametrize(
    ("target", "old", "new"),
    [
        ("config", "self.tables, self.index_bits, self.key_bits, self.hash_seed, self.pc_bits",
         "self.tables, self.index_bits, self.key_bits, self.hash_seed + 1, self.pc_bits"),
        ("hash", "return [cls(index_bits, key_bits, base_seed + i, pc_bits) for i in range(n)]",
         "return [cls(index_bits, key_bits, base_seed, pc_bits) for i in range(n)]"),
        ("function", "npc = flip_bytes(randomize(pc, pc_tables), width) if pc_tables else 0",
         "npc = randomize(pc, pc_tables)"),
    ],
)  # fmt: skip
def test_hash_checker_catches_a_mutant(target, old, new, monkeypatch, seed):
    if target == "config":
        monkeypatch.setattr(MultiHashConfig, "hashes", mutant(MultiHashConfig.hashes, old, new))
    elif target == "hash":
        fam = mutant(hashing.HashFunction.family.__func__, old, new)
        monkeypatch.setattr(hashing.HashFunction, "family", classmethod(fam))
    else:
        monkeypatch.setattr(hashing.HashFunction, "__call__",
                            mutant(hashing.HashFunction.__call__, old, new))  # fmt: skip
    assert check_profiler_hashes(MultiHashProfiler, seed) != [], seed


# --- a new entry starts at the tables' estimate, which can exceed T ---------------------------


def alias_keys(config, rng, want):
    """Distinct 16-bit keys whose per-table indices match the pattern ``want`` (see below)."""
    hashes = config.hashes()
    pool = np.arange(1 << 16, dtype=np.uint64)
    idx = np.stack([h.many(pool) for h in hashes])
    for b in rng.permutation(1 << 16):
        ib = idx[:, b]
        found = [int(b)]
        for pattern in want:
            same = np.all([(idx[i] == ib[i]) == s for i, s in enumerate(pattern)], axis=0)
            same[found] = False
            hits = np.flatnonzero(same)
            if not len(hits):
                break
            found.append(int(rng.choice(hits)))
        else:
            # no other sharing: per table, the keys off b's counter use distinct counters
            ok = []
            for i in range(len(hashes)):
                off = [int(idx[i, k]) for k, pat in zip(found[1:], want, strict=True)
                       if not pat[i]]  # fmt: skip
                ok.append(len(set(off) | {int(ib[i])}) == 1 + len(off))
            if all(ok):
                return found
    raise AssertionError("no keys with the wanted aliasing")


def check_start_count(profiler_cls, seed):
    """Hand cases where a promoted tuple's counters are above T - 1 before it arrives.

    A tuple refused by a full accumulator can never get an entry later in the same
    interval (entries only fill up or turn non-replaceable), so a starting count
    above T comes from aliasing. (1) One table, T = 5, C0/R0: ``a`` x3, then ``c``
    (same counter) x3: ``c`` is promoted at its 2nd occurrence with count 5 and
    its 3rd is counted in the accumulator (6, true count 3: a neutral positive);
    the shielded counter stays at 5; ``b`` (same counter) occurs once: counter 6
    >= T, promoted with count 6 (a false positive of f_p 1, f_h 6). (2) Two
    tables, T = 5: ``a1``/``a3`` share only table 0's counter with ``b``,
    ``a2``/``a4`` only table 1's, each x4 (none reaches T on both tables). C0:
    b's counters are 8 and 8, it is promoted at its first occurrence with count
    9. C1: the shared counters stay at 4 (each alias's own counter is the
    smaller one), b starts at 5 = T.
    """
    rng = np.random.default_rng(seed)
    failures = []
    small = {"pc_bits": 8, "value_bits": 8, "interval_length": 100, "threshold": 5}
    one = {"tables": 1, "counters": 16, "conservative": False, **small}
    b, a, c = alias_keys(MultiHashConfig(**one), rng, [(True,), (True,)])
    p = profiler_cls(**one)
    p.run([a] * 3 + [c] * 3 + [b])
    got = p.count[p.lookup(b)] if p.lookup(b) is not None else None
    if got != 6 or p.count[p.lookup(c)] != 6:
        failures.append(("one table", got))
    two = {"tables": 2, "counters": 32, **small}
    pattern = [(True, False), (False, True), (True, False), (False, True)]
    b, a1, a2, a3, a4 = alias_keys(MultiHashConfig(**two), rng, pattern)
    for conservative, want in ((False, 9), (True, 5)):
        p = profiler_cls(conservative=conservative, **two)
        p.run([a1] * 4 + [a2] * 4 + [a3] * 4 + [a4] * 4 + [b])
        slot = p.lookup(b)
        got = None if slot is None else p.count[slot]
        if got != want or sum(p.valid) != 1:
            failures.append(("two tables", conservative, got, want))
    return failures


def test_new_entry_starts_at_the_tables_estimate(seed):
    assert check_start_count(MultiHashProfiler, seed) == [], seed


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("self.count[target], self.replaceable[target] = estimate, False",
         "self.count[target], self.replaceable[target] = t, False"),  # starts at T
        ("self.count[target], self.replaceable[target] = estimate, False",
         "self.count[target], self.replaceable[target] = 1, False"),  # starts from scratch
        ("new = [v + 1 if (v == low or not c.conservative) else v for v in old]",
         "new = [v + 1 for v in old]"),  # conservative update ignored
    ],
)  # fmt: skip
def test_start_count_checker_catches_a_mutant(old, new, seed):
    assert check_start_count(mutant(MultiHashProfiler, old, new), seed) != [], seed


# --- the bit-exactness streams really exercise every rule -----------------------------------


class Counting(MultiHashProfiler):
    """The cycle model, counting the events of each rule."""

    def __init__(self, **params):
        super().__init__(**params)
        self.events = dict.fromkeys(
            ("promoted", "refused_full", "shielded", "retained_hit", "requalified",
             "evicted_retained", "reset"), 0)  # fmt: skip

    def step(self, key):
        c, t = self.config, self.threshold
        slot = self.lookup(key)
        if slot is not None:
            self.events["shielded"] += 1
            if self.replaceable[slot]:
                self.events["retained_hit"] += 1
                self.events["requalified"] += self.count[slot] + 1 >= t
        else:
            index = [h(key) for h in self.hashes]
            old = [self.counts[i][index[i]] for i in range(c.tables)]
            low = min(old)
            new = [v + 1 if (v == low or not c.conservative) else v for v in old]
            if min(new) >= t:
                free = self._free_slot(key)
                if free is None:
                    self.events["refused_full"] += 1
                else:
                    self.events["promoted"] += 1
                    self.events["evicted_retained"] += bool(self.valid[free])
                    self.events["reset"] += c.reset
        return super().step(key)


def test_bit_exact_streams_exercise_every_rule(seed):
    """The streams of test_multihash_golden's bulk-vs-cycle test hit each rule.

    Two of the option sets there (the default and R1) already cover every rule.
    """
    from tests.test_multihash_golden import OPTIONS, streams

    base = {"counters": 128, "accumulator": 12, "interval_length": 1000, "threshold": 20,
            "pc_bits": 16, "value_bits": 16}  # fmt: skip
    seen = dict.fromkeys(Counting(**base).events, 0)
    rng = np.random.default_rng(seed)
    for options in ({}, {"reset": True}):  # retaining on in both
        assert options in OPTIONS
        params = base | options
        for keys in streams(MultiHashConfig(**params), rng).values():
            p = Counting(**params)
            p.run(keys)
            for k, v in p.events.items():
                seen[k] += v
    assert all(seen.values()), (seed, seen)


def test_rules_coverage_is_not_vacuous():
    """A stream of one repeated key never fills the accumulator: the counter says 0."""
    p = Counting(accumulator=2, interval_length=100, threshold=3, pc_bits=8, value_bits=8)
    p.run(repeated_stream(p.config, np.random.default_rng(1), 300))
    assert p.events["refused_full"] == 0 and p.events["promoted"] > 0


def test_bulk_equals_cycle_model_with_refusals_and_evictions(seed):
    """A stream built to fill a 3-entry accumulator and evict retained entries every interval."""
    params = {"tables": 2, "counters": 64, "accumulator": 3, "interval_length": 600,
              "threshold": 12, "pc_bits": 16, "value_bits": 16, "reset": True}  # fmt: skip
    rng = np.random.default_rng(seed)
    keys = at_threshold_stream(MultiHashConfig(**params), rng, 8)
    p = Counting(**params)
    want = p.run(keys)
    assert p.events["refused_full"] and p.events["evicted_retained"], (seed, p.events)
    for chunk in (1, 599, 601, 1 << 20):
        assert run_fast(keys, chunk=chunk, **params) == want, (seed, chunk)
