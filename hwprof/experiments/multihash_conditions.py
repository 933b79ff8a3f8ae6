"""When is 4 tables C1-R0 the best multi-hash profiler? (Narayanasamy et al., Figs. 10-12).

The paper's section 6.4.1 finds four tables with conservative update and without
resetting (C1-R0) "consistently" best at 2K counters; on our programs at 1M / 0.1 %
another configuration wins (``multihash-values``). This experiment sweeps the properties of
the input that the paper names (section 5.6.1: distinct tuples and candidates per
interval; Fig. 6: how much the candidates change from one interval to the next)
with a seeded generator, runs the same configurations on every cell, and measures
the same properties on the real programs' streams.

The generator (:func:`zipf_stream`): each interval of ``L`` tuples draws its counts
from a multinomial over ``distinct`` keys with Zipf weights ``r**-skew`` and shuffles
them; between intervals each key is replaced by a fresh random one with probability
``churn`` (a phase change: ``churn = 0`` keeps the hot set, ``1`` replaces all of it).

The properties (:func:`stream_properties`), per interval, averaged over the
intervals after the first: distinct tuples, true candidates, the share of the
interval's tuples that belong to its candidates, the candidate churn (the share of
the interval's candidates that were no candidate in the previous interval, so
their accumulator entries were not retained), and the *unshielded load*
``rho_n = U n / (Z T)``: ``U`` tuples of the interval whose key was no candidate of
the previous interval (the others hit a retained accumulator entry and never reach
the hash tables), spread over the ``Z / n`` counters of one of ``n`` tables, in
units of the threshold ``T``; and the *noise load* ``nu_n = (1 - share) L n / (Z T)``,
the same for the tuples that are no candidate of their interval (they never leave the
hash tables: a candidate soon gets an accumulator entry and is shielded).

The shape of the value distribution (:func:`input_shape`, regenerated for each cell by
:func:`cell_shape`): the Zipf skew fitted to the interval's rank-frequency curve, the
share of the top 10, 100 and 1000 tuples, distinct tuples per counter, candidates per
accumulator entry and the near misses (tuples between half the threshold and the
threshold). :func:`separation` fits a threshold rule on each property, and on every
pair, to the cells where 4 tables C1-R0 is best (:mod:`hwprof.experiments.separation`)
and applies it to the real programs.
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

from ..golden.interval_error import Bulk, profile_stream
from ..golden.multihash import PRESETS, MultiHashConfig
from . import (
    Experiment,
    cell,
    file_identity,
    panel_grid,
    previous_sweep,
    sweep_cells,
    write_results,
)
from .separation import (
    RANK_CRITERIA,
    apply_rule,
    best_rule,
    confusion,
    decided,
    deciding_criterion,
    leave_one_out,
    margin,
    rank_rules,
)

__all__ = ["EXPERIMENTS", "run", "zipf_stream", "stream_properties", "input_shape", "skew_fit",
           "separation", "CONFIGS"]  # fmt: skip

NAME = "multihash-conditions"
#: the configurations compared (retaining on, as in the paper's Figs. 10-12)
#: (one table is left out: at 1M / 0.1 % the single hash is far from the best on our
#: programs, multihash-values)
CONFIGS = (*[(f"C1R0 {n}", n, False) for n in (2, 4, 8, 16)],
           *[(f"C1R1 {n}", n, True) for n in (2, 4)])  # fmt: skip
#: the paper's pick
PAPER_BEST = "C1R0 4"
SEEDS = 5
#: intervals per generated stream (the first has no retained entries)
INTERVALS = 4
#: the full sweep at 1M / 0.1 % (distinct tuples per interval, Zipf skew, churn): every
#: :data:`DISTINCT` x :data:`SKEWS` with a stable hot set, every :data:`DISTINCT` x
#: :data:`CHURNS` at skew 1.0, two settings of full churn at skew 0.8, and the
#: :data:`LOW_SKEW` settings
DISTINCT = (3_000, 10_000, 30_000, 100_000, 300_000)
SKEWS = (0.8, 1.0, 1.2)
CHURNS = (0.25, 1.0)
#: flatter inputs than :data:`SKEWS`, stable hot set: the settings below skew 0.8 where
#: ``bench/bench_multihash_model_variants.py`` finds 4 tables C1-R0 best (at most about a
#: third of the tuples in candidates; ``docs/notes/multihash-best-configuration.md``)
LOW_SKEW = ((1_500, 0.5, 0.0), (3_000, 0.6, 0.0), (30_000, 0.6, 0.0), (10_000, 0.7, 0.0),
            (30_000, 0.7, 0.0))  # fmt: skip
GRID = (*[(d, s, 0.0) for s in SKEWS for d in DISTINCT],
        *[(d, 1.0, c) for c in CHURNS for d in DISTINCT],
        (10_000, 0.8, 1.0), (100_000, 0.8, 1.0), *LOW_SKEW)  # fmt: skip
#: the --quick form: the 10K / 1 % preset (100x shorter intervals), distinct tuples scaled
#: by 1/100, two cells, two seeds
QUICK = {"preset": "10k", "distinct": (300, 3_000), "skews": (1.0,), "churns": (1.0,),
         "seeds": 2, "intervals": 4}  # fmt: skip
#: intervals of each real program whose properties are measured (the first 15 of the 100
#: that multihash-values profiles at 1M)
REAL_INTERVALS = 15
#: more seeds for the cells whose outcome the :data:`SEEDS` seeds leave undecided near the
#: rules' thresholds: every cell of the full sweep at a skew setting in
#: :data:`EXTRA_SKEWS` gets :data:`EXTRA_SEEDS` seeds more (seed indexes from
#: :data:`SEEDS` on), kept in the cell as ``extra_seeds``
EXTRA_SEEDS = 15
EXTRA_SKEWS = (0.8,)
#: more seeds for every other cell of the full sweep whose first :data:`SEEDS` seeds leave
#: the outcome undecided (:func:`paper_best_outcome`), to 10 in all
UNDECIDED_SEEDS = 5
#: bump when the generator or the cell's measurements change (an earlier sweep is then rerun)
SWEEP_VERSION = 1
#: bump when :func:`input_shape` changes (the cells' shapes are then measured again)
SHAPE_VERSION = 1

PAPER = {
    "claim": "4 tables C1-R0 consistently outperforms all other configurations including "
    "the best single hash (sec. 6.4.1, Fig. 12; C1-R0 best in Figs. 10-11)",
    "programs": "SPEC95 go, li, m88ksim; SPEC2000 gcc, vortex; deltablue, sis, burg; "
    "500M instructions after a SimPoint fast-forward (sec. 5.5)",
    "distinct": "Fig. 4 (bar chart; values not in the text): distinct tuples per interval "
    "grow in proportion to the interval length; gcc and go have the most",
    "candidates": "Fig. 5 (bar chart; values not in the text): the candidates per interval "
    "stay about the same for 1 % and 0.1 %",
    "churn_gcc_1m": "gcc: less than 35 % change of candidates for 50 % of the intervals "
    "(Fig. 6, 1M)",
    "churn_low_1m": "m88ksim and vortex: very little change at 1M (Fig. 6)",
    "churn_high_1m": "deltablue: higher change at 1M (Fig. 6)",
}


def zipf_stream(seed: int, intervals: int, length: int, distinct: int, skew: float, churn: float):
    """Seeded ``<tuple>`` keys, one uint64 array of ``length`` keys per interval.

    Each interval's counts are a multinomial draw over ``distinct`` keys with
    weights ``r**-skew`` (rank ``r`` from 1), shuffled. Before every interval
    after the first, each key is replaced by a fresh random 63-bit key with
    probability ``churn``.
    """
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, distinct + 1) ** skew
    weights /= weights.sum()
    keys = rng.integers(1, 1 << 63, distinct, dtype=np.uint64)
    for i in range(intervals):
        if i:
            fresh = rng.random(distinct) < churn
            keys[fresh] = rng.integers(1, 1 << 63, int(fresh.sum()), dtype=np.uint64)
        yield rng.permutation(np.repeat(keys, rng.multinomial(length, weights)))


def whole_intervals(chunks, length: int, limit: int | None = None):
    """Regroup a stream of key arrays into arrays of exactly ``length`` keys (at most
    ``limit`` of them; a last incomplete interval is dropped)."""
    pending, have, done = [], 0, 0
    for chunk in chunks:
        pending.append(np.asarray(chunk, np.uint64))
        have += len(chunk)
        while have >= length and (limit is None or done < limit):
            joined = np.concatenate(pending)
            yield joined[:length]
            done += 1
            pending, have = [joined[length:]], have - length
        if limit is not None and done >= limit:
            return


def stream_properties(intervals, threshold: int, counters: int = 2048) -> dict:
    """The properties of a stream of whole intervals (module docstring).

    ``intervals``: uint64 arrays of one interval each. Returns the means over the
    intervals after the first (the first has no previous candidates) of
    ``distinct``, ``candidates``, ``candidate_share``, ``churn`` and ``rho`` (``{n:
    rho_n}`` for the table counts of :data:`CONFIGS`), and ``intervals``.
    """
    rows, previous = [], None
    for keys in intervals:
        unique, counts = np.unique(keys, return_counts=True)
        hot = counts >= threshold
        cands = unique[hot]
        if previous is not None:
            retained = np.isin(unique, previous)
            unshielded = int(counts[~retained].sum())
            new = int((~np.isin(cands, previous)).sum())
            rows.append(
                (
                    len(unique),
                    len(cands),
                    counts[hot].sum() / len(keys),
                    new / len(cands) if len(cands) else np.nan,
                    unshielded,
                )
            )
        previous = cands
    if not rows:
        raise ValueError("stream_properties needs at least two intervals")
    a = np.array(rows, dtype=float)
    u = float(np.mean(a[:, 4]))
    tables = sorted({n for _, n, _ in CONFIGS})
    return {"intervals": len(rows) + 1, "distinct": float(a[:, 0].mean()),
            "candidates": float(a[:, 1].mean()), "candidate_share": float(a[:, 2].mean()),
            "churn": float(np.nanmean(a[:, 3])) if not np.isnan(a[:, 3]).all() else None,
            "unshielded": u,
            "rho": {str(n): u * n / (counters * threshold) for n in tables}}  # fmt: skip


#: the Zipf fit uses the ranks with at least this many occurrences (fewer are too noisy to rank)
SKEW_FIT_MIN_COUNT = 10
#: the top-k shares measured (k tuples of an interval)
TOP_K = (10, 100, 1000)


def skew_fit(counts, min_count: int = SKEW_FIT_MIN_COUNT, points: int = 50) -> float | None:
    """The Zipf skew ``s`` of one interval's counts: minus the least-squares slope of
    log(count) against log(rank) (rank 1: the most frequent tuple), over the ranks whose
    count is at least ``min_count``, at ``points`` ranks spaced evenly in log(rank) so each
    decade of ranks weighs the same. Fewer than three such ranks: None."""
    c = np.sort(np.asarray(counts))[::-1]
    c = c[c >= min_count]
    if len(c) < 3:
        return None
    ranks = np.unique(np.geomspace(1, len(c), points).round().astype(np.int64))
    if len(ranks) < 3:
        return None
    slope = np.polyfit(np.log(ranks), np.log(c[ranks - 1].astype(float)), 1)[0]
    return float(-slope)


def input_shape(intervals, threshold: int, counters: int = 2048, accumulator: int = 1000) -> dict:
    """The shape of a stream's value distribution, means over all its whole intervals.

    ``skew_fit`` (:func:`skew_fit`), ``top_share`` (``{k: share of the interval's tuples
    in its k most frequent}`` for ``k`` in :data:`TOP_K`), ``distinct_per_counter``
    (distinct tuples per interval over the ``counters`` of the hash tables),
    ``candidates_per_entry`` (tuples at or above ``threshold`` over the ``accumulator``
    entries) and ``near_misses`` (tuples with at least half the threshold but below it:
    the ones a little hash-table noise turns into false positives).
    """
    rows = []
    for keys in intervals:
        _, counts = np.unique(keys, return_counts=True)
        top = np.sort(counts)[::-1]
        fit = skew_fit(counts)
        rows.append([np.nan if fit is None else fit,
                     *[top[:k].sum() / len(keys) for k in TOP_K],
                     len(counts) / counters, (counts >= threshold).sum() / accumulator,
                     ((2 * counts >= threshold) & (counts < threshold)).sum()])  # fmt: skip
    if not rows:
        raise ValueError("input_shape needs at least one interval")
    a = np.array(rows, dtype=float)
    m = [None if np.isnan(a[:, i]).all() else float(np.nanmean(a[:, i])) for i in range(a.shape[1])]
    return {"skew_fit": m[0], "top_share": {str(k): m[1 + i] for i, k in enumerate(TOP_K)},
            "distinct_per_counter": m[-3], "candidates_per_entry": m[-2],
            "near_misses": m[-1]}  # fmt: skip


def cell_shape(
    preset: str, distinct: int, skew: float, churn: float, seeds: int, intervals: int, seed: int = 1
) -> dict:
    """:func:`input_shape` of one generator setting, the mean over the streams of
    :func:`run_cell`'s seeds (generator seed ``seed + s``), regenerated."""
    config = PRESETS[preset]
    counters = MultiHashConfig().counters
    shapes = [input_shape(zipf_stream(seed + s, intervals, config["interval_length"], distinct,
                                      skew, churn), config["threshold"], counters,
                          config["accumulator"]) for s in range(seeds)]  # fmt: skip
    return _mean_shape(shapes)


