"""hwprof.traces.keys.trace_keys: the keys of a small hand-made trace, worked out by hand.

Key formula (the function's docstring): ``(pc mod 2**pc_bits) << value_bits | f(x)``,
``x`` the loaded value of a load and the target address of any other record, ``f(x)``
``(x ^ m(x >> value_bits)) mod 2**value_bits`` with ``m`` splitmix64's output function
(``"mix-fold"``, the default), or the top ``value_bits`` bits of ``m(x)`` (``"mix"``), or
``x mod 2**value_bits`` (``"low"``), or the xor of ``x``'s ``value_bits``-wide slices
(``"xor-fold"``). The low and folded keys are written out in hex; the mixed ones come
from :func:`splitmix64_output`, the published definition written out in Python ints
here, which is checked, like :func:`~hwprof.traces.keys.mix64`, against the values the
reference ``splitmix64.c`` prints.
"""

from __future__ import annotations

import numpy as np
import pytest

from hwprof.traces.keys import EDGE_KINDS, SyntheticValueTrace, mix64, trace_keys
from hwprof.traces.lackey import write_trace
from hwprof.traces.tracefile import CALL, COND_TAKEN, LOAD, RETURN, TraceError, TraceWriter

#: (kind, pc, addr, value): three loads, a taken branch, a return and a call
RECORDS = [
    (LOAD, 0x0000_7F12_3456_789A, 0x1000, 0xAAAA_BBBB_0000_0001),
    (COND_TAKEN, 0x0040_1000, 0x0040_1040, 0x0040_1004),
    (LOAD, 0x0040_1008, 0x2000, 0x1234_5678),
    (RETURN, 0x0040_1010, 0x0040_0500, 0),
    (CALL, 0x1_0040_1020, 0x2_0040_2000, 0x1_0040_1025),
    (LOAD, 0x0040_102C, 0x3000, 0xFFFF_FFFF_FFFF_FFFF),
]


@pytest.fixture
def trace(tmp_path):
    """The records of RECORDS, two a chunk (chunk boundaries inside the stream)."""
    path = tmp_path / "hand.trace"
    columns = list(zip(*RECORDS, strict=True))
    with TraceWriter(path, header={"program": "hand"}, chunk_records=2) as writer:
        writer.write(kind=np.array(columns[0], np.uint8), pc=np.array(columns[1], np.uint64),
                     addr=np.array(columns[2], np.uint64),
                     value=np.array(columns[3], np.uint64))  # fmt: skip
    return path


def keys(*args, **kwargs) -> list[int]:
    return np.concatenate(list(trace_keys(*args, **kwargs))).tolist()


#: splitmix64's increment (the golden ratio), its state's step between outputs
GAMMA = 0x9E37_79B9_7F4A_7C15
#: Published outputs of the reference ``splitmix64.c`` (Vigna, prng.di.unimi.it): the
#: first three from state 0 (``0xE220A8397B1DCDAF``, ...: the vector that ports of the
#: generator quote in their tests), and the first ten of the 50 from state
#: 1477776061723855037 that rand_xoshiro's test lists as produced by that program
#: (rust-random/rngs, rand_xoshiro/src/splitmix64.rs).
KNOWN = {0: [0xE220_A839_7B1D_CDAF, 7960286522194355700, 487617019471545679],
         1477776061723855037: [
             1985237415132408290, 2979275885539914483, 13511426838097143398,
             8488337342461049707, 15141737807933549159, 17093170987380407015,
             16389528042912955399, 13177319091862933652, 10841969400225389492,
             17094824097954834098]}  # fmt: skip


def splitmix64_output(x: int) -> int:
    """The output function of ``splitmix64.c`` for state ``x``, in Python ints (mod 2**64)."""
    mask = (1 << 64) - 1
    z = ((x ^ (x >> 30)) * 0xBF58_476D_1CE4_E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) & mask
    return z ^ (z >> 31)


def published_outputs(seed: int, count: int) -> list[int]:
    """``next()`` of ``splitmix64.c``: the state steps by GAMMA, then goes through the output."""
    return [(seed + GAMMA * (i + 1)) % (1 << 64) for i in range(count)]


@pytest.mark.parametrize("seed", sorted(KNOWN))
def test_mix64_gives_the_published_splitmix64_outputs(seed):
    states = published_outputs(seed, len(KNOWN[seed]))
    assert [splitmix64_output(s) for s in states] == KNOWN[seed]
    assert mix64(np.array(states, np.uint64)).tolist() == KNOWN[seed]
    assert int(mix64(states[0])) == KNOWN[seed][0]  # a scalar in, a 0-d array out


def test_mix64_checker_fails_on_a_wrong_constant():
    """The known answers catch a mixer with one constant or shift off."""
    states = published_outputs(0, 3)

    def wrong(x, m2=0x94D0_49BB_1331_11EB, shift=27):
        mask = (1 << 64) - 1
        z = ((x ^ (x >> 30)) * 0xBF58_476D_1CE4_E5B9) & mask
        z = ((z ^ (z >> shift)) * m2) & mask
        return z ^ (z >> 31)

    assert [wrong(s) for s in states] == KNOWN[0]
    assert [wrong(s, m2=0x94D0_49BB_1331_11EF) for s in states] != KNOWN[0]
    assert [wrong(s, shift=28) for s in states] != KNOWN[0]


def mixed(pc: int, x: int, pc_bits: int = 32, value_bits: int = 32, fold: bool = True) -> int:
    """A key from the definitions: pc's low bits, then the mix-fold (x's low bits xor
    the mix of its high bits) or the mix's top bits."""
    if fold:
        field = (x ^ splitmix64_output(x >> value_bits)) % (1 << value_bits)
    else:
        field = splitmix64_output(x) >> (64 - value_bits)
    return ((pc % (1 << pc_bits)) << value_bits | field) if pc_bits else field


