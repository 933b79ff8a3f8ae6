"""``multihash-conditions`` and ``stratified-conditions``: generators, properties, quick runs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hwprof.cli import main
from hwprof.experiments import multihash_conditions as mc
from hwprof.experiments import stratified_conditions as sc


def test_multihash_properties_of_a_hand_made_stream():
    # interval length 10, threshold 3: candidates {1, 2}, then {1, 4}
    first = np.array([1] * 5 + [2] * 3 + [3] * 2, np.uint64)
    second = np.array([1] * 4 + [4] * 4 + [5] * 2, np.uint64)
    p = mc.stream_properties([first, second], threshold=3, counters=2048)
    assert p["intervals"] == 2
    assert p["distinct"] == 3 and p["candidates"] == 2
    assert p["candidate_share"] == pytest.approx(0.8)
    assert p["churn"] == pytest.approx(0.5)  # 4 is new, 1 was a candidate before
    assert p["unshielded"] == 6  # 4 x4 and 5 x2; key 1 hits its retained entry
    assert p["rho"]["4"] == pytest.approx(6 * 4 / (2048 * 3))


def test_zipf_stream_is_seeded_and_churns_as_asked():
    a = list(mc.zipf_stream(3, 3, 20_000, 500, 1.0, 0.0))
    b = list(mc.zipf_stream(3, 3, 20_000, 500, 1.0, 0.0))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert all(len(x) == 20_000 for x in a)
    stable = mc.stream_properties(a, threshold=200)
    moving = mc.stream_properties(mc.zipf_stream(3, 3, 20_000, 500, 1.0, 1.0), threshold=200)
    assert stable["distinct"] <= 500 and stable["candidates"] > 5
    # churn 1 replaces every key: every candidate is new, nothing is shielded
    assert moving["churn"] == 1.0 and moving["unshielded"] == 20_000
    assert stable["churn"] < 0.3 and stable["unshielded"] < 20_000


def test_whole_intervals_regroups_and_drops_the_tail():
    chunks = [np.arange(7, dtype=np.uint64), np.arange(7, 12, dtype=np.uint64)]
    got = list(mc.whole_intervals(chunks, 5))
    assert [g.tolist() for g in got] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert len(list(mc.whole_intervals(chunks, 5, limit=1))) == 1


def test_lowest_keeps_ties():
    assert mc._lowest({"a": 0.0, "b": 0.0, "c": 1.0}) == ["a", "b"]
    assert mc._lowest({"a": 2.0, "b": 1.0}) == ["b"]


def test_lag_repeat_of_a_hand_made_stream():
    periodic = np.tile(np.arange(256, dtype=np.uint64), 4)
    p = sc.stream_properties(periodic)
    # every event equals the one 256 before; independent draws of 256 equal keys: 1/256
    assert p["lag_repeat"] == pytest.approx(256.0)
    assert p["distinct"] == 256 and p["top16_share"] == pytest.approx(16 / 256)


def test_value_stream_orders():
    iid = sc.value_stream(2, 100_000, 100, 1.0, "iid", "few")
    loop = sc.value_stream(2, 100_000, 100, 1.0, "loop64", "few")
    assert np.array_equal(iid, sc.value_stream(2, 100_000, 100, 1.0, "iid", "few"))
    assert sc.stream_properties(iid)["lag_repeat"] == pytest.approx(1.0, abs=0.1)
    assert sc.stream_properties(loop)["lag_repeat"] > 5
    with pytest.raises(ValueError, match="order must be one of"):
        sc.value_stream(2, 10, 10, 1.0, "sorted")


@pytest.mark.parametrize("order", ["loop", "loop64"])
def test_loop_orders_draw_the_rest_values_asked_for(order):
    """The rest values of a loop-ordered stream: 'few' draws one of 6 per load (at most 8
    distinct values a load), 'fresh' new random values (thousands)."""
    few = sc.value_stream(4, 50_000, 20, 1.0, order, "few")
    fresh = sc.value_stream(4, 50_000, 20, 1.0, order, "fresh")
    assert len(np.unique(few)) <= 8 * 20 < 1_000 < len(np.unique(fresh))


def test_stratified_conditions_checks_the_spread():
    def cell_with(reach):
        return {"loads_setting": 1, "order": "iid", "rest": "few",
                "ratios": {"reach": reach, "stay": None}, "tagged_best_seeds": 0,
                "compressors": {n: {} for n in sc.COMPRESSORS}}  # fmt: skip

    inside = cell_with({"mean": 2.5, "min": 2.0, "max": 3.2})
    outside = cell_with({"mean": 2.0, "min": 1.5, "max": 2.9})
    got = sc.conditions({"cells": [inside, outside], "seeds": 5})
    assert got["reach"] == ["1 iid few"]


@pytest.mark.parametrize("name", ["multihash-conditions", "stratified-conditions"])
def test_quick_run(tmp_path, capsys, monkeypatch, name):
    monkeypatch.chdir(tmp_path)  # the run's journal: build/runs/
    assert main(["experiment", name, "--quick", "-o", str(tmp_path), "--jobs", "1"]) == 0
    for ext in ("md", "json", "png"):
        assert (tmp_path / f"{name}-quick.{ext}").stat().st_size > 0
    data = json.loads((tmp_path / f"{name}-quick.json").read_text())
    assert data["seeds"] == 2 and len(data["cells"]) == 2
    md = (tmp_path / f"{name}-quick.md").read_text()
    assert "## The paper's claim" in md and "## Verdict" in md
    assert "| quantity | paper | ours |" in capsys.readouterr().out
    if name == "multihash-conditions":
        assert len(data["shapes"]) == 2 and "## Which property decides" in md
        assert set(data["separation"]["single"]) == {k for k, _, _ in mc.SEPARATORS}


def test_multihash_conditions_separates_only_disjoint_ranges():
    def cell_with(best, churn, rho4, r1=1.0, r0=0.5):
        return {"distinct_setting": 10, "skew": 1.0, "churn_setting": churn, "best": best,
                "best_c1r0_tables": [4], "paper_best_seeds": 5, "per_seed_best": [best] * 5,
                "errors": {"C1R1 2": {"total": r1}, "C1R0 4": {"total": r0}},
                "properties": {"distinct": 10.0, "candidates": 2.0, "candidate_share": 0.5,
                               "churn": churn, "rho": {"4": rho4}}}  # fmt: skip

    cells = [
        cell_with(["C1R0 4"], 0.0, 0.2),
        cell_with(["C1R1 2"], 0.5, 0.9, r1=0.1),
        cell_with(["C1R0 8"], 0.1, 0.1),
    ]
    got = mc.conditions(cells)
    assert got["paper_best_cells"] == 1
    assert got["overlap"]["rho4"] is True  # 0.2 lies inside the others' 0.1-0.9
    assert got["overlap"]["distinct"] is True
    assert got["reset2_beats_paper_best"] == ["D=10 s=1.0 churn=0.5"]
    cells[2]["properties"]["rho"]["4"] = 0.95
    assert mc.conditions(cells)["overlap"]["rho4"] is False


def _without_time(path):
    record = json.loads(path.read_text())
    record.pop("seconds")
    return record


@pytest.mark.parametrize("name", ["multihash-conditions", "stratified-conditions"])
def test_cells_on_two_workers_give_the_same_record(tmp_path, monkeypatch, name):
    """One unit per generator setting (hwprof.run): in-process and on a local cluster of
    two workers, the same record but for its run time."""
    monkeypatch.chdir(tmp_path)
    for jobs in ("1", "2"):
        assert main(["experiment", name, "--quick", "-o", f"j{jobs}", "--jobs", jobs]) == 0
    stem = f"{name}-quick"
    assert _without_time(tmp_path / "j1" / f"{stem}.json") == _without_time(
        tmp_path / "j2" / f"{stem}.json"
    )
    assert (tmp_path / "j1" / f"{stem}.md").read_text() == (
        tmp_path / "j2" / f"{stem}.md"
    ).read_text()


def _full_settings():
    return {"version": sc.SWEEP_VERSION, "seed": 1, "seeds": sc.SEEDS, "events": sc.EVENTS,
            "checkpoints": sc.CHECKPOINTS, "grid": [list(g) for g in sc.GRID]}  # fmt: skip


def _values_record(reach_ratio):
    """A hand-made stratified-values record of one program (xz)."""
    claims = {"reach_ratio_R_over_HP": reach_ratio, "stay_ratio_R_over_HP": 1.5,
              "final_error": {n: 1.0 for n in sc.COMPRESSORS}, "tagged_most_accurate": True,
              "a16_compression": {"R_256": 1.2, "H[P_256]_2048": 1.1, "tagged": 1.0},
              "P_over_R_mean_error": 0.9}  # fmt: skip
    reach = {"mean": 1000.0, "min": 1000.0, "max": 1000.0}
    program = {
        "events": 16_000_000,
        "instructions_per_load": 4.0,
        "compressors": {"R_256": {"reach": reach}, "H[P_256]_2048": {"reach": reach}},
    }
    return {"claims": {"xz": claims}, "programs": {"xz": program}}


def test_full_run_keeps_the_earlier_sweep_and_measures_only_the_programs(tmp_path, monkeypatch):
    """Beside an earlier full record of the same settings, a full run keeps its generator
    cells (no unit runs) and measures the real programs afresh from stratified-values.json
    and the traces; with other settings it runs the sweep."""
    from hwprof.traces import workloads
    from hwprof.traces.tracefile import open_trace

    monkeypatch.chdir(tmp_path)
    earlier_cells = [sc.run_cell(100, "iid", "few", seeds=1, events=20_000, checkpoints=4)]
    earlier = {"settings": _full_settings(), "cells": earlier_cells}
    (tmp_path / "stratified-conditions.json").write_text(json.dumps(earlier))
    (tmp_path / "stratified-values.json").write_text(json.dumps(_values_record(2.75)))
    shipped = workloads.shipped_trace("xz")
    asked = []

    def trace_for(name, **options):
        asked.append((name, options["kinds"], options["limit"], options["scale"]))
        return shipped

    def no_sweep(*args, **kwargs):
        raise AssertionError("the sweep ran")

    monkeypatch.setattr(workloads, "trace_for", trace_for)
    monkeypatch.setattr(sc, "sweep_cells", no_sweep)
    assert main(["experiment", "stratified-conditions", "-o", str(tmp_path)]) == 0
    record = json.loads((tmp_path / "stratified-conditions.json").read_text())
    assert record["cells"] == json.loads(json.dumps(earlier_cells))
    # stratified-values' capture options, at xz's input scale
    assert asked == [("xz", "loads,branches", 40_000_000, workloads.LARGE_SCALE["xz"])]
    xz = record["real"]["xz"]
    assert xz["reach_ratio"] == 2.75 and xz["trace"] == shipped.name
    assert xz["properties"]["events"] == open_trace(shipped).counts["load"]  # < 2M loads
    assert xz["instructions_per_load"]["stratified_values"] == 4.0
    md = (tmp_path / "stratified-conditions.md").read_text()
    assert "| xz | 16,000,000 |" in md and "| 2.75 | 1.50 | 0.90 | yes |" in md
    drift = 100 * abs(xz["instructions_per_load"]["read"] / 4.0 - 1)
    assert f"by at most {drift:.4f} %" in md

    assert "## What moved" not in md  # the earlier record measured no programs

    # the same record as if keyed otherwise (no value map: the earlier one), with other
    # outcomes: the next run says what moved
    old = json.loads((tmp_path / "stratified-conditions.json").read_text())
    del old["value_map"]
    old["real"]["xz"]["reach_ratio"] = 2.0
    old["real"]["xz"]["properties"]["distinct"] += 5
    (tmp_path / "stratified-conditions.json").write_text(json.dumps(old))
    assert main(["experiment", "stratified-conditions", "-o", str(tmp_path)]) == 0
    md = (tmp_path / "stratified-conditions.md").read_text()
    assert "## What moved when the key changed (`low` to `mix-fold`)" in md
    assert "| reach ratio R/H[P], real programs | 3.0-3.5 (gcc) | xz 2.00 | xz 2.75 | +0.75 |" in md
    assert "| `real/xz/properties/distinct` |" in md and "| -5.000 |" in md
    assert "2 of the " in md  # the two numbers changed above, nothing else

    # another sweep (other events per stream): its cells are run, not kept
    (tmp_path / "stratified-conditions.json").write_text(
        json.dumps({"settings": {**_full_settings(), "events": 1}, "cells": earlier_cells})
    )
    with pytest.raises(AssertionError, match="the sweep ran"):
        main(["experiment", "stratified-conditions", "-o", str(tmp_path)])


def _mh_cell(distinct, skew, churn, best, paper_seeds, share):
    """A hand-made multihash-conditions cell: ``best`` has error 0.1, the others 1.0."""
    errors = {label: {"total": 0.1 if label == best else 1.0, "min": 0.0, "max": 2.0,
                      "seeds": [1.0] * mc.SEEDS} for label, _, _ in mc.CONFIGS}  # fmt: skip
    props = {
        "distinct": float(distinct),
        "candidates": 50.0,
        "candidate_share": share,
        "churn": 0.1,
        "unshielded": 1e5,
        "rho": {"2": 0.5, "4": 1.0, "8": 2.0, "16": 4.0},
    }
    per_seed = [["C1R0 4"]] * paper_seeds + [["C1R1 2"]] * (mc.SEEDS - paper_seeds)
    return {"distinct_setting": distinct, "skew": skew, "churn_setting": churn,
            "errors": errors, "parts": {k: [0.0] * 4 for k in errors}, "properties": props,
            "per_seed_best": per_seed, "best": [best], "paper_best_seeds": paper_seeds,
            "best_c1r0_tables": [4 if best == "C1R0 4" else 8]}  # fmt: skip


def _mirror_extra(cells, kw):
    """Extra seeds that say what a hand-made cell's first seeds say: its best 0.1, the
    others 1.0; the shape of the test's fake ``cell_shape``."""
    c = next(c for c in cells
             if (c["distinct_setting"], c["skew"], c["churn_setting"])
             == (kw["distinct"], kw["skew"], kw["churn"]))  # fmt: skip
    errors = {label: {"seeds": [0.1 if label in c["best"] else 1.0] * kw["seeds"]}
              for label, _, _ in mc.CONFIGS}  # fmt: skip
    shape = {"skew_fit": kw["skew"], "top_share": {"10": 0.1, "100": 0.3, "1000": 0.6},
             "distinct_per_counter": kw["distinct"] / 2048, "candidates_per_entry": 0.05,
             "near_misses": 100.0}  # fmt: skip
    return {"first": kw["first"], "seeds": kw["seeds"], "errors": errors, "per_seed_best": [],
            "paper_best_seeds": 0, "properties": c["properties"], "shape": shape}  # fmt: skip


