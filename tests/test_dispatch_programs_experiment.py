"""``hwprof experiment selective-dispatch-programs`` (quick size, a shipped trace)."""

import json
from pathlib import Path

import numpy as np
import pytest

from hwprof.experiments import all_experiments
from hwprof.experiments import dispatch_programs as dp
from hwprof.experiments.dispatch_programs import _accuracy, load_program, simulate
from hwprof.golden.predictor import ProfileFlagPredictor
from hwprof.golden.tracefile import TraceError

TRACE = Path("traces/bzip2.trace")
pytestmark = pytest.mark.skipif(not TRACE.exists(), reason="shipped traces not present")


@pytest.fixture(scope="module")
def program():
    return load_program(TRACE, 200_000)


def test_blocks_methods_and_calls_come_from_the_trace(program):
    assert program["instructions"] >= 200_000 and len(program["hot"]) == 10
    assert (program["insns"] >= 1).all()
    # every call event names a callee whose first block follows it
    assert len(program["calls"]) > 100 and (program["calls"][:, 2] > 0).all()


def test_accuracy_is_the_manhattan_measure():
    # full 3:1, sampled 1:1 -> MD = 0.5 -> 75%
    assert _accuracy(np.array([3.0, 1.0]), np.array([1.0, 1.0])) == 75.0
    assert _accuracy(np.array([3.0, 1.0]), np.array([0.0, 0.0])) is None


def test_selective_dispatch_and_prediction_on_real_blocks(program, seed):
    phase = seed % 50_000
    rows = {(k, q, p): simulate(program, k, q, 50_000, phase, p)
            for k in ("basic_block", "callgraph") for q in (0.0, 0.25, 1.0)
            for p in (False, True)}  # fmt: skip
    bb = {(q, p): rows[("basic_block", q, p)] for q in (0.0, 0.25, 1.0) for p in (False, True)}
    # selective dispatch alone: fetch does not depend on the sampling fraction
    assert len({bb[(q, False)]["pi_fetched"] for q in (0.0, 0.25, 1.0)}) == 1
    assert bb[(0.0, False)]["pi_dispatched"] == 0
    assert bb[(1.0, False)]["pi_dispatched"] == bb[(1.0, False)]["pi_fetched"]
    # the predictor skips counters while profiling is off, never while always on
    assert bb[(0.0, True)]["pi_fetched"] < 0.5 * bb[(0.0, False)]["pi_fetched"]
    assert bb[(1.0, True)]["skips"] == 0
    for q in (0.0, 0.25, 1.0):  # the profile is the same with and without it
        assert bb[(q, True)]["pi_dispatched"] == bb[(q, False)]["pi_dispatched"]
        assert bb[(q, True)]["accuracy"] == bb[(q, False)]["accuracy"]
    # call-graph blocks (3 PIs) are shorter than min_block: never skipped
    assert all(rows[("callgraph", q, True)]["skips"] == 0 for q in (0.0, 0.25, 1.0))


def test_quick_run_writes_results(tmp_path, seed):
    experiment = all_experiments()["selective-dispatch-programs"]
    assert experiment.takes_traces
    headline = experiment.run(tmp_path, seed, quick=True, traces=[TRACE])
    stem = "selective-dispatch-programs-quick"
    result = json.loads((tmp_path / f"{stem}.json").read_text())
    # 2 kinds x 2 (predictor or not) x (0% and 100% once, 3 fractions x each period)
    assert len(result["rows"]) == 2 * 2 * (2 + 3 * len(dp.PERIODS))
    assert (tmp_path / f"{stem}.png").exists()
    assert all(len(r["phases"]) == dp.SEEDS for r in result["rows"] if r["period"])
    text = (tmp_path / f"{stem}.md").read_text()
    assert "41.81" in text and "12.52" in text  # the paper's figures beside ours
    assert headline["basic_block_25pct_slots"]["predictor:bzip2"] < \
        headline["basic_block_25pct_slots"]["dispatch_only:bzip2"]


def _fresh(program):
    """The program without the per-kind caches (memoized transitions included)."""
    return {k: v for k, v in program.items() if not k.startswith("_")}


@pytest.mark.parametrize("kind", ["basic_block", "callgraph"])
def test_memoized_predictor_equals_the_golden_model_on_every_execution(program, kind, seed):
    rng = np.random.default_rng(seed)
    prog = _fresh(program)
    for q in (0.0, 0.1, 0.5, 1.0):
        period = int(rng.integers(20_000, 80_000))
        phase = int(rng.integers(0, period))
        memo = simulate(prog, kind, q, period, phase, True, engine="memo")
        golden = simulate(prog, kind, q, period, phase, True, engine="golden")
        assert memo == golden, (q, period, phase)
    if kind == "basic_block":  # the comparison has something to compare
        assert simulate(prog, kind, 0.0, 50_000, 0, True)["skips"] > 1000
        assert simulate(prog, kind, 0.5, 50_000, 0, True)["flag_mispredicts"] > 0


def test_the_memo_runs_the_golden_model(program, monkeypatch):
    # a mutant of the golden model (the follow field never grows: every block stays
    # one PI long, below min_block) must show in the memoized results: no skips
    before = simulate(_fresh(program), "basic_block", 0.0, 50_000, 0, True)["skips"]
    monkeypatch.setattr(ProfileFlagPredictor, "_grows", staticmethod(lambda *a: False))
    after = simulate(_fresh(program), "basic_block", 0.0, 50_000, 0, True)["skips"]
    assert before > 1000 and after == 0


def test_profiling_is_on_in_the_first_fraction_of_each_period(program, seed):
    rng = np.random.default_rng(seed)
    period, q = int(rng.integers(10_000, 100_000)), float(rng.choice([0.1, 0.25, 0.5]))
    phase = int(rng.integers(0, period))
    before = np.cumsum(program["insns"]) - program["insns"]
    hot = np.isin(program["method"], list(program["hot"]))
    on = ((before[hot] + phase) % period) < q * period
    row = simulate(program, "basic_block", q, period, phase, False)
    assert row["pi_dispatched"] == dp.COUNTER_PIS * int(on.sum())
    assert row["pi_fetched"] == dp.COUNTER_PIS * int(hot.sum())


def test_factorize_numbers_values_in_order_of_first_appearance(seed):
    rng = np.random.default_rng(seed)
    for distinct in (5, 40_000):  # the second overflows the hash table: sorted instead
        values = rng.integers(0, 1 << 40, distinct)[rng.integers(0, distinct, 100_000)]
        ids, uniques = dp._factorize(values)
        assert np.array_equal(uniques[ids], values)
        assert len(uniques) == len(np.unique(values))
    ids, uniques = dp._factorize(np.array([7, 3, 7, 9, 3]))
    assert ids.tolist() == [0, 1, 0, 2, 1] and uniques.tolist() == [7, 3, 9]


def test_a_trace_without_branches_is_one_error(tmp_path):
    from hwprof.golden.tracefile import LOAD, TraceWriter

    path = tmp_path / "loads.trace"
    with TraceWriter(path, header={"program": "x"}) as writer:
        writer.write(kind=np.full(3, LOAD, np.uint8), size=np.full(3, 8, np.uint8),
                     pc=np.arange(3, dtype=np.uint64), addr=np.arange(3, dtype=np.uint64),
                     value=np.arange(3, dtype=np.uint64))  # fmt: skip
    with pytest.raises(TraceError, match="no control-transfer records"):
        load_program(path)
