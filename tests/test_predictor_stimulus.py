"""The table stimulus's op-lane rounds and LRU passes cover what they claim.

Issue 16: mutants 75 (set 23's LRU bit flipped by stage-D writes to other sets)
and 88 (an ``add`` PI in decode lane 2 taken for a non-PI) of the predictor RTL of
issue 15 survived ``table_match`` (docs/verification.md). The rounds appended for
them (hwprof/cocotb_tests/predictor_stimulus.py: :func:`op_lane_rounds`,
:func:`lru_rounds`) must put a PI of every operation in every decode and fetch lane,
and evict in every set with either way the least recently updated one, with every
victim and every resident block fetched while it can skip.

Issue 16 on the RTL of 62a9144: mutants 23 (lane 2's eligibility in the no-hit
hypothesis forced to "not flagged") and 26 (fetch lane 2's valid bit of set 29 way 1
inverted while set 57's way 0 is clear) survived. The late-create rounds
(:func:`late_create_rounds`) create entries at a PI after the leader in every lane,
with a later lane below it; the reset passes (:func:`reset_passes`) fill the sets
again after a reset, in two orders, against the memory's old blocks.
"""

import random
from collections import defaultdict

from hwprof.catalog import get_top
from hwprof.cocotb_tests.predictor_stimulus import reset_passes, table_steps
from hwprof.golden.isa_profile import CUSTOM2, PI_OPS, decode
from hwprof.golden.predictor import ProfileFlagPredictor

PARAMS = get_top("profile_flag_predictor").resolve({})


def _new_rounds(seed):
    """The steps of the op-lane rounds, of the LRU passes, and all of them up to
    the LRU passes' end."""
    marks = {}
    steps = table_steps(random.Random(seed), PARAMS, marks=marks)
    return (steps[marks["op_lane"]:marks["lru"]], steps[marks["lru"]:marks["late_create"]],
            steps[:marks["late_create"]])


def test_every_pi_op_in_every_lane(seed):
    op_steps, _, _ = _new_rounds(seed)
    lanes = PARAMS["lanes"]
    decoded, fetched, reserved = set(), set(), set()
    last_k = None
    for st in op_steps:
        for lane, (insn, _pc, _flag) in enumerate(st.update):
            d = decode(insn)
            if d.is_pi:
                decoded.add((lane, d.op))
                last_k = d.k
            elif insn & 0x707F == CUSTOM2:  # funct3 0 with a reserved bit: not a PI
                reserved.add(lane)
                # of the block's type: a decoder taking it for a PI extends the block
                assert insn >> 29 == last_k
        fetched |= {(lane, decode(insn).op) for lane, (insn, _pc) in enumerate(st.fetch)
                    if decode(insn).is_pi}  # fmt: skip
    every = {(lane, op) for lane in range(lanes) for op in PI_OPS}
    assert decoded == every and fetched == every
    assert reserved == set(range(lanes))
    # each case's leader is fetched after it was learnt and unlocked: it skips
    assert sum(st.out.skip.bit_count() for st in op_steps) == lanes * len(PI_OPS)


class _ReservedAsPi(ProfileFlagPredictor):
    """The golden model with a fetch decoder that takes a custom-2 word of funct3 0 with a
    reserved bit set for a PI (a mutant of the predictor RTL's fetch decode)."""

    def fetch_lane(self, insn, pc):
        if insn & 0x707F == CUSTOM2:
            insn &= ~(0xF << 25)  # the reserved bits cleared: an add PI
        return super().fetch_lane(insn, pc)


def test_reserved_words_fetched_in_every_lane_at_a_leader(seed):
    # the op-lane rounds fetch a reserved-bit word at a learnt leader in every lane:
    # a fetch decoder that takes it for a PI predicts a skip there
    marks = {}
    steps = table_steps(random.Random(seed), PARAMS, marks=marks)
    op_steps = steps[marks["op_lane"]:marks["lru"]]  # fmt: skip
    reserved = {lane for st in op_steps for lane, (insn, _pc) in enumerate(st.fetch)
                if insn & 0x707F == CUSTOM2 and not decode(insn).is_pi}  # fmt: skip
    assert reserved == set(range(PARAMS["lanes"]))
    mutant = _ReservedAsPi(**{**PARAMS, "fetch_latency": 0})
    outs = [mutant.step(fetch=st.fetch, update=st.update, squash=st.squash) for st in steps]
    differ = [n for n, (out, st) in enumerate(zip(outs, steps, strict=True)) if out != st.out]
    assert differ and marks["op_lane"] <= differ[0] < marks["lru"]