def test_multihash_full_run_keeps_the_earlier_cells_and_runs_the_low_skew_ones(
    tmp_path, monkeypatch
):
    """Beside a full record of the grid without the low-skew settings, a full run runs only
    those settings; the verdict names each setting where 4 tables C1-R0 wins with its seeds."""
    monkeypatch.chdir(tmp_path)
    # the hand-made cells' seeds tie (all undecided): more seeds for them are tested apart
    monkeypatch.setattr(mc, "UNDECIDED_SEEDS", 0)
    old_grid = [g for g in mc.GRID if g not in mc.LOW_SKEW]
    assert len(old_grid) == 27 and len(mc.LOW_SKEW) == 5
    # in the earlier record 4 tables C1-R0 wins only at D=10,000 s=0.8 churn=0
    earlier = [_mh_cell(d, s, c, "C1R0 4" if (d, s, c) == (10_000, 0.8, 0.0) else "C1R1 2",
                        2 if (d, s, c) == (10_000, 0.8, 0.0) else 0, 0.5)
               for d, s, c in old_grid]  # fmt: skip
    settings = {"version": mc.SWEEP_VERSION, "seed": 1, "preset": "1m", "seeds": mc.SEEDS,
                "intervals": mc.INTERVALS, "grid": [list(g) for g in old_grid]}  # fmt: skip
    (tmp_path / "multihash-conditions.json").write_text(
        json.dumps({"settings": settings, "cells": earlier})
    )
    ran = []

    def fake_sweep(name, stem, settings, run_cell, todo, run_options):
        if run_cell is mc.run_extra:  # the skew-0.8 cells' extra seeds: as their first five
            assert sorted(todo) == sorted(f"D{d}-s{s}-c{c}-extra" for d, s, c in old_grid
                                          if s == 0.8)  # fmt: skip
            return {key: _mirror_extra(earlier, kw) for key, kw in todo.items()}
        ran.extend(todo)
        # the new cells: C1R0 4 wins everywhere but at D=30,000 s=0.6 (C1R1 2)
        return {key: _mh_cell(kw["distinct"], kw["skew"], kw["churn"],
                              "C1R1 2" if (kw["distinct"], kw["skew"]) == (30_000, 0.6)
                              else "C1R0 4", 4 if kw["skew"] == 0.7 else 5, 0.2)
                for key, kw in todo.items()}  # fmt: skip

    def fake_shape(preset, distinct, skew, churn, seeds, intervals, seed):
        # a fitted skew that tells the winners (skew below 0.8) from the others
        return {"skew_fit": skew, "top_share": {"10": 0.1, "100": 0.3, "1000": 0.6},
                "distinct_per_counter": distinct / 2048, "candidates_per_entry": 0.05,
                "near_misses": 100.0}  # fmt: skip

    monkeypatch.setattr(mc, "sweep_cells", fake_sweep)
    monkeypatch.setattr(mc, "cell_shape", fake_shape)
    assert main(["experiment", "multihash-conditions", "-o", str(tmp_path)]) == 0
    assert sorted(ran) == sorted(["D1500-s0.5-c0.0", "D3000-s0.6-c0.0", "D30000-s0.6-c0.0",
                                  "D10000-s0.7-c0.0", "D30000-s0.7-c0.0"])  # fmt: skip
    record = json.loads((tmp_path / "multihash-conditions.json").read_text())
    assert len(record["cells"]) == 32
    # every earlier field unchanged; the seven skew-0.8 cells gain their extra seeds
    assert [{k: v for k, v in c.items() if k != "extra_seeds"} for c in record["cells"][:27]] \
        == json.loads(json.dumps(earlier))  # fmt: skip
    assert [c["skew"] for c in record["cells"] if "extra_seeds" in c] == [0.8] * 7
    k = record["conditions"]
    assert k["paper_best_cells"] == 5 and k["paper_best_in_every_seed"] == 2
    md = (tmp_path / "multihash-conditions.md").read_text()
    verdict = md.split("## Verdict")[1]
    assert (
        "4 tables C1-R0 is best (mean over the seeds) in 5 of 32 cells (D=10,000 s=0.8 "
        "churn=0.0: 2/5 seeds; D=1,500 s=0.5 churn=0.0: 5/5 seeds; D=3,000 s=0.6 churn=0.0: "
        "5/5 seeds; D=10,000 s=0.7 churn=0.0: 4/5 seeds; D=30,000 s=0.7 churn=0.0: 4/5 seeds), "
        "in every seed in 2 of them." in verdict
    )
    # the winners' candidate share (0.5 once, 0.2) overlaps the others' (0.5, 0.2)
    assert "No single property separates" in verdict
    assert "skew 0.5, churn 0.0: 1,500;" in md  # the settings line
    # the winners: D=10,000 s=0.8 and the four low-skew ones but D=30,000 s=0.6; a fitted
    # skew below 0.75 predicts five cells, four of them winners: 2 misclassified
    fit = record["separation"]["single"]["skew_fit"]
    assert fit["errors"] == 2 and fit["confusion"]["wrong"] == 1
    assert fit["misclassified"] == ["D=10,000 s=0.8 churn=0.0", "D=30,000 s=0.6 churn=0.0"]
    # margin: the gap 0.1 over the fitted skews' spread 0.5-1.2; D=10,000 s=0.8 is decided
    # by its 20 seeds (its extra seeds agree with its first five), D=30,000 s=0.6 is not
    # between decided cells no margin: the decided cells are the seven at skew 0.8, all on
    # one side of the threshold
    assert "| fitted Zipf skew | fitted Zipf skew < 0.750 | 0.143 | - | 0.1 | 1 | 2 (1) | 2 |" in md
    assert "Seeds per cell: 25 cells have 5 seeds, 7 cells have 20 seeds." in md
    assert "7 cells have 15 seeds more (seed indexes from 5 on); the sweep's tables" in md
    # the share takes two values, so its margin is 1: it leads
    assert (
        "candidate share < 0.350 leads the single rules: it misclassifies 1 of the 7 "
        "decided cells, as few as 10 others, and ties the next on every criterion"
    ) in md

    # a second run keeps the cells' shapes as well as the cells
    def no_shape(*args):
        raise AssertionError("a shape was measured again")

    monkeypatch.setattr(mc, "cell_shape", no_shape)
    assert main(["experiment", "multihash-conditions", "-o", str(tmp_path)]) == 0
    again = json.loads((tmp_path / "multihash-conditions.json").read_text())
    assert again["shapes"] == record["shapes"] and again["cells"] == record["cells"]


