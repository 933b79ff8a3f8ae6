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
    assert rule["gap"] == pytest.approx(0.4)
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


def test_a_rule_beyond_every_value_reads_as_none():
    # every cell False: the best rule puts all of them on one side
    values = {"a": [0.1, 0.2, 0.3]}
    rule = sep.best_rule(values, [False] * 3, ["a"])
    assert rule["errors"] == 0 and rule["gap"] is None
    pred = [sep.apply_rule(rule, {"a": v}) for v in values["a"]]
    judged = {**rule, "confusion": sep.confusion(pred, [False] * 3)}
    assert mc._rule_text(judged) == "none (every cell: no)"
    two = {"properties": ["candidate_share", "nu4"], "directions": ["<", ">"],
           "thresholds": [0.349, 1.27]}  # fmt: skip
    assert mc._rule_text(two) == "candidate share < 0.349 and nu_4 (noise load) > 1.27"


def test_t_quantiles_match_the_published_table():
    # two-sided 95 % points of Student's t (e.g. NIST/SEMATECH e-Handbook, table 1.3.6.7.2)
    published = {1: 12.706, 4: 2.776, 9: 2.262, 14: 2.145, 19: 2.093, 24: 2.064, 29: 2.045}
    assert {k: sep.T_975[k] for k in published} == published
    assert all(sep.T_975[k] > sep.T_975[k + 1] for k in range(1, 30))


def test_decided_with_twenty_seeds_by_hand():
    # d alternates 0.1, 0.3 (mean 0.2, sd 0.1026): half-width 2.093 x 0.1026 / sqrt 20 = 0.048
    a = [1.1, 1.3] * 10
    assert sep.decided(a, [1.0] * 20) is True
    # d alternates -0.8, 1.0 (mean 0.1, sd 0.9234): half-width 0.432
    assert sep.decided([0.2, 2.0] * 10, [1.0] * 20) is False
    with pytest.raises(ValueError, match="at most 31 seeds, not 32"):
        sep.decided([1.0] * 32, [0.0] * 32)


def test_margin_by_hand():
    values = {"a": [0.0, 1.0, 3.0, 10.0], "b": [5.0, 6.0, None, 9.0]}
    one = {"properties": ["a"], "thresholds": [2.0]}
    # the threshold 2 lies between 1 and 3: gap 2 over the spread 10
    assert sep.margin(one, values) == pytest.approx(0.2)
    # b (None left out): 7.5 between 6 and 9, gap 3 over spread 4; the pair takes the narrower
    pair = {"properties": ["a", "b"], "thresholds": [2.0, 7.5]}
    assert sep.margin(pair, values) == pytest.approx(0.2)
    assert sep.margin({"properties": ["b"], "thresholds": [7.5]}, values) == pytest.approx(0.75)
    # only the cells in ``among`` bound the gap (3 left out: 1 to 10), the spread is all
    among = [True, True, False, True]
    assert sep.margin(one, values, among) == pytest.approx(0.9)
    five = {"properties": ["a"], "thresholds": [5.0]}
    assert sep.margin(five, values, [True, True, True, False]) is None
    # beyond every value: no margin, and a pair with one such threshold has the other's
    assert sep.margin({"properties": ["a"], "thresholds": [11.0]}, values) is None
    assert sep.margin({"properties": ["a", "b"], "thresholds": [-1.0, 7.5]},
                      values) == pytest.approx(0.75)  # fmt: skip


def _judged(errors, undecided, loo, m):
    return {"errors": errors, "misclassified_undecided": undecided, "leave_one_out": loo,
            "margin": m}  # fmt: skip


#: hand-made rules and the order the ranking must give them
RULES = [
    _judged(2, 2, 3, 0.001),  # 0: fewest errors, all undecided, threshold in a tiny gap
    _judged(3, 3, 3, 0.06),  # 1: one more error, all undecided, a wide margin
    _judged(3, 3, 4, 0.06),  # 2: as 1 but one more leave-one-out error
    _judged(1, 0, 1, 0.5),  # 3: one decided cell wrong: after every rule with none
    _judged(4, 4, 5, None),  # 4: beyond every value: after every margin
    _judged(2, 2, 3, 0.06),  # 5: as 1 with one error fewer in all
]
RANKED = [5, 1, 2, 0, 4, 3]


def _ranks_right(rank) -> bool:
    """The checker: ``rank`` orders :data:`RULES` as :data:`RANKED`."""
    return rank(RULES) == RANKED


def test_rank_rules_puts_the_robust_rule_first():
    assert _ranks_right(sep.rank_rules)
    assert sep.deciding_criterion(RULES[5], RULES[1]) == "errors"
    assert sep.deciding_criterion(RULES[1], RULES[2]) == "leave_one_out"
    assert sep.deciding_criterion(RULES[2], RULES[0]) == "margin"
    assert sep.deciding_criterion(RULES[4], RULES[3]) == "decided_errors"
    assert sep.deciding_criterion(RULES[1], dict(RULES[1])) is None


