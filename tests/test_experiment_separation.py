"""``experiments.separation`` (threshold rules, leave-one-out, decided outcomes) and the
input shape of ``multihash-conditions`` (Zipf skew fit, top-k shares, near misses)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hwprof.experiments import multihash_conditions as mc
from hwprof.experiments import separation as sep


def _zipf_counts(distinct, skew, total=1_000_000):
    """Counts of an exact Zipf histogram: round(total r^-s / H)."""
    w = np.arange(1, distinct + 1, dtype=float) ** -skew
    return np.round(total * w / w.sum()).astype(np.int64)


def _recovers(fit) -> bool:
    """The checker: ``fit`` gives back the skew of exact Zipf histograms within 0.01."""
    return all(abs(fit(_zipf_counts(30_000, s)) - s) < 0.01 for s in (0.5, 0.8, 1.0, 1.2))


def test_skew_fit_recovers_the_skew_of_an_exact_histogram():
    assert _recovers(mc.skew_fit)


def test_skew_fit_checker_catches_an_off_by_one_rank():
    def rank_from_zero(counts, min_count=mc.SKEW_FIT_MIN_COUNT, points=50):
        # the mutant: ranks counted from 0 (shifted by one: log(r + 1) for rank r)
        c = np.sort(np.asarray(counts))[::-1]
        c = c[c >= min_count]
        ranks = np.unique(np.geomspace(1, len(c), points).round().astype(np.int64))
        return float(-np.polyfit(np.log(ranks + 1), np.log(c[ranks - 1]), 1)[0])

    assert not _recovers(rank_from_zero)


@pytest.mark.parametrize("skew", [0.6, 1.0])
def test_skew_fit_on_a_generated_stream(skew):
    seed = 7
    (keys,) = mc.zipf_stream(seed, 1, 1_000_000, 10_000, skew, 0.0)
    _, counts = np.unique(keys, return_counts=True)
    # multinomial counts of at least 10 draws: relative sd at most 1/sqrt(10) per rank,
    # averaged over about 50 ranks in the fit: far inside 0.03
    assert mc.skew_fit(counts) == pytest.approx(skew, abs=0.03), f"seed {seed}"


def test_skew_fit_needs_three_ranks():
    assert mc.skew_fit(np.array([50, 20, 3, 1])) is None
    assert mc.skew_fit(np.array([50, 20, 12])) is not None


def test_input_shape_of_a_hand_made_stream():
    # one interval of 100 tuples, threshold 20: counts 40, 25, 15, 10, 5 and 5 ones
    counts = [40, 25, 15, 10, 5] + [1] * 5
    keys = np.repeat(np.arange(1, 11, dtype=np.uint64), counts)
    s = mc.input_shape([keys], threshold=20, counters=5, accumulator=4)
    assert s["top_share"]["10"] == pytest.approx(1.0)  # 10 distinct tuples in all
    assert s["top_share"]["100"] == pytest.approx(1.0)
    assert s["distinct_per_counter"] == pytest.approx(10 / 5)
    assert s["candidates_per_entry"] == pytest.approx(2 / 4)  # 40 and 25
    assert s["near_misses"] == 2  # 15 and 10 (at least T/2 = 10, below 20)
    assert s["skew_fit"] is not None  # 40, 25, 15, 10: four ranks of at least 10
    # two intervals: the means
    other = np.repeat(np.arange(1, 3, dtype=np.uint64), [50, 50])
    two = mc.input_shape([keys, other], threshold=20, counters=5, accumulator=4)
    assert two["candidates_per_entry"] == pytest.approx((2 / 4 + 2 / 4) / 2)
    assert two["distinct_per_counter"] == pytest.approx((10 / 5 + 2 / 5) / 2)
    assert two["near_misses"] == pytest.approx(1.0)
    assert two["skew_fit"] == s["skew_fit"]  # the second has too few ranks: left out


def _count_wrong(rule, values, labels):
    """The checker: a rule's misclassified cells, counted cell by cell with apply_rule."""
    n = len(labels)
    preds = [sep.apply_rule(rule, {k: v[i] for k, v in values.items()}) for i in range(n)]
    return sum(p is None or p != y for p, y in zip(preds, labels, strict=True))


def test_best_rule_finds_a_separating_threshold():
    values = {"a": [0.1, 0.2, 0.3, 0.7, 0.8], "b": [5, 1, 4, 2, 3]}
    labels = [True, True, True, False, False]
    rule = sep.best_rule(values, labels, ["a"])
    assert rule["errors"] == 0 and rule["directions"] == ["<"]
    assert rule["thresholds"] == [pytest.approx(0.5)]  # midway in the widest gap
    assert _count_wrong(rule, values, labels) == 0
    b = sep.best_rule(values, labels, ["b"])
    assert b["errors"] == _count_wrong(b, values, labels) == 1
    # an injected error: the threshold one value over -> the checker sees a misclassification
    moved = {**rule, "thresholds": [0.25]}
    assert _count_wrong(moved, values, labels) == 1


