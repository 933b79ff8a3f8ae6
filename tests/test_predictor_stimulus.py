"""The table stimulus's op-lane rounds and LRU passes cover what they claim.

Issue 16: mutants 75 (set 23's LRU bit flipped by stage-D writes to other sets)
and 88 (an ``add`` PI in decode lane 2 taken for a non-PI) of the predictor RTL of
issue 15 survived ``table_match`` (docs/verification.md). The rounds appended for
them (cocotb_tests/predictor_stimulus.py: :func:`op_lane_rounds`,
:func:`lru_rounds`) must put a PI of every operation in every decode and fetch lane,
and evict in every set with either way the least recently updated one, with every
victim and every resident block fetched while it can skip.
"""

import random
from collections import defaultdict

from cocotb_tests.predictor_stimulus import table_steps
from hwprof.catalog import get_top
from hwprof.golden.isa_profile import CUSTOM2, PI_OPS, decode
from hwprof.golden.predictor import ProfileFlagPredictor

PARAMS = get_top("profile_flag_predictor").resolve({})


def _new_rounds(seed):
    """The steps of the op-lane rounds, of the LRU passes, and all of them."""
    marks = {}
    steps = table_steps(random.Random(seed), PARAMS, marks=marks)
    return steps[marks["op_lane"]:marks["lru"]], steps[marks["lru"]:], steps


def test_every_pi_op_in_every_lane(seed):
    op_steps, _, _ = _new_rounds(seed)
    lanes = PARAMS["lanes"]
    decoded, fetched, reserved = set(), set(), set()
    for st in op_steps:
        for lane, (insn, _pc, _flag) in enumerate(st.update):
            d = decode(insn)
            if d.is_pi:
                decoded.add((lane, d.op))
            elif insn & 0x707F == CUSTOM2:  # funct3 0 with a reserved bit: not a PI
                reserved.add(lane)
        fetched |= {(lane, decode(insn).op) for lane, (insn, _pc) in enumerate(st.fetch)
                    if decode(insn).is_pi}  # fmt: skip
    every = {(lane, op) for lane in range(lanes) for op in PI_OPS}
    assert decoded == every and fetched == every
    assert reserved == set(range(lanes))
    # each case's leader is fetched after it was learnt and unlocked: it skips
    assert sum(st.out.skip.bit_count() for st in op_steps) == lanes * len(PI_OPS)


class _Evictions(ProfileFlagPredictor):
    """The golden model, recording (cycle, set, way) of every valid entry replaced."""

    def __init__(self, **params):
        super().__init__(**params)
        self.cycle, self.evicted = 0, []

    def _update(self, pc, leader, flag, declared=None):
        _, index, tag = self._split(leader)
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
