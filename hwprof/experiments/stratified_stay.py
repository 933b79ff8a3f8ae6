"""When does R_256 stay above 5 % about 23x longer than H[P_256]_2048? (Sastry et al.)

On gcc the paper's ``H[P_256]_2048`` first reaches 5 % error after 200K load events and
``R_256`` after 600K-700K (3-3.5x); to stay below 5 % ``R_256`` needs about 7M events,
"about 23 times longer" than ``H[P_256]_2048`` (300K; sec. 5.4, Fig. 7), and gcc has "a
much bigger working set than the other programs". This experiment sweeps two properties
of the stream that decide the two curves' late course, with the generator of
``stratified-conditions`` (:func:`~hwprof.experiments.stratified_conditions.value_stream`,
independent draws, Zipf(1) shares):

* the static loads (:data:`LOADS`): under the sec. 5.3.1 filter a load is scored only
  once it has executed 1000 times, so with Zipf shares the loads of the tail enter the
  selection one by one, about linearly in the events, until the tail is exhausted
  (:func:`selected_loads`, :func:`growth`);
* the values per load (:data:`RESTS`: the other values besides the top two, or fresh
  values): with few values each stratum of ``H[P_256]_2048``'s table holds about one
  tuple and counts it almost exactly (:func:`strata_occupancy`).

The grid is chosen from the properties (loads from a working set the 1000-execution
filter exhausts early to one it does not exhaust by the last event; values from none to
the sweep's "few" and fresh), not fitted to the paper's numbers. Per cell and seed it
runs ``R_256`` and ``H[P_256]_2048`` over :data:`EVENTS` events, scores them at every
checkpoint of a grid fine at the start (:data:`GRID`) under the readings ``prefix``
(the default) and ``both`` of the sec. 5.3.1 selection, and reports the reach and stay
points, their ratios with a verdict per cell (:func:`verdict`), and the mechanism's
quantities: the selected loads at each checkpoint, how they grow, the tuples per
occupied stratum and ``R_256``'s error while loads still enter (:func:`plateau`). The
same quantities are measured on real traces (:func:`trace_mechanism`, any trace file;
:func:`trace_run` also runs the two compressors on one), beside stratified-values' 5 %
points of those programs when its record lies beside the results.
"""

from __future__ import annotations

import functools
import math
import sys
import time
from pathlib import Path

import numpy as np

from ..golden import compressors_fast as cf
from . import Experiment, panel_grid, sweep_cells, write_results
from .stratified_conditions import PAPER, SKEW, value_stream
from .stratified_long import DIFFERS, REPRODUCED, UNDECIDED, ratio_bounds, spread_verdict
from .stratified_values import (
    IdealProfile,
    compressor_counts,
    reach_and_stay,
    selected_mask,
)

__all__ = ["EXPERIMENTS", "run", "seed_run", "trace_run", "selected_loads", "growth",
           "strata_occupancy", "occupancy_of", "entering_after", "mechanism",
           "trace_mechanism", "plateau", "checkpoint_grid"]  # fmt: skip

NAME = "stratified-stay"
#: static loads: the 1000-execution filter exhausts a Zipf(1) tail of L loads after
#: about 1000 * L * H_L events (H_L the harmonic number): 0.5M, 1.9M, 7.5M and 26M (beyond
#: the run)
LOADS = (100, 300, 1000, 3000)
#: values per load: the other values besides the top two (0: only the top two; 6: the
#: "few" of stratified-conditions); ``"fresh"`` (fresh random values) is supported but not
#: in the full form (a seed takes about 14 CPU-s, a fresh one about 53: millions of
#: distinct tuples)
RESTS = (0, 1, 2, 6)
SEEDS = 5
EVENTS = 16_000_000
#: the checkpoints: ``(step, up to)`` pieces, every 10K events to 1M (the paper's gcc
#: points of H[P_256] and R_256's first crossing lie there), every 50K to 4M, every 200K
#: to 16M
GRID = ((10_000, 1_000_000), (50_000, 4_000_000), (200_000, 16_000_000))
READINGS = ("prefix", "both")
PAIR = ("R_256", "H[P_256]_2048")
#: the share of the final selected loads at which the selection counts as exhausted
EXHAUSTED = 0.95
#: the window of the selection's growth over which R_256's plateau is read: from this
#: share of the final selected loads to :data:`EXHAUSTED`
PLATEAU_FROM = 0.10
#: the events after which the loads still entering the selection are counted
#: (:func:`entering_after`): past the paper's gcc points of H[P_256] (300K) and R_256's
#: first crossing (600K-700K)
ENTERING_AFTER = 1_000_000
QUICK = {"events": 200_000, "loads": (100, 1000), "rests": (0, 6), "seeds": 2,
         "grid": ((5_000, 100_000), (20_000, 200_000)), "programs": 1}  # fmt: skip
FULL = {"events": EVENTS, "loads": LOADS, "rests": RESTS, "seeds": SEEDS, "grid": GRID,
        "programs": 5}  # fmt: skip
#: bump when a unit's measurements change (earlier journals are then not reused)
VERSION = 1
#: the paper's points on gcc (sec. 5.4) and its claims as ranges
GCC = {"reach": {"H[P_256]_2048": 200_000, "R_256": (600_000, 700_000)},
       "stay": {"H[P_256]_2048": 300_000, "R_256": 7_000_000}}  # fmt: skip
CLAIMS = {"reach": tuple(PAPER["reach_ratio"]), "stay": (PAPER["stay_ratio"],) * 2}


def checkpoint_grid(pieces) -> list[int]:
    """The checkpoints of ``(step, up to)`` pieces: every ``step`` events from the previous
    piece's end (0 for the first) up to and including ``up to``."""
    out, start = [], 0
    for step, end in pieces:
        out += list(range(start + step, end + 1, step))
        start = end
    return out


def rest_label(rest) -> str:
    """A values setting as the page names it: ``"m=2"`` or ``"fresh"``."""
    return "fresh" if rest == "fresh" else f"m={rest}"


def cell_stream(loads: int, rest, events: int, seed: int) -> np.ndarray:
    """The keys of one cell's seed: :func:`value_stream`, independent draws, Zipf(1)
    shares; ``rest`` the other values per load (an int) or ``"fresh"``."""
    if rest == "fresh":
        return value_stream(seed, events, loads, SKEW, "iid", "fresh")
    return value_stream(seed, events, loads, SKEW, "iid", "few", rest_values=int(rest))


# --- the mechanism's measures ------------------------------------------------------------


def selected_loads(ideal: IdealProfile) -> list[int]:
    """The static loads that pass the sec. 5.3.1 filters (``prefix`` reading) at each
    checkpoint of ``ideal``."""
    return [int(len(np.unique(ideal.pc_of[ids]))) for ids, _, _ in ideal.selected]


