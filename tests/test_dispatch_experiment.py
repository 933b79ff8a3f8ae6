"""``hwprof experiment selective-dispatch`` (quick size) and its building blocks."""

import json
import random

from hwprof.experiments import all_experiments
from hwprof.experiments.selective_dispatch import (
    SETPF,
    instrumented_program,
    profile_accuracy,
    toggle_patches,
)  # fmt: skip
from hwprof.golden.isa_profile import decode


def test_toggle_patches_follow_the_sampling_fraction():
    patches = toggle_patches([0x10], 0.25, 1000, 2000)
    on = [(t, w == SETPF) for t, _, w in patches]
    assert on[:4] == [(0, True), (250, False), (1000, True), (1250, False)]


def test_profile_accuracy_is_the_manhattan_measure():
    program, _ = instrumented_program(random.Random(1), methods=1, blocks=2)
    leaders = sorted(pc for pc, w in program.words.items()
                     if decode(w).is_pi and not decode(program.word(pc - 4)).is_pi)  # fmt: skip
    assert len(leaders) == 2  # one counter per block
    a, b = leaders[:2]
    # full counts 3:1; sampled 1:1 -> MD = |0.75-0.5| + |0.25-0.5| = 0.5 -> 75%
    log = [(a, True), (a, False), (a, False), (b, True)]
    assert profile_accuracy(program, log) == 75.0


def test_quick_experiment(tmp_path):
    summary = all_experiments()["selective-dispatch"].run(tmp_path, 3, True)
    result = json.loads((tmp_path / "selective-dispatch-quick.json").read_text())
    assert (tmp_path / "selective-dispatch-quick.png").stat().st_size > 0
    assert "| 25% | yes |" in (tmp_path / "selective-dispatch-quick.md").read_text()
    by = {(r["profiling"], r["predictor"]): r for r in result["rows"]}
    for predictor in (False, True):
        assert by[(0.0, predictor)]["pi_dispatched"] == 0
        assert by[(1.0, predictor)]["pi_dispatched"] == by[(1.0, predictor)]["pi_decoded"]
        dispatched = [by[(q, predictor)]["pi_dispatched"] for q in (0.0, 0.1, 0.25, 0.5, 1.0)]
        assert dispatched == sorted(dispatched)
    assert all(r["genuine_skipped"] == 0 for r in result["rows"])
    # profiling off: the predictor skips most counters (only leaders are fetched)
    assert by[(0.0, True)]["pi_fetched"] < 0.5 * by[(0.0, False)]["pi_fetched"]
    assert summary["pi_fetched_25pct"]["with_predictor"] < \
        summary["pi_fetched_25pct"]["dispatch_only"]
