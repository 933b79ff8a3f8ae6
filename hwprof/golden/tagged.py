"""Tagged compressor (Sastry et al., sec. 4), associative counter table ``A_k``
(sec. 3.4) and the interrupt message buffer (sec. 2.2), as golden models.

Tagged compressor
-----------------
The shared hash (:class:`hwprof.golden.hashing.HashFunction`, ``index_bits =
log2(entries / ways)``) selects a set; the partial tag is ``tag = xor_fold(pc ^
value, tag_bits)`` (sec. 4.1; with ``pc_bits = 0`` the key itself is folded).
Each entry holds ``tag``, a ``hit_bits`` hit counter, a ``miss_bits`` miss
counter and a valid bit; as in sec. 4.2 the Evict state is "valid and miss
counter non-zero", so the FSM state costs one bit. ``H = 2**hit_bits - 1``.

Transitions of one entry for an accepted tuple (Figure 6):

* **E1** Empty, allocated to the tuple: ``tag := T``, ``hit := hit + 1`` (the
  hit counter is 0, or the count left by E6), ``miss := 0`` -> Valid.
* **E3** Valid, tag hit: ``hit := hit + 1``.
  **E2** if that makes ``hit == H``: message ``(key, H)``, counters 0 -> Empty.
* **E4** Valid, miss charged to the entry: ``miss := 1`` -> Evict.
* **E6a** Evict, tag hit: ``hit := hit + 1``. **E6** when *ShouldEvict*
  (``hit >= evict_hits`` or ``hit == H``): message ``(key, hit)``, then ``hit :=
  miss`` (the conflicting tuples' count is kept for the next tuple), ``miss := 0``
  -> Empty.
* **E5a** Evict, miss charged: ``miss := miss + 1``. **E5** when *ShouldReplace*
  (``miss >= replace_misses``): the tuple takes the entry, ``tag := T``, ``hit :=
  hit + miss`` ("the hit count of the evicted tuple is assigned to the new tuple
  along with the miss count"), ``miss := 0`` -> Valid; if ``hit + miss >= H`` the
  new tuple is reported at once with ``hit + miss`` -> Empty (messages are
  ``hit_bits + 1`` bits wide, so this count fits).

Set-associative choice (the paper is silent; ours): a tuple whose tag matches a
non-empty way hits that way; else it is allocated to the lowest Empty way (E1);
else the miss is charged to a way in Evict (lowest index), else to the way with
the smallest hit count (lowest index on a tie). Every tuple adds exactly one to
one entry's ``hit + miss`` and a message removes exactly what it reports, so the
compressor is count preserving.

Associative table ``A_k``
-------------------------
``k`` fully associative entries ``(key, count)``, ``count_bits`` wide; input
messages ``(key, c)``. Hit: ``count += c``, or, if that would exceed ``2**count_bits
- 1``, the entry is reported ``(key, count)`` and restarts at ``c``. Miss: the lowest
free entry takes ``(key, c)``; if none is free the entry at the round-robin
pointer is reported and replaced, and the pointer advances. Lossless.

Message buffer
--------------
A FIFO of ``depth`` messages (Amaranth ``SyncFIFO`` timing: level changes at the
edge; ``in_ready = level < depth``; ``irq = level == depth`` (the interrupt line); the head is
shown while ``level > 0``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from .hashing import HashFunction, xor_fold
from .samplers import MAX_KEY_BITS, StreamStage, check_int, check_latency, check_power_of_two

__all__ = [
    "TaggedConfig",
    "TaggedCompressor",
    "AssocConfig",
    "AssocTable",
    "MessageBuffer",
    "tag_of",
    "space_bits",
    "aliasing_keys",
]

EMPTY, VALID, EVICT = "Empty", "Valid", "Evict"


@dataclass(frozen=True)
class TaggedConfig:
    """Validated parameters of the tagged compressor (defaults: sec. 5.4).

    Parameters
    ----------
    entries : int
        Table entries, a power of two, ``ways``..2**20 (default 2048).
    ways : int
        Associativity, a power of two, 1..8 (default 2).
    tag_bits, hit_bits, miss_bits : int
        Partial tag (1..16, default 2), hit counter (2..16, default 8), miss
        counter (1..hit_bits - 1, default 3).
    evict_hits : int
        *ShouldEvict*: hits needed to report an Evict entry, 1..2**hit_bits - 1.
    replace_misses : int
        *ShouldReplace*: misses that make an Evict entry give up, 1..2**miss_bits - 1.
    key_bits, pc_bits, hash_seed : int
        Tuple width, pc field width, table seed of the shared hash.
    """

    entries: int = 2048
    ways: int = 2
    tag_bits: int = 2
    hit_bits: int = 8
    miss_bits: int = 3
    evict_hits: int = 8
    replace_misses: int = 7
    key_bits: int = 64
    pc_bits: int = 32
    hash_seed: int = 1

    def __post_init__(self):
        check_power_of_two("ways", self.ways, 1, 8)
        check_power_of_two("entries", self.entries, max(2, self.ways), 1 << 20)
        if self.entries == self.ways:
            raise ValueError(f"entries must be more than ways = {self.ways}, not {self.entries}")
        check_int("tag_bits", self.tag_bits, 1, 16)
        check_int("hit_bits", self.hit_bits, 2, 16)
        check_int("miss_bits", self.miss_bits, 1, self.hit_bits - 1)
        check_int("evict_hits", self.evict_hits, 1, (1 << self.hit_bits) - 1)
        check_int("replace_misses", self.replace_misses, 1, (1 << self.miss_bits) - 1)
        check_int("key_bits", self.key_bits, 2, MAX_KEY_BITS)
        check_int("pc_bits", self.pc_bits, 0, self.key_bits - 1)
        check_int("hash_seed", self.hash_seed, 0)

    @property
    def sets(self) -> int:
        return self.entries // self.ways

    @property
    def index_bits(self) -> int:
        return self.sets.bit_length() - 1

    @property
    def entry_bits(self) -> int:
        """Bits per entry: tag, hit and miss counters, valid bit."""
        return self.tag_bits + self.hit_bits + self.miss_bits + 1

    @property
    def hit_max(self) -> int:
        return (1 << self.hit_bits) - 1

    @property
    def count_bits(self) -> int:
        return self.hit_bits + 1


def tag_of(key: int, tag_bits: int, key_bits: int, pc_bits: int) -> int:
    """``xor_fold(pc ^ value, tag_bits)`` for ``key = (pc << value_bits) | value``."""
    value_bits = key_bits - pc_bits
    value = key & ((1 << value_bits) - 1)
    pc = key >> value_bits
    return xor_fold(pc ^ value, tag_bits, max(pc_bits, value_bits))


def space_bits(entries: int, bits_per_entry: int) -> int:
    return entries * bits_per_entry


class TaggedCompressor(StreamStage):
    """Tagged compressor, Figure 6; see the module docstring for the exact rules.

    ``self.table[set][way] = [valid, tag, hit, miss]``; :meth:`state` names the
    FSM state of an entry; ``self.transitions`` counts E1..E6 (E5a/E6a included).
    """

    def __init__(self, latency=3, skid=False, **params):
        super().__init__(latency=check_latency(latency, (1, 3)), skid=skid)
        self.config = c = TaggedConfig(**params)
        self.count_bits = c.count_bits
        self.hash = HashFunction(c.index_bits, c.key_bits, c.hash_seed, c.pc_bits)
        self.table = [[[0, 0, 0, 0] for _ in range(c.ways)] for _ in range(c.sets)]
        self.transitions = dict.fromkeys(("E1", "E2", "E3", "E4", "E5", "E5a", "E6", "E6a"), 0)

    @staticmethod
    def state(entry) -> str:
        valid, _, _, miss = entry
        return EMPTY if not valid else (EVICT if miss else VALID)

    def locate(self, key: int) -> tuple[int, int]:
        c = self.config
        return self.hash(key), tag_of(key, c.tag_bits, c.key_bits, c.pc_bits)

    def choose_way(self, ways, tag: int) -> tuple[int, bool]:
        """``(way, hit)`` for a tuple with ``tag`` in a set (see the module docstring)."""
        for w, entry in enumerate(ways):
            if entry[0] and entry[1] == tag:
                return w, True
        for w, entry in enumerate(ways):
            if not entry[0]:
                return w, False
        for w, entry in enumerate(ways):
            if entry[3]:
                return w, False
        hits = [entry[2] for entry in ways]
        return hits.index(min(hits)), False

    def process(self, key, count=1):
        c = self.config
        index, tag = self.locate(key)
        way, hit = self.choose_way(self.table[index], tag)
        entry = self.table[index][way]
        state = self.state(entry)
        t = self.transitions
        if state == EMPTY:
            t["E1"] += 1
            entry[:] = [1, tag, entry[2] + 1, 0]
            return None
        if state == VALID:
            if hit:
                t["E3"] += 1
                entry[2] += 1
                if entry[2] == c.hit_max:
                    t["E2"] += 1
                    entry[:] = [0, 0, 0, 0]
                    return key, c.hit_max
                return None
            t["E4"] += 1
            entry[3] = 1
            return None
        if hit:  # Evict
            t["E6a"] += 1
            entry[2] += 1
            if entry[2] >= c.evict_hits or entry[2] == c.hit_max:
                t["E6"] += 1
                reported = entry[2]
                entry[:] = [0, 0, entry[3], 0]
                return key, reported
            return None
        t["E5a"] += 1
        entry[3] += 1
        if entry[3] >= c.replace_misses:
            t["E5"] += 1
            total = entry[2] + entry[3]
            if total >= c.hit_max:
                entry[:] = [0, 0, 0, 0]
                return key, total
            entry[:] = [1, tag, total, 0]
        return None

    def residual(self):
        return sum(e[2] + e[3] for ways in self.table for e in ways)


@dataclass(frozen=True)
class AssocConfig:
    """Validated parameters of ``A_k``.

    Parameters
    ----------
    entries : int
        ``k``, 1..64 (default 16).
    key_bits : int
        Tuple width, 1..128.
    in_count_bits : int
        Width of the input messages' count, 1..count_bits (default 9: ``r = 256``).
    count_bits : int
        Entry counter and output count width, 2..32 (default 16).
    """

    entries: int = 16
    key_bits: int = 64
    in_count_bits: int = 9
    count_bits: int = 16

    def __post_init__(self):
        check_int("entries", self.entries, 1, 64)
        check_int("key_bits", self.key_bits, 1, MAX_KEY_BITS)
        check_int("count_bits", self.count_bits, 2, 32)
        check_int("in_count_bits", self.in_count_bits, 1, self.count_bits)


class AssocTable(StreamStage):
    """``A_k``: lossless second-level compressor (module docstring).

    ``latency`` (2, the RTL's default, or 1) and ``skid``: the cycle model's options
    (:class:`hwprof.golden.samplers.StreamStage`); the messages and their order do
    not depend on them.
    """

    def __init__(self, entries=16, key_bits=64, in_count_bits=9, count_bits=16, latency=2,
                 skid=False):  # fmt: skip
        super().__init__(latency=check_latency(latency, (1, 2)), skid=skid)
        self.config = AssocConfig(entries, key_bits, in_count_bits, count_bits)
        self.count_bits = count_bits
        self.valid = [0] * entries
        self.keys = [0] * entries
        self.counts = [0] * entries
        self.pointer = 0

    def process(self, key, count=1):
        c = self.config
        limit = (1 << c.count_bits) - 1
        for i in range(c.entries):
            if self.valid[i] and self.keys[i] == key:
                if self.counts[i] + count > limit:
                    reported, self.counts[i] = self.counts[i], count
                    return key, reported
                self.counts[i] += count
                return None
        if 0 in self.valid:
            i = self.valid.index(0)
            self.valid[i], self.keys[i], self.counts[i] = 1, key, count
            return None
        i = self.pointer
        message = (self.keys[i], self.counts[i])
        self.keys[i], self.counts[i] = key, count
        self.pointer = (i + 1) % c.entries
        return message

    def residual(self):
        return sum(n for v, n in zip(self.valid, self.counts, strict=True) if v)


class MessageBuffer:
    """Interrupt message buffer: ``depth`` messages, interrupt while full."""

    def __init__(self, depth=100):
        check_int("depth", depth, 1, 4096)
        self.depth = depth
        self.fifo: deque[tuple[int, int]] = deque()
        self.last = (0, 0)

    def outputs(self, out_ready: int) -> dict:
        head = self.fifo[0] if self.fifo else self.last
        return {
            "in_ready": int(len(self.fifo) < self.depth),
            "out_valid": int(bool(self.fifo)),
            "out_key": head[0],
            "out_count": head[1],
            "irq": int(len(self.fifo) == self.depth),
        }

    def step(self, in_valid=0, in_key=0, in_count=1, out_ready=1) -> dict:
        shown = self.outputs(out_ready)
        if self.fifo and out_ready:
            self.last = self.fifo.popleft()
        if in_valid and shown["in_ready"]:
            self.fifo.append((in_key, in_count))
        return shown

    def residual(self):
        return sum(n for _, n in self.fifo)


def aliasing_keys(model: TaggedCompressor, count: int, start: int = 1) -> list[int]:
    """``count`` keys (searched upward from ``start``) that index the same set of
    ``model`` with pairwise different partial tags: the adversarial stream that makes
    tuples fight over one set."""
    c = model.config
    if count > 1 << c.tag_bits:
        raise ValueError(f"count must be at most 2**tag_bits = {1 << c.tag_bits}, not {count}")
    found, tags, target = [], set(), None
    key = start
    while len(found) < count:
        index = model.hash(key)
        tag = tag_of(key, c.tag_bits, c.key_bits, c.pc_bits)
        if target is None:
            target = index
        if index == target and tag not in tags:
            found.append(key)
            tags.add(tag)
        key += 1
    return found
