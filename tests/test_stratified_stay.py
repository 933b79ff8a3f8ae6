"""``hwprof experiment stratified-stay``: the generator's values per load against its
definition, the selection's growth and the strata's occupancy on hand-made streams, the
verdicts on hand-made records, and the quick run end to end."""

import json
import math

import numpy as np
import pytest

from hwprof.cli import main
from hwprof.experiments import stratified_conditions as sc
from hwprof.experiments import stratified_long as sl
from hwprof.experiments import stratified_stay as st
from hwprof.experiments.stratified_values import IdealProfile
from hwprof.golden import compressors_fast as cf
from hwprof.golden.hashing import pack_key


def per_load_values(keys):
    """pc -> {value: count}."""
    out = {}
    for k, c in zip(*np.unique(keys, return_counts=True), strict=True):
        out.setdefault(int(k) >> 32, {})[int(k) & 0xFFFFFFFF] = int(c)
    return out


@pytest.mark.parametrize("m", [0, 1, 3])
def test_rest_values_per_load(m, seed):
    keys = sc.value_stream(seed, 200_000, 20, 1.0, "iid", "few", rest_values=m)
    loads = per_load_values(keys)
    hot = [v for v in loads.values() if sum(v.values()) >= 5_000]
    assert hot, f"seed {seed}: no load with 5,000 executions"
    for values in loads.values():
        assert len(values) <= m + 2, f"seed {seed}"
    for values in hot:
        counts = sorted(values.values(), reverse=True)
        n = sum(counts)
        # every value of a hot load is drawn: the top two and the m others
        assert len(counts) == m + 2, f"seed {seed}"
        assert counts[0] >= 0.4 * n * 0.95, f"seed {seed}: the invariant value's share"
        if m == 0:
            continue
        # the second value has half the rest, the m others share the other half equally
        rest = counts[1:]
        second = max(rest)
        others = sorted(rest)[:-1]
        assert second == pytest.approx(sum(others), rel=0.25, abs=60), f"seed {seed}"
        assert max(others) - min(others) <= 0.25 * np.mean(others) + 60, f"seed {seed}"


def test_rest_values_default_is_the_sweeps_few():
    a = sc.value_stream(3, 30_000, 50, 1.0, "iid", "few")
    assert np.array_equal(a, sc.value_stream(3, 30_000, 50, 1.0, "iid", "few", rest_values=6))
    assert not np.array_equal(a, sc.value_stream(3, 30_000, 50, 1.0, "iid", "few", rest_values=5))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "6"])
def test_rest_values_must_be_a_whole_number(bad):
    with pytest.raises(ValueError, match="rest_values"):
        sc.value_stream(1, 100, 10, 1.0, "iid", "few", rest_values=bad)


def key(pc, value):
    return pack_key(pc, value, 32)


def entering_stream(entering: int, flat: int) -> np.ndarray:
    """Blocks of 2000 events: in block k < ``entering``, 1000 executions of load k (one
    value), then 1000 of a filler load (a new value each time: never selected); then
    ``flat`` blocks of filler only. Load k passes the filters from event 2000 k + 1000."""
    keys, fresh = [], 0
    for block in range(entering + flat):
        if block < entering:
            keys += [key(0x100 + block, 7)] * 1000
            filler = 1000
        else:
            filler = 2000
        for _ in range(filler):
            fresh += 1
            keys.append(key(0xF, fresh))
    return np.array(keys, dtype=np.uint64)


def test_selected_loads_and_growth_on_a_hand_made_stream():
    keys = entering_stream(10, 10)
    cps = list(range(2000, 40_001, 2000))
    sel = st.selected_loads(IdealProfile(keys, cps))
    # at checkpoint 2000 j the loads 0..j-1 have 1000 executions; none after the 10th
    assert sel == [min(j, 10) for j in range(1, 21)]
    g = st.growth(cps, sel)
    assert g["final"] == 10
    assert g["exhausted_at"] == 20_000  # 10 >= 0.95 * 10 from there on
    assert g["half_at"] == 10_000
    assert g["late_growth"] == pytest.approx(1.0)  # 10 at the 20,000-th event
    assert g["slope"] == pytest.approx(1.0)  # j loads at 2000 j
    # 5 of the final 10 selected by the 10,000-th event: half enter after it
    assert st.entering_after(cps, sel, after=10_000) == pytest.approx(0.5)
    assert st.entering_after(cps, sel, after=1_000) is None  # no checkpoint by then


def test_growth_of_a_selection_still_entering_at_the_end():
    cps = list(range(2000, 40_001, 2000))
    sel = st.selected_loads(IdealProfile(entering_stream(20, 0), cps))
    assert sel == list(range(1, 21))
    g = st.growth(cps, sel)
    assert g["late_growth"] == pytest.approx(2.0)  # 20 against 10 at half the run
    assert g["exhausted_at"] == 38_000  # 19 = 0.95 * 20
    # a growth measure that is wrong by one checkpoint fails the hand-made values
    assert st.growth(cps, [0] + sel[:-1])["late_growth"] != pytest.approx(2.0)