def test_extra_seeds_continue_the_cells_seeds():
    """Seed index 1 run as an extra seed gives the same errors and shape as the second
    seed of a two-seed cell (10K preset, a small cell)."""
    two = mc.run_cell("10k", 300, 1.0, 1.0, seeds=2, intervals=3)
    extra = mc.run_extra("10k", 300, 1.0, 1.0, first=1, seeds=1, intervals=3)
    assert {k: v["seeds"] for k, v in extra["errors"].items()} == {
        k: v["seeds"][1:] for k, v in two["errors"].items()
    }
    config = mc.PRESETS["10k"]
    stream = mc.zipf_stream(2, 3, config["interval_length"], 300, 1.0, 1.0)
    assert extra["shape"] == mc.input_shape(stream, config["threshold"], 2048,
                                            config["accumulator"])  # fmt: skip
    assert (extra["first"], extra["seeds"]) == (1, 1)
    assert extra["paper_best_seeds"] == sum("C1R0 4" in b for b in extra["per_seed_best"])


def test_extra_plan_takes_the_skew_0_8_cells():
    plan = mc.extra_plan(False)
    assert plan["first"] == mc.SEEDS == 5 and plan["seeds"] == 15
    assert plan["grid"] == [[3_000, 0.8, 0.0], [10_000, 0.8, 0.0], [30_000, 0.8, 0.0],
                            [100_000, 0.8, 0.0], [300_000, 0.8, 0.0], [10_000, 0.8, 1.0],
                            [100_000, 0.8, 1.0]]  # fmt: skip
    assert mc.extra_plan(True) == {"first": 5, "seeds": 0, "grid": []}