class _Evictions(ProfileFlagPredictor):
    """The golden model, recording (cycle, set, way) of every valid entry replaced."""

    def __init__(self, **params):
        super().__init__(**params)
        self.cycle, self.evicted = 0, []

    def _update(self, pc, leader, flag, declared=None):
        _, index, tag = self.split(leader)
        before = [(e.valid, e.tag) for e in self.table[index]]
        super()._update(pc, leader, flag, declared)
        for way, entry in enumerate(self.table[index]):
            if before[way][0] and before[way][1] != entry.tag:
                self.evicted.append((self.cycle, index, way))

    def step(self, fetch=(), update=(), squash=0):
        self.cycle += 1
        return super().step(fetch, update, squash)


def test_lru_passes_evict_either_way_in_every_set(seed):
    _, lru_steps, steps = _new_rounds(seed)
    model = _Evictions(**PARAMS)
    for st in steps:
        model.step(st.fetch, st.update, st.squash)
    start = len(steps) - len(lru_steps)
    ways = defaultdict(set)
    for cycle, index, way in model.evicted:
        if cycle > start:
            ways[index].add(way)
    assert all(ways[s] == {0, 1} for s in range(PARAMS["sets"])), dict(ways)
    # every pass but the first fetches its victims (no skip) and the two blocks each
    # set holds (a skip each): 2 * sets skips per pass after the first, sets in it
    skips = sum(st.out.skip.bit_count() for st in lru_steps)
    assert skips == PARAMS["sets"] * (1 + 2 * 11)


def test_late_create_rounds(seed):
    """Every creating lane ``cl`` after dispatched lanes (or the leader in the register),
    with a later lane ``i`` below it and above it; every block skips when fetched."""
    marks = {}
    steps = table_steps(random.Random(seed), PARAMS, marks=marks)
    late = steps[marks["late_create"]:marks["two_starts"]]  # fmt: skip
    lanes = PARAMS["lanes"]
    seen = set()
    for st in late:
        group = [(decode(insn), pc, flag) for insn, pc, flag in st.update]
        if len(group) < lanes or not all(d.is_pi for d, _, _ in group):
            continue
        cl = next(n for n, (_, _, flag) in enumerate(group) if not flag)
        assert all(flag for _, _, flag in group[:cl])
        for i in range(cl + 1, lanes):
            below = group[i][1] < group[cl][1]
            seen.add((cl, i, below))
    cases = {(cl, i) for cl in range(lanes) for i in range(cl + 1, lanes)}
    assert seen == {(cl, i, below) for cl, i in cases for below in (False, True)}
    # (cl, i) with the leader in the register: every pair; in lane 0: cl > 0
    created = len(cases) + sum(1 for cl, _ in cases if cl > 0)
    assert sum(st.out.skip.bit_count() for st in late) == 2 * created


def test_two_start_rounds(seed):
    """Every pair of lanes a < b - 1 starts two blocks in one group (PIs in lanes a and
    b only, b's at least min_block words above a's); the block of lane a, fetched after
    its leader unlocked it, does not skip (its follow is its leader's word + 1)."""
    marks = {}
    steps = table_steps(random.Random(seed), PARAMS, marks=marks)
    rounds = steps[marks["two_starts"]:]  # fmt: skip
    lanes = PARAMS["lanes"]
    pairs, fetched = set(), 0
    for st in rounds:
        pis = [(n, pc) for n, (insn, pc, _f) in enumerate(st.update) if decode(insn).is_pi]
        if len(st.update) == lanes and len(pis) == 2 and pis[1][0] > pis[0][0] + 1:
            assert pis[1][1] - pis[0][1] >= 4 * PARAMS["min_block"]
            pairs.add((pis[0][0], pis[1][0]))
        fetched += sum(decode(insn).is_pi for insn, _pc in st.fetch)
    assert pairs == {(a, b) for a in range(lanes) for b in range(a + 2, lanes)}
    assert fetched == len(pairs) and not any(st.out.skip for st in rounds)

def test_reset_passes(seed):
    """After each reset the old blocks do not skip; each block filled again skips in
    every fetch lane."""
    first, *later = reset_passes(random.Random(seed), PARAMS)
    assert len(later) == 2 and not any(st.out.skip for st in first)
    for steps in later:
        assert sum(st.out.skip.bit_count() for st in steps) == (
            PARAMS["lanes"] * PARAMS["ways"] * PARAMS["sets"])
        # the first fetches (every old block in every lane, before any fill) skip nothing
        fill = next(n for n, st in enumerate(steps) if st.update)
        assert fill >= PARAMS["lanes"] * PARAMS["ways"] * PARAMS["sets"] // 2
        assert not any(st.out.skip for st in steps[:fill])