def test_growth_and_plateau_on_hand_made_lists():
    cps = [10, 20, 30, 40, 50]
    sel = [0, 1, 5, 9, 10]
    g = st.growth(cps, sel)
    assert g["half_at"] == 30 and g["exhausted_at"] == 50
    assert g["late_growth"] == pytest.approx(10 / 1)  # 20: the last checkpoint <= 50 / 2
    # plateau: checkpoints with 1 <= selected < 9.5: 20, 30, 40 -> errors 8, 6, 7
    assert st.plateau(cps, [None, 8.0, 6.0, 7.0, 1.0], sel) == 7.0
    assert st.plateau(cps, [None] * 5, sel) is None


def same_stratum_keys(count: int, bits: int, seed: int) -> list[int]:
    """``count`` tuples of one load whose hash index (the table's own hash) is equal."""
    candidates = np.array([key(0x40, v) for v in range(1, 4000)], dtype=np.uint64)
    index = cf.hash_index(candidates, bits, seed)
    target = index[0]
    return [int(k) for k in candidates[index == target][:count]]


def test_strata_occupancy_by_hand():
    a, b = same_stratum_keys(2, 4, seed=3)
    keys = np.array([a] * 3000 + [b] * 1000, dtype=np.uint64)
    occ = st.strata_occupancy(keys, seed=3, index_bits=4)
    assert occ["occupied"] == 1
    assert occ["tuples_per_stratum"] == 2.0
    # one stratum of counts 3000 and 1000: (4000^2) / (3000^2 + 1000^2) = 1.6
    assert occ["effective"] == pytest.approx(1.6)
    # the load executes 4000 times; a is 75 %, b 25 %: both selected, the same stratum
    assert occ["selected_effective"] == pytest.approx(1.6)
    single = st.strata_occupancy(np.array([a] * 1500, dtype=np.uint64), seed=3, index_bits=4)
    assert single["effective"] == 1.0 and single["tuples_per_stratum"] == 1.0


def test_ratio_bounds():
    events, first = 1000, 10
    assert sl.ratio_bounds(300, 100, events, first) == (3.0, 3.0)
    assert sl.ratio_bounds(300, 10, events, first) == (30.0, math.inf)  # H at the first
    assert sl.ratio_bounds(10, 100, events, first) == (0.0, 0.1)  # R at the first
    assert sl.ratio_bounds(None, 100, events, first) == (10.0, math.inf)
    assert sl.ratio_bounds(300, None, events, first) == (0.0, 0.3)
    assert sl.ratio_bounds(None, None, events, first) == (0.0, math.inf)


def test_verdict_on_hand_made_bounds():
    stay, reach = (23.0, 23.0), (3.0, 3.5)
    assert sl.spread_verdict([(20, 20), (26, 26)], stay) == sl.REPRODUCED
    assert sl.spread_verdict([(2, 2), (4, 4), (12, 12)], stay) == sl.DIFFERS
    assert sl.spread_verdict([(30, 30), (40, math.inf)], stay) == sl.DIFFERS
    assert sl.spread_verdict([(10, 10), (5, math.inf)], stay) == sl.UNDECIDED
    assert sl.spread_verdict([(2.9, 2.9), (3.6, 3.6)], reach) == sl.REPRODUCED
    assert sl.spread_verdict([(1, 1), (2.9, 2.9)], reach) == sl.DIFFERS


def seed_record(reach_r, reach_h, stay_r, stay_h, selected=(1, 2, 2)):
    run = {
        "R_256": {"errors": [9.0, 6.0, 4.0], "reach": reach_r, "stay": stay_r},
        "H[P_256]_2048": {"errors": [4.0, 3.0, 2.0], "reach": reach_h, "stay": stay_h},
    }
    return {"runs": {r: run for r in st.READINGS}, "selected": list(selected),
            "distinct": 10, "growth": st.growth([100, 200, 300], list(selected)),
            "strata": {"occupied": 5, "tuples_per_stratum": 2.0, "effective": 1.5,
                       "selected_effective": 1.2},
            "plateau": 6.0, "final_R": 4.0}  # fmt: skip