def test_extra_plan_adds_seeds_to_the_undecided_cells():
    """Cells outside the skew-0.8 grid whose first five seeds leave 4 tables C1-R0's outcome
    undecided get UNDECIDED_SEEDS more; decided ones and the skew-0.8 cells do not."""

    def cell(d, s, c, c1r0_4, rival):
        out = _mh_cell(d, s, c, "C1R1 2", 0, 0.5)
        out["errors"]["C1R0 4"]["seeds"] = c1r0_4
        out["errors"]["C1R1 2"]["seeds"] = rival
        for k in ("C1R0 4", "C1R1 2"):
            out["errors"][k]["total"] = sum(out["errors"][k]["seeds"]) / mc.SEEDS
        return out

    # paired differences C1R0 4 - C1R1 2: -0.5 +- 0.1 (decided: t interval 0.5 +- 0.2 on 5
    # seeds); -0.1, +0.3, -0.4, +0.2, -0.3 (undecided); the others 1.0 (not the rival)
    decided = cell(3_000, 1.0, 0.0, [0.4, 0.5, 0.6, 0.5, 0.5], [1.0, 0.9, 1.0, 1.1, 0.9])
    loose = cell(10_000, 1.0, 0.0, [0.5, 0.9, 0.4, 0.8, 0.3], [0.6, 0.6, 0.8, 0.6, 0.6])
    skewed = cell(3_000, 0.8, 0.0, [0.5, 0.9, 0.4, 0.8, 0.3], [0.6, 0.6, 0.8, 0.6, 0.6])
    plan = mc.extra_plan(False, [decided, loose, skewed])
    assert plan["undecided"] == {"seeds": mc.UNDECIDED_SEEDS, "grid": [[10_000, 1.0, 0.0]]}
    assert mc.UNDECIDED_SEEDS == 5 and plan["seeds"] == 15 and [3_000, 0.8, 0.0] in plan["grid"]
    assert "undecided" not in mc.extra_plan(False, [decided, skewed])
    assert mc.extra_plan(True, [loose]) == {"first": 5, "seeds": 0, "grid": []}