def _mean_shape(shapes: list[dict]) -> dict:
    def mean(values):
        values = [v for v in values if v is not None]
        return float(np.mean(values)) if values else None

    out = {k: mean([s[k] for s in shapes]) for k in shapes[0] if k != "top_share"}
    out["top_share"] = {
        k: mean([s["top_share"][k] for s in shapes]) for k in shapes[0]["top_share"]
    }
    return out


def _summary(values) -> dict:
    v = [100 * x for x in values]
    return {
        "total": float(np.mean(v)),
        "min": float(np.min(v)),
        "max": float(np.max(v)),
        "seeds": v,
    }


def run_cell(
    preset: str, distinct: int, skew: float, churn: float, seeds: int, intervals: int, seed: int = 1
) -> dict:
    """Every configuration of :data:`CONFIGS` on one generator setting, ``seeds`` seeds
    (seed index ``s``: generator seed ``seed + s``, hash seed ``1 + 100 s``)."""
    errors, parts, props, _ = _run_seeds(preset, distinct, skew, churn, range(seeds),
                                         intervals, seed)  # fmt: skip
    per_seed_best = [_lowest({k: v[s] for k, v in errors.items()}) for s in range(seeds)]
    out = {
        "distinct_setting": distinct,
        "skew": skew,
        "churn_setting": churn,
        "errors": {k: _summary(v) for k, v in errors.items()},
        "parts": {k: (100 * np.mean(v, axis=0)).tolist() for k, v in parts.items()},
        "properties": _mean_properties(props),
        "per_seed_best": per_seed_best,
    }
    out["best"] = _lowest({k: v["total"] for k, v in out["errors"].items()})
    out["best_c1r0_tables"] = _best_tables(out["errors"])
    out["paper_best_seeds"] = sum(PAPER_BEST in b for b in per_seed_best)
    return out


def run_extra(
    preset: str,
    distinct: int,
    skew: float,
    churn: float,
    first: int,
    seeds: int,
    intervals: int,
    seed: int = 1,
) -> dict:
    """More seeds of one generator setting: seed indexes ``first`` to ``first + seeds - 1``,
    numbered as in :func:`run_cell` (so ``first = SEEDS`` continues its seeds). Returns
    ``{"first", "seeds", "errors", "per_seed_best", "paper_best_seeds", "properties",
    "shape"}`` over these seeds alone (``shape``: :func:`input_shape` of the same
    streams)."""
    indexes = range(first, first + seeds)
    errors, _, props, shapes = _run_seeds(preset, distinct, skew, churn, indexes, intervals,
                                          seed, shape=True)  # fmt: skip
    per_seed_best = [_lowest({k: v[i] for k, v in errors.items()}) for i in range(seeds)]
    return {"first": first, "seeds": seeds,
            "errors": {k: _summary(v) for k, v in errors.items()},
            "per_seed_best": per_seed_best,
            "paper_best_seeds": sum(PAPER_BEST in b for b in per_seed_best),
            "properties": _mean_properties(props), "shape": _mean_shape(shapes)}  # fmt: skip


