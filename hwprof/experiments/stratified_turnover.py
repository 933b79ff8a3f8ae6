"""A working set that turns over: the stratified-long section on non-stationary streams.

``R_256`` is a Bernoulli sampler: its error at a checkpoint depends only on the multiset
of the events so far. On a stationary stream every selected load keeps gaining
executions, so the error falls about as the inverse square root of the events; the
paper's ``R_256`` hovering near 5 % from 650K to 7M events (Sastry et al., sec. 5.4)
needs a stream whose selected profile keeps gaining young tuples. This module sweeps
:func:`~hwprof.experiments.stratified_conditions.turnover_stream` (phases of ``phase``
events, a fraction ``turnover`` of the loads renewed at each phase change, their values
or the loads themselves) over 16M events and measures the same turnover on any stream
(:func:`turnover_properties`, :func:`trace_turnover`), so the programs' place on the
sweep's axis can be read.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from . import panel_grid, sweep_cells
from .stratified_conditions import SKEW, turnover_stream
from .stratified_values import PAPER as VALUES_PAPER
from .stratified_values import (
    IdealProfile,
    checkpoints_for,
    compressor_counts,
    reach_and_stay,
)

__all__ = [
    "turnover_properties",
    "trace_turnover",
    "turnover_run",
    "run_turnover",
    "turnover_markdown",
    "plot_turnover",
    "GRID",
    "QUICK",
]

PAIR = ("R_256", "H[P_256]_2048")
READINGS = ("prefix", "both")
#: the sweep: (loads, rest, renew, phase, turnover[, skew]), in the order the units run.
#: At turnover 0 the stream is stratified-long's iid setting of that many loads (phase
#: and renew have no effect).
#: Phases of 100K and 1M events (a function's compilation to a pass over many), a tenth,
#: a third or all of the loads renewed per phase, their values or the loads themselves,
#: at the main table's large working set (1000 loads: gcc's is the largest of the
#: paper's programs); few values per load (values that repeat, which the strata can count)
FRACTIONS = (0.1, 0.3, 1.0)
#: last, a more concentrated profile (Zipf exponent 1.5, a sixth element): H[P_256]'s
#: strata count hot tuples sooner, and the hot loads gain R_256 samples sooner, so the
#: fastest turnovers: stationary, every load renewed per 1M events, a third or every
#: load renewed per 100K. Then a stable hot core beside a tail that turns over (a seventh
#: element: the 10 hottest loads, 1 % of them, never renewed; every other load renewed
#: per 1M or per 100K events)
GRID = tuple(
    [(1_000, "few", "loads", 1_000_000, 0.0)]
    + [(1_000, "few", renew, 1_000_000, q) for renew in ("loads", "values") for q in FRACTIONS]
    + [(100, "few", "loads", 1_000_000, 0.0)]
    + [(1_000, "few", renew, 100_000, q) for renew in ("loads", "values") for q in FRACTIONS]
    + [(1_000, "few", "loads", phase, q, 1.5)
       for phase, q in ((1_000_000, 0.0), (1_000_000, 1.0), (100_000, 0.3), (100_000, 1.0))]
    + [(1_000, "few", "loads", phase, 1.0, 1.5, 10) for phase in (1_000_000, 100_000)]
)  # fmt: skip
FULL = {"events": 16_000_000, "checkpoints": 22, "grid": GRID}
QUICK = {"events": 150_000, "checkpoints": 8,
         "grid": ((100, "few", "loads", 20_000, 0.0), (100, "few", "loads", 20_000, 0.5),
                  (100, "few", "values", 20_000, 0.5))}  # fmt: skip
#: bump when the stream or a unit's measurements change
VERSION = 1
#: the checkpoints of the turnover measure: doubling, from this many events
FIRST = 250_000
#: the range over which the measure is summarised: the paper's R_256 hovers near 5 %
#: between its reach (600K-700K) and stay (7M) points
SPAN = (500_000, 8_000_000)
#: the real programs' streams measured: the first 16M loads of each program's capture
REAL_EVENTS = 16_000_000
#: the programs whose load traces are measured: stratified-values' five and gcc (the
#: paper's program, whose selection keeps growing; scale 1, its only input)
PROGRAMS = ("xz", "bzip2", "sort", "perl", "python", "gcc")
REAL_LIMIT = 100_000_000


def doubling(events: int, first: int = FIRST) -> list[int]:
    """Checkpoints ``first, 2 first, 4 first, ...`` below ``events``, and ``events``
    (``first`` at most a sixteenth of ``events``, so a short stream has pairs too)."""
    out, c = [], max(min(first, events // 16), 1)
    while c < events:
        out.append(c)
        c *= 2
    return out + [events]


def turnover_properties(keys: np.ndarray, checkpoints=None, ideal=None) -> dict:
    """How much the selected ideal profile turns over, between consecutive checkpoints.

    At each checkpoint (default :func:`doubling`) the sec. 5.3.1 filters select tuples
    of the events so far. Per pair of consecutive checkpoints ``a < b``:

    - ``new_share``: the share of the selected tuples' weight (executions) at ``b`` in
      tuples not selected at ``a`` (new tuples, or tuples that crossed the filters'
      lines). On a stationary stream it falls towards 0; where the working set turns
      over it stays up.
    - ``growth``: ``log(E(b) / E(a)) / log(b / a)``, where ``E`` is the mean over the
      selected tuples' executions of their load's executions: 1 where every load keeps
      its share of the events, 0 where the selected loads stop gaining executions.
    - ``r256_expected``: at each checkpoint, the error (%) a Bernoulli sampler at 1/256 is expected
      to have on this profile, in the normal approximation: the execution-weighted mean
      of ``sqrt(2/pi) sqrt(I (1 - I) 256 / n_pc)`` (``I``: the tuple's share of its load,
      ``n_pc``: the load's executions). It falls as ``E`` grows, as the events' ``-growth/2``
      power.

    Returns ``{"checkpoints", "new_share", "growth", "r256_expected", "selected_tuples"}``
    (``new_share`` and ``growth``, per pair, are one shorter than the checkpoints) and the means of
    ``new_share`` and ``growth`` over the pairs inside :data:`SPAN`
    (``span_new_share``, ``span_growth``; None where no pair lies inside). ``ideal``: an
    :class:`IdealProfile` of ``keys`` whose checkpoints include these (built if None).
    """
    keys = np.asarray(keys, dtype=np.uint64)
    cps = doubling(len(keys)) if checkpoints is None else list(checkpoints)
    ideal = IdealProfile(keys, cps) if ideal is None else ideal
    at = [ideal.checkpoints.index(c) for c in cps]
    selected = [ideal.selected[i] for i in at]
    per_pc_at = []
    counts = np.zeros(len(ideal.unique), np.int64)
    previous = 0
    for e in cps:
        counts += np.bincount(ideal.inverse[previous:e], minlength=len(ideal.unique))
        previous = e
        per_pc_at.append(np.bincount(ideal.pc_of, weights=counts, minlength=len(ideal.pcs)))
    mean_exec, expected, sizes = [], [], []
    for (ids, n, share), per_pc in zip(selected, per_pc_at, strict=True):
        sizes.append(int(len(ids)))
        if len(ids) == 0:
            mean_exec.append(None)
            expected.append(None)
            continue
        n_pc = per_pc[ideal.pc_of[ids]]
        mean_exec.append(float(np.sum(n * n_pc) / np.sum(n)))
        sd = np.sqrt(share * (1 - share) * 256 / n_pc)
        expected.append(float(100 * math.sqrt(2 / math.pi) * np.sum(n * sd) / np.sum(n)))
    new_share, growth = [], []
    for i in range(1, len(cps)):
        ids_a, (ids_b, n_b, _) = selected[i - 1][0], selected[i]
        if len(ids_b) == 0:
            new_share.append(None)
        else:
            fresh = ~np.isin(ids_b, ids_a)
            new_share.append(float(n_b[fresh].sum() / n_b.sum()))
        a, b = mean_exec[i - 1], mean_exec[i]
        growth.append(None if a is None or b is None
                      else math.log(b / a) / math.log(cps[i] / cps[i - 1]))  # fmt: skip
    inside = [i for i in range(1, len(cps)) if SPAN[0] <= cps[i - 1] and cps[i] <= SPAN[1]]

    def span_mean(values):
        known = [values[i - 1] for i in inside if values[i - 1] is not None]
        return float(np.mean(known)) if known else None

    return {"events": int(len(keys)), "checkpoints": cps, "selected_tuples": sizes,
            "new_share": new_share, "growth": growth, "r256_expected": expected,
            "span_new_share": span_mean(new_share), "span_growth": span_mean(growth)}  # fmt: skip


def trace_turnover(path, events: int = REAL_EVENTS) -> dict:
    """:func:`turnover_properties` of the first ``events`` loads of the trace at ``path``
    (any load trace: a capture of gcc as well as of our programs), with the trace's file
    name and the loads read."""
    from ..traces.keys import trace_keys
    from ..traces.tracefile import open_trace

    chunks = list(trace_keys(open_trace(Path(path)), "loads", limit=events))
    keys = np.concatenate(chunks) if chunks else np.zeros(0, np.uint64)
    if len(keys) < 16:
        raise ValueError(f"{path}: {len(keys):,} loads, too few for the turnover measure")
    return {"trace": Path(path).name, **turnover_properties(keys)}


def turnover_run(loads: int, rest: str, renew: str, phase: int, turnover: float, events: int,
                 checkpoints: int, seed: int, skew: float = SKEW,
                 core: int = 0) -> dict:  # fmt: skip
    """A unit: one seed's turnover stream (generator and compressor seed ``seed``; Zipf
    exponent ``skew`` of the loads' shares), its
    turnover properties, and ``R_256`` and ``H[P_256]_2048`` scored under each reading of
    :data:`READINGS` at the geometric checkpoints: errors, reach and stay points."""
    keys = turnover_stream(seed, events, loads, skew, rest, phase, turnover, renew, core)
    cps = checkpoints_for(events, checkpoints)
    # one ideal profile at the error's and the turnover measure's checkpoints
    every = sorted(set(cps) | set(doubling(events)))
    ideal, cache = IdealProfile(keys, every), {}
    at = [every.index(c) for c in cps]
    runs = {v: {} for v in READINGS}
    for name in PAIR:
        counts = compressor_counts(name, keys, seed, cache)
        for v in READINGS:
            errors = ideal.errors(counts, v)
            errors = [errors[i] for i in at]
            reach, stay = reach_and_stay(cps, errors)
            runs[v][name] = {"errors": errors, "reach": reach, "stay": stay}
    props = turnover_properties(keys, ideal=ideal)
    props["distinct"] = int(len(ideal.unique))
    props["loads"] = int(len(ideal.pcs))
    return {"checkpoints": cps, "runs": runs, "properties": props}


def setting_name(g) -> str:
    """``"1000 loads 1M x0.3"``: loads, what turns over, phase and fraction (0: none),
    and `` z1.5`` where the Zipf exponent (a sixth element) is not :data:`SKEW`."""
    loads, _rest, renew, phase, q = g[:5]
    skew = f" z{g[5]:g}" if len(g) > 5 and g[5] != SKEW else ""
    core = f" core{g[6]}" if len(g) > 6 and g[6] else ""
    if q == 0:
        return f"{loads} stationary{skew}"
    return f"{loads} {renew} {_events(phase)} x{q:g}{skew}{core}"


def _events(n: int) -> str:
    """Events to 3 significant digits: ``1.94M``, ``678K``, ``10K``."""
    return f"{n / 1e6:.3g}M" if n >= 1_000_000 else f"{n / 1e3:.3g}K"


def _key(g, seed: int) -> str:
    loads, rest, renew, phase, q = g[:5]
    skew = f"-z{g[5]:g}" if len(g) > 5 and g[5] != SKEW else ""
    core = f"-c{g[6]}" if len(g) > 6 and g[6] else ""
    return f"T{loads}-{rest}-{renew}-{phase}-{q:g}{skew}{core}-seed{seed}"


def run_turnover(stem: str, seed: int, seeds: int, quick: bool, old: dict | None,
                 run_options, log) -> dict:  # fmt: skip
    """The sweep of :data:`GRID` (:data:`QUICK`'s in the quick form) over ``seeds`` seeds,
    one unit per setting and seed (journal ``{stem}-turnover``); the cells of ``old`` (an
    earlier record's ``turnover``) with the same sizes are kept, only the settings it
    lacks are run."""
    size = QUICK if quick else FULL
    sizes = {"version": VERSION, "seed": seed, "seeds": seeds, "events": size["events"],
             "checkpoints": size["checkpoints"]}  # fmt: skip
    grid = [list(g) for g in size["grid"]]
    kept = {}
    if old and old.get("sizes") == sizes:
        kept = {setting_name(c["setting"]): c for c in old["cells"]}
        kept = {k: c for k, c in kept.items() if k in {setting_name(g) for g in grid}}
        if kept:
            log(f"turnover settings {', '.join(kept)} kept from the earlier record")
    todo = {_key(g, seed + s): {"loads": g[0], "rest": g[1], "renew": g[2], "phase": g[3],
                                "turnover": g[4], "events": size["events"],
                                **({"skew": g[5]} if len(g) > 5 else {}),
                                **({"core": g[6]} if len(g) > 6 else {}),
                                "checkpoints": size["checkpoints"], "seed": seed + s}
            for g in grid if setting_name(g) not in kept for s in range(seeds)}  # fmt: skip
    done = sweep_cells("stratified-long", f"{stem}-turnover", sizes, turnover_run, todo,
                       run_options) if todo else {}  # fmt: skip
    cells = []
    for g in grid:
        if setting_name(g) in kept:
            cells.append(kept[setting_name(g)])
            continue
        per_seed = [done[_key(g, seed + s)] for s in range(seeds)]
        cells.append(_cell(g, per_seed))
        log(f"turnover {setting_name(g)} done")
    return {"sizes": sizes, "cells": cells, "kept": list(kept)}


def _cell(g, per_seed: list[dict]) -> dict:
    """A setting's record: per reading and compressor every seed's points, the seed-mean
    error curve; per seed the stream's turnover properties (their span means)."""
    first = per_seed[0]
    cps = first["checkpoints"]

    def mean_curve(v, n):
        return [None if any(p["runs"][v][n]["errors"][i] is None for p in per_seed)
                else float(np.mean([p["runs"][v][n]["errors"][i] for p in per_seed]))
                for i in range(len(cps))]  # fmt: skip

    return {
        "setting": list(g),
        "checkpoints": cps,
        "points": {v: {n: {w: [p["runs"][v][n][w] for p in per_seed] for w in ("reach", "stay")}
                       for n in PAIR} for v in READINGS},
        "finals": {v: {n: [p["runs"][v][n]["errors"][-1] for p in per_seed] for n in PAIR}
                   for v in READINGS},
        "mean_curves": {v: {n: mean_curve(v, n) for n in PAIR} for v in READINGS},
        "properties": [{k: p["properties"][k] for k in ("span_new_share", "span_growth",
                                                        "distinct", "loads")}
                       for p in per_seed],
        "turnover_curves": {k: [p["properties"][k] for p in per_seed]
                            for k in ("new_share", "growth", "r256_expected")},
        "turnover_checkpoints": first["properties"]["checkpoints"],
    }  # fmt: skip


def real_turnover(quick: bool, log) -> dict:
    """:func:`trace_turnover` of each of :data:`PROGRAMS`' load captures (those of
    ``multihash-values``: the enlarged inputs, 100M loads; a program not captured yet is
    captured first where valgrind is present, else left out and the log says
    why). The quick form measures none."""
    if quick:
        return {}
    from ..traces import workloads

    out = {}
    for name in PROGRAMS:
        try:
            path = workloads.trace_for(name, kinds="loads", limit=REAL_LIMIT,
                                       scale=workloads.LARGE_SCALE.get(name, 1))  # fmt: skip
        except workloads.TraceError as exc:
            log(f"turnover: {name}: {exc}; not measured")
            continue
        out[name] = trace_turnover(path)
        log(f"turnover: {name}: new share {out[name]['span_new_share']:.3f}, growth "
            f"{out[name]['span_growth']:.2f}")  # fmt: skip
    return out


def _mean(values, spec=".2f") -> str:
    known = [v for v in values if v is not None]
    if not known:
        return "-"
    text = f"{np.mean(known):{spec}}"
    return text if len(known) == len(values) else f"{text} ({len(known)}/{len(values)})"


def _points(values) -> str:
    """The seeds' 5 % points (events) as min-max, '-' for a seed without one."""
    known = [v for v in values if v is not None]
    if not known:
        return "-"
    text = f"{_events(min(known))}-{_events(max(known))}" if min(known) != max(known) \
        else _events(known[0])  # fmt: skip
    return text if len(known) == len(values) else f"{text} ({len(values) - len(known)} -)"


def cell_verdicts(t: dict) -> dict:
    """Per setting name and reading, stratified-long's :func:`verdict` of the seeds'
    points (reach and stay, with the seeds' ratio bounds)."""
    from .stratified_long import verdict

    events = t["sizes"]["events"]
    return {(setting_name(c["setting"]), v): verdict({"points": c["points"][v]}, events)
            for c in t["cells"] for v in READINGS}  # fmt: skip


def _range(values) -> str:
    lo, hi = f"{min(values):.2f}", f"{max(values):.2f}"
    return lo if lo == hi else f"{lo}-{hi}"


def _step(t: dict) -> float:
    """The factor between consecutive geometric checkpoints of the sweep."""
    cps = t["cells"][0]["checkpoints"]
    return (cps[-1] / cps[0]) ** (1 / (len(cps) - 1))


def matches(t: dict) -> dict:
    """The settings and readings where the paper's stay ratio is reproduced (inside our
    seed spread: ``stay``), with its reach ratio as well (``both``), where some seed's
    measured stay ratio lies within a checkpoint step of it (``near``), and per reading
    the two halves apart (:func:`halves`)."""
    from .stratified_long import REPRODUCED, _near

    w = cell_verdicts(t)
    stay = [k for k, x in w.items() if x["stay"] == REPRODUCED]
    near = [k for k, x in w.items() if _near(x["stay_seeds"], "stay", _step(t)) > 0]
    return {"stay": stay, "both": [k for k in stay if w[k]["reach"] == REPRODUCED],
            "near": near, "halves": {v: halves(t, v) for v in READINGS}}  # fmt: skip


def halves(t: dict, reading: str) -> dict:
    """The settings where some seed's ``R_256`` stays below 5 % within a checkpoint step
    of the paper's 7M (``R``), where some seed's ``H[P_256]_2048`` does by its 300K or a
    step later (``H``), and both (``together``)."""
    step = _step(t)
    r_paper = VALUES_PAPER["gcc_stay_5pct"]["R_256"]
    h_paper = VALUES_PAPER["gcc_stay_5pct"]["H[P_256]_2048"]
    out = {"R": [], "H": []}
    for c in t["cells"]:
        pts = c["points"][reading]
        if any(x is not None and r_paper / step <= x <= r_paper * step
               for x in pts["R_256"]["stay"]):  # fmt: skip
            out["R"].append(setting_name(c["setting"]))
        if any(x is not None and x <= h_paper * step for x in pts["H[P_256]_2048"]["stay"]):
            out["H"].append(setting_name(c["setting"]))
    out["together"] = [n for n in out["R"] if n in out["H"]]
    return out


def _growth(c) -> float | None:
    known = [p["span_growth"] for p in c["properties"] if p["span_growth"] is not None]
    return float(np.mean(known)) if known else None


def turnover_markdown(r: dict, stem: str) -> list[str]:
    """The section of the results file on turnover streams, from ``r["turnover"]``."""
    from .stratified_long import _near, _spread

    t = r["turnover"]
    z, p = t["sizes"], r["paper"]
    w = cell_verdicts(t)
    m = matches(t)
    step = (t["cells"][0]["checkpoints"][-1] / t["cells"][0]["checkpoints"][0]) ** (
        1 / (len(t["cells"][0]["checkpoints"]) - 1))  # fmt: skip
    lo, hi = SPAN
    reach = sum(VALUES_PAPER["gcc_reach_5pct"]["R_256"]) / 2
    stay = VALUES_PAPER["gcc_stay_5pct"]["R_256"]
    L = ["## A working set that turns over", "",
         "`R_256` samples each event with probability 1/256, so its error at a checkpoint "
         "depends only on the multiset of the events so far; on a stationary stream every "
         "selected load keeps gaining executions and the error falls about as the inverse "
         f"square root of the events: from 5 % at {_events(reach)} events it would be near "
         f"{5 * math.sqrt(reach / stay):.1f} % at {_events(stay)}. "
         "The paper's `R_256` stays near 5 % over that range, which needs the selected "
         "profile to keep gaining young tuples. The stream of `turnover_stream`: the iid "
         "stream of the main table (Zipf shares, few values per load) cut into phases of "
         "*phase* events; at each phase change a fraction *x* of the load slots (chosen "
         "uniformly) take a new identity, either new values at the same pc (`values`: the "
         "same code meeting new data) or a new pc as well (`loads`: code not run before "
         "enters, the old load leaves); x = 0 is the main table's stationary stream. "
         f"{len(t['cells'])} settings, {z['seeds']} seeds each, {z['events']:,} events, "
         f"{z['checkpoints']} geometric checkpoints; R_256 and H[P_256]_2048 under the "
         "default reading (`prefix`) and `both` (the model variants above). No parameter is "
         "set from the paper's numbers: at 1000 loads with Zipf(1) shares the grid crosses "
         "two phase lengths, three fractions and both kinds of renewal, beside the "
         "stationary streams of 100 and 1000 loads; a last row ('z1.5') makes the loads' "
         "shares more concentrated (Zipf exponent 1.5: H[P_256]'s strata count the hot "
         "tuples sooner) at the fastest turnovers, and the same with its 10 hottest loads "
         "never renewed ('core10': a stable hot core beside a tail that turns over). Every "
         "cell is reported.", "",
         "The turnover measure (`turnover_properties`, any stream; `trace_turnover`, any "
         "load trace): at checkpoints doubling from "
         f"{t['cells'][0]['turnover_checkpoints'][0]:,} events, *new share* is the "
         "share of the selected ideal profile's weight in tuples not selected at the "
         "checkpoint before (new, or crossed the filters' lines), *growth* the exponent of "
         "the growth of the selected tuples' mean load executions (1: stationary, 0: the "
         "selected loads stop gaining executions; R_256's expected error falls as the "
         f"events' -growth/2 power). Both are means over the doublings from {lo:,} to "
         f"{hi:,} events, where the paper's R_256 hovers. Expected R_256 error: the normal "
         "approximation of a 1/256 Bernoulli sampler's error on the ideal profile at the "
         "last event, beside the measured (prefix reading).", "",
         "| setting | new share | growth | R_256 final % expected / measured | reading | "
         "R_256 reach | R_256 stay | H[P] reach | H[P] stay | reach R/H[P] (paper "
         f"{p['reach_ratio'][0]}-{p['reach_ratio'][1]}) | verdict | stay R/H[P] (paper "
         f"about {p['stay_ratio']:.0f}) | verdict | seeds near |",
         "| --- | ---: | ---: | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
         "| ---: |"]  # fmt: skip
    for c in t["cells"]:
        name = setting_name(c["setting"])
        props = c["properties"]
        expected = _mean([e[-1] for e in c["turnover_curves"]["r256_expected"]])
        for v in READINGS:
            x, pts = w[(name, v)], c["points"][v]
            first = v == READINGS[0]
            L.append(
                f"| {name if first else ''} | "
                + (f"{_mean([q['span_new_share'] for q in props], '.3f')} | "
                   f"{_mean([q['span_growth'] for q in props])} | {expected} / "
                   f"{_mean(c['finals']['prefix']['R_256'])} | " if first else "| | | ")
                + f"{v} | {_points(pts['R_256']['reach'])} | {_points(pts['R_256']['stay'])} | "
                f"{_points(pts['H[P_256]_2048']['reach'])} | "
                f"{_points(pts['H[P_256]_2048']['stay'])} | {_spread(x['reach_seeds'])} | "
                f"{x['reach']} | {_spread(x['stay_seeds'])} | {x['stay']} | "
                f"{_near(x['stay_seeds'], 'stay', step)}/{z['seeds']} |"
            )  # fmt: skip
    L += ["", "5 % points: min-max over the seeds ('(k -)': k seeds without one by the last "
          "event). Ratios: mean [min-max] over the seeds, bounds as in the tables above; "
          "'seeds near': seeds whose stay ratio lies within one checkpoint step "
          f"({step:.2f}x) of the paper's.", "",
          f"![turnover]({stem}-turnover.png)", ""]  # fmt: skip
    L += _real_lines(r) + ["", "### Where the paper's result appears", ""]
    if m["stay"]:
        L.append(
            "- The paper's stay ratio lies inside our seed spread in "
            + ", ".join(f"{n} (`{v}`: {_near(w[(n, v)]['stay_seeds'], 'stay', step)} of "
                        f"{z['seeds']} seeds near it)" for n, v in m["stay"])
            + "; with the reach ratio as well in "
            + (", ".join(f"{n} (`{v}`)" for n, v in m["both"]) or "none of them")
            + ". A seed whose R_256 is still above 5 % at the last event gives only a "
            "bound, so a spread of such seeds is open."
        )  # fmt: skip
    else:
        L.append("- The paper's stay ratio is reproduced in no setting under either reading.")
    best = max(((max(b[0] for b in x["stay_seeds"]), n, v) for (n, v), x in w.items()
                if all(b[0] == b[1] for b in x["stay_seeds"])), default=None)  # fmt: skip
    if best:
        x = w[(best[1], best[2])]
        L.append(
            f"- The largest stay ratio measured by every seed: {best[1]} (`{best[2]}`), "
            f"{_spread(x['stay_seeds'])}, its reach ratio {_spread(x['reach_seeds'])}."
        )
    for v in READINGS:
        never = [setting_name(c["setting"]) for c in t["cells"]
                 if any(x is None and f is not None for x, f in
                        zip(c["points"][v]["R_256"]["stay"], c["finals"][v]["R_256"],
                            strict=True))]  # fmt: skip
        empty = [setting_name(c["setting"]) for c in t["cells"]
                 if any(f is None for f in c["finals"][v]["R_256"])]  # fmt: skip
        hp = [x for c in t["cells"] for x in c["points"][v]["H[P_256]_2048"]["stay"]]
        known = [x for x in hp if x is not None]
        L.append(
            f"- `{v}`: R_256 is above 5 % at the last event in some seed in "
            + (", ".join(never) or "no setting")
            + (f"; no tuple passes the filters at the last event in some seed in "
               f"{', '.join(empty)}" if empty else "")
            + "; H[P_256]_2048 stays below 5 % after "
            + (f"{_points(known)} events" if known else "-")
            + (f" ({len(hp) - len(known)} of {len(hp)} seed runs never)" if None in hp else
               " in every setting and seed") + "."
        )  # fmt: skip
    for v in READINGS:
        h = m["halves"][v]
        L.append(
            f"- `{v}`, the two halves apart: some seed's R_256 stays below 5 % within a "
            f"checkpoint step of the paper's {_events(VALUES_PAPER['gcc_stay_5pct']['R_256'])} "
            "in " + (", ".join(h["R"]) or "no setting") + "; some seed's H[P_256]_2048 by the "
            f"paper's {_events(VALUES_PAPER['gcc_stay_5pct']['H[P_256]_2048'])} (or a step "
            "later) in " + (", ".join(h["H"]) or "no setting") + "; both in the same setting: "
            + (", ".join(h["together"]) or "none") + "."
        )  # fmt: skip
    stationary = [c for c in t["cells"] if c["setting"][4] == 0]
    for c in stationary:
        name = setting_name(c["setting"])
        L.append(
            f"- {name} (no turnover): stay ratio {_spread(w[(name, 'prefix')]['stay_seeds'])}"
            f" (`prefix`), {_spread(w[(name, 'both')]['stay_seeds'])} (`both`); growth "
            f"{_mean([q['span_growth'] for q in c['properties']])}."
        )
    L += ["", _turnover_verdict(r, m, w), ""]
    return L


def _real_lines(r: dict) -> list[str]:
    real = r["turnover"].get("real") or {}
    if not real:
        return ["### Our programs", "", "Not measured in this run (the quick form)."]
    L = ["### Our programs", "",
         f"The same measure on the first {REAL_EVENTS:,} loads of each program's capture "
         "(multihash-values' traces: the enlarged inputs; `trace_turnover` takes any load "
         "trace, a gcc capture as well):", "",
         "| program | new share | growth | selected tuples at the checkpoints | expected "
         "R_256 error % at the checkpoints |", "| --- | ---: | ---: | --- | --- |"]  # fmt: skip
    for name, x in real.items():
        L.append(f"| {name} | {_mean([x['span_new_share']], '.3f')} | "
                 f"{_mean([x['span_growth']])} | "
                 + ", ".join(f"{n:,}" for n in x["selected_tuples"]) + " | "
                 + ", ".join("-" if e is None else f"{e:.2f}" for e in x["r256_expected"])
                 + " |")  # fmt: skip
    cps = next(iter(real.values()))["checkpoints"]
    L += ["", "Checkpoints: " + ", ".join(_events(c) for c in cps) + " events."]
    return L


def _turnover_verdict(r: dict, m: dict, w: dict) -> str:
    t = r["turnover"]
    growth = {setting_name(c["setting"]): _growth(c) for c in t["cells"]}
    text = "Verdict: a seed's measured stay ratio lies near the paper's in "
    text += ", ".join(f"{n} (`{v}`)" for n, v in m["near"]) if m["near"] else "no setting"
    open_ = [k for k in m["stay"] if k not in m["near"]]
    if open_:
        g = [growth[n] for n, _ in open_ if growth[n] is not None]
        text += (
            "; the paper's stay ratio lies inside the seed spread in "
            + ", ".join(f"{n} (`{v}`)" for n, v in open_)
            + " only through seeds whose R_256 is still above 5 % at the last event"
            + (f" (growth {_range(g)})" if g else "")
        )
    together = sorted({n for h in m["halves"].values() for n in h["together"]})
    text += (
        "; the paper's two halves (R_256 settling near 7M, H[P_256] by 300K) appear in the "
        "same setting in " + (", ".join(together) or "none")
    )
    stat = [growth[setting_name(c["setting"])] for c in t["cells"] if c["setting"][4] == 0]
    text += (
        f"; the stationary streams' growth is {min(stat):.2f}-{max(stat):.2f}"
        if stat and None not in stat
        else ""
    )
    real = t.get("real") or {}
    if real:
        rg = {n: x["span_growth"] for n, x in real.items()}
        text += (
            "; our programs' growth: " + ", ".join(f"{n} {_mean([g])}" for n, g in rg.items()) + "."
        )
    else:
        text += "."
    return text


def plot_turnover(r: dict, output_dir: Path, stem: str) -> None:
    """Per reading, every seed's stay and reach ratio against its stream's growth, the
    paper's ratios and the programs' growth marked; and the seed-mean error curves of
    the loads renewed per phase at the first setting's size, by fraction."""
    import matplotlib.pyplot as plt

    t = r["turnover"]
    w = cell_verdicts(t)
    fig, flat = panel_grid(3, 3, 4.4, 3.4)
    real = t.get("real") or {}
    for ax, v in zip(flat, READINGS, strict=False):
        for what, color in (("stay", "tab:orange"), ("reach", "tab:blue")):
            xs, ys, up = [], [], []
            for c in t["cells"]:
                x = w[(setting_name(c["setting"]), v)][f"{what}_seeds"]
                for (a, b), q in zip(x, c["properties"], strict=True):
                    if q["span_growth"] is None or (a == 0 and math.isinf(b)):
                        continue
                    xs.append(q["span_growth"])
                    ys.append(a if a > 0 else b)
                    up.append(a != b)
            xs, ys, up = np.array(xs), np.array(ys), np.array(up, bool)
            ax.scatter(xs[~up], ys[~up], s=10, color=color, label=what)
            ax.scatter(xs[up], ys[up], s=14, color=color, marker="^", label=f"{what} (bound)")
        ax.axhline(r["paper"]["stay_ratio"], color="tab:orange", lw=1, linestyle="--")
        ax.axhspan(*r["paper"]["reach_ratio"], color="tab:blue", alpha=0.2)
        for name, x in real.items():
            if x["span_growth"] is not None:
                ax.axvline(x["span_growth"], color="grey", lw=0.6)
                ax.annotate(name, (x["span_growth"], 0.02), xycoords=("data", "axes fraction"),
                            fontsize=6, rotation=90)  # fmt: skip
        ax.set_xlim(-0.6, 1.2)  # growth below: selections emptied by renewed values
        ax.set(yscale="log", xlabel="growth of the selected loads' executions",
               ylabel="R_256 / H[P_256]_2048 events", title=f"per seed, `{v}`")  # fmt: skip
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    ax = flat[2]
    # the loads renewed per 1M events at the first setting's working set and skew, by
    # fraction (0: stationary): R_256's floor rising with the turnover, H[P_256]'s curve
    first = t["cells"][0]["setting"]
    family = [c for c in t["cells"] if c["setting"][0] == first[0]
              and c["setting"][2] == "loads" and c["setting"][3] == first[3]
              and len(c["setting"]) == len(first)]  # fmt: skip
    colors = plt.cm.viridis(np.linspace(0, 0.9, max(len(family), 1)))
    for c, color in zip(family, colors, strict=False):
        for n, style in zip(PAIR, ("-", "--"), strict=True):
            ys = [np.nan if y is None else y for y in c["mean_curves"]["prefix"][n]]
            ax.plot(c["checkpoints"], ys, color=color, linestyle=style, lw=1,
                    label=f"{n} x{c['setting'][4]:g}")  # fmt: skip
    ax.axhline(5.0, color="red", lw=0.6)
    ax.set(xscale="log", yscale="log", xlabel="load events",
           ylabel=f"error % (mean of {t['sizes']['seeds']}, `prefix`)",
           title=f"{first[0]} loads renewed per {_events(first[3])}")  # fmt: skip
    ax.grid(alpha=0.3)
    ax.legend(fontsize=5, ncol=2)
    fig.tight_layout()
    fig.savefig(output_dir / f"{stem}-turnover.png", dpi=100)
    plt.close(fig)