def test_cells_take_their_own_count_of_extra_seeds(monkeypatch):
    plan = {"first": 5, "seeds": 15, "grid": [[10_000, 0.8, 0.0]],
            "undecided": {"seeds": 5, "grid": [[3_000, 1.0, 0.0]]}}  # fmt: skip
    settings = {"preset": "1m", "intervals": 4, "seed": 1}
    cells = [_mh_cell(10_000, 0.8, 0.0, "C1R1 2", 0, 0.5),
             _mh_cell(3_000, 1.0, 0.0, "C1R1 2", 0, 0.5),
             _mh_cell(30_000, 1.0, 0.0, "C1R1 2", 0, 0.5)]  # fmt: skip
    ran = {}

    def fake_sweep(name, stem, identity, unit, todo, run_options):
        ran.update(todo)
        return {key: {**_extra([0.2] * kw["seeds"], [1.0] * kw["seeds"], 0.3, 0.7),
                      "seeds": kw["seeds"]} for key, kw in todo.items()}  # fmt: skip

    monkeypatch.setattr(mc, "sweep_cells", fake_sweep)
    got = mc._with_extra_seeds(cells, plan, settings, "s", None, lambda text: None)
    assert {k: v["seeds"] for k, v in ran.items()} == {"D10000-s0.8-c0.0-extra": 15,
                                                       "D3000-s1.0-c0.0-extra": 5}  # fmt: skip
    assert [c.get("extra_seeds", {}).get("seeds") for c in got] == [15, 5, None]
    # a second pass keeps both
    ran.clear()
    again = mc._with_extra_seeds(got, plan, settings, "s", None, lambda text: None)
    assert ran == {} and [c.get("extra_seeds") for c in again] == [c.get("extra_seeds")
                                                                  for c in got]  # fmt: skip
    line = mc._extra_line({"cells": got, "seeds": 5})
    assert line.startswith(" 1 cells have 15 seeds more and 1 cells have 5 seeds more (seed "
                           "indexes from 5 on)")  # fmt: skip