def growth(checkpoints, selected) -> dict:
    """How the selection grows over a run, from the selected loads at each checkpoint.

    ``final``: the selected loads at the last checkpoint; ``exhausted_at``: the first
    checkpoint from which at least :data:`EXHAUSTED` of ``final`` are selected to the
    end; ``half_at``: the same for half of ``final``; ``late_growth``: ``final`` over the
    selected loads at the last checkpoint at or before half the last (1: no load entered in the
    run's second half; 2: as many loads entered in the second half as in the first, as
    a linear growth to the end gives); ``slope``: the least-squares slope of log
    selected loads against log events over the checkpoints from the one with at least
    :data:`PLATEAU_FROM` of ``final`` up to ``exhausted_at`` (1: linear; None: fewer than
    two such checkpoints).
    """
    cps = np.asarray(checkpoints, dtype=np.float64)
    sel = np.asarray(selected, dtype=np.float64)
    final = float(sel[-1])

    def settled(share):
        if final == 0:
            return None
        below = np.flatnonzero(sel < share * final)
        return int(cps[0]) if len(below) == 0 else (
            int(cps[below[-1] + 1]) if below[-1] + 1 < len(cps) else None)  # fmt: skip

    exhausted = settled(EXHAUSTED)
    middle = sel[max(int(np.searchsorted(cps, cps[-1] / 2, side="right")) - 1, 0)]
    window = (sel >= PLATEAU_FROM * final) & (sel > 0) & (cps <= (exhausted or cps[-1]))
    slope = None
    if np.count_nonzero(window) >= 2 and len(np.unique(sel[window])) >= 2:
        slope = float(np.polyfit(np.log(cps[window]), np.log(sel[window]), 1)[0])
    return {"final": int(final), "exhausted_at": exhausted, "half_at": settled(0.5),
            "late_growth": float(final / middle) if middle > 0 else None,
            "slope": slope}  # fmt: skip


def entering_after(checkpoints, selected, after: int = ENTERING_AFTER) -> float | None:
    """The share of the final selected loads that enter the selection after ``after``
    events: 1 - (selected loads at the last checkpoint at or before ``after``) / (selected
    loads at the end); None where nothing is selected at the end or no checkpoint lies at
    or before ``after``."""
    i = int(np.searchsorted(np.asarray(checkpoints), after, side="right")) - 1
    if i < 0 or not selected[-1]:
        return None
    return float(1.0 - selected[i] / selected[-1])


def strata_occupancy(keys: np.ndarray, seed: int, index_bits: int = 11) -> dict:
    """How many tuples share a stratum of ``H[P_256]_2048``'s table (2^``index_bits``
    counters, the hash of seed ``seed``) over the whole of ``keys``.

    ``occupied``: strata with at least one tuple; ``tuples_per_stratum``: distinct tuples
    per occupied stratum; ``effective``: the event-weighted mean, over the strata, of the
    effective number of tuples in a stratum (``(sum c)^2 / sum c^2`` of its tuples'
    counts ``c``: 1 where one tuple makes all its events, k for k equal tuples);
    ``selected_effective``: the same over the strata holding a tuple that passes the
    sec. 5.3.1 filters on the whole stream, weighted by those tuples' events.
    """
    unique, counts = np.unique(keys, return_counts=True)
    return occupancy_of(unique, counts, seed, index_bits)


def occupancy_of(unique: np.ndarray, counts: np.ndarray, seed: int, index_bits: int = 11) -> dict:
    """:func:`strata_occupancy` from the distinct tuples ``unique`` (sorted) and their
    ``counts``."""
    index = cf.hash_index(unique, index_bits, seed).astype(np.int64)
    size = 1 << index_bits
    c = counts.astype(np.float64)
    total = np.bincount(index, weights=c, minlength=size)
    square = np.bincount(index, weights=c * c, minlength=size)
    occupied = total > 0
    effective = np.where(occupied, total**2 / np.maximum(square, 1), 0.0)
    pcs, pc_of = np.unique(unique >> np.uint64(32), return_inverse=True)
    chosen = selected_mask(counts, pc_of, len(pcs))
    weight = np.bincount(index[chosen], weights=c[chosen], minlength=size)
    return {"occupied": int(np.count_nonzero(occupied)),
            "tuples_per_stratum": float(len(unique) / max(np.count_nonzero(occupied), 1)),
            "effective": float(np.sum(total * effective) / np.sum(total)),
            "selected_effective": (float(np.sum(weight * effective) / np.sum(weight))
                                   if weight.sum() > 0 else None)}  # fmt: skip


def plateau(checkpoints, errors, selected) -> float | None:
    """R_256's error level while the working set enters the selection: the median of
    ``errors`` over the checkpoints where the selected loads lie between
    :data:`PLATEAU_FROM` and :data:`EXHAUSTED` of their final count (None: no such
    checkpoint with an error)."""
    final = selected[-1]
    inside = [e for e, s in zip(errors, selected, strict=True)
              if e is not None and PLATEAU_FROM * final <= s < EXHAUSTED * final]  # fmt: skip
    return float(np.median(inside)) if inside else None


# --- one stream ---------------------------------------------------------------------------


def stream_run(keys: np.ndarray, seed: int, checkpoints) -> dict:
    """``R_256`` and ``H[P_256]_2048`` (compressor seed ``seed``) on ``keys``: per reading
    of :data:`READINGS` each one's error curve and 5 % points; the selected loads at each
    checkpoint, their growth, the strata's occupancy and R_256's plateau (prefix)."""
    cps = list(checkpoints)
    ideal = IdealProfile(keys, cps)
    sel = selected_loads(ideal)
    counts = np.bincount(ideal.inverse, minlength=len(ideal.unique))
    out = {"distinct": int(len(ideal.unique)), "selected": sel, "growth": growth(cps, sel),
           "strata": occupancy_of(ideal.unique, counts, seed),
           "runs": {r: {} for r in READINGS}}  # fmt: skip
    cache = {}
    for name in PAIR:
        messages = compressor_counts(name, keys, seed, cache)
        for reading in READINGS:
            errors = ideal.errors(messages, reading)
            reach, stay = reach_and_stay(cps, errors)
            out["runs"][reading][name] = {"errors": errors, "reach": reach, "stay": stay}
    out["plateau"] = plateau(cps, out["runs"]["prefix"]["R_256"]["errors"], sel)
    out["final_R"] = out["runs"]["prefix"]["R_256"]["errors"][-1]
    return out


def seed_run(loads: int, rest, events: int, grid, seed: int) -> dict:
    """A unit: one cell's seed (generator and compressor seed ``seed``)."""
    return stream_run(cell_stream(loads, rest, events, seed), seed, checkpoint_grid(grid))


@functools.lru_cache(maxsize=1)
def trace_keys_of(path, events: int) -> tuple[np.ndarray, str]:
    """The first ``events`` load keys of a trace file (as stratified-values reads them)
    and the program's name."""
    from .stratified_values import read_streams

    keys, _, _, program = read_streams(Path(path), events)
    return keys, program