def hand_record():
    cps, events = [100, 200, 300], 300
    # cell A: stay ratios 20 and 30 around the paper's 23 (reach 3.2 and 1.0)
    a = [seed_record(160, 50, 200, 10), seed_record(150, 150, 300, 10)]
    # cell B: stay ratios 2 and 3: every seed below 23
    b = [seed_record(200, 150, 300, 150), seed_record(300, 150, 450, 150)]
    cells = []
    for label, per_seed in (("A", a), ("B", b)):
        cells.append({"label": label, "loads": 1, "rest": 0,
                      **st.summarise(per_seed, cps, events)})  # fmt: skip
    # a program: stratified-values' points (first checkpoint 100, 300 events), stay 2 and 3
    points = {
        "R_256": {"reach": [200, 300], "stay": [300, 450]},
        "H[P_256]_2048": {"reach": [150, 150], "stay": [150, 150]},
    }
    prog = {"trace": "p.trace", "program": "prog", "events": events, "checkpoints": cps,
            "distinct": 10, "selected": [1, 2, 2], "growth": st.growth(cps, [1, 2, 2]),
            "strata": {k: {"mean": 1.2, "min": 1.2, "max": 1.2, "seeds": 2}
                       for k in ("occupied", "tuples_per_stratum", "effective",
                                 "selected_effective")},
            "stratified_values": {"events": events, "checkpoints": 3, "first": 100,
                                  "points": points}}  # fmt: skip
    r = {"paper": {"reach_ratio": [3.0, 3.5], "stay_ratio": 23.0, "gcc": st.GCC},
         "cells": cells, "programs": {"prog": prog}, "checkpoints": cps,
         "events": events}  # fmt: skip
    r["conditions"] = st.conditions(r)
    return r


def test_verdicts_of_a_hand_made_record():
    r = hand_record()
    a, b = r["cells"]
    # A: the points are exact (none is the first checkpoint, 100, or missing)
    assert a["judged"]["prefix"]["stay"]["bounds"] == [[20.0, 20.0], [30.0, 30.0]]
    assert a["judged"]["prefix"]["stay"]["verdict"] == sl.REPRODUCED
    assert b["judged"]["prefix"]["stay"]["verdict"] == sl.DIFFERS
    assert b["judged"]["prefix"]["reach"]["verdict"] == sl.DIFFERS
    assert a["judged"]["prefix"]["reach"]["verdict"] == sl.REPRODUCED  # 1.0 and 3.2
    assert a["judged"]["prefix"]["seeds_both"] == 1  # seed 1: reach 3.2, stay 20
    c = r["conditions"]["prefix"]
    assert c["stay"] == ["A"] and c["both"] == ["A"]
    # the paper's own points against the seeds' (hand-made: none of the paper's size)
    assert c["points"]["A"]["R_256 stay"] == sl.DIFFERS  # 200 and 300 against 7M
    assert st.paper_points({"stay": {"R_256": [6_000_000, None], "H[P_256]_2048": [10, 10]},
                            "reach": {"R_256": [650_000, 650_000],
                                      "H[P_256]_2048": [10, 10]}},
                           events=16_000_000, first=10) == {
        "R_256 reach": sl.REPRODUCED, "H[P_256]_2048 reach": sl.DIFFERS,
        "R_256 stay": sl.REPRODUCED, "H[P_256]_2048 stay": sl.DIFFERS}  # fmt: skip
    text = "\n".join(st.verdict_lines(r))
    assert "the stay ratio 23 lies inside our seed spread in A;" in text
    assert "prog (stay differs, reach differs; inside" in text
    assert "prog (not scored under this reading" in text  # the both reading
    assert "**differs**" in "\n".join(st.program_section(r))
    table = "\n".join(st.ratio_table({x["label"]: x for x in r["cells"]}, "prefix", 100))
    assert "| B |" in table and "**differs**" in table and "**reproduced**" in table
    # H[P]'s stay point at the first checkpoint: only a bound (>= 2), so not 'differs'
    first = [seed_record(200, 150, 200, 100), seed_record(300, 150, 300, 100)]
    judged = st.judge(first, [100, 200, 300], 300)["prefix"]["stay"]
    assert judged["bounds"] == [[2.0, math.inf], [3.0, math.inf]]
    assert judged["first_checkpoint_seeds"] == 2 and judged["verdict"] == sl.UNDECIDED


def test_quick_run(tmp_path, capsys):
    args = ["experiment", "stratified-stay", "--quick", "-o", str(tmp_path), "--jobs", "1"]
    assert main(args) == 0
    for ext in ("json", "md", "png"):
        assert (tmp_path / f"stratified-stay-quick.{ext}").stat().st_size > 0
    r = json.loads((tmp_path / "stratified-stay-quick.json").read_text())
    assert [c["label"] for c in r["cells"]] == ["100 m=0", "100 m=6", "1000 m=0", "1000 m=6"]
    assert len(r["programs"]) == 1
    cps = r["checkpoints"]
    assert cps[:2] == [5_000, 10_000] and cps[-1] == 200_000
    for c in r["cells"]:
        assert len(c["selected"]) == len(cps)
        # the selection never holds more loads than the stream has
        assert c["growth"]["final"]["max"] <= c["loads"]
        for reading in st.READINGS:
            for what in ("reach", "stay"):
                j = c["judged"][reading][what]
                assert j["verdict"] in (sl.REPRODUCED, sl.DIFFERS, sl.UNDECIDED)
                assert len(j["bounds"]) == 2
    # 100 loads with no rest value: a stratum holds about one tuple (two per load)
    assert r["cells"][0]["strata"]["selected_effective"]["mean"] < 1.5
    md = (tmp_path / "stratified-stay-quick.md").read_text()
    assert "## Verdict" in md and "stratified-long.md" in md
    assert md == st.markdown(r, "stratified-stay-quick")
