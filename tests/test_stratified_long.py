"""``hwprof experiment stratified-long``: the quick run (and a second run keeping its
settings), the verdict computed from a record's points, the ratio bounds, and which
earlier records' settings are kept."""

from __future__ import annotations

import json
import math

import pytest

from hwprof.cli import main
from hwprof.experiments import stratified_long as sl
from hwprof.experiments import stratified_turnover as st

EVENTS = 16_000_000
NAMES = ("R_256", "P_256", "H[P_256]_2048", "tagged")


def test_quick_run_and_a_second_run_keeps_its_settings(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the run's journal: build/runs/
    args = ["experiment", "stratified-long", "--quick", "-o", str(tmp_path), "--jobs", "1"]
    assert main(args) == 0
    for ext in ("md", "json", "png"):
        assert (tmp_path / f"stratified-long-quick.{ext}").stat().st_size > 0
    assert (tmp_path / "stratified-long-quick-variants.png").stat().st_size > 0
    data = json.loads((tmp_path / "stratified-long-quick.json").read_text())
    grid = [list(g) for g in sl.QUICK["grid"]]
    assert data["seeds"] == sl.QUICK["seeds"] and data["events"] == sl.QUICK["events"]
    assert [c["setting"] for c in data["cells"]] == grid
    assert not any(c["kept"] for c in data["cells"])
    assert set(data["not_run"]) == {"100 iid few", "100 loop few"}  # the sweep's others
    for c in data["cells"]:
        assert c["cell"]["checkpoints"][-1] == sl.QUICK["events"]
        for name, points in c["points"].items():  # every seed's reach comes before its stay
            for reach, stay in zip(points["reach"], points["stay"], strict=True):
                assert stay is None or (reach is not None and reach <= stay), name
    md = (tmp_path / "stratified-long-quick.md").read_text()
    assert "## The paper's claim" in md and "## Verdict" in md
    assert "Not run long: 100 iid few, 100 loop few." in md
    # per setting: header, rule, one row per seed; the verdict table: header, rule, a row
    # each; the model variants: header, rule, a row per setting, reading and grid; their
    # points on the seed-mean curves: header, rule, a row per setting and reading
    readings = ("prefix", "both", "whole")
    keys = {f"{v}/{g}" for v in readings for g in sl.GRIDS}
    rows = len(grid) * (2 + sl.QUICK["seeds"]) + 2 + len(grid)
    # and the variants over the full length: header, rule, a row per setting, reading, grid
    long_grid = [list(g) for g in sl.QUICK_VARIANTS_LONG["grid"]]
    # and the turnover section: header, rule, a row per setting and reading
    turnover = [list(g) for g in st.QUICK["grid"]]
    assert md.count("\n| ") == rows + 2 + len(grid) * len(keys) + 2 + len(grid) * len(
        readings
    ) + 2 + len(long_grid) * len(keys) + 2 + len(turnover) * len(st.READINGS)
    assert "## A working set that turns over" in md
    assert [c["setting"] for c in data["turnover"]["cells"]] == turnover
    assert data["turnover"]["real"] == {}  # the quick form measures no program
    for c in data["turnover"]["cells"]:
        assert c["checkpoints"][-1] == sl.QUICK["events"]
        for v in st.READINGS:
            assert len(c["points"][v]["R_256"]["stay"]) == sl.QUICK["seeds"]
    assert (tmp_path / "stratified-long-quick-turnover.png").stat().st_size > 0
    assert "### The model variants over the full length" in md
    assert [c["setting"] for c in data["variants_long"]["cells"]] == long_grid
    assert data["variants_long"]["linear"][-1] == sl.QUICK_VARIANTS_LONG["events"]
    assert "## Model variants" in md
    variants = data["variants"]
    assert variants["sizes"]["events"] == sl.QUICK_VARIANTS["events"]
    assert variants["linear"][-1] == sl.QUICK_VARIANTS["events"]
    for c, g in zip(variants["cells"], grid, strict=True):
        assert c["setting"] == g and set(c["points"]) == keys
        for pts in c["points"].values():
            for name in sl.PAIR:
                assert len(pts[name]["reach"]) == sl.QUICK["seeds"]
        # quick: the variants' streams and geometric grid are the main table's, so the
        # default reading on that grid repeats its 5 % points
        main_points = next(e for e in data["cells"] if e["setting"] == g)["points"]
        assert c["points"]["prefix/geometric"] == {n: main_points[n] for n in sl.PAIR}
    assert "| quantity | paper | ours |" in capsys.readouterr().out

    assert main(args) == 0  # the same sizes: every setting kept, no unit run
    again = json.loads((tmp_path / "stratified-long-quick.json").read_text())
    assert all(c["kept"] for c in again["cells"])
    assert again["variants"]["kept"] == [sl.setting_name(g) for g in grid]
    assert again["variants_long"]["kept"] == [sl.setting_name(g) for g in long_grid]
    assert again["turnover"]["kept"] == [st.setting_name(g) for g in turnover]
    strip = ("kept",)
    assert [{k: v for k, v in c.items() if k not in strip} for c in again["cells"]] == [
        {k: v for k, v in c.items() if k not in strip} for c in data["cells"]
    ]
    assert "kept from the earlier record" in (tmp_path / "stratified-long-quick.md").read_text()


def test_ratio_bounds():
    assert sl.ratio_bounds(300_000, 100_000, EVENTS) == (3.0, 3.0)
    assert sl.ratio_bounds(None, 500_000, EVENTS) == (32.0, math.inf)  # R past the end
    assert sl.ratio_bounds(4_000_000, None, EVENTS) == (0.0, 0.25)  # H[P] past the end
    assert sl.ratio_bounds(None, None, EVENTS) == (0.0, math.inf)


def _entry(r_reach, h_reach, r_stay, h_stay, setting=(100, "loop", "few")):
    n = len(r_reach)
    none = [None] * n
    return {"setting": list(setting), "kept": False,
            "points": {"R_256": {"reach": r_reach, "stay": r_stay},
                       "P_256": {"reach": none, "stay": none},
                       "H[P_256]_2048": {"reach": h_reach, "stay": h_stay},
                       "tagged": {"reach": none, "stay": none}},
            "finals": {k: [1.0] * n for k in NAMES},
            "cell": {"checkpoints": [10_000, 100_000, 1_000_000, EVENTS],
                     "properties": {"distinct": 10, "selected_loads": 5, "top16_share": 0.5,
                                    "lag_repeat": 1.0},
                     "compressors": {k: {"mean_curve": [9.0, 6.0, 4.0, 3.0]}
                                     for k in NAMES}}}  # fmt: skip


def test_verdict_from_the_points():
    # reach ratios 3.0 and 4.0: the paper's 3.0-3.5 inside; stay 23 and > 160: 23 inside
    e = _entry([300_000, 400_000], [100_000] * 2, [2_300_000, None], [100_000] * 2)
    v = sl.verdict(e, EVENTS)
    assert (v["reach"], v["stay"]) == (sl.REPRODUCED, sl.REPRODUCED)
    # reach ratios 5 and 6, stay ratios 2 and 3: every seed on one side of the paper
    e = _entry([500_000, 600_000], [100_000] * 2, [200_000, 300_000], [100_000] * 2)
    assert (sl.verdict(e, EVENTS)["reach"], sl.verdict(e, EVENTS)["stay"]) == (
        sl.DIFFERS, sl.DIFFERS)  # fmt: skip
    # stay bounds > 160 and > 16: the second seed's ratio may lie either side of 23
    e = _entry([300_000, 400_000], [100_000] * 2, [None, None], [100_000, 1_000_000])
    assert sl.verdict(e, EVENTS)["stay"] == sl.UNDECIDED
    # both above 23 (> 160 and > 32): every seed above
    e = _entry([300_000, 400_000], [100_000] * 2, [None, None], [100_000, 500_000])
    assert sl.verdict(e, EVENTS)["stay"] == sl.DIFFERS


def _record(cells):
    return {"seed": 1, "quick": False, "seeds": 2, "events": EVENTS,
            "settings": {"seed": 1}, "paper": sl.PAPER, "cells": cells,
            "not_run": [], "seconds": 1.0}  # fmt: skip


def test_page_verdict_is_computed_from_the_record(tmp_path):
    record = _record([_entry([300_000, 400_000], [100_000] * 2, [2_300_000, None],
                             [100_000] * 2)])  # fmt: skip
    md = sl.markdown(record, "x")
    # checkpoints 10,000 to 16M in 4: a step of about 11.7, so every seed is near
    assert ("| 100 loop few | 3.50 [3.00-4.00] | reproduced | 2/2 | [23.00-inf] | reproduced "
            "| 1/2 |") in md  # fmt: skip
    assert "first reaching 5 % is reproduced in 100 loop few" in md
    # the same record with one seed moved: R_256 reaches 5 % later in seed 1 (ratio 5)
    record["cells"][0]["points"]["R_256"]["reach"][0] = 500_000
    md = sl.markdown(record, "x")
    assert "| 100 loop few | 4.50 [4.00-5.00] | differs | 2/2 |" in md
    assert "first reaching 5 % is reproduced in no setting; it differs in 100 loop few" in md
    sl.plot(record, tmp_path, "x")  # bounds and exact ratios both drawn
    assert (tmp_path / "x.png").stat().st_size > 0


def test_page_of_several_settings():
    record = _record([
        _entry([300_000, 400_000], [100_000] * 2, [2_300_000, None], [100_000] * 2),
        _entry([500_000, 600_000], [100_000] * 2, [200_000, 300_000], [100_000] * 2,
               setting=(1_000, "iid", "fresh")),
    ])  # fmt: skip
    record["not_run"] = ["100 iid few"]
    md = sl.markdown(record, "x")
    assert "### 100 loop few" in md and "### 1000 iid fresh" in md
    assert "Not run long: 100 iid few." in md
    assert (
        "| 1000 iid fresh | 5.50 [5.00-6.00] | differs | 2/2 | 2.50 [2.00-3.00] | differs |" in md
    )
    rows = sl.headline(record)
    assert len(rows) == 4 and rows[3][2] == "2.50 [2.00-3.00]: differs"


def test_seeds_near_the_paper():
    # a step of 1.42: the reach range 3.0-3.5 widens to 2.11-4.97, the stay 23 to 16.2-32.7
    bounds = [(2.0, 2.0), (2.87, 2.87), (4.08, 4.08), (5.0, 5.0), (3.0, math.inf)]
    assert sl._near(bounds, "reach", 1.42) == 2  # a bound is not a measured ratio
    assert sl._near([(16.0, 16.0), (16.6, 16.6), (23.6, 23.6), (33.0, 33.0)], "stay", 1.42) == 2


@pytest.mark.parametrize("change, kept", [({}, ["1000 iid fresh"]), ({"events": 1}, []),
                                          ({"version": 0}, [])])  # fmt: skip
def test_kept_settings_of_a_one_setting_record(tmp_path, change, kept):
    sizes = {"version": sl.VERSION, "seed": 1, "seeds": 2, "events": EVENTS, "checkpoints": 4}
    e = _entry([1, 2], [1, 1], [1, 2], [1, 1], setting=(1_000, "iid", "fresh"))
    old = {"settings": {**sizes, **change, "setting": [1_000, "iid", "fresh"]},
           "cell": e["cell"], "points": e["points"], "finals": e["finals"]}  # fmt: skip
    path = tmp_path / "r.json"
    path.write_text(json.dumps(old))
    got = sl.kept_settings(path, sizes, lambda text: None)
    assert list(got) == kept
    if kept:
        assert got[kept[0]]["points"] == e["points"] and got[kept[0]]["setting"] == e["setting"]


def test_kept_settings_of_a_record_of_several(tmp_path):
    sizes = {"version": sl.VERSION, "seed": 1, "seeds": 2, "events": EVENTS, "checkpoints": 4}
    cells = [_entry([1, 2], [1, 1], [1, 2], [1, 1]),
             _entry([1, 2], [1, 1], [1, 2], [1, 1], setting=(100, "iid", "few"))]  # fmt: skip
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"settings": {**sizes, "grid": []}, "cells": cells}))
    assert list(sl.kept_settings(path, sizes, lambda text: None)) == ["100 loop few",
                                                                      "100 iid few"]  # fmt: skip
    assert sl.kept_settings(tmp_path / "none.json", sizes, lambda text: None) == {}