def trace_run(path: str, events: int, grid, seed: int) -> dict:
    """A unit: the mechanism's quantities and the two compressors' runs (seed ``seed``) on
    the first ``events`` loads of any trace file (fewer if it holds fewer; the grid is
    cut there)."""
    keys, program = trace_keys_of(path, events)
    cps = [c for c in checkpoint_grid(grid) if c <= len(keys)]
    return {
        "program": program,
        "events": int(len(keys)),
        "checkpoints": cps,
        **stream_run(keys, seed, cps),
    }


def mechanism(keys: np.ndarray, checkpoints, seeds) -> dict:
    """The mechanism's quantities of any key stream, without running a compressor: the
    selected loads at each checkpoint and their growth (:func:`growth`), and the strata's
    occupancy (:func:`strata_occupancy`) under the hash of each of ``seeds``."""
    cps = list(checkpoints)
    ideal = IdealProfile(keys, cps)
    sel = selected_loads(ideal)
    counts = np.bincount(ideal.inverse, minlength=len(ideal.unique))
    strata = [occupancy_of(ideal.unique, counts, s) for s in seeds]
    return {"events": int(len(keys)), "checkpoints": cps, "distinct": int(len(ideal.unique)),
            "selected": sel, "growth": {**growth(cps, sel),
                                        "entering_after": entering_after(cps, sel)},
            "strata": {k: _spread([x[k] for x in strata]) for k in strata[0]}}  # fmt: skip


def trace_mechanism(path: str, events: int, grid, seeds) -> dict:
    """A unit: :func:`mechanism` of the first ``events`` loads of any trace file (fewer if
    it holds fewer; the grid is cut there)."""
    keys, program = trace_keys_of(path, events)
    cps = [c for c in checkpoint_grid(grid) if c <= len(keys)]
    return {"program": program, **mechanism(keys, cps, list(seeds))}


# --- ratios and verdicts ------------------------------------------------------------------


def judge(per_seed: list[dict], checkpoints, events: int) -> dict:
    """Per reading and claim: each seed's 5 % points and ratio bounds, the seeds whose H[P]
    or R point is the grid's first checkpoint, and the verdict."""
    out = {}
    first = checkpoints[0]
    for reading in READINGS:
        out[reading] = {}
        for what, claim in CLAIMS.items():
            r = [s["runs"][reading]["R_256"][what] for s in per_seed]
            h = [s["runs"][reading]["H[P_256]_2048"][what] for s in per_seed]
            bounds = [ratio_bounds(a, b, events, first) for a, b in zip(r, h, strict=True)]
            out[reading][what] = {"R_256": r, "H[P_256]_2048": h,
                                  "bounds": [list(b) for b in bounds],
                                  "first_checkpoint_seeds": sum(a == first or b == first
                                                                for a, b in zip(r, h,
                                                                                strict=True)),
                                  "verdict": spread_verdict(bounds, claim)}  # fmt: skip
        inside = {"reach": [_in_reach(b) for b in out[reading]["reach"]["bounds"]],
                  "stay": [_near_stay(b) for b in out[reading]["stay"]["bounds"]]}  # fmt: skip
        for what in ("reach", "stay"):
            out[reading][what]["seeds_inside"] = int(sum(inside[what]))
        out[reading]["seeds_both"] = int(sum(a and b for a, b in zip(*inside.values(),
                                                                     strict=True)))  # fmt: skip
    return out


def _in_reach(b) -> bool:
    """A seed's reach ratio measured (not a bound) and inside the paper's 3-3.5."""
    return b[0] == b[1] and CLAIMS["reach"][0] <= b[0] <= CLAIMS["reach"][1]


def _near_stay(b) -> bool:
    """A seed's stay ratio within a factor 1.5 of the paper's 23 (15.3-34.5), measured."""
    return b[0] == b[1] and CLAIMS["stay"][0] / 1.5 <= b[0] <= CLAIMS["stay"][1] * 1.5


def summarise(per_seed: list[dict], checkpoints, events: int) -> dict:
    """One cell (or program) over its seeds: the verdicts (:func:`judge`), the mean
    selected loads and error curves, and the spread of every mechanism quantity."""
    n = len(checkpoints)

    def mean_curve(get):
        curves = [get(s) for s in per_seed]
        return [None if any(c[i] is None for c in curves)
                else float(np.mean([c[i] for c in curves])) for i in range(n)]  # fmt: skip

    return {
        "judged": judge(per_seed, checkpoints, events),
        "selected": mean_curve(lambda s: s["selected"]),
        "curves": {reading: {name: mean_curve(lambda s, r=reading, m=name:
                                               s["runs"][r][m]["errors"])
                             for name in PAIR} for reading in READINGS},
        "growth": {**{k: _spread([s["growth"][k] for s in per_seed])
                      for k in ("final", "exhausted_at", "half_at", "late_growth", "slope")},
                   "entering_after": _spread([entering_after(checkpoints, s["selected"])
                                              for s in per_seed])},
        "strata": {k: _spread([s["strata"][k] for s in per_seed])
                   for k in ("occupied", "tuples_per_stratum", "effective",
                             "selected_effective")},
        "plateau": _spread([s["plateau"] for s in per_seed]),
        "final_R": _spread([s["final_R"] for s in per_seed]),
        "distinct": _spread([s["distinct"] for s in per_seed]),
        "unmeasured": {k: sum(s["growth"][k] is None for s in per_seed)
                       for k in ("exhausted_at", "slope")},
    }  # fmt: skip


def _spread(values) -> dict | None:
    """Mean, min and max over the seeds that have a value, with how many do (None:
    none)."""
    have = [v for v in values if v is not None]
    if not have:
        return None
    return {"mean": float(np.mean(have)), "min": float(np.min(have)),
            "max": float(np.max(have)), "seeds": len(have)}  # fmt: skip


# --- the run ------------------------------------------------------------------------------


def _log(text: str) -> None:
    print(f"{NAME}: {text}", file=sys.stderr, flush=True)


def default_traces(size: dict) -> list[Path]:
    """stratified-values' traces of the workloads (the shipped ones for the quick form;
    captured into build/traces otherwise, as stratified-values captures them)."""
    from ..traces import workloads
    from .stratified_values import FULL as VALUES_FULL

    names = list(workloads.WORKLOADS)[: size["programs"]]
    if size is QUICK:
        return [workloads.shipped_trace(n) for n in names]
    return [workloads.trace_for(n, kinds="loads,branches", limit=VALUES_FULL["capture_limit"],
                                scale=workloads.LARGE_SCALE[n], progress=True)
            for n in names]  # fmt: skip


