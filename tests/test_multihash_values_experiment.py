"""``hwprof experiment multihash-values``: the quick form end to end, keys, configurations."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from hwprof.cli import main
from hwprof.experiments.multihash_values import configurations, hash_seed
from hwprof.traces import workloads


def test_configurations_are_the_papers():
    labels = [c[0] for c in configurations()]
    # Figs. 10-11: 1, 2, 4, 8 tables x C0/C1 x R0/R1 (one table: C has no effect); Fig. 12: 16
    for tables in (2, 4, 8):
        for v in ("C0R0", "C0R1", "C1R0", "C1R1"):
            assert f"{v} {tables}" in labels
    assert {"C1R0 1", "C1R1 1", "C1R0 16"} <= set(labels)
    # seeds of different points never share a table's hash function (16 tables each)
    assert hash_seed(1) - hash_seed(0) >= 16


def test_quick_run(tmp_path, capsys):
    assert main(["experiment", "multihash-values", "--quick", "--jobs", "1",
                 "-o", str(tmp_path)]) == 0  # fmt: skip
    for ext in ("md", "json"):
        assert (tmp_path / f"multihash-values-quick.{ext}").stat().st_size > 0
    for png in ("streams", "10k"):
        assert (tmp_path / f"multihash-values-quick-{png}.png").stat().st_size > 0
    md = (tmp_path / "multihash-values-quick.md").read_text()
    assert md.index("## The streams") < md.index("error % per configuration")
    assert "| fully associative (paper) |" in md and "| 4-way x 25 sets |" in md
    data = json.loads((tmp_path / "multihash-values-quick.json").read_text())
    r = next(iter(data["presets"]["10k"].values()))
    # the trace each program was read from, by name and digest
    shipped = workloads.shipped_trace("xz")
    assert data["traces"] == {"xz (shipped)": {
        "file": shipped.name, "path": str(Path(shipped).absolute()),
        "sha256": hashlib.sha256(Path(shipped).read_bytes()).hexdigest()}}  # fmt: skip
    assert r["intervals"] == 30 and r["distinct"] > r["candidates"] > 0
    for label in (
        "C1R0 4",
        "C1R0 4 4-way",
        "C1R0 4 10-way",
        "count-min",
        "frequent-items",
        "hotlist",
    ):
        assert len(r["errors"][label]["seeds"]) == data["seeds"]
    out = capsys.readouterr().out  # the paper beside ours, values from the record
    beats = "yes" if data["claims"]["10k"]["c1r0_4_beats_bsh"] else "no"
    assert f"| 4 tables C1-R0 below the best single hash (10k) | yes | {beats} |" in out


def test_baseline_sentence_follows_the_error_parts():
    """The sentence on the sketches' error parts says what the parts show, not a fixed text."""
    from hwprof.experiments.multihash_values import _baseline_parts_sentence

    only_over = {"count-min": [5.0, 0.0, 2.0, 0.0], "frequent-items": [3.0, 0.0, 1.0, 0.0],
                 "hotlist": [1.0, 2.0, 3.0, 1.0]}  # fmt: skip
    text = _baseline_parts_sentence(only_over)
    assert "count-min and frequent-items only overestimate" in text and "crowd" not in text
    flooded = dict(only_over, **{"count-min": [900.0, 30.0, 25.0, 0.0]})
    text = _baseline_parts_sentence(flooded)
    assert "frequent-items only overestimate" in text
    assert "count-min also miss true candidates" in text


def test_best_multi_ignores_single_tables_and_picks_the_lowest():
    from hwprof.experiments.multihash_values import best_multi, configurations

    errors = {label: {"total": 5.0 + i} for i, (label, *_) in enumerate(configurations())}
    errors["C1R0 1"]["total"] = 0.0  # a single table is never a multi-hash pick
    errors["C0R1 8"]["total"] = 0.5
    assert best_multi(errors) == "C0R1 8"


def _claims_of(totals: dict, false_negatives: dict | None = None) -> dict:
    """``_claims`` of one preset of hand-made error cells: ``totals`` maps a program to
    {label: total error}; every other configuration has 9.0."""
    from hwprof.experiments.multihash_values import _claims

    programs = {}
    for program, given in totals.items():
        errors = {label: {"total": given.get(label, 9.0), "false_negative": 0.0}
                  for label, *_ in configurations()}  # fmt: skip
        for label, fn in (false_negatives or {}).get(program, {}).items():
            errors[label]["false_negative"] = fn
        programs[program] = {"errors": errors}
    return _claims({"presets": {"p": programs}})["p"]