def _run_seeds(preset, distinct, skew, churn, indexes, intervals, seed, shape=False):
    """Every configuration on the streams of seed indexes ``indexes``: per configuration
    the seeds' errors and error parts, and the streams' properties (and shapes)."""
    config = PRESETS[preset]
    length, threshold = config["interval_length"], config["threshold"]
    counters = MultiHashConfig().counters
    errors: dict = {label: [] for label, _, _ in CONFIGS}
    parts: dict = {label: [] for label, _, _ in CONFIGS}
    props, shapes = [], []
    for s in indexes:
        profilers = [
            Bulk(
                tables=n,
                conservative=True,
                reset=reset,
                retain=True,
                hash_seed=1 + 100 * s,
                **config,
            )
            for _, n, reset in CONFIGS
        ]
        stream = list(zipf_stream(seed + s, intervals, length, distinct, skew, churn))
        result = profile_stream(iter(stream), profilers, length, threshold, workers=2,
                                prefetch=False)  # fmt: skip
        props.append(stream_properties(stream, threshold, counters))
        if shape:
            shapes.append(input_shape(stream, threshold, counters, config["accumulator"]))
        for (label, _, _), err in zip(CONFIGS, result.errors, strict=True):
            errors[label].append(err.total)
            parts[label].append(
                [err.false_positive, err.false_negative, err.neutral_positive, err.neutral_negative]
            )
    return errors, parts, props, shapes


def _lowest(errors: dict) -> list[str]:
    """The labels whose error equals the lowest (ties: all of them, in :data:`CONFIGS`
    order)."""
    low = min(errors.values())
    return [k for k, v in errors.items() if v <= low + 1e-12]


def _best_tables(errors: dict) -> list[int]:
    """The C1-R0 table counts with the lowest mean error (ties: all)."""
    c1r0 = {c[1]: errors[c[0]]["total"] for c in CONFIGS if not c[2]}
    low = min(c1r0.values())
    return [n for n, v in c1r0.items() if v <= low + 1e-12]


def _mean_properties(props: list[dict]) -> dict:
    out = {
        k: float(np.mean([p[k] for p in props if p[k] is not None]))
        if any(p[k] is not None for p in props)
        else None
        for k in ("distinct", "candidates", "candidate_share", "churn", "unshielded")
    }
    out["rho"] = {n: float(np.mean([p["rho"][n] for p in props])) for n in props[0]["rho"]}
    return out


def grid(quick: bool) -> list[tuple[int, float, float]]:
    """``(distinct, skew, churn)`` of every cell of the sweep."""
    if quick:
        return [
            (d, s, c) for d in QUICK["distinct"] for s in QUICK["skews"] for c in QUICK["churns"]
        ]
    return list(GRID)


def real_programs(output_dir: Path, log, quick: bool) -> dict:
    """The properties of the real programs' 1M streams and their best configuration as
    measured by the multihash-values run whose JSON is in ``output_dir`` (none: {})."""
    from .multihash_values import _open_source, _sources

    values = Path(output_dir) / "multihash-values.json"
    if quick or not values.exists():
        return {}
    record = json.loads(values.read_text())
    programs = record.get("presets", {}).get("1m", {})
    out = {}
    for name, source in _sources(False, (), record["seed"], log):
        if name not in programs:
            continue
        errors = programs[name]["errors"]
        config = PRESETS["1m"]
        chunks = _program_keys(_open_source(source))
        intervals = list(whole_intervals(chunks, config["interval_length"], REAL_INTERVALS))
        props = stream_properties(intervals, config["threshold"])
        shape = input_shape(intervals, config["threshold"], MultiHashConfig().counters,
                            config["accumulator"])  # fmt: skip
        labels = [c[0] for c in CONFIGS]
        out[name] = {
            "trace": file_identity(source["path"]) if "path" in source else source,
            "properties": props,
            "errors": {k: errors[k] for k in labels},
            "best": _lowest({k: errors[k]["total"] for k in labels}),
            "best_c1r0_tables": _best_tables(errors),
            "shape": shape,
        }
        log(f"{name}: {props} {shape}")
    return out


def _program_keys(trace):
    """The keys multihash-values profiles: the trace layer's one key function, its
    default key."""
    from ..traces.keys import trace_keys

    return trace_keys(trace)


def noise_load(properties: dict, tables: int, preset: str = "1m", counters: int = 2048) -> float:
    """``nu_n`` (module docstring) from a stream's mean candidate share."""
    config = PRESETS[preset]
    return (
        (1 - properties["candidate_share"])
        * config["interval_length"]
        * tables
        / (counters * config["threshold"])
    )


def conditions(cells: list[dict], preset: str = "1m") -> dict:
    """Where the paper's pick wins in the sweep: the cells, the ranges of the properties
    over them and over the others (and whether the two ranges overlap), and where
    resetting with 2 tables (our programs' best) beats it."""
    won = [c for c in cells if PAPER_BEST in c["best"]]
    lost = [c for c in cells if PAPER_BEST not in c["best"]]
    reset2 = [c for c in cells if c["errors"]["C1R1 2"]["total"] < c["errors"][PAPER_BEST]["total"]]

    def value(c, key):
        if key == "rho4":
            return c["properties"]["rho"]["4"]
        if key == "nu4":
            return noise_load(c["properties"], 4, preset)
        return c["properties"][key]

    def span(group, key):
        vals = [value(c, key) for c in group]
        vals = [v for v in vals if v is not None]
        return [min(vals), max(vals)] if vals else None

    def setting(c):
        return f"D={c['distinct_setting']:,} s={c['skew']} churn={c['churn_setting']}"

    keys = ("distinct", "candidates", "candidate_share", "churn", "rho4", "nu4")
    out = {
        "cells": len(cells),
        "paper_best_cells": len(won),
        "paper_best_settings": [setting(c) for c in won],
        "paper_best_seeds": [c["paper_best_seeds"] for c in won],
        "paper_best_in_every_seed": sum(
            c["paper_best_seeds"] == len(c["per_seed_best"]) for c in won
        ),
        "won": {k: span(won, k) for k in keys},
        "lost": {k: span(lost, k) for k in keys},
        "reset2_beats_paper_best": [setting(c) for c in reset2],
        "reset2": {k: span(reset2, k) for k in keys},
        "best_c1r0_tables": [c["best_c1r0_tables"] for c in cells],
    }
    out["overlap"] = {
        k: None
        if not (out["won"][k] and out["lost"][k])
        else bool(out["won"][k][0] <= out["lost"][k][1] and out["lost"][k][0] <= out["won"][k][1])
        for k in keys
    }
    return out


#: the candidate properties :func:`separation` tries: key, name on the results page, format
SEPARATORS = (
    ("skew_fit", "fitted Zipf skew", ".3f"),
    ("top10_share", "top-10 share", ".3f"),
    ("top100_share", "top-100 share", ".3f"),
    ("top1000_share", "top-1000 share", ".3f"),
    ("candidate_share", "candidate share", ".3f"),
    ("nu4", "nu_4 (noise load)", ".2f"),
    ("rho4", "rho_4 (unshielded load)", ".2f"),
    ("distinct_per_counter", "distinct tuples per counter", ".1f"),
    ("candidates_per_entry", "candidates per accumulator entry", ".3f"),
    ("near_misses", "near misses (T/2 to T) per interval", ".1f"),
    ("churn", "candidate churn", ".2f"),
)


#: the pair rules the results page lists, the first in rank order
PAIRS_SHOWN = 10


def separator_values(properties: dict, shape: dict, preset: str) -> dict:
    """The values of :data:`SEPARATORS` of one cell or program from its
    :func:`stream_properties` and :func:`input_shape`."""
    out = {"skew_fit": shape["skew_fit"],
           **{f"top{k}_share": shape["top_share"][str(k)] for k in TOP_K},
           "candidate_share": properties["candidate_share"],
           "nu4": noise_load(properties, 4, preset), "rho4": properties["rho"]["4"],
           "distinct_per_counter": shape["distinct_per_counter"],
           "candidates_per_entry": shape["candidates_per_entry"],
           "near_misses": shape["near_misses"], "churn": properties["churn"]}  # fmt: skip
    return out


def paper_best_outcome(errors: dict) -> dict:
    """Whether 4 tables C1-R0 has the lowest mean error, against which configuration (the
    best other one when it wins, the winner when it loses), and whether the seeds tell the
    two apart (:func:`separation.decided`)."""
    others = {k: v["total"] for k, v in errors.items() if k != PAPER_BEST}
    rival = min(others, key=others.get)
    won = errors[PAPER_BEST]["total"] <= others[rival] + 1e-12
    return {"won": bool(won), "rival": rival,
            "decided": decided(errors[PAPER_BEST]["seeds"], errors[rival]["seeds"])}  # fmt: skip