def run(output_dir: Path, seed: int, quick: bool, traces=None, run_options=None) -> dict:
    """Run every cell of the sweep and every trace, one unit per cell (or trace) and seed
    (seed index ``s``: generator and compressor seed ``seed + s``); write
    ``stratified-stay[-quick].{json,md,png}`` into ``output_dir``. ``traces``: trace
    files to measure (default: stratified-values' programs)."""
    start, cpu = time.perf_counter(), time.process_time()
    size = QUICK if quick else FULL
    stem = f"{NAME}-quick" if quick else NAME
    paths = [Path(t) for t in traces] if traces else default_traces(size)
    from ..traces.tracefile import TraceError, open_trace

    for p in paths:  # every trace's header is read before anything runs or is written
        if not Path(p).is_file():
            raise TraceError(f"{p}: no such trace file")
        with open_trace(p):  # a malformed or legacy trace: one line, before any unit
            pass
    seeds = [seed + s for s in range(size["seeds"])]
    cps = checkpoint_grid(size["grid"])
    settings = {"version": VERSION, "seed": seed, "seeds": size["seeds"],
                "events": size["events"], "grid": [list(g) for g in size["grid"]]}  # fmt: skip

    def cell_units(rests):
        return {f"L{loads}-{rest_label(rest)}-seed{s}": {"loads": loads, "rest": rest,
                                                         "events": size["events"],
                                                         "grid": settings["grid"], "seed": s}
                for rest in rests for loads in size["loads"] for s in seeds}  # fmt: skip

    # the fresh-valued cells, the slowest (millions of distinct tuples), run last
    done = sweep_cells(NAME, stem, settings, seed_run,
                       cell_units([x for x in size["rests"] if x != "fresh"]),
                       run_options)  # fmt: skip
    ptodo = {f"trace{i}": {"path": str(Path(p).absolute()), "events": size["events"],
                           "grid": settings["grid"], "seeds": seeds}
             for i, p in enumerate(paths)}  # fmt: skip
    pdone = sweep_cells(NAME, f"{stem}-traces", {**settings, "traces": [str(p) for p in paths]},
                        trace_mechanism, ptodo, run_options) if ptodo else {}  # fmt: skip
    if "fresh" in size["rests"]:
        done.update(sweep_cells(NAME, f"{stem}-fresh", settings, seed_run,
                                cell_units(["fresh"]), run_options))  # fmt: skip
    cells = []
    for loads in size["loads"]:
        for rest in size["rests"]:
            per_seed = [done[f"L{loads}-{rest_label(rest)}-seed{s}"] for s in seeds]
            cells.append({"loads": loads, "rest": rest, "label": f"{loads} {rest_label(rest)}",
                          **summarise(per_seed, cps, size["events"])})  # fmt: skip
            j = cells[-1]["judged"]["prefix"]
            _log(f"{cells[-1]['label']}: reach {j['reach']['verdict']}, stay "
                 f"{j['stay']['verdict']} {[_bound(b) for b in j['stay']['bounds']]}")  # fmt: skip
    values = _values_record(Path(output_dir), quick)
    programs = {}
    for i, p in enumerate(paths):
        x = pdone[f"trace{i}"]
        name = x["program"] if x["program"] not in programs else f"{x['program']}-{i}"
        programs[name] = {"trace": Path(p).name, **x,
                          "stratified_values": _values_of(values, x["program"])}  # fmt: skip
        programs[name]["growth"] = {**x["growth"],
                                    "entering_after": entering_after(x["checkpoints"],
                                                                     x["selected"])}  # fmt: skip
    record = {"name": NAME, "seed": seed, "quick": quick, "seeds": seeds,
              "events": size["events"], "settings": settings, "checkpoints": cps,
              "loads": list(size["loads"]), "rests": list(size["rests"]),
              "paper": {"reach_ratio": list(CLAIMS["reach"]), "stay_ratio": CLAIMS["stay"][0],
                        "gcc": GCC, "working_set": PAPER["gcc"]},
              "definitions": {"exhausted": EXHAUSTED, "plateau_from": PLATEAU_FROM},
              "cells": cells, "programs": programs}  # fmt: skip
    record["conditions"] = conditions(record)
    record["timing"] = {"seconds": time.perf_counter() - start,
                        "cpu_seconds_main": time.process_time() - cpu,
                        "units": _unit_times([stem, f"{stem}-traces"])}  # fmt: skip
    write_results(output_dir, NAME, quick, record, markdown(record, stem))
    plot(record, Path(output_dir), stem)
    return record["conditions"]


def program_verdicts(p: dict, reading: str) -> dict:
    """A program's reach and stay verdicts from stratified-values' points (its prefix
    reading; None under another reading or without that record), with each seed's
    ratio bounds (its first checkpoint and last event)."""
    v = p.get("stratified_values")
    if not v or reading != "prefix":
        return {"reach": None, "stay": None}
    out = {}
    for what, claim in CLAIMS.items():
        pts = v["points"]
        bounds = [ratio_bounds(a, b, v["events"], v["first"])
                  for a, b in zip(pts["R_256"][what], pts["H[P_256]_2048"][what],
                                  strict=True)]  # fmt: skip
        out[what] = spread_verdict(bounds, claim)
        out[f"{what}_bounds"] = [list(b) for b in bounds]
    return out


def _values_record(output_dir: Path, quick: bool) -> dict | None:
    """stratified-values' record beside the results (the quick one for the quick form)."""
    import json

    path = output_dir / ("stratified-values-quick.json" if quick else "stratified-values.json")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _values_of(record: dict | None, program: str) -> dict | None:
    """A program's R_256 and H[P_256]_2048 5 % points and ratios per seed from
    stratified-values' record (its geometric checkpoints, prefix reading); None if absent."""
    if not record or program not in record.get("programs", {}):
        return None
    c = record["programs"][program]["compressors"]
    per = record["claims"][program]["per_seed"]
    traces = [Path(t).name for t in record.get("traces", []) if Path(t).name.startswith(program)]
    return {"events": record["programs"][program]["events"], "traces": traces,
            "checkpoints": len(record["programs"][program]["checkpoints"]),
            "first": record["programs"][program]["checkpoints"][0],
            "points": {n: {w: [run.get(w) for run in c[n]["runs"]] for w in ("reach", "stay")}
                       for n in PAIR},
            "reach_ratio": per["reach_ratio_R_over_HP"],
            "stay_ratio": per["stay_ratio_R_over_HP"]}  # fmt: skip