LOADS = [(pc, value) for kind, pc, _, value in RECORDS if kind == LOAD]
EDGES = [(RECORDS[1][1], RECORDS[1][2]), (RECORDS[4][1], RECORDS[4][2])]


def test_mixed_load_keys(trace):
    assert keys(trace) == [mixed(pc, v) for pc, v in LOADS]
    assert keys(trace, "loads") == keys(trace, (LOAD,)) == keys(trace, "auto") == keys(trace)
    assert keys(trace, pc_bits=8, value_bits=16) == [mixed(pc, v, 8, 16) for pc, v in LOADS]
    assert keys(trace, EDGE_KINDS) == [mixed(pc, t) for pc, t in EDGES]
    # a value that fits the field keys as itself (the mix of 0 is 0): 0x1234_5678
    assert keys(trace)[1] == 0x0040_1008_1234_5678
    # 64-bit field: the value itself (mix-fold), the bijection mix64 (mix)
    assert keys(trace, pc_bits=0, value_bits=64) == [v for _, v in LOADS]
    assert keys(trace, pc_bits=0, value_bits=64, value_map="mix") == [
        splitmix64_output(v) for _, v in LOADS]  # fmt: skip
    assert keys(trace, value_map="mix") == [mixed(pc, v, fold=False) for pc, v in LOADS]


def test_low_keys_by_hand(trace):
    # pc[31:0] : value[31:0] of the three loads, in order
    assert keys(trace, value_map="low") == [
        0x3456_789A_0000_0001, 0x0040_1008_1234_5678, 0x0040_102C_FFFF_FFFF]  # fmt: skip
    # pc[7:0] : value[15:0]
    assert keys(trace, pc_bits=8, value_bits=16, value_map="low") == [
        0x9A_0001, 0x08_5678, 0x2C_FFFF]  # fmt: skip
    # no pc field: the whole 64-bit value
    assert keys(trace, pc_bits=0, value_bits=64, value_map="low") == [
        0xAAAA_BBBB_0000_0001, 0x1234_5678, 0xFFFF_FFFF_FFFF_FFFF]  # fmt: skip


def test_folded_keys_by_hand(trace):
    # value folded to 32 bits: 0000_0001 ^ AAAA_BBBB, 1234_5678 ^ 0, FFFF_FFFF ^ FFFF_FFFF
    assert keys(trace, value_map="xor-fold") == [
        0x3456_789A_AAAA_BBBA, 0x0040_1008_1234_5678, 0x0040_102C_0000_0000]  # fmt: skip
    # to 16 bits: AAAA ^ BBBB ^ 0000 ^ 0001 = 1110; 0 ^ 0 ^ 1234 ^ 5678 = 444C; FFFF x4 = 0
    assert keys(trace, pc_bits=8, value_bits=16, value_map="xor-fold") == [
        0x9A_1110, 0x08_444C, 0x2C_0000]  # fmt: skip


def test_edge_and_mixed_keys_by_hand(trace):
    # control-flow edges pc[31:0] : target[31:0]; the return is left out
    assert keys(trace, EDGE_KINDS, value_map="low") == [
        0x0040_1000_0040_1040, 0x0040_1020_0040_2000]  # fmt: skip
    # loads and taken branches together, in program order: value for loads, target else
    assert keys(trace, "load,cond_taken", value_map="low") == [
        0x3456_789A_0000_0001, 0x0040_1000_0040_1040, 0x0040_1008_1234_5678,
        0x0040_102C_FFFF_FFFF]  # fmt: skip


def test_limit_stops_inside_the_stream(trace):
    assert keys(trace, limit=2, value_map="low") == [0x3456_789A_0000_0001, 0x0040_1008_1234_5678]
    assert [k.tolist() for k in trace_keys(trace, limit=0)] == [[]]
    assert keys(trace, EDGE_KINDS, limit=1, value_map="low") == [0x0040_1000_0040_1040]
    assert keys(trace, limit=10) == keys(trace)


def test_no_tuples_gives_one_empty_array(trace):
    assert [k.tolist() for k in trace_keys(trace, "blocks")] == [[]]


@pytest.mark.parametrize("kwargs, what", [
    ({"pc_bits": 40}, "sum <= 64"),
    ({"value_bits": 0}, "1 <= value_bits"),
    ({"pc_bits": -1}, "0 <= pc_bits"),
    ({"limit": -1}, "limit must be >= 0"),
    ({"kinds": "stores"}, "unknown record kind 'stores'"),
    ({"value_map": "fold"}, "value_map must be one of mix-fold, mix, low, xor-fold"),
])  # fmt: skip
def test_bad_arguments(trace, kwargs, what):
    with pytest.raises(ValueError, match=what):
        keys(trace, **kwargs)


def test_a_legacy_file_is_refused_naming_convert(tmp_path):
    old = tmp_path / "old.trace.gz"
    write_trace(old, [1, 2], [3, 4])
    with pytest.raises(TraceError) as excinfo:
        keys(old, "auto")
    message = str(excinfo.value)
    assert "\n" not in message and message.startswith(f"{old}: ")
    assert f"hwprof trace convert {old} NEW.trace" in message


def test_synthetic_trace_is_seeded_and_limited():
    full = keys(SyntheticValueTrace(5, 3000, chunk=1000))
    assert len(full) == 3000
    assert keys(SyntheticValueTrace(5, 3000, chunk=1000), limit=1500) == full[:1500]
    assert keys(SyntheticValueTrace(5, 3000, chunk=1000)) == full
    assert keys(SyntheticValueTrace(6, 3000, chunk=1000)) != full
    assert keys(SyntheticValueTrace(5, 3000), "branches") == []