def separation(cells: list[dict], shapes: list[dict], real: dict, preset: str = "1m") -> dict:
    """Which property (or pair) separates the cells where 4 tables C1-R0 is best from the
    others: every :data:`SEPARATORS` property's best threshold rule fitted on the cells
    (:mod:`hwprof.experiments.separation`), its misclassified cells (how many of them
    undecided), its leave-one-out count and its confusion on the real programs (not
    fitted to them); the best pair rule likewise."""
    keys = [k for k, _, _ in SEPARATORS]
    rows = []
    for c, s in zip(cells, shapes, strict=True):
        a = all_seeds(c, s)
        row = {"setting": _setting(c), "seeds": a["seeds"], **paper_best_outcome(a["errors"]),
               "values": separator_values(a["properties"], a["shape"], preset)}  # fmt: skip
        if "extra_seeds" in c:
            first = paper_best_outcome(c["errors"])
            row["first_seeds"] = {"seeds": a["seeds"] - c["extra_seeds"]["seeds"],
                                  "won": first["won"], "decided": first["decided"]}  # fmt: skip
        rows.append(row)
    programs = {n: {**paper_best_outcome(p["errors"]),
                    "values": separator_values(p["properties"], p["shape"], "1m")}
                for n, p in real.items() if "shape" in p}  # fmt: skip
    labels = [r["won"] for r in rows]
    values = {k: [r["values"][k] for r in rows] for k in keys}

    def judged(rule):
        pred = [apply_rule(rule, r["values"]) for r in rows]
        wrong = [r for r, p in zip(rows, pred, strict=True) if p is None or p != r["won"]]
        real_pred = {n: apply_rule(rule, p["values"]) for n, p in programs.items()}
        return {**rule, "confusion": confusion(pred, labels),
                "misclassified": [r["setting"] for r in wrong],
                "misclassified_undecided": sum(not r["decided"] for r in wrong),
                "leave_one_out": leave_one_out(values, labels, rule["properties"]),
                "real": {n: p for n, p in real_pred.items()},
                "real_confusion": confusion(list(real_pred.values()),
                                            [p["won"] for p in programs.values()])}  # fmt: skip

    singles = {k: judged(best_rule(values, labels, [k])) for k in keys}
    pairs = [best_rule(values, labels, pair) for pair in itertools.combinations(keys, 2)]
    fewest_pair = min(p["errors"] for p in pairs)
    pairs = [judged(p) for p in pairs if p["errors"] == fewest_pair]
    known = [r["decided"] for r in rows]
    for rule in [*singles.values(), *pairs]:
        rule["margin"] = margin(rule, values)
        rule["decided_margin"] = margin(rule, values, known)
    rank = [keys[i] for i in rank_rules(list(singles.values()))]
    pairs = [pairs[i] for i in rank_rules(pairs)]
    fewest = min(r["errors"] for r in singles.values())
    return {"cells": rows, "real": programs, "single": singles, "single_rank": rank,
            "lead": {"rule": rank[0], "runner_up": rank[1],
                     "criterion": deciding_criterion(singles[rank[0]], singles[rank[1]])},
            "best_single": [k for k, r in singles.items() if r["errors"] == fewest],
            "pair": pairs[0],
            "pair_lead": {"criterion": deciding_criterion(pairs[0], pairs[1])
                          if len(pairs) > 1 else None},
            "pairs_with_fewest_errors": len(pairs),
            "ranked_pairs": [{k: p[k] for k in ("properties", "directions", "thresholds", "gap",
                                                "margin", "decided_margin", "errors",
                                                "misclassified_undecided",
                                                "leave_one_out", "real_confusion")}
                             for p in pairs[:PAIRS_SHOWN]],
            "decided_cells": sum(r["decided"] for r in rows)}  # fmt: skip


def _setting(c: dict) -> str:
    return f"D={c['distinct_setting']:,} s={c['skew']} churn={c['churn_setting']}"


def extra_plan(quick: bool, cells=()) -> dict:
    """The extra seeds of the sweep: ``{"first": seed index, "seeds": how many, "grid":
    [[distinct, skew, churn], ...]}`` (:data:`EXTRA_SEEDS`; none in the quick form), and
    ``"undecided": {"seeds", "grid"}`` when some of ``cells`` (the sweep's, their first
    :data:`SEEDS` seeds) outside that grid leave 4 tables C1-R0's outcome undecided: those
    get :data:`UNDECIDED_SEEDS` more."""
    more = [] if quick else [list(g) for g in grid(quick) if g[1] in EXTRA_SKEWS]
    plan = {"first": SEEDS, "seeds": EXTRA_SEEDS if more else 0, "grid": more}
    undecided = [] if quick or not UNDECIDED_SEEDS else [
        [c["distinct_setting"], c["skew"], c["churn_setting"]] for c in cells
        if [c["distinct_setting"], c["skew"], c["churn_setting"]] not in more
        and not paper_best_outcome(c["errors"])["decided"]]  # fmt: skip
    if undecided:
        plan["undecided"] = {"seeds": UNDECIDED_SEEDS, "grid": undecided}
    return plan


def _with_extra_seeds(cells, plan, settings, stem, run_options, log) -> list[dict]:
    """``cells`` with the ``extra_seeds`` of ``plan`` (:func:`extra_plan`): kept where a
    cell already has them with the same first seed and count, else run
    (:func:`run_extra`); any other cell without ``extra_seeds``."""
    want = {tuple(g): plan["seeds"] for g in plan["grid"]}
    if "undecided" in plan:
        want |= {tuple(g): plan["undecided"]["seeds"] for g in plan["undecided"]["grid"]}

    def key(c):
        return (c["distinct_setting"], c["skew"], c["churn_setting"])

    def kept(c):
        old = c.get("extra_seeds")
        return old if old and (old["first"], old["seeds"]) == (plan["first"], want[key(c)]) \
            else None  # fmt: skip

    todo = {f"D{d}-s{s}-c{c}-extra": {"preset": settings["preset"], "distinct": d, "skew": s,
                                      "churn": c, "first": plan["first"], "seeds": want[key(c0)],
                                      "intervals": settings["intervals"], "seed": settings["seed"]}
            for c0 in cells if key(c0) in want and not kept(c0)
            for d, s, c in [key(c0)]}  # fmt: skip
    done = sweep_cells(NAME, f"{stem}-extra", {**settings, "extra": plan}, run_extra, todo,
                       run_options) if todo else {}  # fmt: skip
    out = []
    for c in cells:
        base = {k: v for k, v in c.items() if k != "extra_seeds"}
        if key(c) in want:
            d, s, ch = key(c)
            base["extra_seeds"] = kept(c) or done[f"D{d}-s{s}-c{ch}-extra"]
            log(
                f"D={d} s={s} churn={ch}: C1R0 4 best in {base['extra_seeds']['paper_best_seeds']}"
                f" of {want[key(c)]} extra seeds"
            )
        out.append(base)
    return out


def all_seeds(c: dict, shape: dict) -> dict:
    """A cell over all its seeds, its first :data:`SEEDS` and its ``extra_seeds``:
    ``{"seeds", "errors" ({label: {"total", "seeds"}}), "properties", "shape"}``, the
    properties and shape as means weighted by the seeds (a value not measured on one
    part: the other part's)."""
    extra = c.get("extra_seeds")
    if not extra:
        errors = {k: {"total": v["total"], "seeds": v["seeds"]} for k, v in c["errors"].items()}
        return {"seeds": len(next(iter(errors.values()))["seeds"]), "errors": errors,
                "properties": c["properties"], "shape": shape}  # fmt: skip
    n = len(next(iter(c["errors"].values()))["seeds"])
    m = extra["seeds"]
    errors = {}
    for k, v in c["errors"].items():
        seeds = [*v["seeds"], *extra["errors"][k]["seeds"]]
        errors[k] = {"total": float(np.mean(seeds)), "seeds": seeds}
    return {"seeds": n + m, "errors": errors,
            "properties": _weighted(c["properties"], n, extra["properties"], m),
            "shape": _weighted(shape, n, extra["shape"], m)}  # fmt: skip


def _weighted(a, wa: int, b, wb: int):
    """The mean of ``a`` (weight ``wa``) and ``b`` (``wb``), dict by dict; None: the other."""
    if isinstance(a, dict):
        return {k: _weighted(a[k], wa, b.get(k), wb) for k in a}
    if a is None or b is None:
        return b if a is None else a
    return (wa * a + wb * b) / (wa + wb)