def _extra(c1r0_4, rival, share, skew):
    """Hand-made ``extra_seeds`` of three seeds: C1R0 4 and C1R1 2 errors, the others 9."""
    errors = {label: {"total": 9.0, "min": 9.0, "max": 9.0, "seeds": [9.0] * 3}
              for label, _, _ in mc.CONFIGS}  # fmt: skip
    errors["C1R0 4"] = {"seeds": c1r0_4}
    errors["C1R1 2"] = {"seeds": rival}
    props = {"distinct": 1e4, "candidates": 50.0, "candidate_share": share, "churn": None,
             "unshielded": 1e5, "rho": {"2": 0.5, "4": 1.0, "8": 2.0, "16": 4.0}}  # fmt: skip
    shape = {
        "skew_fit": skew,
        "top_share": {"10": 0.1, "100": 0.3, "1000": 0.6},
        "distinct_per_counter": 5.0,
        "candidates_per_entry": 0.05,
        "near_misses": None,
    }
    return {"first": 5, "seeds": 3, "errors": errors, "per_seed_best": [], "paper_best_seeds": 0,
            "properties": props,
            "shape": shape}  # fmt: skip


def test_all_seeds_joins_the_seeds_and_weights_the_means():
    c = _mh_cell(10_000, 0.8, 0.0, "C1R1 2", 0, 0.5)  # 5 seeds of 1.0 each, share 0.5
    c["properties"]["churn"] = 0.2
    shape = {
        "skew_fit": 0.8,
        "top_share": {"10": 0.3, "100": 0.5, "1000": 0.9},
        "distinct_per_counter": 5.0,
        "candidates_per_entry": 0.05,
        "near_misses": 40.0,
    }
    alone = mc.all_seeds(c, shape)
    assert alone["seeds"] == 5 and alone["shape"] is shape
    assert alone["errors"]["C1R0 4"] == {"total": 1.0, "seeds": [1.0] * 5}
    c["extra_seeds"] = _extra([0.0, 0.2, 0.1], [2.0, 2.0, 2.0], 0.1, 0.72)
    both = mc.all_seeds(c, shape)
    assert both["seeds"] == 8
    assert both["errors"]["C1R0 4"]["seeds"] == [1.0] * 5 + [0.0, 0.2, 0.1]
    assert both["errors"]["C1R0 4"]["total"] == pytest.approx(5.3 / 8)
    assert both["errors"]["C1R1 2"]["total"] == pytest.approx((5 * 1.0 + 6.0) / 8)
    # means weighted 5:3; a value measured on one part only: that part's
    assert both["properties"]["candidate_share"] == pytest.approx((5 * 0.5 + 3 * 0.1) / 8)
    assert both["properties"]["churn"] == 0.2 and both["shape"]["near_misses"] == 40.0
    assert both["shape"]["skew_fit"] == pytest.approx((5 * 0.8 + 3 * 0.72) / 8)
    assert both["shape"]["top_share"]["10"] == pytest.approx((5 * 0.3 + 3 * 0.1) / 8)
    # the label over all 8 seeds: C1R0 4 (0.66) below C1R1 2 (1.375): won, where the
    # first five seeds alone (1.0 each, C1R1 2 at 0.1) say lost
    row = mc.separation([c], [shape], {}, "1m")["cells"][0]
    assert row["won"] is True and row["seeds"] == 8
    assert row["first_seeds"] == {"seeds": 5, "won": False, "decided": False}


