"""``hwprof experiment selective-dispatch-programs`` (quick size, a shipped trace)."""

import json
from pathlib import Path

import numpy as np
import pytest

from hwprof.experiments import all_experiments
from hwprof.experiments import dispatch_programs as dp
from hwprof.experiments.dispatch_programs import (
    _accuracy,
    load_program,
    program_from_blocks,
    simulate,
)
from hwprof.golden.predictor import ProfileFlagPredictor
from hwprof.traces.tracefile import CALL, RETURN, TraceError, open_trace
from hwprof.traces.workloads import SHIPPED_DIR

TRACE = SHIPPED_DIR / "bzip2.trace"


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
    # the runtime has the resetpf patched to setpf in the first fraction of each period;
    # a block sees the flag its method call set at entry (Fig. 3), the entry being the
    # instruction count at the block after the call, from the trace's calls and returns
    rng = np.random.default_rng(seed)
    period, q = int(rng.integers(10_000, 100_000)), float(rng.choice([0.1, 0.25, 0.5]))
    phase = int(rng.integers(0, period))
    with open_trace(TRACE) as trace:
        chunks = list(trace.chunks(kinds="branches", columns=("kind",)))
    kind = np.concatenate([c.kind for c in chunks])[1:]  # block i ends with transfer i + 1
    before = np.cumsum(program["insns"]) - program["insns"]
    entered, stack = np.zeros(len(before), np.int64), [0]
    for i in range(len(before)):
        entered[i] = stack[-1]
        if kind[i] == CALL and i + 1 < len(before):
            stack.append(before[i + 1])
        elif kind[i] == RETURN and len(stack) > 1:
            stack.pop()
    hot = np.isin(program["method"], list(program["hot"]))
    on = ((entered[hot] + phase) % period) < q * period
    row = simulate(program, "basic_block", q, period, phase, False)
    assert row["pi_dispatched"] == dp.COUNTER_PIS * int(on.sum())
    assert row["pi_fetched"] == dp.COUNTER_PIS * int(hot.sum())


def _calls_and_returns(methods, cycle=20):
    """A block program from (method, blocks) steps: a step into a new method is a call
    from the previous step's last block, a step back to the caller a return; every block
    runs 10 instructions; a method's blocks cycle through ``cycle`` start addresses."""
    start, kind, addr, stack = [], [], [], []
    for n, (m, blocks) in enumerate(methods):
        for b in range(blocks):
            start.append(0x10_000 * (m + 1) + 64 * (b % cycle))
            kind.append(0)
            addr.append(0)
        if n + 1 < len(methods):
            nxt = methods[n + 1][0]
            if stack and stack[-1] == nxt:
                stack.pop()
                kind[-1] = RETURN
            else:
                stack.append(m)
                kind[-1], addr[-1] = CALL, 0x10_000 * (nxt + 1)
    return program_from_blocks(np.array(start), np.full(len(start), 10), np.array(kind),
                               np.array(addr))  # fmt: skip


def test_a_method_call_keeps_the_flag_it_was_entered_with():
    # 50 blocks of an outer method (500 instructions), then one call of a hot method of
    # 1,000 blocks (10,000 instructions), then the outer method again
    prog = _calls_and_returns([(0, 50), (1, 1000), (0, 50)])
    assert prog["calls"].tolist() == [[50, 0, 1]] and prog["hot"] == {1}
    # period 1,000, on in its first 250: entered at instruction 500, in the off part,
    # the method's resetpf stays: none of its blocks is profiled, though the period
    # turns on again ten times while it runs (sec. III-C: the setpf/resetpf executed on
    # the next entry into the unit of code decides)
    off = simulate(prog, "basic_block", 0.25, 1000, 0, False)
    assert off["executions"] == 1000 and off["pi_fetched"] == 5 * 1000
    assert off["pi_dispatched"] == 0 and off["accuracy"] is None
    # phase 600: entered at 1,100 = 100 into a period, patched to setpf: every block is
    # profiled, also those after the period has turned off
    on = simulate(prog, "basic_block", 0.25, 1000, 600, False)
    assert on["pi_dispatched"] == 5 * 1000 and on["accuracy"] == 100.0


def test_poppf_gives_the_caller_back_its_flag():
    # hot method 1 (100 blocks from instruction 500) calls hot method 2 at 1,500 (100
    # blocks), which returns to 100 more blocks of method 1; period 2,000 on for 500,
    # phase 1,600: method 1 is entered at 2,100 (on, setpf), method 2 at 3,100 (off,
    # resetpf); its poppf restores method 1's set flag for the rest of that call
    prog = _calls_and_returns([(0, 50), (1, 100), (2, 100), (1, 100), (0, 50)])
    assert prog["hot"] == {1, 2}
    row = simulate(prog, "basic_block", 0.25, 2000, 1600, False)
    assert row["pi_dispatched"] == 5 * 200  # method 1's 200 blocks, none of method 2's
    # full profile: 20 blocks of method 1 run 10 times each, 20 of method 2 5 times each
    # (300); sampled: method 1's only (200); MD = 20 (1/20 - 1/30) + 20 / 60 = 2/3
    assert row["accuracy"] == pytest.approx((1 - (2 / 3) / 2) * 100)


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
    from hwprof.traces.tracefile import LOAD, TraceWriter

    path = tmp_path / "loads.trace"
    with TraceWriter(path, header={"program": "x"}) as writer:
        writer.write(kind=np.full(3, LOAD, np.uint8), size=np.full(3, 8, np.uint8),
                     pc=np.arange(3, dtype=np.uint64), addr=np.arange(3, dtype=np.uint64),
                     value=np.arange(3, dtype=np.uint64))  # fmt: skip
    with pytest.raises(TraceError, match="no control-transfer records"):
        load_program(path)


