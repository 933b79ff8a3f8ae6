"""The profiler hash function of Sastry et al., as used by Narayanasamy et al. (sec. 5.3).

Shared by the multi-hash profiler (``hwprof.golden.multihash``) and the
stratified sampler. For a tuple ``<pc, value>``::

    npc   = flip(randomize(pc))
    nv    = randomize(value)
    index = xor_fold(npc ^ nv, index_bits)

* ``randomize`` replaces every byte of its input by an entry of a 256-entry
  random byte table. We use one table per byte position and per field (pc or
  value), and each table is a random *permutation* of 0..255, so ``randomize``
  is a bijection and adds no collision of its own. Independent hash functions
  (the multi-hash profiler needs ``n``) differ only in their table set, i.e. in
  ``table_seed``.
* ``flip`` reverses the bytes of the randomized pc over the common width
  ``W = max(pc_bytes, value_bytes)`` bytes, so the pc's low-order variation lands
  in the high-order bytes before it is xor-ed with the value.
* ``xor_fold(v, n)`` splits ``v`` (``8 W`` bits) into ``n``-bit chunks, from bit 0
  up, the last chunk zero-padded, and xors them.

Table generation (documented seed)
----------------------------------
``tables = make_tables(table_seed, value_bits, pc_bits)``::

    rng = numpy.random.default_rng(table_seed)
    value_tables = [rng.permutation(256) for each value byte, byte 0 (LSB) first]
    pc_tables    = [rng.permutation(256) for each pc byte, byte 0 (LSB) first]

A byte of a field narrower than 8 bits (the top byte of a 12-bit field, say)
still indexes its full 256-entry table; only the entries it can reach matter.

API
---
``HashFunction(index_bits, key_bits, table_seed, pc_bits=0)``
    ``key`` is one integer of ``key_bits`` bits: ``key = (pc << value_bits) | value``
    with ``value_bits = key_bits - pc_bits`` (see :func:`pack_key`). With
    ``pc_bits=0`` the whole key is a value and ``flip`` has nothing to do.

    * ``h(key) -> int``: the index, ``0 <= index < 2**index_bits``; written
      literally as randomize/flip/xor-fold on Python integers.
    * ``h.many(keys) -> np.ndarray``: the same for an array of keys (uint64,
      ``key_bits <= 64``), vectorized with pre-folded per-byte tables
      (tested equal to ``h(key)``).
    * ``h.tables``: ``(value_tables, pc_tables)``, tuples of 256-entry tuples;
      the RTL (:class:`hwprof.rtl.hashing.Hash`) takes its ROM contents from here.

``HashFunction.family(n, index_bits, key_bits, base_seed, pc_bits=0)``
    ``n`` independent hash functions with ``table_seed = base_seed + i``.

The RTL twin is ``hwprof.rtl.hashing.Hash(index_bits, key_bits, table_seed,
pc_bits=0)``: combinational, ports ``key`` (In) and ``index`` (Out), latency 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["HashConfig", "HashFunction", "make_tables", "pack_key", "xor_fold", "flip_bytes"]

MAX_KEY_BITS = 128
MAX_INDEX_BITS = 32


def _nbytes(bits: int) -> int:
    return (bits + 7) // 8


@dataclass(frozen=True)
class HashConfig:
    """Validated parameters of one hash function (see the module docstring)."""

    index_bits: int
    key_bits: int
    table_seed: int
    pc_bits: int = 0

    def __post_init__(self):
        for name in ("index_bits", "key_bits", "table_seed", "pc_bits"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} must be an integer, not {value!r}")
        if not 1 <= self.index_bits <= MAX_INDEX_BITS:
            raise ValueError(
                f"index_bits must be between 1 and {MAX_INDEX_BITS}, not {self.index_bits}"
            )
        if not 1 <= self.key_bits <= MAX_KEY_BITS:
            raise ValueError(f"key_bits must be between 1 and {MAX_KEY_BITS}, not {self.key_bits}")
        if not 0 <= self.pc_bits < self.key_bits:
            raise ValueError(
                f"pc_bits must be between 0 and key_bits - 1 = {self.key_bits - 1}, "
                f"not {self.pc_bits}"
            )
        if self.table_seed < 0:
            raise ValueError(f"table_seed must be non-negative, not {self.table_seed}")

    @property
    def value_bits(self) -> int:
        return self.key_bits - self.pc_bits

    @property
    def value_bytes(self) -> int:
        return _nbytes(self.value_bits)

    @property
    def pc_bytes(self) -> int:
        return _nbytes(self.pc_bits)

    @property
    def width_bytes(self) -> int:
        """``W``: the common width of ``npc`` and ``nv`` in bytes."""
        return max(self.pc_bytes, self.value_bytes)


def make_tables(table_seed: int, value_bits: int, pc_bits: int = 0):
    """The randomize tables: ``(value_tables, pc_tables)``, each a tuple of permutations."""
    rng = np.random.default_rng(table_seed)
    value = tuple(tuple(int(x) for x in rng.permutation(256)) for _ in range(_nbytes(value_bits)))
    pc = tuple(tuple(int(x) for x in rng.permutation(256)) for _ in range(_nbytes(pc_bits)))
    return value, pc


def pack_key(pc: int, value: int, value_bits: int) -> int:
    """``key = (pc << value_bits) | value``: the tuple ``<pc, value>`` as one key."""
    return (pc << value_bits) | value


def randomize(x: int, tables) -> int:
    """Replace byte ``i`` of ``x`` by ``tables[i][byte]``."""
    out = 0
    for i, table in enumerate(tables):
        out |= table[(x >> (8 * i)) & 0xFF] << (8 * i)
    return out


def flip_bytes(x: int, nbytes: int) -> int:
    """Reverse the ``nbytes`` low bytes of ``x`` (byte 0 becomes byte ``nbytes - 1``)."""
    out = 0
    for i in range(nbytes):
        out |= ((x >> (8 * i)) & 0xFF) << (8 * (nbytes - 1 - i))
    return out


def xor_fold(x: int, n: int, total_bits: int) -> int:
    """XOR of the ``n``-bit chunks of the ``total_bits``-bit value ``x``."""
    out = 0
    mask = (1 << n) - 1
    for lo in range(0, total_bits, n):
        out ^= (x >> lo) & mask
    return out


class HashFunction:
    """One hash function of the family (see the module docstring for the algorithm).

    Parameters
    ----------
    index_bits : int
        Width of the index, 1..32 (a table of ``2**index_bits`` counters).
    key_bits : int
        Width of the key ``(pc << value_bits) | value``, 1..128.
    table_seed : int
        Seed of ``numpy.random.default_rng`` for the randomize tables (>= 0).
    pc_bits : int
        Width of the pc field (the key's top bits); 0 means "value only".

    Raises
    ------
    TypeError, ValueError
        On parameters out of range.
    """

    def __init__(self, index_bits: int, key_bits: int, table_seed: int, pc_bits: int = 0):
        self.config = HashConfig(index_bits, key_bits, table_seed, pc_bits)
        c = self.config
        self.index_bits = c.index_bits
        self.key_bits = c.key_bits
        self.pc_bits = c.pc_bits
        self.value_bits = c.value_bits
        self.table_seed = c.table_seed
        self.tables = make_tables(c.table_seed, c.value_bits, c.pc_bits)
        self._fold_tables = None

    @classmethod
    def family(cls, n: int, index_bits: int, key_bits: int, base_seed: int, pc_bits: int = 0):
        """``n`` independent functions, ``table_seed = base_seed + i``."""
        return [cls(index_bits, key_bits, base_seed + i, pc_bits) for i in range(n)]

    def __call__(self, key: int) -> int:
        key = int(key)
        if not 0 <= key < (1 << self.key_bits):
            raise ValueError(f"key must fit in {self.key_bits} bits, not {key!r}")
        value_tables, pc_tables = self.tables
        value = key & ((1 << self.value_bits) - 1)
        pc = key >> self.value_bits
        width = self.config.width_bytes
        nv = randomize(value, value_tables)
        npc = flip_bytes(randomize(pc, pc_tables), width) if pc_tables else 0
        return xor_fold(npc ^ nv, self.index_bits, 8 * width)

    def _prefolded(self):
        """Per key byte ``j``: the index contribution of each of its 256 values."""
        if self._fold_tables is None:
            value_tables, pc_tables = self.tables
            width = self.config.width_bytes
            rows = []
            for i, table in enumerate(value_tables):
                rows.append([xor_fold(t << (8 * i), self.index_bits, 8 * width) for t in table])
            for i, table in enumerate(pc_tables):
                pos = width - 1 - i
                rows.append([xor_fold(t << (8 * pos), self.index_bits, 8 * width) for t in table])
            self._fold_tables = np.array(rows, dtype=np.uint32)
        return self._fold_tables

    def many(self, keys) -> np.ndarray:
        """Indices of an array of keys (``key_bits <= 64``), as ``np.int64``."""
        if self.key_bits > 64:
            raise ValueError(f"many() needs key_bits <= 64, not {self.key_bits}")
        keys = np.asarray(keys, dtype=np.uint64)
        folded = self._prefolded()
        out = np.zeros(keys.shape, dtype=np.uint32)
        value = keys & np.uint64((1 << self.value_bits) - 1)
        pc = keys >> np.uint64(self.value_bits)
        row = 0
        for field in (value, pc):
            nbytes = self.config.value_bytes if field is value else self.config.pc_bytes
            for i in range(nbytes):
                byte = ((field >> np.uint64(8 * i)) & np.uint64(0xFF)).astype(np.intp)
                out ^= folded[row][byte]
                row += 1
        return out.astype(np.int64)
