"""``hwprof experiment sampler-montecarlo --quick``: runs, writes its files, and the
helpers (4% crossing, classes) compute what they claim on hand-made curves."""

import json

import pytest

from hwprof.cli import main
from hwprof.experiments.sampler_montecarlo import classes, crossing


def test_quick_run_writes_plot_and_summary(tmp_path, capsys):
    assert main(["experiment", "sampler-montecarlo", "--quick", "-o", str(tmp_path)]) == 0
    for ext in ("png", "md", "json"):
        assert (tmp_path / f"sampler-montecarlo-quick.{ext}").stat().st_size > 0
    data = json.loads((tmp_path / "sampler-montecarlo-quick.json").read_text())
    assert set(data["curves"]) == {"R", "P", "CR", "CR-gaps"}
    assert data["substreams"] == [2, 16]  # a sweep, reported per n
    for n in ("2", "16"):
        hashed = data["curves_by_substreams"][n]
        assert set(hashed) == {"H[R]", "H[P]", "H[CR]", "H[CR]-gaps"}
        # H[P] is the most accurate sampler at every length, even at 150 runs per point
        for i in range(len(data["lengths"])):
            assert hashed["H[P]"][i] < min(data["curves"][s][i] for s in ("R", "P", "CR"))
    # more substreams, fewer other tuples beside p: H[P] at n = 16 beats n = 2
    by_n = data["curves_by_substreams"]
    assert by_n["16"]["H[P]"][-1] < by_n["2"]["H[P]"][-1]
    assert len(data["hotlist_curve"]) == len(data["lengths"]) == len(data["hotlist_lost_p"])
    out = capsys.readouterr().out  # the paper beside ours, values from the record
    r_crossing = data["crossing_4pct_by_substreams"]["2"]["R"]
    assert f"| N at 4% mean error, R | 12,000 | {r_crossing:,.0f} |" in out
    text = (tmp_path / "sampler-montecarlo-quick.md").read_text()
    assert "| H[CR]-gaps |" in text and "n = 16" in text


def test_crossing_interpolates():
    assert crossing([1000, 2000, 3000], [8.0, 6.0, 2.0]) == 2500.0
    assert crossing([1000, 2000], [3.0, 2.0]) == 1000.0
    assert crossing([1000, 2000], [9.0, 5.0]) is None


def test_classes_split_on_gaps():
    curves = {"R": [10, 10], "H[R]": [10, 10.2], "P": [8, 8], "CR": [8.1, 8], "H[P]": [5, 5],
              "H[CR]": [5, 5.1]}  # fmt: skip
    groups, _ = classes(curves)
    assert sorted(map(sorted, groups)) == [["CR", "P"], ["H[CR]", "H[P]"], ["H[R]", "R"]]


def test_classes_split_at_a_tenth_of_the_previous_level():
    """The gap rule at its boundary, levels relative to R worked out here (R = 10 at both
    lengths): 1.0, 1.0, 0.905, 0.8, 0.5, 0.5. P is 0.095 below H[R], under a tenth of
    H[R]'s level (0.1): same class; CR is 0.105 below P, over a tenth of P's (0.0905): a
    new class, and so is H[P] (0.3 below CR). The levels are returned as computed."""
    curves = {"R": [10, 10], "H[R]": [9, 11], "P": [9.05, 9.05], "CR": [8, 8],
              "H[P]": [5, 5], "H[CR]": [4, 6]}  # fmt: skip
    groups, level = classes(curves)
    assert groups == [["R", "H[R]", "P"], ["CR"], ["H[P]", "H[CR]"]]
    assert level == pytest.approx({"R": 1.0, "H[R]": 1.0, "P": 0.905, "CR": 0.8, "H[P]": 0.5,
                                   "H[CR]": 0.5}, abs=1e-12)  # fmt: skip
    # at a wider gap of 0.15 (CR 0.105 below P, under 0.136): P and CR together
    groups, _ = classes(curves, gap=0.15)
    assert groups == [["R", "H[R]", "P", "CR"], ["H[P]", "H[CR]"]]
