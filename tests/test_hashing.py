"""The shared profiler hash (sec. 5.3): golden against the formula, RTL against golden."""

from __future__ import annotations

import random

import numpy as np
import pytest
from amaranth.hdl import Elaboratable, Module, Signal
from amaranth.sim import Simulator

from hwprof.golden.hashing import HashFunction, make_tables, pack_key
from hwprof.golden.stats import DEFAULT_ALPHA, binomial_acceptance
from hwprof.rtl.hashing import ROM_STYLES, Hash

# --- parameters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "exc", "text"),
    [
        ({"index_bits": 0}, ValueError, "index_bits must be between 1 and 32, not 0"),
        ({"index_bits": 33}, ValueError, "index_bits must be between 1 and 32, not 33"),
        ({"key_bits": 0}, ValueError, "key_bits must be between 1 and 128, not 0"),
        ({"pc_bits": 16}, ValueError, "pc_bits must be between 0 and key_bits - 1 = 15, not 16"),
        ({"table_seed": -1}, ValueError, "table_seed must be non-negative, not -1"),
        ({"index_bits": 9.0}, TypeError, "index_bits must be an integer, not 9.0"),
        ({"pc_bits": True}, TypeError, "pc_bits must be an integer, not True"),
    ],
)
def test_parameter_errors(kwargs, exc, text):
    args = {"index_bits": 9, "key_bits": 16, "table_seed": 1, "pc_bits": 8} | kwargs
    with pytest.raises(exc) as golden:
        HashFunction(**args)
    assert str(golden.value) == text
    with pytest.raises(exc) as rtl:
        Hash(**args)
    assert str(rtl.value) == text


def test_key_out_of_range():
    with pytest.raises(ValueError, match="key must fit in 16 bits, not 65536"):
        HashFunction(9, 16, 1)(1 << 16)


# --- tables -------------------------------------------------------------------------------


def test_tables_follow_the_documented_recipe():
    """default_rng(seed): one permutation per value byte (LSB first), then per pc byte."""
    value, pc = make_tables(7, value_bits=20, pc_bits=12)
    assert (len(value), len(pc)) == (3, 2)
    rng = np.random.default_rng(7)
    expected = [list(rng.permutation(256)) for _ in range(5)]
    assert [list(t) for t in value + pc] == expected
    for table in value + pc:
        assert sorted(table) == list(range(256))


def test_each_function_has_its_own_tables():
    family = HashFunction.family(4, index_bits=9, key_bits=64, base_seed=10, pc_bits=32)
    assert [h.table_seed for h in family] == [10, 11, 12, 13]
    tables = {h.tables for h in family}
    assert len(tables) == 4


# --- the formula, written out by hand for two small layouts --------------------------------


def test_one_byte_fields_by_hand(seed):
    """key = <pc:8, value:8>, W = 1 byte (flip is the identity), fold 8 -> 4 bits."""
    h = HashFunction(index_bits=4, key_bits=16, table_seed=seed % 1000, pc_bits=8)
    (vt,), (pt,) = h.tables
    for pc in range(256):
        for value in range(0, 256, 7):
            x = pt[pc] ^ vt[value]
            assert h(pack_key(pc, value, 8)) == (x & 15) ^ (x >> 4), (pc, value)


def test_two_byte_fields_by_hand(seed):
    """key = <pc:16, value:16>: flip swaps the two pc bytes; fold 16 -> 5 bits (4 chunks)."""
    h = HashFunction(index_bits=5, key_bits=32, table_seed=seed % 1000, pc_bits=16)
    (vt0, vt1), (pt0, pt1) = h.tables
    rng = random.Random(seed)
    for _ in range(2000):
        pc, value = rng.getrandbits(16), rng.getrandbits(16)
        nv = vt0[value & 255] | vt1[value >> 8] << 8
        npc = pt1[pc >> 8] | pt0[pc & 255] << 8  # flipped
        x = nv ^ npc
        want = (x & 31) ^ (x >> 5 & 31) ^ (x >> 10 & 31) ^ (x >> 15 & 31)
        assert h(pack_key(pc, value, 16)) == want, (seed, pc, value)


def test_value_only_key_by_hand(seed):
    """pc_bits = 0, a 12-bit key: two bytes (the top one reaches 16 table entries)."""
    h = HashFunction(index_bits=6, key_bits=12, table_seed=seed % 1000)
    (vt0, vt1), pc_tables = h.tables
    assert pc_tables == ()
    for key in range(1 << 12):
        x = vt0[key & 255] | vt1[key >> 8] << 8
        assert h(key) == (x & 63) ^ (x >> 6 & 63) ^ (x >> 12 & 63)


# --- vectorized path, distribution --------------------------------------------------------

