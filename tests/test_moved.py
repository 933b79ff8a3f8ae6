"""hwprof.experiments.moved: the "moved" table of a results file across a key change."""

from __future__ import annotations

import json

from hwprof.experiments.moved import before_key_change, flatten, moved_lines

PATTERNS = (("programs", "*", "error"), ("programs", "*", "curve"))


def headline(r):
    return [("error %, per program", "about 1",
             "; ".join(f"{p} {v['error']:.2f}" for p, v in r["programs"].items()))]  # fmt: skip


def record(error_a, curve_b, **extra):
    return {"programs": {"a": {"error": error_a, "curve": [None, 1.0]},
                         "b": {"error": 2.0, "curve": [curve_b, 3.0], "other": 9.0}},
            **extra}  # fmt: skip


def test_flatten_picks_the_patterns_numbers():
    assert flatten(record(1.0, 0.5), PATTERNS) == {
        "programs/a/error": 1.0, "programs/b/error": 2.0, "programs/a/curve[1]": 1.0,
        "programs/b/curve[0]": 0.5, "programs/b/curve[1]": 3.0}  # fmt: skip


def test_before_and_after_a_key_change(tmp_path):
    path = tmp_path / "x.json"
    assert before_key_change(path, "mix", "low", headline, PATTERNS) is None
    path.write_text(json.dumps(record(1.0, 0.5, date="then")))  # no value_map: "low"
    base = before_key_change(path, "mix", "low", headline, PATTERNS)
    assert base["value_map"] == "low" and base["date"] == "then"
    assert base["headline"] == [["error %, per program", "about 1", "a 1.00; b 2.00"]]
    new = record(1.25, 0.5, value_map="mix", before_key_change=base)
    md = "\n".join(moved_lines(new, headline, PATTERNS))
    assert "(`low` to `mix`)" in md
    assert "1 of the 5 numbers compared moved" in md
    row = "| error %, per program | about 1 | a 1.00; b 2.00 | a 1.25; b 2.00 | +0.25; +0.00 |"
    assert row in md
    assert "| `programs/a/error` | 1.000 | 1.250 | +0.250 |" in md
    # a rerun with the same key carries the base on; no base, no table
    path.write_text(json.dumps(new))
    assert before_key_change(path, "mix", "low", headline, PATTERNS) == base
    assert moved_lines(record(1.0, 0.5), headline, PATTERNS) == []


def test_change_reads_the_numbers_not_the_digits_of_names():
    from hwprof.experiments.moved import _change

    assert _change("xz 1.54; bzip2 0.72", "xz 1.60; bzip2 0.70") == "+0.06; -0.02"
    assert _change("yes", "no") == "-" and _change("yes", "yes") == "0"


def test_each_metric_is_summed_in_its_own_unit():
    # two metrics: "error" (%) moves by 0.25 on one of two programs, "curve" (a count)
    # by 100 on one of four points; a mean over all six numbers would mix the units
    def metric(path):
        return "error (%)" if path.endswith("error") else "curve (count)"

    old = record(1.0, 50.0, value_map="low")
    base = {"value_map": "low", "headline": [list(r) for r in headline(old)],
            "numbers": flatten(old, PATTERNS)}  # fmt: skip
    new = record(1.25, 150.0, value_map="mix", before_key_change=base)
    md = "\n".join(moved_lines(new, headline, PATTERNS, metric=metric))
    assert "2 of the 5 numbers compared moved" in md
    assert "| error (%) | 2 | 1 | 0.125 | +0.250 |" in md  # (0.25 + 0) / 2
    assert "| curve (count) | 3 | 1 | 33.333 | +100.000 |" in md  # (100 + 0 + 0) / 3
    assert "| curve (count) | `programs/b/curve[0]` | 50.000 | 150.000 | +100.000 |" in md
    assert "mean absolute change 16.7" not in md and "16.708" not in md


def test_stratified_values_names_every_moved_number_with_one_unit():
    from hwprof.experiments.stratified_values import MOVED_UNITS, moved_metric

    assert moved_metric("programs/xz/compressors/H[P_256]_2048/mean[3]").endswith("(%)")
    assert moved_metric("programs/xz/edges/mean[3]").startswith("edge")
    assert moved_metric("programs/xz/compressors/R_256/reach/mean") == MOVED_UNITS["reach"]
    assert len(set(MOVED_UNITS.values())) == len(MOVED_UNITS)