def _one_long_call():
    """outer -> f (6 blocks), outer -> g (2 blocks), outer -> f (1 block); 10 insns each."""
    J = 3  # an ordinary transfer (jump)
    kind = [CALL, J, J, J, J, J, RETURN, CALL, J, RETURN, CALL, RETURN, J]
    addr = [0x100, 0, 0, 0, 0, 0, 0, 0x200, 0, 0, 0x100, 0, 0]
    n = len(kind)
    return program_from_blocks(np.arange(n) * 64, np.full(n, 10), np.array(kind),
                               np.array(addr))  # fmt: skip


def test_long_call_figures_of_a_constructed_program():
    prog = _one_long_call()
    lc = dp.long_call(prog, {20: [0, 5]})
    # 9 hot executions (blocks 1-6 in the first call of f, 8-9 in g, 11 in f again)
    assert lc["share"] == pytest.approx(6 / 9) and lc["calls"] == 3
    assert lc["entered"] == 10 and lc["last"] == 60  # instructions before blocks 1 and 6
    # distances from the call's entry: 0..50 in steps of 10, 0, 10, 0 -> median 10
    assert lc["median_from_entry"] == 10
    # the first call of f is entered at 10: on at 50% of 20 with phase 5 ((10+5)%20 < 10
    # is false: off), phase 0 (10 % 20 = 10: off) -> never on
    assert [e["on"] for e in lc["on"] if e["profiling"] == 0.5] == [0]


def test_flag_at_entry_against_the_flag_per_block():
    prog = _one_long_call()
    # period 20, 50%, phase 0: on iff the count is 0-9 mod 20. At entry: f's first call
    # (entered at 10) off, g (80) on for its 2 blocks, f's second call (110) off -> 2 on.
    # Per block: blocks at 20, 40, 60 (f) and 80 (g) on -> 4 on.
    entry = simulate(prog, "basic_block", 0.5, 20, 0, False)
    block = simulate(prog, "basic_block", 0.5, 20, 0, False, flag_at="block")
    assert entry["pi_dispatched"] == 2 * dp.COUNTER_PIS
    assert block["pi_dispatched"] == 4 * dp.COUNTER_PIS
    with pytest.raises(ValueError):
        simulate(prog, "basic_block", 0.5, 20, 0, False, flag_at="exit")


def test_the_reading_is_generated_from_the_result(tmp_path, seed):
    all_experiments()["selective-dispatch-programs"].run(tmp_path, seed, quick=True,
                                                        traces=[TRACE])  # fmt: skip
    result = json.loads((tmp_path / "selective-dispatch-programs-quick.json").read_text())
    lc = result["programs"][0]["long_call"]
    assert {"share", "entered", "last", "median_from_entry", "on", "per_block"} <= set(lc)
    text = (tmp_path / "selective-dispatch-programs-quick.md").read_text()
    assert f"{100 * lc['share']:.1f}%" in text  # the table reads the JSON's figure
    # the reading is a function of the JSON alone: a changed figure changes the prose
    assert dp._reading(result) == result["reading"]
    result["programs"][0]["long_call"]["median_from_entry"] = 123_456_789
    assert "123,456,789" in dp._reading(result) or "123.5 M" in dp._reading(result)


def test_page_reads_the_papers_figures_from_the_record():
    """The paper's averages, per-program figures, period and window on the page come from
    the record's ``paper`` (the committed record as input), not from the module."""
    import copy

    path = Path(__file__).resolve().parent.parent / "docs/results"
    path /= "selective-dispatch-programs.json"
    record = json.loads(path.read_text())
    page = dp._markdown(record, "selective-dispatch-programs")
    assert "(the paper's window: 100 M)" in page and "(the paper: 20 M, swept" in page
    assert "the paper's 255.bzip2: 99.92 / 99.94 / 99.98%" in page
    other = copy.deepcopy(record)
    other["paper"]["period"], other["paper"]["window"] = 10_000_000, 50_000_000
    other["paper"]["programs"]["bzip2"]["basic_block"] = [90.0, 91.0, 92.0]
    other["paper"]["averages"]["basic_block"]["accuracy"] = [None, 80.0, 85.0, 88.0, None]
    other["beside"], other["reading"] = dp._beside(other), dp._reading(other)
    page = dp._markdown(other, "selective-dispatch-programs")
    assert "(the paper's window: 50 M)" in page and "(the paper: 10 M, swept" in page
    assert "the paper's 255.bzip2: 90.00 / 91.00 / 92.00%" in page
    assert "against the paper's 80.00 / 85.00 / 88.00%" in page
    assert "| basic block | 10% | 14.35 |" in page and "| 80.00 |" in page
    assert "99.92" not in page and "89.07" not in page