def test_claims_from_hand_made_errors():
    """Each verdict and difference of ``_claims`` on errors whose answers are worked out
    here (binary-exact values, compared with ==)."""
    c = _claims_of(
        {"a": {"C1R0 1": 6.0, "C1R1 1": 5.0, "C1R0 2": 4.0, "C1R0 4": 2.0, "C1R0 8": 3.0,
               "C1R0 16": 2.5, "C0R0 4": 2.5, "C0R1 8": 1.5},
         "b": {"C1R0 1": 1.0, "C1R1 1": 4.0, "C1R0 2": 3.0, "C1R0 4": 0.5, "C1R0 8": 0.25,
               "C1R0 16": 0.75, "C0R0 4": 0.4}},
        {"a": {"C1R1 8": 0.25, "C1R0 8": 0.75}})  # fmt: skip
    # best single hash: a's is C1R1 (5.0), b's C1R0 (1.0)
    assert c["bsh"] == {"a": 5.0, "b": 1.0}
    assert c["c1r0_4"] == {"a": 2.0, "b": 0.5} and c["c1r0_4_mean"] == 1.25
    # gain = best single - C1R0 4 (positive: the 4 tables are better)
    assert c["gain"] == {"a": 3.0, "b": 0.5}
    assert c["c1r0_4_beats_bsh"] is True
    assert c["under_1pct"] is False  # mean 1.25 %
    assert c["best_tables"] == {"a": 4, "b": 8}
    assert c["best_multi"] == {"a": "C0R1 8", "b": "C1R0 8"}
    assert c["best_multi_error"] == {"a": 1.5, "b": 0.25}
    assert c["best_gain"] == {"a": 3.5, "b": 0.75}
    # the lowest mean over both programs: C1R0 4 (1.25) before C0R0 4 (1.45)
    assert c["common_best"] == "C1R0 4" and c["common_best_error"] == {"a": 2.0, "b": 0.5}
    assert c["c1_beats_c0_at_4"] == {"a": True, "b": False}
    # (C1R1 8, C1R0 8) false negatives, in that order
    assert c["r1_fn_8"] == {"a": (0.25, 0.75), "b": (0.0, 0.0)}


def test_claims_verdicts_the_other_way():
    """The verdicts of the case above reversed, at their boundaries: C1R0 4 equal to the
    best single hash does not beat it, equal to C0R0 4 counts as C1 at least as good, a
    mean under 1 % is under 1 %, and a mean of exactly 1 % is not."""
    c = _claims_of(
        {
            "a": {"C1R0 1": 3.0, "C1R1 1": 2.0, "C1R0 4": 0.5, "C0R0 4": 0.5},
            "b": {"C1R0 1": 1.0, "C1R1 1": 1.0, "C1R0 4": 1.0, "C0R0 4": 1.5},
        }
    )
    assert c["c1r0_4_beats_bsh"] is False  # b: 1.0, not below 1.0
    assert c["gain"] == {"a": 1.5, "b": 0.0}
    assert c["under_1pct"] is True and c["c1r0_4_mean"] == 0.75
    assert c["c1_beats_c0_at_4"] == {"a": True, "b": True}
    worse = _claims_of({"a": {"C1R0 1": 3.0, "C1R1 1": 2.0, "C1R0 4": 2.5}})
    assert worse["gain"] == {"a": -0.5} and worse["c1r0_4_beats_bsh"] is False
    at_one = _claims_of({"a": {"C1R0 1": 3.0, "C1R1 1": 2.0, "C1R0 4": 1.0}})
    assert at_one["under_1pct"] is False and at_one["c1r0_4_beats_bsh"] is True


def test_page_reads_the_papers_numbers_from_the_record():
    """The paper's figures in the page's prose come from the record's ``paper``, so a
    record with other figures gives a page with those (the committed record as input)."""
    from pathlib import Path

    from hwprof.experiments.multihash_values import _comparison, _markdown

    path = Path(__file__).resolve().parent.parent / "docs/results/multihash-values.json"
    record = json.loads(path.read_text())
    page = _markdown(record, "multihash-values")
    assert "gcc 5 % and go 1.5 % against 10 % and 20 %" in page
    assert "(a 5- and 18.5-point gain, 2x and 13x)" in page
    assert "[multihash-conditions](multihash-conditions.md)" in page
    record["paper"]["best_multihash_1m"]["gcc"] = 2.5
    record["paper"]["improvement_4_tables_go_1m"] = 12.0
    record["paper"]["r1_8_tables_extra_fn_go_10k"] = 6.0
    record["comparison"] = _comparison(record)
    page = _markdown(record, "multihash-values")
    assert "gcc 2.5 % and go 1.5 % against 10 % and 20 %" in page
    assert "(a 7.5- and 18.5-point gain, 4x and 13x)" in page
    assert "gcc 2.5 % vs 10 %, go 1.5 % vs 20 %" in page
    assert "about 12% (absolute)" in page and "(the paper: about 12 on go at 1M)" in page
    assert "add about 6 % of false negatives" in page
    assert "gcc 5 %" not in page and "about 10" not in page and "about 4 %" not in page