def conditions(r: dict) -> dict:
    """Per reading: the cells whose verdict is :data:`REPRODUCED` for each claim and for
    both, the cells with a seed inside both (reach 3-3.5 and stay within 1.5x of 23), the
    mechanism's ranges over the cells where the stay ratio is reproduced, and which
    programs lie inside those ranges."""
    out = {}
    for reading in READINGS:
        item = {}
        for what in ("reach", "stay"):
            item[what] = [c["label"] for c in r["cells"]
                          if c["judged"][reading][what]["verdict"] == REPRODUCED]  # fmt: skip
        item["both"] = [c for c in item["reach"] if c in item["stay"]]
        item["seed_both"] = [c["label"] for c in r["cells"] if c["judged"][reading]["seeds_both"]]
        for what in ("reach", "stay"):
            item[f"seed_{what}"] = [c["label"] for c in r["cells"]
                                    if c["judged"][reading][what]["seeds_inside"]]  # fmt: skip
        item["reach_spreads"] = {c["label"]: _exact_span(c["judged"][reading]["reach"]["bounds"])
                                 for c in r["cells"] if c["label"] in item["reach"]}  # fmt: skip
        item["points"] = {c["label"]: paper_points(c["judged"][reading], r["events"],
                                                   r["checkpoints"][0])
                          for c in r["cells"]}  # fmt: skip
        for what in ("reach", "stay"):
            item[f"points_{what}"] = [
                label for label, v in item["points"].items()
                if all(v[f"{n} {what}"] == REPRODUCED for n in PAIR)]  # fmt: skip
        stay = [c for c in r["cells"] if c["label"] in item["stay"]]
        ranges = {}
        for key, get in MECHANISM.items():
            values = [get(c) for c in stay]
            values = [v for v in values if v is not None]
            ranges[key] = [min(values), max(values)] if values else None
        item["ranges"] = ranges
        item["programs"] = {name: {**program_verdicts(p, reading),
                                   "inside": {k: _inside(get(p), ranges[k])
                                              for k, get in MECHANISM.items()}}
                            for name, p in r["programs"].items()}  # fmt: skip
        out[reading] = item
    return out


def point_bounds(point, events: int, first: int) -> tuple[float, float]:
    """One seed's 5 % point as ``(low, high)``: past the last event where None, anywhere up
    to the first checkpoint where it is that checkpoint, else the point itself."""
    if point is None:
        return (float(events), math.inf)
    if point == first:
        return (0.0, float(first))
    return (float(point), float(point))


def paper_points(judged: dict, events: int, first: int) -> dict:
    """Per compressor and claim (``"R_256 stay"``, ...), the verdict of the paper's gcc
    point (:data:`GCC`) against our seeds' points (:func:`verdict`)."""
    out = {}
    for what in ("reach", "stay"):
        for name in PAIR:
            paper = GCC[what][name]
            claim = tuple(paper) if isinstance(paper, tuple | list) else (paper, paper)
            bounds = [point_bounds(x, events, first) for x in judged[what][name]]
            out[f"{name} {what}"] = spread_verdict(bounds, claim)
    return out


def _mean(s):
    """A spread's mean (a plain number as it is; None as None)."""
    return s["mean"] if isinstance(s, dict) else s


#: the mechanism's quantities compared between cells and programs: the share of the
#: selected loads entering after :data:`ENTERING_AFTER` events, the log-log slope of the
#: selection's growth, the distinct tuples per occupied stratum and the effective tuples
#: per stratum around the selected tuples
MECHANISM = {
    "entering_after": lambda c: _mean(c["growth"].get("entering_after")),
    "slope": lambda c: _mean(c["growth"]["slope"]),
    "tuples_per_stratum": lambda c: _mean(c["strata"]["tuples_per_stratum"]),
    "selected_effective": lambda c: _mean(c["strata"]["selected_effective"]),
}


def _exact_span(bounds) -> list[float] | None:
    """The smallest and largest measured (not bounded) ratio of a cell's seeds."""
    exact = [b[0] for b in bounds if b[0] == b[1]]
    return [min(exact), max(exact)] if exact else None


def _inside(value, bounds) -> bool | None:
    if value is None or bounds is None:
        return None
    return bounds[0] <= value <= bounds[1]


# --- the page -----------------------------------------------------------------------------


def _bound(b) -> str:
    """A seed's ratio: the value, ``> low``, ``< high`` or '?'."""
    lo, hi = b
    if lo == hi:
        return f"{lo:.2f}"
    if math.isinf(hi):
        return f">{lo:.2f}" if lo > 0 else "?"
    return f"<{hi:.2f}"


def _ev(x) -> str:
    """Events in thousands (K) or millions (M)."""
    if x is None:
        return "-"
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}K"


def _points(values, first) -> str:
    """Seeds' 5 % points: min-max, '*' where a seed's point is the first checkpoint, '-'
    where a seed has none."""
    have = [v for v in values if v is not None]
    if not have:
        return "-"
    text = _ev(min(have)) if min(have) == max(have) else f"{_ev(min(have))}-{_ev(max(have))}"
    if any(v == first for v in have):
        text += f" ({sum(v == first for v in have)}*)"
    if len(have) < len(values):
        text += f" ({len(values) - len(have)} -)"
    return text


def _sp(s, spec=".2f") -> str:
    if s is None:
        return "-"
    text = f"{s['mean']:{spec}} [{s['min']:{spec}}-{s['max']:{spec}}]"
    return text


def _sp_ev(s) -> str:
    if s is None:
        return "-"
    return f"{_ev(s['mean'])} [{_ev(s['min'])}-{_ev(s['max'])}]"


def _names(items) -> str:
    items = list(items)
    return ", ".join(items) if items else "none"


def _any(x, spec=".2f") -> str:
    """A spread (:func:`_sp`), a plain number, or '-'."""
    if isinstance(x, dict) or x is None:
        return _sp(x, spec)
    return f"{x:{spec}}"


def _any_ev(x) -> str:
    return _sp_ev(x) if isinstance(x, dict) or x is None else _ev(x)


def mechanism_table(rows: dict, events: int) -> list[str]:
    """The mechanism's quantities, one row per cell or program (``rows``: label ->
    summary; a program's growth is one number, its plateau and final error not
    measured: '-')."""
    L = ["| setting | distinct tuples | selected loads at the end | half selected at | "
         f"{EXHAUSTED:.0%} selected at | entering after {ENTERING_AFTER / 1e6:g}M | late growth | "
         "slope | tuples per occupied stratum | "
         "effective tuples per stratum (all / selected) | R_256 plateau % | R_256 final % |",
         "| --- |" + " ---: |" * 11]  # fmt: skip
    for label, c in rows.items():
        g, s = c["growth"], c["strata"]
        ex = _any_ev(g["exhausted_at"])
        missing = (c.get("unmeasured") or {}).get("exhausted_at")
        if missing:
            ex += f" ({missing} not by {_ev(events)})"
        L.append(f"| {label} | {_any(c['distinct'], ',.0f')} | {_any(g['final'], ',.0f')} | "
                 f"{_any_ev(g['half_at'])} | {ex} | {_any(g.get('entering_after'))} | "
                 f"{_any(g['late_growth'])} | "
                 f"{_any(g['slope'])} | {_any(s['tuples_per_stratum'])} | "
                 f"{_any(s['effective'])} / {_any(s['selected_effective'])} | "
                 f"{_any(c.get('plateau'))} | {_any(c.get('final_R'))} |")  # fmt: skip
    return L


