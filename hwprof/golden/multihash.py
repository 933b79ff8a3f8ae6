"""Interval-based single- and multi-hash profilers (Narayanasamy et al., sections 5-6).

Written from the paper. One *tuple* ``<pc, value>`` is one key
``(pc << value_bits) | value`` (:func:`hwprof.golden.hashing.pack_key`).

Per tuple (:meth:`MultiHashProfiler.step`), with threshold ``T``:

1. **Accumulator lookup** (fully associative, tags). On a hit the entry's count
   is incremented and the hash tables are not touched (*shielding*). A
   *replaceable* (retained) entry whose count reaches ``T`` becomes
   non-replaceable.
2. On a miss, hash function ``i`` (table seed ``hash_seed + i``) selects counter
   ``c_i`` in table ``i`` (``counters / tables`` counters each). C0: every ``c_i``
   is incremented. C1 (*conservative update*): only the counters equal to
   ``min(c_i)`` are incremented (all of them on a tie).
3. **Promotion** when *all* updated counters reach ``T``: ``min(c_i) >= T``. The
   tuple gets an accumulator entry, the lowest-numbered *empty* entry first,
   else the lowest-numbered *replaceable* one (evicting the retained tuple), else
   none ("the event is not put into the accumulator table"). The new entry is
   non-replaceable and starts at ``min(c_i)`` (the hash tables' estimate of the
   tuple's occurrences so far; the paper's neutral *positive* errors need the
   hash-table count to be carried over). R1 (*resetting*): the tuple's ``n``
   counters are set to 0 when it is promoted.
4. After ``interval_length`` tuples the interval ends: the **profile** is every
   valid non-replaceable entry ``(key, count)`` in entry order (exactly the
   entries with ``count >= T``). Then P1 (*retaining*) keeps those entries as
   replaceable with count 0 and empties the others; P0 empties every entry. All
   hash-table counters are flushed to 0. Configuration written with
   :meth:`configure` takes effect here.

**Accumulator organisation** (``ways``; not in the paper, which specifies a
fully associative table): ``ways = 0`` is the paper's fully associative
accumulator. ``ways = W > 0`` is the organisation a block RAM holds: ``S =
accumulator / W`` sets of ``W`` entries, entry ``e = s * W + w``. A tuple may
live only in set ``s = set_index(key)`` (:meth:`MultiHashConfig.set_index`, from
the hash indices the tuple already has), so the lookup of rule 1 searches only
that set and the promotion of rule 3 takes the lowest empty entry *of that set*,
else its lowest replaceable entry, else none (a set conflict: the tuple is not
put into the accumulator although other sets may have room). Everything else is
unchanged; with ``W = accumulator`` (one set) it is the fully associative model.

``interval_length <= 2**counter_bits - 1``, so no counter (hash table or
accumulator, both ``counter_bits`` wide) can overflow within an interval.

Also here: :func:`perfect_profile` (exact per-interval counts), :func:`error_rate`
(formula (1), split into false positive/negative, neutral positive/negative,
averaged over intervals), :func:`false_positive_bound` (section 6.2), and
:func:`run_fast`, a compiled (numba) path bit-identical to the cycle model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from .hashing import HashFunction
from .lfsr import check_int

__all__ = [
    "MultiHashConfig",
    "MultiHashProfiler",
    "PRESETS",
    "threshold_for",
    "perfect_profile",
    "error_rate",
    "ErrorRate",
    "mean_error",
    "false_positive_bound",
    "run_fast",
    "run_plain",
    "BulkProfiler",
    "split_profiles",
]


#: Keys whose hash indices :meth:`MultiHashProfiler.indices` remembers at most.
INDEX_MEMO = 4096

#: Hash bits that choose a set of a set-associative accumulator (see ``set_index``).
SET_SOURCE_BITS = 12


def threshold_for(interval_length: int, percent: float) -> int:
    """Candidate threshold in occurrences: ``ceil(interval_length * percent / 100)``."""
    return max(1, math.ceil(interval_length * percent / 100 - 1e-9))


#: The paper's two configurations (section 5.2): 10,000 / 1% and 1,000,000 / 0.1%.
PRESETS = {
    "10k": {"interval_length": 10_000, "threshold": 100, "accumulator": 100},
    "1m": {"interval_length": 1_000_000, "threshold": 1000, "accumulator": 1000},
}


@dataclass(frozen=True)
class MultiHashConfig:
    """Parameters of the profiler (RTL constructor and catalog use the same names).

    tables : number of hash tables ``n`` (1 = the single-hash profiler), 1..16.
    counters : total counters, split evenly; ``counters / tables`` must be a power of two.
    counter_bits : width of every counter (hash tables and accumulator), 8..32.
    accumulator : accumulator entries, 1..4096.
    interval_length, threshold : reset values of the two configuration registers.
    pc_bits, value_bits : tuple field widths (key = pc:value).
    retain, reset, conservative : P1/P0, R1/R0, C1/C0.
    hash_seed : table seed of hash function 0 (function ``i`` uses ``hash_seed + i``).
    ways : accumulator organisation: 0 = fully associative (the paper's); ``W > 0`` =
        ``accumulator / W`` sets of ``W`` ways, the set chosen by :meth:`set_index`.
    """

    tables: int = 4
    counters: int = 2048
    counter_bits: int = 24
    accumulator: int = 100
    interval_length: int = 10_000
    threshold: int = 100
    pc_bits: int = 32
    value_bits: int = 32
    retain: bool = True
    reset: bool = False
    conservative: bool = True
    hash_seed: int = 1
    ways: int = 0

    def __post_init__(self):
        check_int("tables", self.tables, 1, 16)
        check_int("counters", self.counters, 2, 1 << 20)
        if self.counters % self.tables or (self.counters // self.tables) & (
            self.counters // self.tables - 1
        ):
            raise ValueError(
                f"counters / tables must be a power of two, not {self.counters} / {self.tables}"
            )
        if self.counters // self.tables < 2:
            raise ValueError(f"each table needs at least 2 counters, not {self.counters} / "
                             f"{self.tables}")  # fmt: skip
        check_int("counter_bits", self.counter_bits, 8, 32)
        check_int("accumulator", self.accumulator, 1, 4096)
        check_int("pc_bits", self.pc_bits, 0, 64)
        check_int("value_bits", self.value_bits, 1, 64)
        if self.pc_bits + self.value_bits > 64:
            raise ValueError(
                f"pc_bits + value_bits must be at most 64, not {self.pc_bits + self.value_bits}"
            )
        check_int("hash_seed", self.hash_seed, 0)
        check_int("ways", self.ways, 0, self.accumulator)
        if self.ways and self.accumulator % self.ways:
            raise ValueError(f"accumulator must be a multiple of ways, not {self.accumulator} / "
                             f"{self.ways}")  # fmt: skip
        for name in ("retain", "reset", "conservative"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, not {getattr(self, name)!r}")
        self.check_registers(self.interval_length, self.threshold)

    def check_registers(self, interval_length, threshold):
        check_int("interval_length", interval_length, 1, (1 << self.counter_bits) - 1)
        check_int("threshold", threshold, 1, interval_length)

    @property
    def table_size(self) -> int:
        return self.counters // self.tables

    @property
    def index_bits(self) -> int:
        return self.table_size.bit_length() - 1

    @property
    def key_bits(self) -> int:
        return self.pc_bits + self.value_bits

    @property
    def sets(self) -> int:
        """Accumulator sets (1 when fully associative)."""
        return self.accumulator // self.ways if self.ways else 1

    @property
    def set_source_bits(self) -> int:
        """Width of ``x``, the hash bits that :meth:`set_index` maps to a set."""
        return min(SET_SOURCE_BITS, self.tables * self.index_bits)

    def set_index(self, indices) -> int:
        """The accumulator set of a tuple whose hash indices are ``indices``.

        ``x`` = the low :attr:`set_source_bits` bits of ``index_0 | index_1 <<
        index_bits | ...`` (the counter indices, hash ``i`` from table seed
        ``hash_seed + i``); ``set = (x * sets) >> set_source_bits``, which spreads
        the ``2**bits`` values of ``x`` over the sets as evenly as possible (within
        one value per set) for any number of sets, a power of two or not.
        ``indices``: integers, or equal-length uint64 arrays (then the sets are one, as
        :meth:`set_source`'s ``x``).
        """
        return (self.set_source(indices) * self.sets) >> self.set_source_bits

    def set_source(self, indices):
        """``x`` of :meth:`set_index`: the low :attr:`set_source_bits` bits of ``index_0 |
        index_1 << index_bits | ...``. ``indices``: integers, or equal-length uint64
        arrays (then ``x`` is one, element by element)."""
        x = 0
        for i, index in enumerate(indices):
            index = index if isinstance(index, np.ndarray) else int(index)
            x = x | (index << (i * self.index_bits))
        return x & ((1 << self.set_source_bits) - 1)

    def hashes(self):
        return HashFunction.family(
            self.tables, self.index_bits, self.key_bits, self.hash_seed, self.pc_bits
        )


class MultiHashProfiler:
    """Cycle model: one tuple per :meth:`step` (see the module docstring for the rules).

    Parameters are those of :class:`MultiHashConfig`.

    Attributes
    ----------
    counts : list of list of int
        The hash tables, ``counts[i][index]``.
    valid, tag, count, replaceable : list
        The accumulator entries.
    position : int
        Tuples seen in the current interval.
    """

    def __init__(self, **params):
        self.config = c = MultiHashConfig(**params)
        self.hashes = c.hashes()
        self.interval_length = c.interval_length
        self.threshold = c.threshold
        self._pending = None
        self.counts = [[0] * c.table_size for _ in range(c.tables)]
        self.valid = [False] * c.accumulator
        self.tag = [0] * c.accumulator
        self.count = [0] * c.accumulator
        self.replaceable = [False] * c.accumulator
        self.position = 0
        self._index_memo: dict = {}

    def indices(self, key: int) -> list:
        """The counter index of ``key`` in every table (hash ``i``'s value for table ``i``).

        Remembered per key, up to :data:`INDEX_MEMO` keys (then forgotten all at once
        and remembered again): a stream that repeats a few keys, as the mutation bench's
        long intervals do, hashes each once. The list returned is the memo's: read it,
        do not change it.
        """
        memo = self._index_memo
        index = memo.get(key)
        if index is None:
            if len(memo) >= INDEX_MEMO:
                memo.clear()
            index = memo[key] = [h(key) for h in self.hashes]
        return index

    def configure(self, interval_length: int, threshold: int) -> None:
        """Write the configuration registers; they take effect at the next interval start."""
        self.config.check_registers(interval_length, threshold)
        self._pending = (interval_length, threshold)

    def entries(self, key: int) -> range:
        """The accumulator entries ``key`` may occupy (all of them, or its set's)."""
        c = self.config
        if not c.ways:
            return range(c.accumulator)
        first = c.set_index(self.indices(key)) * c.ways
        return range(first, first + c.ways)

    def lookup(self, key: int):
        for slot in self.entries(key):
            if self.valid[slot] and self.tag[slot] == key:
                return slot
        return None

    def _free_slot(self, key: int):
        for slot in self.entries(key):
            if not self.valid[slot]:
                return slot
        for slot in self.entries(key):
            if self.replaceable[slot]:
                return slot
        return None

    def step(self, key: int):
        """Profile one tuple; returns the interval's profile if it ends here, else None."""
        c, t = self.config, self.threshold
        slot = self.lookup(key)
        if slot is not None:  # shielded
            self.count[slot] += 1
            if self.replaceable[slot] and self.count[slot] >= t:
                self.replaceable[slot] = False
        else:
            index = self.indices(key)
            old = [self.counts[i][index[i]] for i in range(c.tables)]
            low = min(old)
            new = [v + 1 if (v == low or not c.conservative) else v for v in old]
            estimate = min(new)
            if estimate >= t:
                target = self._free_slot(key)
                if target is not None:
                    self.valid[target], self.tag[target] = True, key
                    self.count[target], self.replaceable[target] = estimate, False
                    if c.reset:
                        new = [0] * c.tables
            for i in range(c.tables):
                self.counts[i][index[i]] = new[i]
        self.position += 1
        if self.position == self.interval_length:
            return self.end_interval()
        return None

    def end_interval(self):
        """Read out the profile and start the next interval (called by :meth:`step`)."""
        c = self.config
        profile = []
        for slot in range(c.accumulator):
            candidate = self.valid[slot] and not self.replaceable[slot]
            if candidate:
                profile.append((self.tag[slot], self.count[slot]))
            if candidate and c.retain:
                self.replaceable[slot], self.count[slot] = True, 0
            else:
                self.valid[slot] = False
        for table in self.counts:
            table[:] = [0] * c.table_size
        self.position = 0
        if self._pending is not None:
            self.interval_length, self.threshold = self._pending
            self._pending = None
        return profile

    def run(self, keys):
        """Step every key; the list of completed interval profiles."""
        profiles = []
        for key in keys:
            profile = self.step(int(key))
            if profile is not None:
                profiles.append(profile)
        return profiles


def run_plain(keys, **params):
    """The cycle model over ``keys``: list of per-interval profiles."""
    return MultiHashProfiler(**params).run(keys)


# --- fast path ----------------------------------------------------------------------------

# accumulator map (key -> entry) of the compiled path: open addressing, linear probing
_EMPTY, _TOMB = -1, -2


@cache
def _kernel():
    """The compiled per-tuple loop (numba), the same rules as :meth:`MultiHashProfiler.step`.

    The hash indices are computed inside the loop from the pre-folded byte
    tables of :meth:`HashFunction._prefolded` (tested equal to ``h(key)``); the
    accumulator's associative lookup is an open-addressing map ``key -> entry``
    rebuilt at every interval end (tombstones of entries evicted mid-interval
    live at most until then).
    """
    from numba import njit

    @njit(cache=True, nogil=True, inline="always")
    def map_find(mkey, mslot, key, mask):
        # returns (position of key or -1, first free position on its probe path)
        h = (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(40)
        p = np.int64(h) & mask
        free = -1
        while True:
            s = mslot[p]
            if s == _EMPTY:
                if free < 0:
                    free = p
                return -1, free
            if s == _TOMB:
                if free < 0:
                    free = p
            elif mkey[p] == key:
                return p, free
            p = (p + 1) & mask

    @njit(cache=True, nogil=True)
    def kernel(keys, folded, layout, counts, valid, tag, count, repl, mkey, mslot, mpos,
               state, params, out_key, out_count, out_len):  # fmt: skip
        # layout: [value_bits, value_bytes, pc_bytes]
        # state: [position, n_records, n_profiles]
        # params: [L, T, conservative, reset, retain, ways, sets, set_bits, index_bits]
        n_tables = counts.shape[0]
        accumulator = valid.shape[0]
        mask = mslot.shape[0] - 1
        length, thr = params[0], params[1]
        conservative, reset, retain = params[2], params[3], params[4]
        ways, sets, set_bits, index_bits = params[5], params[6], params[7], params[8]
        value_bits, value_bytes, pc_bytes = layout[0], layout[1], layout[2]
        vmask = np.uint64(0xFFFFFFFFFFFFFFFF)
        if value_bits < 64:
            vmask = (np.uint64(1) << np.uint64(value_bits)) - np.uint64(1)
        position = state[0]
        n_out = state[1]
        n_profiles = state[2]
        old = np.zeros(n_tables, np.int64)
        index = np.zeros(n_tables, np.int64)
        # entries that are valid and not replaceable: when all are, no entry can take a
        # new tuple, and the two scans below for a target are skipped (a flooded table
        # set, C0 or too many tables, asks on nearly every tuple)
        busy = 0
        for a in range(accumulator):
            if valid[a] and not repl[a]:
                busy += 1
        for j in range(keys.shape[0]):
            key = keys[j]
            p, free = map_find(mkey, mslot, key, mask)
            if p >= 0:
                s = mslot[p]
                count[s] += 1
                if repl[s] and count[s] >= thr:
                    repl[s] = False
                    busy += 1
            else:
                value = key & vmask
                pc = np.uint64(0)
                if value_bits < 64:
                    pc = key >> np.uint64(value_bits)
                for i in range(n_tables):
                    index[i] = 0
                row = 0
                for b in range(value_bytes):
                    byte = np.int64((value >> np.uint64(8 * b)) & np.uint64(0xFF))
                    for i in range(n_tables):
                        index[i] ^= folded[row, byte, i]
                    row += 1
                for b in range(pc_bytes):
                    byte = np.int64((pc >> np.uint64(8 * b)) & np.uint64(0xFF))
                    for i in range(n_tables):
                        index[i] ^= folded[row, byte, i]
                    row += 1
                low = counts[0, index[0]]
                for i in range(n_tables):
                    old[i] = counts[i, index[i]]
                    if old[i] < low:
                        low = old[i]
                estimate = -1
                for i in range(n_tables):
                    v = old[i]
                    if v == low or not conservative:
                        v += 1
                    old[i] = v
                    if estimate < 0 or v < estimate:
                        estimate = v
                if estimate >= thr and busy < accumulator:
                    first, stop = 0, accumulator
                    if ways > 0:  # set-associative: only the tuple's set
                        x = np.int64(0)
                        for i in range(n_tables):
                            x |= index[i] << (i * index_bits)
                        x &= (np.int64(1) << set_bits) - 1
                        first = ((x * sets) >> set_bits) * ways
                        stop = first + ways
                    target = -1
                    for a in range(first, stop):
                        if not valid[a]:
                            target = a
                            break
                    if target < 0:
                        for a in range(first, stop):
                            if repl[a]:
                                target = a
                                break
                    if target >= 0:
                        if valid[target]:  # evict the retained tuple
                            mslot[mpos[target]] = _TOMB
                            p2, free = map_find(mkey, mslot, key, mask)
                        valid[target] = True
                        tag[target] = key
                        count[target] = estimate
                        repl[target] = False
                        busy += 1
                        mkey[free] = key
                        mslot[free] = target
                        mpos[target] = free
                        if reset:
                            for i in range(n_tables):
                                old[i] = 0
                for i in range(n_tables):
                    counts[i, index[i]] = old[i]
            position += 1
            if position == length:
                mslot[:] = _EMPTY
                for a in range(accumulator):
                    candidate = valid[a] and not repl[a]
                    if candidate:
                        out_key[n_out] = tag[a]
                        out_count[n_out] = count[a]
                        n_out += 1
                    if candidate and retain:
                        repl[a] = True
                        count[a] = 0
                    else:
                        valid[a] = False
                    if valid[a]:
                        p2, free = map_find(mkey, mslot, tag[a], mask)
                        mkey[free] = tag[a]
                        mslot[free] = a
                        mpos[a] = free
                busy = 0
                for a in range(accumulator):
                    if valid[a] and not repl[a]:
                        busy += 1
                out_len[n_profiles] = n_out
                n_profiles += 1
                counts[:, :] = 0
                position = 0
        state[0] = position
        state[1] = n_out
        state[2] = n_profiles

    return kernel


class BulkProfiler:
    """The compiled model, streaming: :meth:`feed` chunks of keys, get the profiles.

    Same rules and results as :class:`MultiHashProfiler` (tested bit-identical on
    streams that fill the accumulator, promote, shield, retain and reset); the
    configuration registers are fixed (no :meth:`~MultiHashProfiler.configure`).
    Parameters are those of :class:`MultiHashConfig`.
    """

    def __init__(self, **params):
        self.config = c = MultiHashConfig(**params)
        self._kernel = _kernel()
        hashes = c.hashes()
        self._folded = np.ascontiguousarray(
            np.stack([h._prefolded() for h in hashes], axis=-1).astype(np.int32)
        )
        h0 = hashes[0].config
        self._layout = np.array([h0.value_bits, h0.value_bytes, h0.pc_bytes], np.int64)
        self.counts = np.zeros((c.tables, c.table_size), np.int32)
        self.valid = np.zeros(c.accumulator, np.bool_)
        self.repl = np.zeros(c.accumulator, np.bool_)
        self.tag = np.zeros(c.accumulator, np.uint64)
        self.count = np.zeros(c.accumulator, np.int64)
        size = 1 << max(4, (4 * c.accumulator - 1).bit_length())
        self._mkey = np.zeros(size, np.uint64)
        self._mslot = np.full(size, _EMPTY, np.int32)
        self._mpos = np.zeros(c.accumulator, np.int64)
        self._params = np.array(
            [c.interval_length, c.threshold, c.conservative, c.reset, c.retain, c.ways, c.sets,
             c.set_source_bits, c.index_bits], np.int64
        )
        self._state = np.zeros(3, np.int64)

    @property
    def position(self) -> int:
        """Tuples seen in the current interval."""
        return int(self._state[0])

    def feed(self, keys):
        """Profile ``keys`` (uint64); the profiles of the intervals completed in them.

        Returns ``(keys, counts, ends)``: the records of all completed intervals
        concatenated, and for each interval the end offset of its records.
        """
        c = self.config
        keys = np.ascontiguousarray(keys, dtype=np.uint64)
        max_profiles = (int(self._state[0]) + len(keys)) // c.interval_length
        out_key = np.zeros(max_profiles * c.accumulator, np.uint64)
        out_count = np.zeros(max_profiles * c.accumulator, np.int64)
        out_len = np.zeros(max_profiles, np.int64)
        self._state[1] = self._state[2] = 0
        self._kernel(keys, self._folded, self._layout, self.counts, self.valid, self.tag,
                     self.count, self.repl, self._mkey, self._mslot, self._mpos, self._state,
                     self._params, out_key, out_count, out_len)  # fmt: skip
        n = int(self._state[1])
        return out_key[:n], out_count[:n], out_len[: int(self._state[2])]


def split_profiles(keys, counts, ends):
    """``(keys, counts, ends)`` of :meth:`BulkProfiler.feed` as a list of profiles."""
    out, begin = [], 0
    for end in ends.tolist():
        out.append(list(zip(keys[begin:end].tolist(), counts[begin:end].tolist(), strict=True)))
        begin = end
    return out


def run_fast(keys, chunk: int = 1 << 20, **params):
    """Same profiles as :func:`run_plain` (tested bit-identical), compiled.

    ``keys`` is fed to a :class:`BulkProfiler` in chunks of ``chunk`` keys.
    """
    profiler = BulkProfiler(**params)
    keys = np.asarray(keys, dtype=np.uint64)
    profiles = []
    for start in range(0, len(keys), chunk):
        profiles += split_profiles(*profiler.feed(keys[start : start + chunk]))
    return profiles


# --- perfect profile and error metric ---------------------------------------------------


def perfect_profile(keys, interval_length: int, threshold: int):
    """Exact profile of every complete interval: ``{key: count}`` of keys with count >= T."""
    keys = np.asarray(keys, dtype=np.uint64)
    profiles = []
    for start in range(0, len(keys) - interval_length + 1, interval_length):
        unique, counts = np.unique(keys[start : start + interval_length], return_counts=True)
        keep = counts >= threshold
        profiles.append(dict(zip(unique[keep].tolist(), counts[keep].tolist(), strict=True)))
    return profiles


def interval_counts(keys, interval_length: int):
    """Exact counts of every key in every complete interval (``{key: count}`` per interval)."""
    keys = np.asarray(keys, dtype=np.uint64)
    out = []
    for start in range(0, len(keys) - interval_length + 1, interval_length):
        unique, counts = np.unique(keys[start : start + interval_length], return_counts=True)
        out.append(dict(zip(unique.tolist(), counts.tolist(), strict=True)))
    return out


@dataclass(frozen=True)
class ErrorRate:
    """Formula (1) averaged over the intervals where it is defined (section 5.5.2).

    ``total`` is formula (1) itself (computed from ``|f_p - f_h|``, not as the sum
    of the parts); the four parts split its numerator by category. Formula (1)
    sums over the candidates "seen in either perfect or hardware profiler", so an
    interval without a true candidate (no tuple with ``f_p >= T``) whose hardware
    profile reported tuples has a defined error, all false positive (each reported
    tuple occurred, ``f_p >= 1``), and is averaged in like any other ("a simple
    average over the error rates seen by all intervals"). Only where ``sum f_p``
    over both profiles is 0 is formula (1) 0/0: no candidate in either profile
    (or, with a profiler other than this module's, whose entries all occurred,
    reported tuples that never occurred). Such an interval has no error rate; it
    is left out of the average and counted in ``undefined``.

    Counters: ``no_candidate`` intervals had no true candidate; of them,
    ``no_candidate_reported`` had a hardware profile anyway (false positives only,
    averaged in); ``undefined`` intervals are not averaged in (``averaged`` are).
    ``per_interval`` holds each interval's formula (1) (NaN where undefined), the
    paper's Fig. 13.
    """

    false_positive: float
    false_negative: float
    neutral_positive: float
    neutral_negative: float
    total: float
    intervals: int
    no_candidate: int = 0
    no_candidate_reported: int = 0
    undefined: int = 0
    per_interval: tuple = ()

    @property
    def averaged(self) -> int:
        """Intervals in the average (those where formula (1) is defined)."""
        return self.intervals - self.undefined


def mean_error(parts, totals, candidates, reported) -> ErrorRate:
    """Average per-interval parts (``n x 4``) and totals (NaN = formula (1) undefined).

    ``candidates`` (true candidates per interval) and ``reported`` (whether the
    hardware profile had an entry) only feed the counters of :class:`ErrorRate`.
    """
    parts = np.asarray(parts, dtype=float).reshape(-1, 4)
    totals = np.asarray(totals, dtype=float)
    defined = ~np.isnan(totals)
    none = np.asarray(candidates) == 0
    means = parts[defined].mean(axis=0) if defined.any() else np.zeros(4)
    total = float(totals[defined].mean()) if defined.any() else 0.0
    return ErrorRate(*means.tolist(), total=total, intervals=len(totals),
                     no_candidate=int(none.sum()),
                     no_candidate_reported=int((none & np.asarray(reported, bool)).sum()),
                     undefined=int((~defined).sum()), per_interval=tuple(totals.tolist()))


def error_rate(keys, hardware_profiles, interval_length: int, threshold: int) -> ErrorRate:
    """The paper's error, formula (1): per interval ``sum |f_p - f_h| / sum f_p``.

    The sums run over every tuple that is a candidate of the perfect profiler
    (``f_p >= T``) or of the hardware profile (an entry of the readout); a tuple
    missing from the hardware profile has ``f_h = 0``. Each tuple's term goes to
    one category: false positive (hardware only), false negative (perfect only),
    neutral positive (both, ``f_h > f_p``), neutral negative (both, ``f_h <
    f_p``). The net error is the simple average over the intervals where formula
    (1) is defined (``sum f_p > 0``: a candidate in either profile, so also an
    interval with false positives only); the 0/0 intervals are counted apart
    (:class:`ErrorRate`). This is the readable reference;
    :mod:`hwprof.golden.interval_error` is the fast streaming form (tested equal).
    """
    counts = interval_counts(keys, interval_length)
    if len(hardware_profiles) != len(counts):
        raise ValueError(f"{len(hardware_profiles)} hardware profiles for {len(counts)} intervals")
    parts, totals, candidates, reported = [], [], [], []
    for exact, hardware in zip(counts, hardware_profiles, strict=True):
        hw = dict(hardware)
        perfect = {k for k, v in exact.items() if v >= threshold}
        part = np.zeros(4)
        for key in perfect | set(hw):
            fp, fh = exact.get(key, 0), hw.get(key, 0)
            if key not in hw:
                part[1] += fp
            elif key not in perfect:
                part[0] += abs(fp - fh)
            elif fh > fp:
                part[2] += fh - fp
            else:
                part[3] += fp - fh
        candidates.append(len(perfect))
        reported.append(bool(hw))
        union = perfect | set(hw)
        denominator = sum(exact.get(k, 0) for k in union)
        if denominator == 0:  # no candidate in either profile: 0/0, no error rate
            parts.append(np.zeros(4))
            totals.append(math.nan)
            continue
        numerator = sum(abs(exact.get(k, 0) - hw.get(k, 0)) for k in union)
        parts.append(part / denominator)
        totals.append(numerator / denominator)
    return mean_error(parts, totals, candidates, reported)


def false_positive_bound(tables: int, threshold_percent: float, counters: int) -> float:
    """Section 6.2: the false-positive probability bound ``(100 n / (t Z))^n``.

    ``Z`` is the total number of counters, split over ``n`` tables; ``t`` the
    candidate threshold in percent. (Values above 1 mean "no bound".)
    """
    return (100 * tables / (threshold_percent * counters)) ** tables