def test_added_programs_are_merged_and_the_others_kept(tmp_path, monkeypatch, capsys):
    """``add_programs`` profiles one program alone and puts it into the record beside the
    others, unchanged; its errors are those of one pass over all seeds (``run_program``).
    The 10K preset stands in for 1M, on 3 intervals of the shipped xz and sort traces."""
    import pytest

    from hwprof.experiments import multihash_values as mv
    from hwprof.traces.keys import DEFAULT_VALUE_MAP
    from hwprof.traces.tracefile import open_trace

    monkeypatch.chdir(tmp_path)  # the run's journal goes under build/runs of the cwd
    shipped = {n: str(workloads.shipped_trace(n)) for n in ("xz", "sort")}
    monkeypatch.setattr(
        mv, "_program_sources", lambda names, seed, log: [(n, {"path": shipped[n]}) for n in names]
    )
    monkeypatch.setattr(mv, "INTERVALS_10K", 3)
    monkeypatch.setattr(mv, "INTERVALS_1M", 3)
    monkeypatch.setitem(mv.PRESETS, "1m", mv.PRESETS["10k"])
    out = tmp_path / "results"
    out.mkdir()
    base = {"seed": 1, "seeds": 2, "quick": False, "complete": True, "presets": {},
            "collisions": {}, "budget": {}, "paper": mv.PAPER, "value_map": DEFAULT_VALUE_MAP,
            "timing": {"date": "-", "seconds": 10.0, "cpu_seconds": {}}}  # fmt: skip
    (out / "multihash-values.json").write_text(json.dumps(base))
    first = mv.add_programs(out, ["xz"])
    second = mv.add_programs(out, ["sort"])
    assert json.loads(json.dumps(second)) == json.loads((out / "multihash-values.json").read_text())
    for preset in ("10k", "1m"):
        assert list(second["presets"][preset]) == ["xz", "sort"]
        assert second["presets"][preset]["xz"] == first["presets"][preset]["xz"]
    direct = mv.run_program(open_trace(shipped["sort"]), mv.PRESETS["10k"], 2, 3)
    assert second["presets"]["1m"]["sort"]["errors"] == direct["errors"]
    assert second["presets"]["1m"]["sort"]["intervals"] == 3
    assert second["traces"]["sort"] == {
        "file": Path(shipped["sort"]).name, "path": shipped["sort"],
        "sha256": hashlib.sha256(Path(shipped["sort"]).read_bytes()).hexdigest()}  # fmt: skip
    assert [a["programs"] for a in second["timing"]["added"]] == [["xz"], ["sort"]]
    assert {"1m sort", "10k sort", "1m xz"} <= set(second["timing"]["cpu_seconds"])
    page = (out / "multihash-values.md").read_text()
    assert "sort were profiled alone afterwards" in page
    assert "| 1m | sort |" in page
    # bad input: one line, nothing written
    stamp = (out / "multihash-values.json").stat().st_mtime_ns
    with pytest.raises(ValueError, match="unknown program 'gcc'"):
        mv.add_programs(out, ["gcc"])
    with pytest.raises(ValueError, match="no full multihash-values record"):
        mv.add_programs(tmp_path / "none", ["xz"])
    capsys.readouterr()
    assert mv.main(["--add", "gcc", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown program 'gcc'" in err
    assert (out / "multihash-values.json").stat().st_mtime_ns == stamp


def _hand_record(selected_error: float, no_candidate: bool = False) -> dict:
    """A whole record of hand-made cells at 10k: xz and bzip2 (standard programs) and
    sha256sum (of ``MORE_PROGRAMS``) with every error ``selected_error``. Standard programs:
    every configuration 9.0 except C1R0 4 (xz 0.5, bzip2 1.0), C1R1 2 (xz 2.0, bzip2 0.25)
    and the best single hash C1R1 1 (xz 4.0, bzip2 3.0). ``no_candidate``: sha256sum has
    no true candidate in any of its 4 intervals and only the hotlist reports anything."""
    from hwprof.experiments import multihash_values as mv

    labels = (
        [c[0] for c in mv.configurations()]
        + [mv.organisation_label(w) for w in mv.ORGANISATIONS[1:]]
        + list(mv.BASELINES)
    )
    given = {"xz": {"C1R0 4": 0.5, "C1R1 2": 2.0, "C1R1 1": 4.0},
             "bzip2": {"C1R0 4": 1.0, "C1R1 2": 0.25, "C1R1 1": 3.0}}  # fmt: skip

    def cell(total, program):
        empty = no_candidate and program == "sha256sum"
        return {"total": total, "min": total, "max": total, "seeds": [total, total],
                "false_positive": total, "false_negative": 0.0, "neutral_positive": 0.0,
                "neutral_negative": 0.0, "intervals": 4, "no_candidate": 4 if empty else 0,
                "no_candidate_reported": [0, 0],
                "undefined": [4, 4] if empty and total == 0.0 else [0, 0]}  # fmt: skip

    programs = {}
    for name in ("xz", "bzip2", "sha256sum"):
        errors = {}
        for label in labels:
            total = (
                given[name].get(label, 9.0)
                if name in given
                else 5.0
                if no_candidate and label == "hotlist"
                else selected_error
            )
            errors[label] = cell(total, name)
        programs[name] = {"tuples": 40_000, "intervals": 4, "distinct": 100.0,
                          "candidates": 0.0 if name == "sha256sum" and no_candidate else 2.0,
                          "candidates_max": 2, "errors": errors}  # fmt: skip
    record = {"seed": 1, "quick": False, "complete": True, "seeds": 2, "paper": mv.PAPER,
              "value_map": "mix-fold", "presets": {"10k": programs},
              "collisions": {n: {"tuples": 1, "pairs": 1, "keys": 1} for n in programs},
              "timing": {"seconds": 1.0, "cpu_seconds": {}}}  # fmt: skip
    record["claims"] = mv._claims(record)
    record["comparison"] = mv._comparison(record)
    return record


def test_means_leave_out_a_selected_program():
    """A program of MORE_PROGRAMS (sha256sum, chosen for a property) moves no mean, no
    "one configuration for all programs" and no verdict: a record where its errors are
    extreme gives the same claims, comparison and headline as one where they are 0; its
    own numbers are still on the page, in its own column and rows."""
    from hwprof.experiments import multihash_values as mv

    calm, wild = _hand_record(0.0), _hand_record(1e6)
    for record in (calm, wild):
        c = record["claims"]["10k"]
        assert c["programs"] == ["xz", "bzip2"]
        assert c["c1r0_4_mean"] == 0.75 and c["under_1pct"] is True  # (0.5 + 1.0) / 2
        assert c["c1r0_4_beats_bsh"] is True
        # C1R0 4 (mean 0.75) beats C1R1 2 (mean 1.125) over xz and bzip2
        assert c["common_best"] == "C1R0 4"
        assert set(c["c1r0_4"]) == set(c["bsh"]) == set(c["common_best_error"]) == {"xz", "bzip2"}
        assert c["selected"]["c1r0_4"] == {"sha256sum": record["presets"]["10k"]["sha256sum"]
                                           ["errors"]["C1R0 4"]["total"]}  # fmt: skip
    assert {k: v for k, v in calm["claims"]["10k"].items() if k != "selected"} == {
        k: v for k, v in wild["claims"]["10k"].items() if k != "selected"
    }
    assert calm["comparison"] == wild["comparison"]
    assert mv.headline(calm) == mv.headline(wild)
    page = mv._markdown(wild, "mv")
    assert "mean 0.750 % over the standard programs" in page
    assert "| configuration | xz | bzip2 | mean of 2 | sha256sum (selected) |" in page
    # the C1R0 4 row: the mean of xz and bzip2, then sha256sum's own cell
    assert ("| C1R0 4 | 0.50 [0.50-0.50] | 1.00 [1.00-1.00] | 0.75 | "
            "1000000.00 [1000000.00-1000000.00] |") in page  # fmt: skip
    assert "| 10k | sha256sum (selected) | 1000000.00" in page
    assert "chosen for its low concentration (multihash-conditions)" in page
    # the check fails when the selected program counts as a standard one
    import pytest

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(mv, "MORE_PROGRAMS", ())
        assert mv._claims(wild)["10k"]["c1r0_4_mean"] != 0.75


def test_page_says_where_a_program_has_no_true_candidate():
    """A program with no true candidate in any interval: the page says so beside its
    numbers, with the count of profilers that reported nothing (0/0) taken from the cells;
    a program with candidates gets no such note."""
    from hwprof.experiments import multihash_values as mv

    page = mv._markdown(_hand_record(0.0, no_candidate=True), "mv")
    # 15 configurations, 2 set-associative accumulators and 3 baselines; only the hotlist
    # reported a tuple
    assert (
        "sha256sum has no true candidate in any of its 4 10k intervals: an error there is "
        "over the intervals where a profiler reported a tuple (false positives only); 19 "
        "of the 20 profilers reported none in any interval and seed"
    ) in page
    assert "the others: hotlist." in page
    assert (
        "sha256sum (selected, not in the pick): 0.00 %, gain +0.00 (no true candidate in "
        "any of its 4 intervals" in page
    )
    assert "xz has no true candidate" not in page
    assert "no true candidate in any" not in mv._markdown(_hand_record(0.0), "mv")