def ratio_table(rows: dict, reading: str, first: int) -> list[str]:
    """Per cell or program: the seeds' 5 % points, each seed's ratios and the verdicts
    under ``reading``."""
    L = ["| setting | R_256 reach | H[P] reach | reach R/H[P] per seed | reach | R_256 stay | "
         "H[P] stay | stay R/H[P] per seed | stay | seeds inside: reach / stay / both |",
         "| --- | ---: | ---: | --- | --- | ---: | ---: | --- | --- | ---: |"]  # fmt: skip
    for label, c in rows.items():
        j = c["judged"][reading]
        cols = []
        for what in ("reach", "stay"):
            x = j[what]
            cols += [_points(x["R_256"], first), _points(x["H[P_256]_2048"], first),
                     ", ".join(_bound(b) for b in x["bounds"]), f"**{x['verdict']}**"]  # fmt: skip
        L.append(
            f"| {label} | " + " | ".join(cols) + f" | {j['reach']['seeds_inside']} / "
            f"{j['stay']['seeds_inside']} / {j['seeds_both']} |"
        )
    return L


def markdown(r: dict, stem: str) -> str:
    """The results page, every number from the record ``r``."""
    cmd = f"hwprof experiment {NAME}" + (" --quick" if r["quick"] else "")
    p = r["paper"]
    cps, events = r["checkpoints"], r["events"]
    steps = "; ".join(f"every {_ev(s)} to {_ev(e)}" for s, e in r["settings"]["grid"])
    cells = {c["label"]: c for c in r["cells"]}
    lo, hi = p["reach_ratio"]
    L = [
        "# Stratified against random sampling: when R_256 stays above 5 % 23x longer",
        "",
        f"Produced by `{cmd}`: {len(r['cells'])} generated streams ({len(r['loads'])} static-"
        f"load counts x {len(r['rests'])} value settings), {len(r['seeds'])} seeds each "
        f"(generator, hash tables, LFSR: seeds {r['seeds'][0]}-{r['seeds'][-1]}), "
        f"{events:,} load events per stream, R_256 and H[P_256]_2048 scored with the "
        "error metric and filters of stratified-values (sec. 5.3.1) at "
        f"{len(cps)} checkpoints ({steps}), under the `prefix` reading (the default) and "
        "the `both` reading of the selection; and the same on "
        f"{len(r['programs'])} real program(s).",
        "",
        "## The paper's claim",
        "",
        f"gcc (sec. 5.4, Fig. 7): H[P_256]_2048 first reaches 5 % after "
        f"{_ev(p['gcc']['reach']['H[P_256]_2048'])} load events, R_256 after "
        f"{'-'.join(_ev(x) for x in p['gcc']['reach']['R_256'])} ({lo:g}-{hi:g}x); R_256 "
        f"stays below 5 % after about {_ev(p['gcc']['stay']['R_256'])}, about "
        f"{p['stay_ratio']:g}x later than H[P_256]_2048 ({_ev(p['gcc']['stay']['H[P_256]_2048'])}"
        f"). gcc is {p['working_set']}.",
        "",
        "## The properties swept",
        "",
        "The generator of stratified-conditions, independent draws: static loads with "
        "Zipf(1) shares, each with an invariant value (share U(0.4, 1)), a second value "
        "with half the rest, and for the remainder either m other values of the load "
        "(m = 0: the second value takes it) or fresh random values. Two properties:",
        "",
        "* **Static loads**: a load is scored once it has executed 1000 times, so the "
        "loads of a Zipf tail enter the selection one by one, about linearly in the events, "
        "until the tail is exhausted; while they enter, the newest loads hold a steady "
        "share of the selected events, each with a handful of R_256 samples, and R_256's "
        "error holds a plateau.",
        "* **Values per load**: with few values, H[P_256]_2048's 2048 strata each hold "
        "about one hot tuple (effective tuples per stratum near 1) and count it almost "
        "exactly, so its error settles early.",
        "",
        f"The grid: static loads {', '.join(f'{x:,}' for x in r['loads'])}; values per load "
        f"{', '.join(rest_label(x) for x in r['rests'])}. Each property's values are chosen "
        "from the property (loads: from a tail exhausted early in the run to one not "
        "exhausted by its end; values: from none to the 6 of stratified-conditions' 'few'), "
        "not fitted to the paper's numbers.",
        "",
        "## The mechanism, per setting",
        "",
        f"Mean [min-max] over the seeds. Selected loads: loads passing the filters on the "
        f"events so far; 'half selected at' and '{EXHAUSTED:.0%} selected at': the first "
        "checkpoint from which half (95 %) of the final count is selected; entering after "
        f"{ENTERING_AFTER / 1e6:g}M: the share of the final count selected only after "
        f"{ENTERING_AFTER:,} events; late growth: "
        "the final count over the count at half the events (1: none entered in the second "
        f"half, 2: a linear growth to the end); slope: of log selected loads against log "
        f"events from {PLATEAU_FROM:.0%} of the final count to 95 % (1: linear). Tuples per "
        "stratum: over H[P_256]_2048's occupied strata (its hash, each seed's), distinct "
        "tuples and the event-weighted effective number ((sum c)^2 / sum c^2 of the "
        "stratum's tuple counts), over all strata and over those holding a selected "
        f"tuple. R_256 plateau: the median of its error (prefix) while the selected loads "
        f"lie between {PLATEAU_FROM:.0%} and {EXHAUSTED:.0%} of the final count.",
        "",
        *mechanism_table(cells, events),
        "",
    ]
    for reading in READINGS:
        L += [f"## Reach and stay points, `{reading}` reading", "",
              "Points: min-max over the seeds ('(n*)': n seeds' point is the first "
              f"checkpoint, {_ev(cps[0])}, where the curve may have crossed anywhere before; "
              "'(n -)': n seeds without a point by the last event). Ratios per seed: "
              "'>x' and '<x' are bounds (a point at the first checkpoint or past the last). "
              f"Verdict: 'reproduced' where the paper's number ({lo:g}-{hi:g}; "
              f"{p['stay_ratio']:g}) lies inside our seed spread, 'differs' where every seed "
              "lies on one side, 'undecided' otherwise (a spread of bounds that contains the "
              "paper's number counts as containing it only where some seed is certainly on "
              "each side). Seeds inside: seeds whose measured reach ratio lies in "
              f"{lo:g}-{hi:g}, whose measured stay ratio lies within 1.5x of "
              f"{p['stay_ratio']:g} ({p['stay_ratio'] / 1.5:.1f}-{p['stay_ratio'] * 1.5:.1f}), "
              "and both in the same seed.", "",
              *ratio_table(cells, reading, cps[0]), ""]  # fmt: skip
    L += ["![sweep](" + stem + ".png)", "", *program_section(r), "", *verdict_lines(r), ""]
    L += ["Related: [stratified-long](stratified-long.md) (the generator's earlier settings "
          "over 16M events, and the model variants), "
          "[stratified-conditions](stratified-conditions.md), "
          "[stratified-values](stratified-values.md), and the note "
          "[what the stay ratio needs](../notes/stratified-stay-below.md).", "",
          f"Command: `{cmd}`" + ("" if r["quick"] else
                                 " (with `--trace FILE ...` for other programs' traces)")
          + ".", "", _timing(r), ""]  # fmt: skip
    return "\n".join(L)