def test_best_pair_needs_both_properties():
    # True only where a is low AND b is high: no single threshold does it
    values = {"a": [1, 1, 2, 2, 1, 2], "b": [1, 2, 1, 2, 3, 3]}
    labels = [False, True, False, False, True, False]
    assert sep.best_rule(values, labels, ["a"])["errors"] >= 1
    assert sep.best_rule(values, labels, ["b"])["errors"] >= 1
    pair = sep.best_rule(values, labels, ["a", "b"])
    assert pair["errors"] == 0 and _count_wrong(pair, values, labels) == 0
    assert pair["directions"] == ["<", ">"]
    with pytest.raises(ValueError, match="one or two properties"):
        sep.best_rule(values, labels, ["a", "b", "a"])


def test_a_value_not_measured_counts_as_misclassified():
    values = {"a": [0.1, None, 0.9]}
    rule = sep.best_rule(values, [True, True, False], ["a"])
    assert rule["errors"] == 1
    assert sep.apply_rule(rule, {"a": None}) is None


def test_leave_one_out():
    values = {"a": [0.1, 0.2, 0.3, 0.7, 0.8, 0.9]}
    assert sep.leave_one_out(values, [True] * 3 + [False] * 3, ["a"]) == 0
    # an outlier: True at 0.85 among Falses; whatever is fitted without it calls it False,
    # and with it left in, the others still separate
    assert sep.leave_one_out(values, [True, True, True, False, True, False], ["a"]) >= 1


def test_confusion_counts():
    got = sep.confusion([True, True, False, False, None], [True, False, True, False, True])
    assert got == {"both": 1, "wrong": 1, "missed": 1, "neither": 1, "unknown": 1}


def test_decided_by_hand():
    # d = 0.2..1.0: mean 0.6, sd 0.3162, half-width 2.776 x 0.3162 / sqrt 5 = 0.393
    assert sep.decided([1.2, 1.4, 1.6, 1.8, 2.0], [1.0] * 5) is True
    # d = -0.5, 0.5, 1, 1.5, 0: mean 0.5, sd 0.7906, half-width 0.981
    assert sep.decided([0.5, 1.5, 2.0, 2.5, 1.0], [1.0] * 5) is False
    assert sep.decided([1.0], [0.0]) is False
    half = sep.T_975[4] * math.sqrt(0.1) / math.sqrt(5)
    assert half == pytest.approx(0.3926, abs=1e-4)


def _errors(c1r0_4, rival_seeds, rival="C1R1 2"):
    out = {label: {"total": 9.0, "seeds": [9.0] * 5} for label, _, _ in mc.CONFIGS}
    out["C1R0 4"] = {"total": float(np.mean(c1r0_4)), "seeds": list(c1r0_4)}
    out[rival] = {"total": float(np.mean(rival_seeds)), "seeds": list(rival_seeds)}
    return out


def test_paper_best_outcome():
    won = mc.paper_best_outcome(_errors([0.1] * 5, [1.0, 1.1, 0.9, 1.0, 1.0]))
    assert won == {"won": True, "rival": "C1R1 2", "decided": True}
    close = mc.paper_best_outcome(_errors([0.5, 0.1, 0.9, 0.2, 0.8], [0.4, 0.6, 0.5, 0.5, 0.4],
                                          rival="C1R0 8"))  # fmt: skip
    assert close == {"won": False, "rival": "C1R0 8", "decided": False}


def test_separation_of_hand_made_cells():
    def one(share, won):
        props = {"distinct": 1e4, "candidates": 50.0, "candidate_share": share, "churn": 0.1,
                 "unshielded": 1e5, "rho": {"2": 0.5, "4": 1.0, "8": 2.0, "16": 4.0}}  # fmt: skip
        errs = _errors([0.1] * 5, [1.0] * 5) if won else _errors([1.0] * 5, [0.1] * 5)
        shape = {"skew_fit": 1.0, "top_share": {"10": 0.2, "100": 0.5, "1000": 0.8},
                 "distinct_per_counter": 5.0, "candidates_per_entry": 0.05,
                 "near_misses": 10.0}  # fmt: skip
        cell = {"distinct_setting": 10_000, "skew": 1.0, "churn_setting": 0.0,
                "errors": errs, "properties": props}  # fmt: skip
        return cell, shape

    made = [one(0.1, True), one(0.2, True), one(0.5, False), one(0.6, False)]
    got = mc.separation([c for c, _ in made], [s for _, s in made], {}, "1m")
    share = got["single"]["candidate_share"]
    assert share["errors"] == 0 and share["thresholds"] == [pytest.approx(0.35)]
    assert share["confusion"] == {"both": 2, "missed": 0, "wrong": 0, "neither": 2,
                                  "unknown": 0}  # fmt: skip
    assert "candidate_share" in got["best_single"] and "nu4" in got["best_single"]
    assert got["single"]["skew_fit"]["errors"] == 2  # the same everywhere: no information
    assert got["decided_cells"] == 4