LAYOUTS = [
    {"index_bits": 9, "key_bits": 64, "pc_bits": 32},
    {"index_bits": 11, "key_bits": 48, "pc_bits": 16},
    {"index_bits": 7, "key_bits": 20, "pc_bits": 0},
    {"index_bits": 3, "key_bits": 13, "pc_bits": 5},
]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_many_equals_scalar(layout, seed):
    h = HashFunction(table_seed=seed % 997, **layout)
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 1 << 63, size=3000, dtype=np.uint64) * np.uint64(2)
    keys |= rng.integers(0, 2, size=3000, dtype=np.uint64)
    keys &= np.uint64((1 << layout["key_bits"]) - 1)
    got = h.many(keys)
    assert got.dtype == np.int64
    assert list(got) == [h(int(k)) for k in keys], f"seed {seed}"


def test_indices_uniform_for_neighbouring_pcs(seed):
    """Nearby pcs and small values (the paper's motivation): every bucket ~ B(N, 1/Z)."""
    h = HashFunction(index_bits=6, key_bits=64, table_seed=seed % 1000, pc_bits=32)
    rng = np.random.default_rng(seed)
    n = 64_000
    pcs = (0x400000 + 4 * rng.integers(0, 4096, size=n)).astype(np.uint64)
    values = rng.integers(0, 64, size=n).astype(np.uint64)
    counts = np.bincount(h.many((pcs << np.uint64(32)) | values), minlength=64)
    lo, hi = binomial_acceptance(n, 1 / 64, DEFAULT_ALPHA / 64)
    assert all(lo <= c <= hi for c in counts), (seed, counts.min(), counts.max(), lo, hi)


# --- RTL (Amaranth simulator) against golden ----------------------------------------------


def rtl_mismatches(dut, golden, keys):
    mismatches = []

    async def testbench(ctx):
        for key in keys:
            ctx.set(dut.key, key)
            await ctx.delay(1e-6)
            got = ctx.get(dut.index)
            if got != golden(key):
                mismatches.append((key, got, golden(key)))

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    return mismatches


def test_keys(key_bits, rng, count=300):
    edge = [0, (1 << key_bits) - 1] + [1 << b for b in range(key_bits)]
    return edge + [rng.getrandbits(key_bits) for _ in range(count)]


test_keys.__test__ = False


@pytest.mark.parametrize("rom", sorted(ROM_STYLES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_rtl_matches_golden(layout, rom, seed):
    table_seed = seed % 997
    dut = Hash(table_seed=table_seed, rom=rom, **layout)
    golden = HashFunction(table_seed=table_seed, **layout)
    keys = test_keys(layout["key_bits"], random.Random(seed))
    assert rtl_mismatches(dut, golden, keys) == [], f"seed {seed}"


@pytest.mark.parametrize("rom", sorted(ROM_STYLES))
@pytest.mark.parametrize("field", [0, 1])
def test_checker_catches_one_changed_table_byte(field, rom, seed):
    """RTL built with one table entry changed: the same comparison must report it."""
    layout = {"index_bits": 9, "key_bits": 32, "pc_bits": 16}
    golden = HashFunction(table_seed=3, **layout)
    rng = random.Random(seed)
    tables = [list(map(list, t)) for t in golden.tables]
    position, entry = rng.randrange(2), rng.randrange(256)
    tables[field][position][entry] ^= 1 << rng.randrange(8)
    dut = Hash(table_seed=3, tables=tuple(tuple(map(tuple, t)) for t in tables), rom=rom,
               **layout)  # fmt: skip
    # keys whose mutated field has the mutated byte at the mutated position
    shift = 16 * field + 8 * position
    keys = [(rng.getrandbits(32) & ~(255 << shift)) | entry << shift for _ in range(8)]
    assert rtl_mismatches(dut, golden, keys), f"seed {seed}"


class _Rom(Elaboratable):
    """One byte table through a ROM builder of hwprof.rtl.hashing, on an ``bits``-bit address."""

    def __init__(self, build, table, bits, **kwargs):
        self.address, self.data = Signal(bits), Signal(8)
        self.build, self.table, self.kwargs = build, table, kwargs

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.data.eq(self.build(m, self.table, self.address, "rom", **self.kwargs))
        return m


@pytest.mark.parametrize("rom", sorted(ROM_STYLES))
@pytest.mark.parametrize(("bits", "low"), [(8, 5), (8, 3), (8, 8), (6, 5), (5, 5), (3, 5), (1, 5)])
def test_rom_builders_read_every_entry(rom, bits, low, seed):
    """Every address of a byte table (full, and a short top byte's 2**bits entries)."""
    table = make_tables(seed % 997, 16, 0)[0][1]
    kwargs = {"low": low} if rom == "split" else {}
    dut = _Rom(ROM_STYLES[rom], table, bits, **kwargs)
    wrong = []

    async def testbench(ctx):
        for a in range(1 << bits):
            ctx.set(dut.address, a)
            await ctx.delay(1e-6)
            if ctx.get(dut.data) != table[a]:
                wrong.append((a, ctx.get(dut.data), table[a]))

    sim = Simulator(dut)
    sim.add_testbench(testbench)
    sim.run()
    assert wrong == [], f"seed {seed}"


def test_rom_style_is_checked():
    with pytest.raises(ValueError, match="rom must be one of"):
        Hash(9, 64, 1, 32, rom="bram")