def test_rank_checker_catches_a_ranking_by_errors_first():
    def by_errors(rules):  # the mutant: all errors first, as a plain "fewest wrong" would
        return sorted(range(len(rules)), key=lambda i: (rules[i]["errors"], -(rules[i]["margin"]
                                                                             or 0)))  # fmt: skip

    def narrow_first(rules):  # the mutant: the margin's sign flipped
        return sorted(range(len(rules)), key=lambda i: (
            rules[i]["errors"] - rules[i]["misclassified_undecided"],
            rules[i]["margin"] is None, rules[i]["margin"] or 0.0))  # fmt: skip

    assert not _ranks_right(by_errors) and not _ranks_right(narrow_first)


def test_lead_sentence_says_why():
    def rule(key, t, errors, undecided, loo, m):
        return {
            "properties": [key],
            "directions": ["<"],
            "thresholds": [t],
            "errors": errors,
            "misclassified_undecided": undecided,
            "leave_one_out": loo,
            "margin": m,
        }

    rules = {"skew_fit": rule("skew_fit", 0.794, 2, 2, 3, 0.001),
             "candidate_share": rule("candidate_share", 0.349, 3, 3, 3, 0.061),
             "top10_share": rule("top10_share", 0.153, 3, 3, 7, 0.085),
             "churn": rule("churn", 0.5, 4, 2, 6, 0.3)}  # fmt: skip
    rank = [list(rules)[i] for i in sep.rank_rules(list(rules.values()))]
    assert rank == ["top10_share", "candidate_share", "skew_fit", "churn"]
    k = {"decided_cells": 17}
    lead = {"rule": rank[0], "runner_up": rank[1],
            "criterion": sep.deciding_criterion(rules[rank[0]], rules[rank[1]])}  # fmt: skip
    assert mc._lead_sentence(k, rules, rank, lead, "single rules") == (
        "top-10 share < 0.153 leads the single rules: it misclassifies 0 of the 17 decided "
        "cells, as few as 2 others, and its threshold has the widest margin of those (0.085 "
        "of the property's spread over the cells; next candidate share 0.061); the rule with "
        "the fewest misclassified cells in all, fitted Zipf skew < 0.794 (2, 2 of them "
        "undecided), ranks 3: its margin is 0.001."
    )
    # one decided cell wrong for every other rule: top-10 share leads by that alone
    for key in ("skew_fit", "candidate_share", "churn"):
        rules[key]["misclassified_undecided"] -= 1
    rank = [list(rules)[i] for i in sep.rank_rules(list(rules.values()))]
    lead = {"rule": rank[0], "runner_up": rank[1],
            "criterion": sep.deciding_criterion(rules[rank[0]], rules[rank[1]])}  # fmt: skip
    assert rank[:2] == ["top10_share", "candidate_share"]
    assert mc._lead_sentence(k, rules, rank, lead, "single rules").startswith(
        "top-10 share < 0.153 leads the single rules: it misclassifies 0 of the 17 decided "
        "cells, fewer than any other (candidate share: 1);"
    )


def test_lead_sentence_names_a_narrow_margin():
    """A rule that leads by its decided cells with a narrower margin than the next: the
    sentence says so, with its margin between decided cells."""
    skew = {"properties": ["skew_fit"], "directions": ["<"], "thresholds": [0.794],
            "errors": 2, "misclassified_undecided": 2, "leave_one_out": 3, "margin": 0.001,
            "decided_margin": 0.274}  # fmt: skip
    share = {"properties": ["top100_share"], "directions": ["<"], "thresholds": [0.347],
             "errors": 3, "misclassified_undecided": 2, "leave_one_out": 3, "margin": 0.134,
             "decided_margin": 0.214}  # fmt: skip
    rules = {"top100_share": share, "skew_fit": skew}
    rank = [list(rules)[i] for i in sep.rank_rules(list(rules.values()))]
    lead = {"rule": rank[0], "runner_up": rank[1],
            "criterion": sep.deciding_criterion(skew, share)}  # fmt: skip
    assert mc._lead_sentence({"decided_cells": 19}, rules, rank, lead, "single rules") == (
        "fitted Zipf skew < 0.794 leads the single rules: it misclassifies 0 of the 19 "
        "decided cells, fewer than any other (top-100 share: 1); its margin, 0.001, is "
        "narrower than the next rule's (0.134); between decided cells alone it is 0.274."
    )


def test_pair_ties_counts_the_leading_ties():
    tie = _judged(2, 2, 4, 0.001)
    assert mc._pair_ties([tie, dict(tie), dict(tie), _judged(2, 2, 5, 0.001)]) == (
        " (the first 3 tie on every criterion)"
    )
    assert mc._pair_ties([tie, _judged(2, 2, 4, 0.002)]) == ""
    assert mc._pair_ties([tie]) == ""