def _kept_shapes(path: Path, settings: dict, log) -> dict:
    """The cells' shapes of an earlier record at ``path`` with the same ``settings`` (but
    for the grid) and :data:`SHAPE_VERSION`, by ``(distinct, skew, churn)``; else {}."""
    try:
        old = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    same = {k: v for k, v in old.get("settings", {}).items() if k != "grid"} == {
        k: v for k, v in settings.items() if k != "grid"
    }
    if not same or old.get("shape_version") != SHAPE_VERSION or "shapes" not in old:
        return {}
    log(f"the input shapes of {path} have these settings: kept")
    return {tuple(g): s for g, s in zip(old["settings"]["grid"], old["shapes"], strict=True)}


def run(output_dir: Path, seed: int, quick: bool, run_options=None) -> dict:
    """Run the sweep, one unit per generator setting (:mod:`hwprof.run`; ``run_options``:
    where they run), and measure the real programs in the full form; write
    ``multihash-conditions[-quick].{json,md}`` and plots into ``output_dir``."""

    def log(text):
        print(f"{NAME}: {text}", file=sys.stderr, flush=True)

    start = time.perf_counter()
    preset = QUICK["preset"] if quick else "1m"
    seeds = QUICK["seeds"] if quick else SEEDS
    intervals = QUICK["intervals"] if quick else INTERVALS
    stem = f"{NAME}-quick" if quick else NAME
    settings = {
        "version": SWEEP_VERSION,
        "seed": seed,
        "preset": preset,
        "seeds": seeds,
        "intervals": intervals,
        "grid": [list(g) for g in grid(quick)],
    }
    kept = {(c["distinct_setting"], c["skew"], c["churn_setting"]): c for c in
            previous_sweep(Path(output_dir) / f"{stem}.json", settings, log,
                           ignore=("grid",)) or ()}  # fmt: skip
    todo = {f"D{d}-s{s}-c{c}": {"preset": preset, "distinct": d, "skew": s, "churn": c,
                                "seeds": seeds, "intervals": intervals, "seed": seed}
            for d, s, c in grid(quick) if (d, s, c) not in kept}  # fmt: skip
    done = sweep_cells(NAME, stem, settings, run_cell, todo, run_options)
    cells = []
    for distinct, skew, churn in grid(quick):
        c = kept.get((distinct, skew, churn)) or done[f"D{distinct}-s{skew}-c{churn}"]
        cells.append(c)
        log(
            f"D={distinct} s={skew} churn={churn}: best {c['best']} "
            f"(C1R0 4 {c['errors']['C1R0 4']['total']:.2f}, "
            f"C1R1 2 {c['errors']['C1R1 2']['total']:.2f})"
        )
    cells = _with_extra_seeds(cells, extra_plan(quick, cells), settings, stem, run_options, log)
    old_shapes = _kept_shapes(Path(output_dir) / f"{stem}.json", settings, log)
    shapes = [old_shapes.get((d, s, c)) or cell_shape(preset, d, s, c, seeds, intervals, seed)
              for d, s, c in grid(quick)]  # fmt: skip
    real = real_programs(Path(output_dir), log, quick)
    record = {"seed": seed, "quick": quick, "preset": preset, "seeds": seeds,
              "intervals": intervals, "settings": settings, "paper": PAPER, "cells": cells,
              "conditions": conditions(cells, preset), "real": real,
              "shape_version": SHAPE_VERSION, "shapes": shapes,
              "separation": separation(cells, shapes, real, preset),
              "seconds": time.perf_counter() - start}  # fmt: skip
    write_results(output_dir, NAME, quick, record, markdown(record, stem))
    plots(record, Path(output_dir), stem)
    return {"paper_best_cells": record["conditions"]["paper_best_cells"], "cells": len(cells)}


def _names(items) -> str:
    """Tied winners as one cell: ``a = b``."""
    return " = ".join(str(x) for x in items)


def _fmt(e: dict) -> str:
    return f"{e['total']:.2f} [{e['min']:.2f}-{e['max']:.2f}]"


def _span(v, spec=".2f") -> str:
    return "-" if v is None else f"{v[0]:{spec}}-{v[1]:{spec}}"


def markdown(r: dict, stem: str) -> str:
    """The results file, every number from the record ``r``."""
    cmd = f"hwprof experiment {NAME}" + (" --quick" if r["quick"] else "")
    preset = PRESETS[r["preset"]]
    labels = [c[0] for c in CONFIGS]
    L = ["# When is 4 tables C1-R0 best? The multi-hash configurations against the input",
         "", f"Produced by `{cmd}`: {len(r['cells'])} generator settings, {r['seeds']} seeds "
         f"each (generator and hash seeds), {r['intervals']} intervals of "
         f"{preset['interval_length']:,} tuples, threshold {preset['threshold']:,}, 2048 "
         "counters split over the tables, accumulator of "
         f"{preset['accumulator']:,} entries with retaining. Error = formula (1) in %, mean "
         "[min-max] over the seeds." + _extra_line(r), "", _settings_line(r), "",
         "## The paper's claim", "", f"{r['paper']['claim']}. Its programs: "
         f"{r['paper']['programs']}. What it says of their streams: {r['paper']['distinct']}; "
         f"{r['paper']['candidates']}; candidate change between intervals: "
         f"{r['paper']['churn_gcc_1m']}; {r['paper']['churn_low_1m']}; "
         f"{r['paper']['churn_high_1m']}. The paper gives no count of distinct tuples or "
         "candidates per interval in its text, so its programs cannot be placed on the "
         "sweep's axes except by the candidate change of Fig. 6.", "",
         "## The sweep", "",
         "Properties (module docstring of `hwprof/experiments/multihash_conditions.py`): "
         "distinct tuples and true candidates per interval, the candidates' share of the "
         "tuples, candidate churn (share of an interval's candidates that were none in the "
         "previous one), and rho_4, the tuples that reach the hash tables (their key was no "
         "candidate of the previous interval, so no retained entry shields them) per counter "
         "of a 4-table profiler, in units of the threshold; nu_4, the same for the tuples that "
         "are no candidate of their interval (they stay in the hash tables all interval).", "",
         "| distinct (setting) | skew | churn (setting) | candidates | candidate share | "
         "churn | rho_4 | nu_4 | best (mean) | seeds where C1R0 4 is best | best C1-R0 tables | "
         "C1R0 4 | C1R1 2 | C1R0 2 | C1R0 8 |",
         "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: "
         "| ---: | ---: | ---: |"]  # fmt: skip
    for c in r["cells"]:
        p, e = c["properties"], c["errors"]
        churn = "-" if p["churn"] is None else f"{p['churn']:.2f}"
        L.append(
            f"| {c['distinct_setting']:,} | {c['skew']} | {c['churn_setting']} | "
            f"{p['candidates']:.1f} | {p['candidate_share']:.2f} | {churn} | "
            f"{p['rho']['4']:.2f} | {noise_load(p, 4, r['preset']):.2f} | "
            f"{_names(c['best'])} | "
            f"{c['paper_best_seeds']}/{r['seeds']} | "
            f"{_names(c['best_c1r0_tables'])} | {_fmt(e['C1R0 4'])} | {_fmt(e['C1R1 2'])} | "
            f"{_fmt(e['C1R0 2'])} | {_fmt(e['C1R0 8'])} |"
        )
    k = r["conditions"]
    L += [
        "",
        f"![sweep]({stem}.png)",
        "",
        "Every configuration, every cell (mean error %):",
        "",
        "| distinct | skew | churn | " + " | ".join(labels) + " |",
        "| ---: | ---: | ---: |" + " ---: |" * len(labels),
    ]
    for c in r["cells"]:
        L.append(
            f"| {c['distinct_setting']:,} | {c['skew']} | {c['churn_setting']} | "
            + " | ".join(f"{c['errors'][x]['total']:.2f}" for x in labels)
            + " |"
        )
    L += [
        "",
        "## Where the paper's result appears",
        "",
        f"4 tables C1-R0 has the lowest mean error in {k['paper_best_cells']} of "
        f"{k['cells']} cells (in {k['paper_best_in_every_seed']} of them in every seed). "
        "Ranges of the properties over those cells and over the others:",
        "",
        "| property | cells where C1R0 4 is best | the other cells |",
        "| --- | --- | --- |",
    ]
    for key, name, spec in (("distinct", "distinct tuples per interval", ",.0f"),
                            ("candidates", "candidates per interval", ".1f"),
                            ("candidate_share", "candidate share", ".2f"),
                            ("churn", "candidate churn", ".2f"),
                            ("rho4", "rho_4", ".2f"),
                            ("nu4", "nu_4 (noise load)", ".2f")):  # fmt: skip
        L.append(f"| {name} | {_span(k['won'][key], spec)} | {_span(k['lost'][key], spec)} |")
    L += ["", _real_section(r), "", _separation_section(r), "", _verdict(r), ""]
    return "\n".join(L)