def test_resume_reuses_the_units_of_a_run_with_another_grid(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the journal: build/runs/ here
    calls = []
    real = sl.seed_run

    def counted(**kwargs):
        calls.append((kwargs["loads"], kwargs["order"], kwargs["rest"], kwargs["seed"]))
        return real(**kwargs)

    monkeypatch.setattr(sl, "seed_run", counted)
    small = {**sl.QUICK, "events": 20_000, "grid": ((100, "loop64", "few"),)}
    monkeypatch.setattr(sl, "QUICK", small)
    args = ["experiment", "stratified-long", "--quick", "--jobs", "1", "--resume"]
    assert main([*args, "-o", str(tmp_path / "a")]) == 0
    assert len(calls) == small["seeds"]
    calls.clear()
    monkeypatch.setattr(
        sl, "QUICK", {**small, "grid": ((100, "iid", "few"), (100, "loop64", "few"))}
    )
    assert main([*args, "-o", str(tmp_path / "b")]) == 0  # no record there: nothing kept
    assert sorted(calls) == [(100, "iid", "few", 1), (100, "iid", "few", 2)]
    data = json.loads((tmp_path / "b" / "stratified-long-quick.json").read_text())
    assert [c["setting"] for c in data["cells"]] == [[100, "iid", "few"], [100, "loop64", "few"]]
