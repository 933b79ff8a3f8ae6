"""The table stimulus's carry rounds against faults in the predictor's follow compares.

Issue 16: two mutants of the earlier predictor RTL survived ``table_match``
(docs/verification.md): 17, lane 2's ``nxt`` against way 1's stored follow with
the follow's bit 20 forced to 1 in the equality of word bits 18-21 (a block that
ends exactly at a carry at bits 15-17, its last PI in lane 2 of a later group), and
39, ``gt_new`` of lane 2 against lane 0 with the equality of word bits 9-10 forced
true (lane 2's PI below lane 0's across a carry at bit 9 or 10). The same faults,
written in Amaranth (:class:`GreaterFault`), on the Amaranth simulator: the
stimulus without its exact-carry rounds is a prefix of the one with them (the
rounds come last, from the same random stream), so the first mismatch's cycle
tells which one catches the fault.
"""

import random

import pytest

from hwprof.catalog import get_top
from hwprof.cocotb_tests.predictor_stimulus import table_steps
from tests.selective_dispatch_mutants import GreaterFault
from tests.test_predictor_rtl import compare

PARAMS = get_top("profile_flag_predictor").resolve({})

FAULTS = {
    # call 15: lane 2's nxt > way 1's follow; bit 20 of the follow forced to 1 in the
    # equality of bits 18-21
    "nxt2-follow1-eq18-21": dict(call=15, span=(18, 22), force=(20, 1)),
    # call 1: lane 2's word > lane 0's; the equality of bits 9-10 always true
    "word2-word0-eq9-10": dict(call=1, span=(9, 11)),
}


def test_exact_carry_rounds_come_last(seed):
    """The rounds are appended: without them, the same steps (a prefix); so are the
    op-lane and LRU rounds after them, the late-create rounds after those and the
    two-start rounds last."""
    old = table_steps(random.Random(seed), PARAMS, exact_carries=False, ops_and_lru=False,
                      late_create=False, two_starts=False)  # fmt: skip
    carries = table_steps(random.Random(seed), PARAMS, ops_and_lru=False, late_create=False,
                          two_starts=False)  # fmt: skip
    lru = table_steps(random.Random(seed), PARAMS, late_create=False, two_starts=False)
    late = table_steps(random.Random(seed), PARAMS, two_starts=False)
    new = table_steps(random.Random(seed), PARAMS)
    assert len(carries) > len(old) and carries[:len(old)] == old
    assert len(lru) > len(carries) and lru[:len(carries)] == carries
    assert len(late) > len(lru) and late[:len(lru)] == lru
    assert len(new) > len(late) and new[:len(late)] == late


#: a few minutes each on the Amaranth simulator (the whole stimulus, about 14,000 cycles)
@pytest.mark.soak
@pytest.mark.parametrize("fault", FAULTS)
def test_exact_carries_catch_a_follow_compare_fault(fault, seed):
    mutant = GreaterFault(**FAULTS[fault], **PARAMS)
    steps = table_steps(random.Random(seed), PARAMS)
    old = len(table_steps(random.Random(seed), PARAMS, exact_carries=False, ops_and_lru=False,
                          late_create=False, two_starts=False))  # fmt: skip
    mismatch = compare(mutant, PARAMS["lanes"], steps)
    assert mutant.greater_calls == 18, "the call order of the compare trees changed"
    assert mismatch is not None, f"seed {seed}: {fault} not caught in {len(steps)} cycles"
    print(f"{fault}: first mismatch at cycle {mismatch[0]} ({old} cycles without the rounds)")