def _extra_line(r: dict) -> str:
    """The cells with extra seeds and where they are used ("" when none has)."""
    extra = [c for c in r["cells"] if c.get("extra_seeds")]
    if not extra:
        return ""
    by: dict = {}
    for c in extra:
        by[c["extra_seeds"]["seeds"]] = by.get(c["extra_seeds"]["seeds"], 0) + 1
    groups = " and ".join(
        f"{n} cells have {m} seeds more" for m, n in sorted(by.items(), reverse=True)
    )
    return (
        f" {groups} (seed indexes from "
        f"{extra[0]['extra_seeds']['first']} on); the sweep's tables and \"Where the "
        f'paper\'s result appears" use the first {r["seeds"]} seeds of every cell; "Which '
        "property decides\" and the verdict's sentences on its rules use all of a cell's "
        "seeds."
    )


def _settings_line(r: dict) -> str:
    """The settings the sweep ran, grouped by skew and churn (the grid of the record)."""
    groups: dict = {}
    for d, skew, churn in r["settings"]["grid"]:
        groups.setdefault((skew, churn), []).append(d)
    return "Settings run (distinct tuples per interval, by skew and churn): " + "; ".join(
        f"skew {skew}, churn {churn}: " + ", ".join(f"{d:,}" for d in ds)
        for (skew, churn), ds in groups.items()) + "."  # fmt: skip


def _real_section(r: dict) -> str:
    if not r["real"]:
        return (
            "## Our real programs\n\nNot measured in this run (the quick form, or no "
            "multihash-values.json beside the results)."
        )
    L = [
        "## Our real programs (1M / 0.1 %)",
        "",
        f"Properties of the first {REAL_INTERVALS} intervals of each program's stream (the "
        "multihash-values run's keys), and its best configuration from multihash-values.json "
        "(mean over its seeds):",
        "",
        "| program | distinct | candidates | candidate share | churn | rho_4 | nu_4 | best | "
        "best C1-R0 tables | C1R0 4 | C1R1 2 |",
        "| --- |" + " ---: |" * 10,
    ]
    for name, p in r["real"].items():
        q, e = p["properties"], p["errors"]
        L.append(
            f"| {name} | {q['distinct']:,.0f} | {q['candidates']:.1f} | "
            f"{q['candidate_share']:.2f} | {q['churn']:.2f} | {q['rho']['4']:.2f} | "
            f"{noise_load(q, 4):.2f} | "
            f"{_names(p['best'])} | {_names(p['best_c1r0_tables'])} | {_fmt(e['C1R0 4'])} | "
            f"{_fmt(e['C1R1 2'])} |"
        )
    return "\n".join(L)


def _with_seeds(k: dict, seeds: int) -> list[str]:
    """The settings where 4 tables C1-R0 is best, each with the seeds where it is (a
    record without the counts: the settings alone)."""
    counts = k.get("paper_best_seeds")
    if counts is None:
        return list(k["paper_best_settings"])
    return [
        f"{s}: {n}/{seeds} seeds" for s, n in zip(k["paper_best_settings"], counts, strict=True)
    ]


def _rule_text(rule: dict) -> str:
    """A rule as text: ``candidate share < 0.335 and ...``; a rule beyond every value:
    ``none (every cell: no)``."""
    names = {k: (n, f) for k, n, f in SEPARATORS}
    c = rule.get("confusion")
    if c and c["both"] + c["wrong"] == 0:
        return "none (every cell: no)"
    if c and c["missed"] + c["neither"] == 0:
        return "none (every cell: yes)"
    return " and ".join(f"{names[p][0]} {d} {t:{names[p][1]}}"
                        for p, d, t in zip(rule["properties"], rule["directions"],
                                           rule["thresholds"], strict=True))  # fmt: skip


def on_programs(rule: dict, k: dict) -> dict:
    """The rule applied to the real programs of ``k`` (``r["separation"]``), counted only
    where the seeds decide: ``{"decided": [names], "undecided": [names], "right": count of
    decided programs it gets right, "wrong": [decided names it gets wrong or cannot
    predict]}``. An undecided program (4 tables C1-R0 and its rival a tie within their
    spread) has no known label, so a rule is neither right nor wrong there."""
    real = k["real"]
    decided_ = [n for n, p in real.items() if p["decided"]]
    wrong = []
    for n in decided_:
        predicted = apply_rule(rule, real[n]["values"])
        if predicted is None or predicted != real[n]["won"]:
            wrong.append(n)
    return {"decided": decided_, "undecided": [n for n, p in real.items() if not p["decided"]],
            "right": len(decided_) - len(wrong), "wrong": wrong}  # fmt: skip


def _right_cell(rule: dict, k: dict) -> str:
    """The table's "right of decided programs" cell: "k of n"."""
    got = on_programs(rule, k)
    return f"{got['right']} of {len(got['decided'])}"


def _undecided_text(k: dict) -> str:
    """Which programs the seeds leave undecided, and what that means for a rule ("" when
    none)."""
    undecided = [n for n, p in k["real"].items() if not p["decided"]]
    if not undecided:
        return ""
    return (
        f"not counted: {', '.join(undecided)}, where the seeds do not tell 4 tables C1-R0 "
        "from its rival (a tie within their spread), so a rule is neither right nor wrong "
        "there"
    )


def _seeds_text(k: dict) -> str:
    """How many seeds each cell has, whose outcome the extra seeds changed, which stay
    undecided (every number from ``k["cells"]``)."""
    by: dict = {}
    for row in k["cells"]:
        by.setdefault(row["seeds"], []).append(row)
    parts = [f"{len(rows)} cells have {n} seeds" for n, rows in sorted(by.items())]
    text = "Seeds per cell: " + ", ".join(parts) + "."
    extra = [row for row in k["cells"] if "first_seeds" in row]
    if extra:
        first = extra[0]["first_seeds"]["seeds"]
        changed = [row["setting"] for row in extra if row["first_seeds"]["won"] != row["won"]]
        now = [row["setting"] for row in extra
               if row["decided"] and not row["first_seeds"]["decided"]]  # fmt: skip
        still = [row["setting"] for row in extra if not row["decided"]]
        text += (
            f" The {len(extra)} cells with more seeds ({_list(s['setting'] for s in extra)})"
            f" were run with {first} first; with all their seeds, 4 tables C1-R0 wins"
            f" in {sum(s['won'] for s in extra)} of them (in "
            f"{sum(s['first_seeds']['won'] for s in extra)} over the first {first}); "
            + (f"the outcome changed in {_list(changed)}; " if changed else "no outcome changed; ")
            + (f"decided now: {_list(now)}; " if now else "none became decided; ")
            + (f"still undecided: {_list(still)}." if still else "none is undecided.")
        )
    return text


def _list(items) -> str:
    items = list(items)
    return "; ".join(items) if items else "none"


