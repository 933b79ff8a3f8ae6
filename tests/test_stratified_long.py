"""``hwprof experiment stratified-long``: the quick run, and the verdict's stay bounds."""

from __future__ import annotations

import json

from hwprof.cli import main
from hwprof.experiments import stratified_long as sl


def test_quick_run(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the run's journal: build/runs/
    assert main(["experiment", "stratified-long", "--quick", "-o", str(tmp_path),
                 "--jobs", "1"]) == 0  # fmt: skip
    for ext in ("md", "json", "png"):
        assert (tmp_path / f"stratified-long-quick.{ext}").stat().st_size > 0
    data = json.loads((tmp_path / "stratified-long-quick.json").read_text())
    assert data["seeds"] == sl.QUICK["seeds"] and data["events"] == sl.QUICK["events"]
    assert data["cell"]["checkpoints"][-1] == sl.QUICK["events"]
    for name, points in data["points"].items():  # every seed's reach comes before its stay
        for reach, stay in zip(points["reach"], points["stay"], strict=True):
            assert stay is None or (reach is not None and reach <= stay), name
    md = (tmp_path / "stratified-long-quick.md").read_text()
    assert "## The paper's claim" in md and "## Verdict" in md
    assert md.count("\n| ") == 2 + sl.QUICK["seeds"]  # header, rule, one row per seed
    assert "| quantity | paper | ours |" in capsys.readouterr().out


def _run(r_stay, h_stay):
    return {"runs": {"R_256": {"stay": r_stay}, "H[P_256]_2048": {"stay": h_stay}}}


def test_stay_bound_only_where_hp_stayed_and_r_did_not():
    assert sl._stay_bound(_run(None, 500_000), 16_000_000) == 32.0
    assert sl._stay_bound(_run(1_000_000, 500_000), 16_000_000) is None  # a ratio: 2
    assert sl._stay_bound(_run(None, None), 16_000_000) is None
    assert sl._stay_bound(_run(500_000, None), 16_000_000) is None


def test_verdict_counts_the_bounds_that_reach_the_paper():
    # two seeds where only H[P] stayed below 5 %: bounds 32 and 16; one reaches 23
    record = {"paper": {"reach_ratio": (3.0, 3.5), "stay_ratio": 23.0}, "seeds": 2,
              "conditions": {"reach": [], "stay": []},
              "cell": {"ratios": {"reach": None, "stay": None}},
              "points": {"R_256": {"stay": [None, None]},
                         "H[P_256]_2048": {"stay": [500_000, 1_000_000]}},
              "stay_bounds": [32.0, 16.0]}  # fmt: skip
    text = sl._verdict(record)
    assert "R_256 stayed below 5 % in 0 of 2 seeds, H[P_256]_2048 in 2 of 2" in text
    assert "a stay ratio above 16.0-32.0" in text and "1 of these bounds reach 23" in text
    record["stay_bounds"] = [None, None]
    assert "bounds" not in sl._verdict(record)