def _unit_times(stems) -> dict:
    """The units' CPU and wall seconds added, from the journals of ``stems`` (the units
    of this run and those a resumed run took from an earlier one)."""
    import json

    from ..run import journal_path

    cpu = wall = 0.0
    count = 0
    for stem in stems:
        try:
            lines = journal_path(f"experiment-{stem}").read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            entry = json.loads(line)
            if "unit" in entry and entry.get("ok"):
                cpu += (entry.get("timing") or {}).get("cpu_seconds", 0.0)
                wall += (entry.get("timing") or {}).get("seconds", 0.0)
                count += 1
    return {"count": count, "cpu_seconds": cpu, "seconds": wall}


def _timing(r: dict) -> str:
    t = r.get("timing") or {}
    if "seconds" not in t:
        return ""
    u = t.get("units") or {}
    units = (f" Its {u['count']} units: {u['cpu_seconds']:.0f} CPU-s, {u['seconds']:.0f} s of "
             "wall time added (their journals; units run beside each other on a shared "
             "machine)." if u.get("count") else "")  # fmt: skip
    return f"This run: {t['seconds']:.0f} s wall." + units


def program_section(r: dict) -> list[str]:
    """The real programs: the mechanism's quantities, and stratified-values' points."""
    if not r["programs"]:
        return ["## Our real programs", "", "None measured in this run."]
    events = max(x["events"] for x in r["programs"].values())
    L = ["## Our real programs", "",
         f"The first {events:,} loads of each trace (as stratified-values reads them), the "
         "same grid and measures (the strata under each seed's hash; no compressor is run "
         "here):", "",
         *mechanism_table({f"{n} ({x['trace']})": x for n, x in r["programs"].items()},
                          events), ""]  # fmt: skip
    have = {n: x for n, x in r["programs"].items() if x.get("stratified_values")}
    if not have:
        return L + ["No stratified-values record beside these results: the programs' 5 % "
                    "points are not shown."]  # fmt: skip
    v0 = next(iter(have.values()))["stratified_values"]
    L += [f"Their R_256 and H[P_256]_2048 5 % points, from stratified-values' record "
          f"({v0['events']:,} events, {v0['checkpoints']} geometric checkpoints from "
          f"{_ev(v0['first'])}, prefix reading; the same seeds; its traces: "
          + ", ".join(t for x in have.values() for t in x["stratified_values"].get("traces", []))
          + "), with the verdicts of this page:", "",
          "| program | R_256 reach | H[P] reach | reach R/H[P] per seed | reach | R_256 stay | "
          "H[P] stay | stay R/H[P] per seed | stay |",
          "| --- | ---: | ---: | --- | --- | ---: | ---: | --- | --- |"]  # fmt: skip
    for name, x in have.items():
        v, pv = x["stratified_values"], program_verdicts(x, "prefix")
        cols = []
        for what in ("reach", "stay"):
            cols += [_points(v["points"]["R_256"][what], v["first"]),
                     _points(v["points"]["H[P_256]_2048"][what], v["first"]),
                     ", ".join(_bound(b) for b in pv[f"{what}_bounds"]),
                     f"**{pv[what]}**"]  # fmt: skip
        L.append(f"| {name} | " + " | ".join(cols) + " |")
    return L


#: the page's names of the :data:`MECHANISM` quantities
MECHANISM_TEXT = {"entering_after": f"share of the selected loads entering after "
                                    f"{ENTERING_AFTER / 1e6:g}M events",
                  "slope": "slope of the selection's growth (log-log)",
                  "tuples_per_stratum": "tuples per occupied stratum",
                  "selected_effective": "effective tuples per stratum (selected)"}  # fmt: skip


def sit_table(r: dict) -> list[str]:
    """Where the programs sit: per mechanism quantity, its range over the cells where the
    stay ratio is reproduced (per reading) and each program's value."""
    k = r["conditions"]
    names = list(r["programs"])
    L = ["| quantity | " + " | ".join(f"cells with the stay ratio reproduced ({x})"
                                     for x in READINGS)
         + "".join(f" | {n}" for n in names) + " |",
         "| --- |" + " --- |" * len(READINGS) + " ---: |" * len(names)]  # fmt: skip
    for key, text in MECHANISM_TEXT.items():
        ranges = [k[x]["ranges"][key] for x in READINGS]
        cols = ["-" if rg is None else f"{rg[0]:.2f}-{rg[1]:.2f}" for rg in ranges]
        for n in names:
            v = MECHANISM[key](r["programs"][n])
            inside = [x for x in READINGS if k[x]["programs"][n]["inside"][key]]
            cols.append("-" if v is None else f"{v:.2f}" + (" (inside)" if inside else ""))
        L.append(f"| {text} | " + " | ".join(cols) + " |")
    return L


def verdict_lines(r: dict) -> list[str]:
    """The verdict, per reading, computed from the record."""
    p, k = r["paper"], r["conditions"]
    lo, hi = p["reach_ratio"]
    L = ["## Verdict", ""]
    for reading in READINGS:
        c = k[reading]
        where = []
        for name, x in c["programs"].items():
            inside = [MECHANISM_TEXT[key] for key, v in x["inside"].items() if v]
            judged = (f"stay {x['stay']}, reach {x['reach']}" if x["stay"]
                      else "not scored under this reading")  # fmt: skip
            where.append(f"{name} ({judged}; inside the reproduced cells' range of "
                         f"{', '.join(inside) if inside else 'no quantity'})")  # fmt: skip
        spans = [f"{n} {v[0]:.2f}-{v[1]:.2f}" for n, v in c["reach_spreads"].items() if v]
        text = (f"* `{reading}`: the stay ratio {p['stay_ratio']:g} lies inside our seed "
                f"spread in {_names(c['stay'])}; the reach ratio {lo:g}-{hi:g} in "
                f"{_names(c['reach'])}"
                + (f" (their measured seeds' reach ratios: {'; '.join(spans)})" if spans
                   else "")
                + f"; both in the same cell: {_names(c['both'])}. A seed's own reach ratio "
                f"inside {lo:g}-{hi:g}: {_names(c['seed_reach'])}; its stay ratio within 1.5x "
                f"of {p['stay_ratio']:g}: {_names(c['seed_stay'])}; both in one seed: "
                f"{_names(c['seed_both'])}.")  # fmt: skip
        g = p["gcc"]
        text += (f" The paper's own points (H[P_256]_2048 {_ev(g['reach']['H[P_256]_2048'])} / "
                 f"{_ev(g['stay']['H[P_256]_2048'])}, R_256 "
                 f"{'-'.join(_ev(x) for x in g['reach']['R_256'])} / "
                 f"{_ev(g['stay']['R_256'])}, reach / stay) inside our seeds' spread of points: "
                 f"both compressors' stay points in {_names(c['points_stay'])}; both reach "
                 f"points in {_names(c['points_reach'])}.")  # fmt: skip
        if where:
            text += " Our programs: " + "; ".join(where) + "."
        L.append(text)
    if r["programs"]:
        L += ["", "Where our programs sit (the mechanism's quantities; '(inside)': within "
              "the range of the cells where the stay ratio is reproduced under some reading):",
              "", *sit_table(r)]  # fmt: skip
    return L


