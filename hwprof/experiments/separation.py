"""Which measured property of the input separates the cells where one result appears?

A *threshold rule* predicts the result from one property: ``value < t`` (or ``value > t``).
A *pair rule* is two threshold rules joined by "and". :func:`best_rule` finds, for a
property or a pair, the threshold(s) with the fewest misclassified cells; the threshold
lies midway between two neighbouring values, at the widest such gap when several tie.
:func:`leave_one_out` refits the rule without each cell in turn and predicts that cell,
the misclassification count of a rule that was not fitted to the cell it predicts.

A cell's outcome can be *undecided*: its seeds do not tell the two configurations apart
(:func:`decided`, a paired t interval over the seeds).

:func:`rank_rules` orders fitted rules so the robust one leads: fewest misclassified
*decided* cells (an undecided cell's label is not known, so getting it "wrong" is no
evidence against a rule), then the widest :func:`margin` (a threshold in a gap narrow
against the property's spread is one the sampling of a cell can move), then leave-one-out,
then all misclassified cells; :func:`deciding_criterion` names the criterion that puts one
rule ahead of the next.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

__all__ = ["best_rule", "leave_one_out", "apply_rule", "confusion", "decided", "T_975", "margin",
           "rank_rules", "deciding_criterion", "RANK_CRITERIA"]  # fmt: skip

#: two-sided 95 % quantiles of Student's t, by degrees of freedom (1-30)
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074,
         23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045,
         30: 2.042}  # fmt: skip


def _thresholds(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Candidate thresholds (midpoints of neighbouring distinct values, and one beyond each
    end) and the gap each one sits in."""
    v = np.unique(values)
    if len(v) == 1:
        return np.array([v[0] - 1.0, v[0] + 1.0]), np.array([np.inf, np.inf])
    mids = (v[:-1] + v[1:]) / 2
    gaps = np.diff(v)
    return (np.concatenate([[v[0] - gaps.max()], mids, [v[-1] + gaps.max()]]),
            np.concatenate([[np.inf], gaps, [np.inf]]))  # fmt: skip


def _side(values: np.ndarray, direction: str, thresholds: np.ndarray) -> np.ndarray:
    """``[threshold, cell]`` booleans: the cell's value on the rule's side."""
    if direction == "<":
        return values[None, :] < thresholds[:, None]
    return values[None, :] > thresholds[:, None]


def best_rule(values: dict[str, list[float]], labels: list[bool], names) -> dict:
    """The rule on the properties ``names`` (one or two keys of ``values``) with the fewest
    cells whose ``labels`` it gets wrong.

    ``values``: property name -> one value per cell (None: not measured; such a cell
    counts as misclassified by any rule on that property). Returns ``{"properties",
    "directions", "thresholds", "errors", "gap"}``: ``gap`` is the width of the gap
    between neighbouring values the threshold sits in (a pair: the narrower of the two;
    None: beyond every value, a rule that puts every cell on one side).
    """
    y = np.asarray(labels, bool)
    names = list(names)
    if not 1 <= len(names) <= 2:
        raise ValueError(f"a rule takes one or two properties, not {len(names)}")
    cols, known = [], np.ones(len(y), bool)
    for n in names:
        v = np.array([np.nan if x is None else x for x in values[n]], float)
        known &= ~np.isnan(v)
        cols.append(v)
    grids = []
    for v in cols:
        t, g = _thresholds(v[known]) if known.any() else (np.array([0.0]), np.array([0.0]))
        grids.append((t, g))
    best = None
    for dirs in itertools.product("<>", repeat=len(names)):
        sides = [_side(np.where(known, v, 0.0), d, t)
                 for v, d, (t, _) in zip(cols, dirs, grids, strict=True)]  # fmt: skip
        if len(names) == 1:
            pred = sides[0]
            errors = ((pred != y[None, :]) | ~known[None, :]).sum(axis=1)
            gap = grids[0][1]
            order = np.lexsort((-gap, errors))
            i = order[0]
            cand = (int(errors[i]), -float(gap[i]), dirs, (float(grids[0][0][i]),))
        else:
            pred = sides[0][:, None, :] & sides[1][None, :, :]
            errors = ((pred != y[None, None, :]) | ~known[None, None, :]).sum(axis=2)
            gap = np.minimum(grids[0][1][:, None], grids[1][1][None, :])
            flat = np.lexsort((-gap.ravel(), errors.ravel()))[0]
            i, j = np.unravel_index(flat, errors.shape)
            cand = (int(errors[i, j]), -float(gap[i, j]), dirs,
                    (float(grids[0][0][i]), float(grids[1][0][j])))  # fmt: skip
        if best is None or cand[:2] < best[:2]:
            best = cand
    return {"properties": names, "directions": list(best[2]), "thresholds": list(best[3]),
            "errors": best[0], "gap": None if math.isinf(best[1]) else -best[1]}  # fmt: skip