def _lead_sentence(k: dict, rules: dict, rank: list[str], lead: dict, what: str) -> str:
    """One sentence: why the rule ``lead["rule"]`` leads ``rank`` (by the criterion
    ``lead["criterion"]`` against ``lead["runner_up"]``)."""
    names = {kk: nm for kk, nm, _ in SEPARATORS}
    first, second = rules[lead["rule"]], rules[lead["runner_up"]]
    d = k["decided_cells"]

    def decided_errors(rule):
        return rule["errors"] - rule["misclassified_undecided"]

    def m(rule):
        return cell(rule["margin"], ".3f")

    head = (
        f"{_rule_text(first)} leads the {what}: it misclassifies {decided_errors(first)} "
        f"of the {d} decided cells"
    )
    c = lead["criterion"]
    if c == "decided_errors":
        text = (
            f"{head}, fewer than any other ({names.get(lead['runner_up'], 'next')}: "
            f"{decided_errors(second)})"
        )
    else:
        same = sum(decided_errors(r) == decided_errors(first) for r in rules.values()) - 1
        text = f"{head}, as few as {same} other{'s' if same != 1 else ''}, and"
        if c == "margin":
            text += (
                f" its threshold has the widest margin of those ({m(first)} of the "
                f"property's spread over the cells; next {names.get(lead['runner_up'], '')}"
                f" {m(second)})"
            )
        elif c == "leave_one_out":
            text += (
                f" as wide a margin as the next, and the fewest cells wrong when each is "
                f"left out ({first['leave_one_out']} against {second['leave_one_out']})"
            )
        elif c == "errors":
            text += (
                " ties the next on margin and leave-one-out but misclassifies fewer cells "
                f"in all ({first['errors']} against {second['errors']})"
            )
        else:
            text += " ties the next on every criterion (it comes first in the list)"
    if first["margin"] is not None and second["margin"] is not None \
            and first["margin"] < second["margin"]:  # fmt: skip
        text += (
            f"; its margin, {m(first)}, is narrower than the next rule's ({m(second)}); "
            f"between decided cells alone it is {cell(first['decided_margin'], '.3f')}"
        )
    fewest = min(rules.values(), key=lambda r: r["errors"])
    if fewest is not first and fewest["errors"] < first["errors"]:
        place = next(i for i, key in enumerate(rank) if rules[key] is fewest) + 1
        text += (
            f"; the rule with the fewest misclassified cells in all, {_rule_text(fewest)} "
            f"({fewest['errors']}, {fewest['misclassified_undecided']} of them undecided), "
            f"ranks {place}: its margin is {m(fewest)}"
        )
    return text + "."