def _bounds_points(ax, xs, bounds, color, label):
    """Each seed's ratio at ``xs``: a dot where measured, a triangle where bounded."""
    for j, (x, b) in enumerate(zip(xs, bounds, strict=True)):
        lo, hi = b
        lab = label if j == 0 else None
        if lo == hi:
            ax.scatter(x, lo, color=color, s=10, label=lab)
        elif math.isinf(hi) and lo > 0:
            ax.scatter(x, lo, color=color, marker="^", s=16, label=lab)
        elif not math.isinf(hi):
            ax.scatter(x, hi, color=color, marker="v", s=16, label=lab)


def plot(r: dict, output_dir: Path, stem: str) -> None:
    """Per seed the stay and reach ratios of every cell and program beside the paper's
    (prefix and both); the selected loads over the run; effective tuples per stratum
    against the selection's late growth; the mean error curves of two cells."""
    import matplotlib.pyplot as plt

    fig, flat = panel_grid(5, 3, 5.2, 3.6)
    rows = [(c["label"], c) for c in r["cells"]]
    progs = [(n, program_verdicts(p, "prefix")) for n, p in r["programs"].items()]
    progs = [(n, v) for n, v in progs if v["stay"]]
    n = len(r["seeds"])
    for ax, what in zip(flat[:2], ("stay", "reach"), strict=True):
        for i, (_, c) in enumerate(rows):
            for reading, dx, color in (("prefix", -0.18, "tab:blue"), ("both", 0.18, "tab:orange")):
                xs = [i + dx + 0.05 * (j - (n - 1) / 2) for j in range(n)]
                _bounds_points(ax, xs, c["judged"][reading][what]["bounds"], color,
                               reading if i == 0 else None)  # fmt: skip
        for i, (_, v) in enumerate(progs):
            bounds = v[f"{what}_bounds"]
            xs = [len(rows) + i + 0.05 * (j - (len(bounds) - 1) / 2) for j in range(len(bounds))]
            _bounds_points(ax, xs, bounds, "tab:red", "program (prefix)" if i == 0 else None)
        if what == "stay":
            ax.axhline(r["paper"]["stay_ratio"], color="red", lw=1, ls="--", label="paper")
        else:
            ax.axhspan(*r["paper"]["reach_ratio"], color="red", alpha=0.2, label="paper")
        ax.set_xticks(
            range(len(rows) + len(progs)), [x for x, _ in rows + progs], rotation=90, fontsize=6
        )
        ax.set(yscale="log", ylabel=f"{what} 5 %: R_256 / H[P_256]_2048",
               title=f"{what} ratio per seed (^ v: bounds)")  # fmt: skip
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    ax = flat[2]
    cps = np.array(r["checkpoints"]) / 1e6
    for c in r["cells"]:
        if c["rest"] == r["rests"][0]:
            ax.plot(cps, c["selected"], lw=1, label=f"{c['loads']} loads")
    for name, x in r["programs"].items():
        ax.plot(np.array(x["checkpoints"]) / 1e6, x["selected"], lw=1, ls="--", label=name)
    ax.set(xlabel="load events (M)", ylabel="selected loads", yscale="log",
           title="loads passing the filters")  # fmt: skip
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    ax = flat[3]
    colors = {REPRODUCED: "tab:green", DIFFERS: "tab:gray", UNDECIDED: "tab:olive"}
    for c in r["cells"]:
        x, y = MECHANISM["entering_after"](c), MECHANISM["tuples_per_stratum"](c)
        if x is None or y is None:
            continue
        ax.scatter(x, y, color=colors[c["judged"]["prefix"]["stay"]["verdict"]], s=14)
        ax.annotate(c["label"], (x, y), fontsize=5)
    for name, p in r["programs"].items():
        x, y = MECHANISM["entering_after"](p), MECHANISM["tuples_per_stratum"](p)
        if x is not None and y is not None:
            ax.scatter(x, y, marker="*", s=80, color="tab:red")
            ax.annotate(name, (x, y), fontsize=7)
    for v, color in colors.items():
        ax.scatter([], [], color=color, label=f"stay {v} (prefix)")
    ax.set(xlabel=f"share of selected loads entering after {ENTERING_AFTER / 1e6:g}M events",
           ylabel="tuples per occupied stratum",
           yscale="log", title="where the programs sit (* real)")  # fmt: skip
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    ax = flat[4]
    # the cell with the most seeds inside both ratios (then inside the stay ratio), beside
    # the cell of the same loads with the most values
    best = max(
        r["cells"],
        key=lambda c: (
            c["judged"]["prefix"]["seeds_both"],
            c["judged"]["prefix"]["stay"]["seeds_inside"],
        ),
    )
    other = [c for c in r["cells"] if c["loads"] == best["loads"] and c is not best][-1:]
    for c, style in [(best, "-")] + [(o, ":") for o in other]:
        for name, color in zip(PAIR, ("tab:blue", "tab:green"), strict=True):
            ys = [np.nan if y is None else y for y in c["curves"]["prefix"][name]]
            ax.plot(cps, ys, color=color, ls=style, lw=1, label=f"{c['label']} {name}")
    ax.axhline(5.0, color="red", lw=0.6)
    ax.set(xlabel="load events (M)", ylabel=f"error % (prefix, mean of {n})", ylim=(0, 20),
           title="mean error curves")  # fmt: skip
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(output_dir / f"{stem}.png", dpi=100)
    plt.close(fig)


def headline(r: dict) -> list[tuple[str, str, str]]:
    """The cells where the paper's gcc ratios lie inside our seed spread, per reading."""
    p, rows = r["paper"], []
    lo, hi = p["reach_ratio"]
    for reading in READINGS:
        c = r["conditions"][reading]
        rows += [(f"cells with the stay ratio inside our spread ({reading})",
                  f"about {p['stay_ratio']:g} (gcc)", _names(c["stay"])),
                 (f"cells with the reach ratio inside our spread ({reading})",
                  f"{lo:g}-{hi:g} (gcc)", _names(c["reach"])),
                 (f"cells with both ({reading})", "both (gcc)", _names(c["both"]))]  # fmt: skip
    return rows


EXPERIMENTS = [Experiment(NAME, "stratified (H[P_256]) against random (R_256) sampling swept "
                          "over static loads and values per load, 16M events: when R_256 "
                          "stays above 5 % about 23x longer (Fig. 7); the same measures on "
                          "real traces", run, takes_traces=True, units=True,
                          headline=headline)]  # fmt: skip