def apply_rule(rule: dict, values: dict[str, float | None]) -> bool | None:
    """The rule's prediction for one cell's ``values`` (None: a property not measured)."""
    out = True
    for name, d, t in zip(rule["properties"], rule["directions"], rule["thresholds"],
                          strict=True):  # fmt: skip
        v = values.get(name)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        out &= bool(v < t) if d == "<" else bool(v > t)
    return out


def confusion(predicted: list[bool | None], labels: list[bool]) -> dict:
    """Counts of the rule's predictions against the labels: ``both`` (predicted and
    true), ``missed`` (true, not predicted), ``wrong`` (predicted, not true), ``neither``,
    ``unknown`` (no prediction)."""
    out = {"both": 0, "missed": 0, "wrong": 0, "neither": 0, "unknown": 0}
    for p, y in zip(predicted, labels, strict=True):
        key = ("unknown" if p is None else "both" if p and y else "missed" if y
               else "wrong" if p else "neither")  # fmt: skip
        out[key] += 1
    return out


def leave_one_out(values: dict[str, list[float]], labels: list[bool], names) -> int:
    """Cells misclassified when each is predicted by the rule fitted to the others."""
    wrong = 0
    for k in range(len(labels)):
        rest = {n: [x for i, x in enumerate(v) if i != k] for n, v in values.items()}
        rule = best_rule(rest, [y for i, y in enumerate(labels) if i != k], names)
        pred = apply_rule(rule, {n: values[n][k] for n in names})
        wrong += pred is None or pred != labels[k]
    return wrong


def decided(a: list[float], b: list[float]) -> bool:
    """Whether the seeds tell ``a`` and ``b`` apart: the 95 % t interval of the mean paired
    difference ``a - b`` (seed by seed) excludes 0. One seed: never."""
    d = np.asarray(a, float) - np.asarray(b, float)
    if len(d) < 2:
        return False
    if len(d) - 1 not in T_975:
        raise ValueError(f"decided: at most {max(T_975) + 1} seeds, not {len(d)}")
    half = T_975[len(d) - 1] * float(np.std(d, ddof=1)) / math.sqrt(len(d))
    return bool(abs(float(np.mean(d))) > half)


def margin(rule: dict, values: dict[str, list[float | None]], among=None) -> float | None:
    """How far the rule's threshold is from the cells on either side, scale-free: for each
    of its properties whose threshold lies between two cells' values, the gap between the
    nearest value below and the nearest above, over the spread (largest minus smallest
    value) of that property over all the cells; the smallest of these. ``among``: one bool
    per cell, the cells whose values bound the gap (None: all; the spread is always over
    all). None: every threshold lies beyond every such value (a rule that puts all those
    cells on one side)."""
    out = []
    for name, t in zip(rule["properties"], rule["thresholds"], strict=True):
        v = np.array([np.nan if x is None else x for x in values[name]], float)
        ok = ~np.isnan(v)
        near = v[ok & (np.ones(len(v), bool) if among is None else np.asarray(among, bool))]
        below, above = near[near < t], near[near > t]
        if len(below) and len(above):
            out.append(float((above.min() - below.max()) / (v[ok].max() - v[ok].min())))
    return min(out) if out else None


#: :func:`rank_rules`' criteria, in order: (key, what it is, which way is better)
RANK_CRITERIA = (
    ("decided_errors", "misclassified decided cells", "fewer"),
    ("margin", "margin", "wider"),
    ("leave_one_out", "cells wrong in leave-one-out", "fewer"),
    ("errors", "misclassified cells", "fewer"),
)


def _rank_key(rule: dict) -> tuple:
    m = rule["margin"]
    return (rule["errors"] - rule["misclassified_undecided"], m is None, -(m or 0.0),
            rule["leave_one_out"], rule["errors"])  # fmt: skip


def rank_rules(rules: list[dict]) -> list[int]:
    """The indexes of ``rules`` in rank order (:data:`RANK_CRITERIA`; full ties keep the
    given order). Each rule needs ``errors``, ``misclassified_undecided``,
    ``leave_one_out`` and ``margin`` (None ranks after every number)."""
    return sorted(range(len(rules)), key=lambda i: _rank_key(rules[i]))


def deciding_criterion(first: dict, second: dict) -> str | None:
    """The key of the first of :data:`RANK_CRITERIA` on which ``first`` ranks ahead of
    ``second`` (None: they tie on all)."""
    a, b = _rank_key(first), _rank_key(second)
    # key positions: decided errors 0, margin 1-2, leave-one-out 3, errors 4
    for (name, _, _), part in zip(RANK_CRITERIA, ((0,), (1, 2), (3,), (4,)), strict=True):
        if tuple(a[i] for i in part) != tuple(b[i] for i in part):
            return name
    return None
