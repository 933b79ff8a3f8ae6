"""hwprof.traces.keys.trace_keys: the keys of a small hand-made trace, worked out by hand.

Key formula (the function's docstring): ``(pc mod 2**pc_bits) << value_bits | f(x)``,
``x`` the loaded value of a load and the target address of any other record,
``f(x) = x mod 2**value_bits``, or with ``fold`` the xor of ``x``'s
``value_bits``-wide slices. Every expected key below is written out in hex.
"""

from __future__ import annotations

import numpy as np
import pytest

from hwprof.traces.keys import EDGE_KINDS, SyntheticValueTrace, trace_keys
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


def test_load_keys_by_hand(trace):
    # pc[31:0] : value[31:0] of the three loads, in order
    assert keys(trace) == [0x3456_789A_0000_0001, 0x0040_1008_1234_5678, 0x0040_102C_FFFF_FFFF]
    assert keys(trace, "loads") == keys(trace, (LOAD,)) == keys(trace, "auto") == keys(trace)
    # pc[7:0] : value[15:0]
    assert keys(trace, pc_bits=8, value_bits=16) == [0x9A_0001, 0x08_5678, 0x2C_FFFF]
    # no pc field: the whole 64-bit value
    assert keys(trace, pc_bits=0, value_bits=64) == [
        0xAAAA_BBBB_0000_0001, 0x1234_5678, 0xFFFF_FFFF_FFFF_FFFF]  # fmt: skip


def test_folded_keys_by_hand(trace):
    # value folded to 32 bits: 0000_0001 ^ AAAA_BBBB, 1234_5678 ^ 0, FFFF_FFFF ^ FFFF_FFFF
    assert keys(trace, fold=True) == [
        0x3456_789A_AAAA_BBBA, 0x0040_1008_1234_5678, 0x0040_102C_0000_0000]  # fmt: skip
    # to 16 bits: AAAA ^ BBBB ^ 0000 ^ 0001 = 1110; 0 ^ 0 ^ 1234 ^ 5678 = 444C; FFFF x4 = 0
    assert keys(trace, pc_bits=8, value_bits=16, fold=True) == [0x9A_1110, 0x08_444C, 0x2C_0000]


def test_edge_and_mixed_keys_by_hand(trace):
    # control-flow edges pc[31:0] : target[31:0]; the return is left out
    assert keys(trace, EDGE_KINDS) == [0x0040_1000_0040_1040, 0x0040_1020_0040_2000]
    # loads and taken branches together, in program order: value for loads, target else
    assert keys(trace, "load,cond_taken") == [
        0x3456_789A_0000_0001, 0x0040_1000_0040_1040, 0x0040_1008_1234_5678,
        0x0040_102C_FFFF_FFFF]  # fmt: skip


def test_limit_stops_inside_the_stream(trace):
    assert keys(trace, limit=2) == [0x3456_789A_0000_0001, 0x0040_1008_1234_5678]
    assert [k.tolist() for k in trace_keys(trace, limit=0)] == [[]]
    assert keys(trace, EDGE_KINDS, limit=1) == [0x0040_1000_0040_1040]
    assert keys(trace, limit=10) == keys(trace)


def test_no_tuples_gives_one_empty_array(trace):
    assert [k.tolist() for k in trace_keys(trace, "blocks")] == [[]]


@pytest.mark.parametrize("kwargs, what", [
    ({"pc_bits": 40}, "sum <= 64"),
    ({"value_bits": 0}, "1 <= value_bits"),
    ({"pc_bits": -1}, "0 <= pc_bits"),
    ({"limit": -1}, "limit must be >= 0"),
    ({"kinds": "stores"}, "unknown record kind 'stores'"),
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
    full = keys(SyntheticValueTrace(5, 3000, chunk=1000), fold=True)
    assert len(full) == 3000
    assert keys(SyntheticValueTrace(5, 3000, chunk=1000), fold=True, limit=1500) == full[:1500]
    assert keys(SyntheticValueTrace(5, 3000, chunk=1000), fold=True) == full
    assert keys(SyntheticValueTrace(6, 3000, chunk=1000), fold=True) != full
    assert keys(SyntheticValueTrace(5, 3000), "branches") == []