def _separation_section(r: dict) -> str:
    """The shape of every input and how well each property's rule separates the cells
    where 4 tables C1-R0 is best (every number from ``r["separation"]``)."""
    k = r["separation"]
    n, programs = len(k["cells"]), len(k["real"])
    decided_programs = sum(p["decided"] for p in k["real"].values())
    L = [
        "## Which property decides",
        "",
        "Each cell is labelled by whether 4 tables C1-R0 has the lowest error, mean over all "
        "the cell's seeds, and *decided* when the seeds tell it from its rival (the best other "
        "configuration when it wins, the winner when it loses): the 95 % t interval of their "
        f"mean paired difference over the seeds excludes 0 ({k['decided_cells']} of {n} cells "
        f"are decided). {_seeds_text(k)} Shape of the inputs (`input_shape`: means over the "
        "intervals and seeds; the Zipf skew fitted to the ranks with at least "
        f"{SKEW_FIT_MIN_COUNT} occurrences; near misses: tuples with half the threshold or "
        "more but below it):",
        "",
        "| input | seeds | fitted skew | top-10 share | top-100 share | top-1000 share | "
        "distinct per counter | candidates per accumulator entry | near misses | "
        "C1R0 4 best | rival | decided |",
        "| --- |" + " ---: |" * 8 + " --- | --- | --- |",
    ]
    rows = [(c["setting"], c) for c in k["cells"]] + list(k["real"].items())
    for name, c in rows:
        v = c["values"]
        L.append(f"| {name} | {cell(c.get('seeds'), 'd')} | {cell(v['skew_fit'], '.3f')} | "
                 f"{v['top10_share']:.3f} | "
                 f"{v['top100_share']:.3f} | {v['top1000_share']:.3f} | "
                 f"{v['distinct_per_counter']:.1f} | {v['candidates_per_entry']:.3f} | "
                 f"{v['near_misses']:.1f} | {cell(c['won'])} | {c['rival']} | "
                 f"{cell(c['decided'])} |")  # fmt: skip
    criteria = ", then ".join(f"{w} {name}" for _, name, w in RANK_CRITERIA)
    L += ["", f"Each property's best threshold rule for \"C1R0 4 is best\", fitted on the {n} "
          "cells (fewest misclassified; at the widest gap when several tie), ranked: "
          f"{criteria}. An undecided cell's label is not known, so misclassifying it is no "
          "evidence against a rule; the margin is the gap between the two cells' values the "
          "threshold lies in, as a share of the property's spread over the cells (a pair: "
          "the narrower), so a threshold the sampling of one cell can move ranks low; the "
          "margin between decided cells is the same gap with only decided cells bounding it "
          "(not a ranking criterion). "
          "Leave-one-out: cells misclassified when each is predicted by the rule fitted to "
          f"the others; programs: the rule applied to our {programs} programs, which it was "
          f"not fitted to, right of the {decided_programs} the seeds decide"
          + (f"; {_undecided_text(k)}" if decided_programs < programs else "") + ".", "",
          _lead_sentence(k, k["single"], k["single_rank"], k["lead"], "single rules"), "",
          "| rank | property | rule | margin | margin between decided cells | gap | "
          "decided cells misclassified | cells misclassified (undecided among them) | "
          "leave-one-out | right of decided programs |",
          "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    names = {kk: nm for kk, nm, _ in SEPARATORS}
    for i, key in enumerate(k["single_rank"], 1):
        rule = k["single"][key]
        L.append(
            f"| {i} | {names[key]} | {_rule_text(rule)} | {cell(rule['margin'], '.3f')} | "
            f"{cell(rule['decided_margin'], '.3f')} | {cell(rule['gap'], '.3g')} | "
            f"{rule['errors'] - rule['misclassified_undecided']} | "
            f"{rule['errors']} ({rule['misclassified_undecided']}) | "
            f"{rule['leave_one_out']} | {_right_cell(rule, k)} |"
        )
    shown = len(k["ranked_pairs"])
    L += [
        "",
        "Gap: the width of the gap between the two neighbouring cells' values the "
        "threshold lies in, in the property's units (a pair: the narrower).",
        "",
        'The pair rules (two threshold rules joined by "and", each pair of properties\' '
        f"best) that misclassify the fewest cells ({k['pair']['errors']}; "
        f"{k['pairs_with_fewest_errors']} pairs"
        + (f", the first {shown} shown" if shown < k["pairs_with_fewest_errors"] else "")
        + "), in the same rank order"
        + _pair_ties(k["ranked_pairs"])
        + ":",
        "",
        "| rank | pair rule | margin | margin between decided cells | gap | decided cells "
        "misclassified | cells misclassified (undecided among them) | leave-one-out | "
        "right of decided programs |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for i, p in enumerate(k["ranked_pairs"], 1):
        L.append(
            f"| {i} | {_rule_text(p)} | {cell(p['margin'], '.3f')} | "
            f"{cell(p['decided_margin'], '.3f')} | {cell(p['gap'], '.3g')} | "
            f"{p['errors'] - p['misclassified_undecided']} | {p['errors']} "
            f"({p['misclassified_undecided']}) | {p['leave_one_out']} | "
            f"{_right_cell(p, k)} |"
        )
    return "\n".join(L)


def _pair_ties(pairs: list[dict]) -> str:
    """How many of the first pairs tie with the first on every ranking criterion (none:
    "")."""
    tied = 1
    while tied < len(pairs) and deciding_criterion(pairs[0], pairs[tied]) is None:
        tied += 1
    return f" (the first {tied} tie on every criterion)" if tied > 1 else ""


def _separation_verdict(r: dict) -> str:
    """The verdict's sentences on which property separates (``r["separation"]``)."""
    k = r["separation"]
    n, programs = len(k["cells"]), len(k["real"])
    names = {kk: nm for kk, nm, _ in SEPARATORS}
    lead = k["single"][k["lead"]["rule"]]
    c = lead["confusion"]

    def on_real(rule):
        if not programs:
            return ""
        got = on_programs(rule, k)
        undecided = _undecided_text(k)
        return (f", and is right on {got['right']} of the {len(got['decided'])} of our "
                f"{programs} programs the seeds decide"
                + (f" (not on {', '.join(got['wrong'])})" if got["wrong"] else "")
                + (f"; {undecided}" if undecided else ""))  # fmt: skip

    text = (f" The property that leads the ranked rules: {names[k['lead']['rule']]}; the rule "
            f"{_rule_text(lead)} (margin {cell(lead['margin'], '.3f')}) misclassifies "
            f"{lead['errors']} of {n} cells (C1R0 4 best and predicted {c['both']}, best but "
            f"not predicted {c['missed']}, predicted but not best {c['wrong']}, neither "
            f"{c['neither']}"
            + (f"; misclassified: {'; '.join(lead['misclassified'])}, "
               f"{lead['misclassified_undecided']} of them undecided by the seeds"
               if lead["misclassified"] else "")
            + f"), {lead['leave_one_out']} when each cell is left out of the fit"
            + on_real(lead) + ".")  # fmt: skip
    single = k["single"]
    clean = [names[key] for key in k["single_rank"]
             if single[key]["errors"] == single[key]["misclassified_undecided"]]  # fmt: skip
    text += (f" On the {k['decided_cells']} cells the seeds decide, "
             + (f"{len(clean)} "
                + ("property misclassifies" if len(clean) == 1 else "properties misclassify")
                + f" none: {', '.join(clean)}."
                if clean else "every property misclassifies at least one."))  # fmt: skip
    if min(rule["errors"] for rule in k["single"].values()) == 0:
        return text + " A single property separates all cells."
    pair = k["pair"]
    return (text + " No single property separates all cells without error. The leading pair "
            f"rule, {_rule_text(pair)} (margin {cell(pair['margin'], '.3f')}), misclassifies "
            f"{pair['errors']} of {n} cells ({pair['misclassified_undecided']} of them "
            f"undecided), {pair['leave_one_out']} when each is left out" + on_real(pair)
            + ".")  # fmt: skip


def _verdict(r: dict) -> str:
    k = r["conditions"]
    names = {"distinct": "distinct tuples", "candidates": "candidates",
             "candidate_share": "candidate share", "churn": "candidate churn",
             "rho4": "rho_4", "nu4": "nu_4"}  # fmt: skip
    text = ["", ""]
    if not k["paper_best_cells"]:
        text.append(
            "4 tables C1-R0 is best in no cell of the sweep: the paper's ranking "
            "does not appear for any generator setting tried."
        )
    else:
        separating = [names[p] for p, o in k["overlap"].items() if o is False]
        text.append(
            f"4 tables C1-R0 is best (mean over the seeds) in {k['paper_best_cells']} of "
            f"{k['cells']} cells ({'; '.join(_with_seeds(k, r['seeds']))}), in every seed "
            f"in {k['paper_best_in_every_seed']} of them. "
            + (
                ""
                if k["paper_best_cells"] == k["cells"]
                else "No single property separates those cells from the others: each one's range "
                "over them overlaps its range over the others (the table above)."
                if not separating
                else f"Separating them from the others: {', '.join(separating)} (the table above)."
            )
        )
    nu = {}
    for c in r["cells"]:
        for n in c["best_c1r0_tables"]:
            nu.setdefault(n, []).append(noise_load(c["properties"], 4, r["preset"]))
    text.append(
        " Best C1-R0 table count over the cells: "
        + ", ".join(
            f"{n} tables in {len(v)} (nu_4 {min(v):.2f}-{max(v):.2f})"
            for n, v in sorted(nu.items())
        )
        + "."
    )
    r2 = k["reset2_beats_paper_best"]
    text.append(
        f" 2 tables C1-R1 (our programs' best) is below 4 tables C1-R0 in {len(r2)} of "
        f"{k['cells']} cells"
        + (
            f", with rho_4 {_span(k['reset2']['rho4'])} and candidate churn "
            f"{_span(k['reset2']['churn'])}."
            if r2
            else "."
        )
    )
    if r["real"]:
        rho = [p["properties"]["rho"]["4"] for p in r["real"].values()]
        churn = [p["properties"]["churn"] for p in r["real"].values()]
        best = {n: _names(p["best"]) for n, p in r["real"].items()}
        nu = [noise_load(p["properties"], 4) for p in r["real"].values()]
        text.append(
            f" Our real programs have rho_4 {min(rho):.2f}-{max(rho):.2f}, nu_4 "
            f"{min(nu):.2f}-{max(nu):.2f} and "
            f"candidate churn {min(churn):.2f}-{max(churn):.2f}; their best "
            "configurations: " + ", ".join(f"{n} {b}" for n, b in best.items()) + "."
        )
    if r.get("separation"):
        text.append(_separation_verdict(r))
    return "## Verdict\n\n" + "".join(text[2:])


def plots(r: dict, output_dir: Path, stem: str) -> None:
    """Error of four configurations against distinct tuples per interval, one panel per
    (skew, churn) setting; cells and programs by nu_4 and churn."""
    import matplotlib.pyplot as plt

    groups: dict = {}
    for c in r["cells"]:
        key = (
            f"skew {c['skew']}, churn 0"
            if c["churn_setting"] == 0
            else f"skew {c['skew']}, churn {c['churn_setting']}"
        )
        groups.setdefault(key, []).append(c)
    n = len(groups) + 1
    rule = r.get("separation")
    fig, panels = panel_grid(n + bool(rule), 6 if rule else 5, 3.4, 3.4)
    for ax, (title, cells) in zip(panels, groups.items(), strict=False):
        cells = sorted(cells, key=lambda c: c["properties"]["distinct"])
        xs = [c["properties"]["distinct"] for c in cells]
        for label in ("C1R0 2", "C1R0 4", "C1R0 8", "C1R1 2"):
            e = [c["errors"][label] for c in cells]
            ax.errorbar(xs, [x["total"] for x in e],
                        yerr=[[x["total"] - x["min"] for x in e],
                              [x["max"] - x["total"] for x in e]],
                        marker="o", capsize=2, label=label, lw=1)  # fmt: skip
        ax.set(
            xscale="log",
            xlabel="distinct tuples per interval",
            title=title,
            ylabel=f"error % ({r['seeds']} seeds: mean, min-max)",
        )
        ax.set_yscale("symlog", linthresh=0.1)
        ax.set_ylim(bottom=0)
    panels[0].legend(fontsize=7)
    ax = panels[n - 1]
    for c in r["cells"]:
        p = c["properties"]
        won = PAPER_BEST in c["best"]
        ax.scatter(
            noise_load(p, 4, r["preset"]),
            p["churn"] or 0,
            marker="o",
            s=25,
            color="tab:green" if won else "tab:gray",
        )
    for name, p in r["real"].items():
        q = p["properties"]
        ax.scatter(noise_load(q, 4), q["churn"], marker="*", s=90, color="tab:red")
        ax.annotate(name, (noise_load(q, 4), q["churn"]), fontsize=7)
    ax.set(
        xscale="log",
        xlabel="nu_4 (non-candidate tuples per 4-table counter / T)",
        ylabel="candidate churn",
        title="green: C1R0 4 best; red: ours",
    )
    if rule:
        _rule_panel(panels[n], rule)
    fig.tight_layout()
    fig.savefig(output_dir / f"{stem}.png", dpi=110)
    plt.close(fig)


def _rule_panel(ax, k: dict) -> None:
    """The cells and programs on the best pair rule's two properties, its thresholds as
    lines (hollow: undecided by the seeds)."""
    pair = k["pair"]
    (px, py), (tx, ty) = pair["properties"], pair["thresholds"]
    names = {key: name for key, name, _ in SEPARATORS}
    for c in k["cells"]:
        v = c["values"]
        color = "tab:green" if c["won"] else "tab:gray"
        ax.scatter(v[px], v[py], marker="o", s=25, edgecolors=color,
                   facecolors=color if c["decided"] else "none")  # fmt: skip
    for name, p in k["real"].items():
        v = p["values"]
        ax.scatter(v[px], v[py], marker="*", s=90, color="tab:red")
        ax.annotate(name, (v[px], v[py]), fontsize=7)
    ax.axvline(tx, color="black", lw=0.6, linestyle=":")
    ax.axhline(ty, color="black", lw=0.6, linestyle=":")
    ax.set(xlabel=names[px], ylabel=names[py],
           title=f"best pair rule: {pair['errors']} of {len(k['cells'])} wrong\n"
           "(hollow: undecided by the seeds)")  # fmt: skip
    ax.title.set_fontsize(9)


def headline(r: dict) -> list[tuple[str, str, str]]:
    """The paper's ranking against where it appears in our sweep."""
    k = r["conditions"]
    rows = [
        (
            "generator settings where 4 tables C1-R0 is best",
            'all ("consistently")',
            f"{k['paper_best_cells']} of {k['cells']}",
        )
    ]
    from .multihash_values import split_programs

    standard, selected = split_programs(r["real"])
    for names, what in ((standard, "our programs"),
                        (selected, "programs chosen for low concentration")):  # fmt: skip
        if names:
            best = sum(PAPER_BEST in r["real"][n]["best"] for n in names)
            rows.append((f"{what} where 4 tables C1-R0 is best", "all",
                         f"{cell(best, 'd')} of {len(names)}"))  # fmt: skip
    return rows


EXPERIMENTS = [Experiment(NAME, "multi-hash configurations (tables, C, R) swept over the "
                          "input's distinct tuples, skew and candidate churn (Figs. 10-12)",
                          run, units=True, headline=headline)]  # fmt: skip