def test_extra_seeds_are_kept_or_run(monkeypatch):
    plan = {"first": 5, "seeds": 3, "grid": [[10_000, 0.8, 0.0], [30_000, 0.8, 0.0]]}
    settings = {"preset": "1m", "intervals": 4, "seed": 1}
    old = _extra([0.1] * 3, [1.0] * 3, 0.2, 0.8)
    cells = [{**_mh_cell(10_000, 0.8, 0.0, "C1R1 2", 0, 0.5), "extra_seeds": old},
             _mh_cell(30_000, 0.8, 0.0, "C1R1 2", 0, 0.5),
             {**_mh_cell(3_000, 1.0, 0.0, "C1R1 2", 0, 0.5), "extra_seeds": old}]  # fmt: skip
    ran = {}

    def fake_sweep(name, stem, identity, unit, todo, run_options):
        assert unit is mc.run_extra and stem == "s-extra" and identity["extra"]["first"] == 5
        ran.update(todo)
        return {key: _extra([0.2] * 3, [1.0] * 3, 0.3, 0.7) for key in todo}

    monkeypatch.setattr(mc, "sweep_cells", fake_sweep)
    got = mc._with_extra_seeds(cells, plan, settings, "s", None, lambda text: None)
    # the first keeps its extra seeds, the second gets them run, the third (not in the
    # plan) loses its stale ones; nothing else of a cell changes
    assert list(ran) == ["D30000-s0.8-c0.0-extra"]
    assert ran["D30000-s0.8-c0.0-extra"] == {"preset": "1m", "distinct": 30_000, "skew": 0.8,
                                             "churn": 0.0, "first": 5, "seeds": 3,
                                             "intervals": 4, "seed": 1}  # fmt: skip
    assert got[0]["extra_seeds"] is old and got[1]["extra_seeds"]["shape"]["skew_fit"] == 0.7
    assert "extra_seeds" not in got[2]
    assert [{k: v for k, v in c.items() if k != "extra_seeds"} for c in got] == [
        {k: v for k, v in c.items() if k != "extra_seeds"} for c in cells
    ]
    # another count of extra seeds: run again
    ran.clear()
    mc._with_extra_seeds(got, {**plan, "seeds": 4}, settings, "s", None, lambda text: None)
    assert sorted(ran) == ["D10000-s0.8-c0.0-extra", "D30000-s0.8-c0.0-extra"]


