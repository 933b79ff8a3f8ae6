"""bench/bench_same_set_hazards.py: its predictor variants and its quick run."""

import random

from bench.bench_same_set_hazards import DropSameSet, RecordingPredictor, main
from hwprof.golden.frontend import FrontEnd, basic_block_program
from hwprof.golden.isa_profile import Insn, encode
from hwprof.golden.predictor import ProfileFlagPredictor

PI = encode(Insn("pi", "lw", 0))


def _table(predictor):
    return [[(e.valid, e.tag, e.follow, e.pred, e.lock) for e in row] for row in predictor.table]


def _decode(cls, groups):
    """Decode ``groups`` (lists of ``(insn, pc, flag)``, one a cycle) with one lane."""
    predictor = cls(lanes=1, min_block=1)
    for group in groups:
        predictor.step(update=group)
    return predictor


def test_drop_same_set_drops_the_update_right_after_one_to_its_set():
    """Two PIs of one block decoded in consecutive cycles update one row: the second
    update is dropped, so the table is not the paper's."""
    groups = [[(PI, 0x400, 0)], [(PI, 0x404, 0)]]
    paper, drop = _decode(ProfileFlagPredictor, groups), _decode(DropSameSet, groups)
    assert drop.dropped == 1
    assert _table(drop) != _table(paper)


def test_drop_same_set_keeps_the_update_after_an_idle_cycle():
    """The same PIs with a cycle without decode between them: nothing is dropped and
    the table is the paper's."""
    groups = [[(PI, 0x400, 0)], [], [(PI, 0x404, 0)]]
    paper, drop = _decode(ProfileFlagPredictor, groups), _decode(DropSameSet, groups)
    assert drop.dropped == 0
    assert _table(drop) == _table(paper)


def test_recording_predictor_only_observes(seed):
    """The recording predictor predicts what the paper's does, cycle by cycle."""
    program = basic_block_program(random.Random(seed), toggle_rate=0.5)
    runs = []
    for model in (ProfileFlagPredictor, RecordingPredictor):
        frontend = FrontEnd(program, lanes=4, seed=seed, predictor={}, predictor_model=model)
        frontend.run(2000)
        runs.append(frontend)
    paper, recorded = runs
    assert [s.out for s in recorded.predictor_trace] == [s.out for s in paper.predictor_trace], \
        f"seed {seed}"
    sets = recorded.predictor.cycle_sets
    assert len(sets) == len(recorded.predictor_trace) and any(sets), f"seed {seed}"


def test_quick_run_prints_three_tables(capsys):
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("| --- |") == 3
    assert "| xz | 20,000 |" in out and "| row updates dropped | 0 |" in out