def test_file_identity_names_the_bytes(tmp_path):
    from hwprof.experiments import file_identity

    path = tmp_path / "t.trace"
    path.write_bytes(b"abc")
    # the SHA-256 test vector of "abc" (FIPS 180-2, appendix B.1)
    assert file_identity(path) == {
        "file": "t.trace",
        "path": str(path),
        "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    }
    path.write_bytes(b"abd")
    assert not file_identity(path)["sha256"].startswith("ba7816bf")


def test_real_programs_name_their_trace(tmp_path, monkeypatch):
    """Each program's record says which trace file (name, path, SHA-256) it was measured
    from (the 10K preset in place of 1M, on the shipped xz trace)."""
    import hashlib

    from hwprof.experiments import multihash_values as mv
    from hwprof.traces import workloads

    shipped = str(workloads.shipped_trace("xz"))
    monkeypatch.setattr(mv, "_sources", lambda *a: [("xz", {"path": shipped})])
    monkeypatch.setitem(mc.PRESETS, "1m", mc.PRESETS["10k"])
    errors = {label: {"total": 1.0, "seeds": [1.0] * 5} for label, _, _ in mc.CONFIGS}
    (tmp_path / "multihash-values.json").write_text(
        json.dumps({"seed": 1, "presets": {"1m": {"xz": {"errors": errors}}}})
    )
    got = mc.real_programs(tmp_path, lambda text: None, False)
    digest = hashlib.sha256(Path(shipped).read_bytes()).hexdigest()
    assert got["xz"]["trace"] == {"file": workloads.shipped_trace("xz").name, "path": shipped,
                                  "sha256": digest}  # fmt: skip


def test_a_tie_is_not_counted_as_right():
    """``on_programs`` counts a rule right only on the programs the seeds decide: on four
    hand-made programs and the rule x < 0.5, a right prediction on an undecided program
    (a tie) and a wrong one on another undecided program count neither way."""
    rule = {"properties": ["x"], "directions": ["<"], "thresholds": [0.5]}
    k = {"real": {"a": {"won": True, "decided": True, "values": {"x": 0.1}},
                  "b": {"won": False, "decided": True, "values": {"x": 0.9}},
                  "c": {"won": True, "decided": False, "values": {"x": 0.2}},
                  "d": {"won": False, "decided": False, "values": {"x": 0.3}},
                  "e": {"won": True, "decided": True, "values": {"x": 0.7}}}}  # fmt: skip
    got = mc.on_programs(rule, k)
    # a right, b right, e wrong; c (right) and d (wrong) are ties
    assert got == {"decided": ["a", "b", "e"], "undecided": ["c", "d"], "right": 2,
                   "wrong": ["e"]}  # fmt: skip
    assert mc._right_cell(rule, k) == "2 of 3"
    # the check fails when the tie counts: c decided makes it right on 3 of 4
    k["real"]["c"]["decided"] = True
    assert mc._right_cell(rule, k) == "3 of 4"


def test_verdict_and_tables_count_only_decided_programs():
    """On the committed record: the verdict and the rule tables count a rule right only on
    the programs the seeds decide and name the undecided ones as not counted; deciding
    one that the leading rule gets right adds one to both counts."""
    import copy

    path = Path(__file__).resolve().parent.parent / "docs/results/multihash-conditions.json"
    record = json.loads(path.read_text())
    k = record["separation"]
    lead = k["single"][k["lead"]["rule"]]
    undecided = [n for n, p in k["real"].items() if not p["decided"]]
    assert undecided  # the committed record has ties (sort, sha256sum)
    got = mc.on_programs(lead, k)
    assert got["undecided"] == undecided
    assert len(got["decided"]) == len(k["real"]) - len(undecided)
    # the stored predictions agree with the rule applied to the stored values
    assert got["wrong"] == [n for n in got["decided"] if lead["real"][n] != k["real"][n]["won"]]
    text = mc._separation_verdict(record)
    assert (f"is right on {got['right']} of the {len(got['decided'])} of our {len(k['real'])} "
            "programs the seeds decide") in text  # fmt: skip
    assert f"not counted: {', '.join(undecided)}, where the seeds do not tell" in text
    page = mc._separation_section(record)
    assert "| right of decided programs |" in page and "programs right" not in page
    assert f"| {got['right']} of {len(got['decided'])} |" in page
    right_tie = next(n for n in undecided if lead["real"][n] == k["real"][n]["won"])
    decided = copy.deepcopy(record)
    decided["separation"]["real"][right_tie]["decided"] = True
    text = mc._separation_verdict(decided)
    assert (f"is right on {got['right'] + 1} of the {len(got['decided']) + 1} of our "
            f"{len(k['real'])} programs the seeds decide") in text  # fmt: skip
    for p in decided["separation"]["real"].values():
        p["decided"] = True
    assert "not counted" not in mc._separation_verdict(decided)


def test_headline_counts_a_program_chosen_for_its_shape_apart():
    """The run's headline: sha256sum (chosen for its low concentration) is not one of "our
    programs" in the count set beside the paper's "all"; it has a row of its own."""
    record = {"conditions": {"paper_best_cells": 3, "cells": 8},
              "real": {"xz": {"best": ["C1R1 2"]}, "perl": {"best": ["C1R0 4"]},
                       "sha256sum": {"best": ["C1R0 4"]}}}  # fmt: skip
    rows = {what: ours for what, _, ours in mc.headline(record)}
    assert rows["our programs where 4 tables C1-R0 is best"] == "1 of 2"
    assert rows["programs chosen for low concentration where 4 tables C1-R0 is best"] == "1 of 1"
    del record["real"]["sha256sum"]
    assert "programs chosen for low concentration where 4 tables C1-R0 is best" not in {
        what for what, _, _ in mc.headline(record)}
