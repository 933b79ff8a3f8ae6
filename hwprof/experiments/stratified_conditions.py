"""When does stratified sampling beat random sampling on value streams? (Sastry et al.)

On gcc the paper's ``H[P_256]_2048`` reaches 5 % error 3-3.5x sooner than ``R_256``
and stays below it about 23x sooner (sec. 5.4, Fig. 7); the tagged compressor is
the most accurate; ``A_16`` adds 1.15-2.5x compression (sec. 3.4, Fig. 10). On our
programs (``stratified-values``) the ratios differ. This experiment generates
``<load pc, value>`` streams with a seeded generator (:func:`value_stream`), runs
the compressors of ``stratified-values`` on them with the same error metric
(sec. 5.3.1) and measures the properties of each stream that the outcome may
depend on (:func:`stream_properties`), on the generated streams and on our
programs' streams.

The generator: ``loads`` static loads with Zipf(``skew``) execution shares; each
load has an invariant value with share ``I ~ U(0.4, 1)`` of its executions, a
second value with half the rest, and for the remainder (``rest``) either fresh
random values (``fresh``: pointers, data that rarely repeat) or one of
``rest_values`` other values of that load (``few``; 6 unless given; 0: the remainder
goes to the second value, so the load has only its two top values). The
``order`` of the events: ``iid`` (every event drawn independently: the paper's
Monte Carlo assumption, sec. 3.1), ``loop`` (a loop body of 61 loads drawn once
from the shares, repeated; each load's values follow a fixed pattern of 8
executions, so the stream is periodic with a period prime to 256) or ``loop64``
(a body of 64 loads: its period divides the sampling period 256).
:func:`turnover_stream` cuts the ``iid`` stream into phases and renews a fraction of
its loads at each phase change (a working set that turns over; ``stratified-long``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from ..traces.keys import DEFAULT_VALUE_MAP
from . import Experiment, cell, panel_grid, previous_sweep, sweep_cells, write_results
from .moved import before_key_change, moved_lines
from .stratified_values import (
    IdealProfile,
    assoc_compression,
    checkpoints_for,
    compressor_counts,
    reach_and_stay,
)

__all__ = ["EXPERIMENTS", "run", "value_stream", "turnover_stream", "stream_properties"]

NAME = "stratified-conditions"
COMPRESSORS = ("R_256", "P_256", "H[P_256]_2048", "tagged")
ORDERS = ("iid", "loop", "loop64")
RESTS = ("fresh", "few")
#: the other values per load of ``rest="few"``
REST_VALUES = 6
#: the full sweep: (loads, order, rest)
GRID = ((100, "iid", "few"), (1_000, "iid", "fresh"), (100, "loop", "few"), (100, "loop64", "few"))
SKEW = 1.0
PATTERN = 8
SEEDS = 5
EVENTS = 1_000_000
CHECKPOINTS = 14
QUICK = {"events": 150_000, "grid": ((100, "iid", "few"), (100, "loop64", "fresh")),
         "seeds": 2, "checkpoints": 8}  # fmt: skip
#: events of each real program's stream whose properties are measured (the first 2M of
#: stratified-values' 16M: the paper's gcc reach points lie below)
REAL_EVENTS = 2_000_000
#: bump when the generator or a cell's measurements change (an earlier sweep is then rerun)
SWEEP_VERSION = 1
#: the periodic-sampling lag at which a stream's repeats are measured
LAG = 256
#: the value key of the real programs' streams in a record that names none
EARLIER_VALUE_MAP = "low"
#: the real programs' numbers compared across a key change, and each one's metric
MOVED = (("real", "*", "properties", "*"), ("real", "*", "a16", "*"),
         *(("real", "*", k) for k in ("reach_ratio", "stay_ratio", "p_over_r")))  # fmt: skip
MOVED_UNITS = {"distinct": "distinct tuples, first 2M loads (count)",
               "loads": "static loads, first 2M loads (count)",
               "selected_tuples": "tuples passing the filters (count)",
               "selected_loads": "loads passing the filters (count)",
               "top16_share": "top-16 tuples' share of the events",
               "lag_repeat": "lag-256 repeats (ratio)", "events": "loads read (count)",
               "a16": "A_16 compression (ratio)",
               "reach_ratio": "reach 5 %: R_256 / H[P_256]_2048 events",
               "stay_ratio": "stay below 5 %: R_256 / H[P_256]_2048 events",
               "p_over_r": "mean error P_256 / R_256"}  # fmt: skip

PAPER = {
    "reach_ratio": (3.0, 3.5),
    "stay_ratio": 23.0,
    "a16_compression": (1.15, 2.5),
    "gcc": '"one of the hardest programs to profile" with "a much bigger working set '
    'than the other programs" (sec. 5.4); 4M events = 17M instructions',
    "a16": 'the reduction is pronounced where "the output message stream is dominated by '
    'a few prominent tuples" (m88ksim, db, jess; sec. 5.6)',
    "order": 'the Monte Carlo of sec. 3 assumes randomly permuted tuples: "an input stream '
    'with periodic behavior may cause large errors with the periodic sampler"',
}


def value_stream(
    seed: int,
    events: int,
    loads: int,
    skew: float,
    order: str,
    rest: str = "fresh",
    rest_values: int = REST_VALUES,
) -> np.ndarray:
    """Seeded keys ``pc << 32 | value`` (module docstring; ``rest_values``: the other
    values per load of ``rest="few"``, 0 for none)."""
    d = _draws(seed, events, loads, skew, order, rest, rest_values)
    return _compose(d, d["which"], d["pcs"], d["top"], d.get("others"))


def _draws(seed: int, events: int, loads: int, skew: float, order: str, rest: str,
           rest_values: int = REST_VALUES) -> dict:  # fmt: skip
    """The generator's draws: per load its pc, top values (and ``others`` for ``few``);
    per event its load ``which``, value ``kind`` (0, 1: the top values; 2: the rest)
    and rest value (``fresh``) or rest slot (``slot``, for ``few`` with rest values)."""
    if order not in ORDERS or rest not in RESTS:
        raise ValueError(
            f"order must be one of {', '.join(ORDERS)} and rest one of "
            f"{', '.join(RESTS)}, not {order!r}, {rest!r}"
        )
    if isinstance(rest_values, bool) or not isinstance(rest_values, int) or rest_values < 0:
        raise ValueError(f"rest_values must be a whole number >= 0, not {rest_values!r}")
    rng = np.random.default_rng(seed)
    pcs = (0x400000 + 4 * rng.choice(1 << 20, loads, replace=False)).astype(np.uint64)
    share = 1.0 / np.arange(1, loads + 1) ** skew
    share /= share.sum()
    invariant = rng.uniform(0.4, 1.0, loads)
    top = rng.integers(0, 1 << 32, (loads, 2), dtype=np.uint64)
    if order == "iid":
        which = rng.choice(loads, events, p=share)
        u = rng.random(events)
        kind = np.where(u < invariant[which], 0, np.where(u < (1 + invariant[which]) / 2, 1, 2))
    else:
        body = rng.choice(loads, 61 if order == "loop" else 64, p=share)
        which = np.resize(body, events)
        # the k-th execution of a load takes slot k mod PATTERN of its value pattern
        nth = np.zeros(events, np.int64)
        for position in range(len(body)):
            same = np.flatnonzero(body == body[position])
            nth[position :: len(body)] = np.arange(len(nth[position :: len(body)])) * len(
                same
            ) + int(np.searchsorted(same, position))
        slots = np.round(invariant * PATTERN).astype(np.int64)
        patterns = np.zeros((loads, PATTERN), np.int64)
        for load in range(loads):
            left = PATTERN - slots[load]
            patterns[load] = [0] * slots[load] + [1] * ((left + 1) // 2) + [2] * (left // 2)
            rng.shuffle(patterns[load])
        kind = patterns[which, nth % PATTERN]
    out = {"pcs": pcs, "top": top, "which": which, "kind": kind}
    if rest == "fresh":
        out["fresh"] = rng.integers(0, 1 << 32, events, dtype=np.uint64)
    elif rest_values > 0:
        out["others"] = rng.integers(0, 1 << 32, (loads, rest_values), dtype=np.uint64)
        out["slot"] = rng.integers(0, rest_values, events)
    return out


def _compose(d: dict, i: np.ndarray, pcs, top, others) -> np.ndarray:
    """The keys of draws ``d`` where event ``t``'s load is identity ``i[t]`` (an index
    into ``pcs``, ``top`` and ``others``; the plain stream: ``i = d["which"]``)."""
    if "fresh" in d:
        fresh = d["fresh"]
    else:  # few: one of the load's other values, or (none) its second top value
        fresh = others[i, d["slot"]] if "slot" in d else top[i, 1]
    kind = d["kind"]
    value = np.where(kind == 0, top[i, 0], np.where(kind == 1, top[i, 1], fresh))
    return (pcs[i] << np.uint64(32)) | value


#: what a load that turns over takes new (:func:`turnover_stream`): ``values``: new top
#: and rest values at its pc (the same code meeting new data); ``loads``: a new pc as well
#: (code not run before enters the working set, the old load leaves it)
RENEW = ("values", "loads")


def turnover_stream(
    seed: int,
    events: int,
    loads: int,
    skew: float,
    rest: str,
    phase: int,
    turnover: float,
    renew: str = "loads",
    core: int = 0,
) -> np.ndarray:
    """Seeded keys ``pc << 32 | value`` of a stream whose working set turns over.

    The events are those of ``value_stream(seed, events, loads, skew, "iid", rest)``
    (the same loads' shares, values' kinds and draws), cut into phases of ``phase``
    events. At the start of each phase after the first, ``round(turnover * loads)`` of
    the ``loads`` load slots, chosen uniformly without replacement, take a new identity
    for the rest of the stream (until they turn over again): with ``renew="values"``
    new top values and rest values at the same pc, with ``"loads"`` a new pc as well (a
    pc never used before). A renewed slot keeps its execution share and its values'
    shares (invariance). With ``core`` > 0 the ``core`` slots of the largest shares
    are never renewed and ``round(turnover * (loads - core))`` of the others are (a
    stable hot core beside a tail that turns over). ``turnover=0`` gives
    ``value_stream``'s keys exactly; the renewals draw from their own generator (seeded
    by ``seed``).

    Parameters
    ----------
    seed, events, loads, skew, rest
        As :func:`value_stream` (order ``iid``).
    phase : int
        Events per phase (>= 1).
    turnover : float
        The fraction of the load slots renewed at each phase change, 0 to 1.
    renew : str
        ``"values"`` or ``"loads"`` (:data:`RENEW`).
    core : int
        The hottest slots never renewed, 0 to ``loads``.
    """
    if renew not in RENEW or phase < 1 or not 0 <= turnover <= 1 or not 0 <= core <= loads:
        raise ValueError(f"renew must be one of {', '.join(RENEW)}, phase >= 1, turnover "
                         f"in [0, 1] and core in [0, loads], not {renew!r}, {phase}, "
                         f"{turnover}, {core}")  # fmt: skip
    d = _draws(seed, events, loads, skew, "iid", rest)
    others = d.get("others")
    m = int(round(turnover * (loads - core)))
    phases = -(-events // phase)
    if m == 0 or phases == 1:
        return _compose(d, d["which"], d["pcs"], d["top"], others)
    rng = np.random.default_rng([seed, 0x7475726E])
    ident = np.zeros((phases, loads), np.int64)
    ident[0] = np.arange(loads)
    for k in range(1, phases):
        ident[k] = ident[k - 1]
        chosen = core + rng.choice(loads - core, m, replace=False)
        ident[k, chosen] = loads + (k - 1) * m + np.arange(m)
    new = (phases - 1) * m
    if renew == "loads":
        # new pcs above the first ones' range (2**20 words), never repeated
        fresh_pcs = 0x400000 + 4 * ((1 << 20) + rng.choice(1 << 23, new, replace=False))
    else:
        owner = np.zeros(new, np.int64)  # the slot of each new identity: its pc
        for k in range(1, phases):
            renewed = ident[k] >= loads + (k - 1) * m
            owner[ident[k, renewed] - loads] = np.flatnonzero(renewed)
        fresh_pcs = d["pcs"][owner]
    pcs = np.concatenate([d["pcs"], np.asarray(fresh_pcs, np.uint64)])
    top = np.concatenate([d["top"], rng.integers(0, 1 << 32, (new, 2), dtype=np.uint64)])
    if others is not None:
        others = np.concatenate(
            [others, rng.integers(0, 1 << 32, (new, others.shape[1]), dtype=np.uint64)]
        )
    per_event = ident[np.arange(events) // phase, d["which"]]
    return _compose(d, per_event, pcs, top, others)


def stream_properties(keys: np.ndarray) -> dict:
    """Properties of a key stream that the compressors' outcome may depend on.

    ``distinct``: distinct tuples; ``loads``: static loads; ``selected_loads`` and
    ``selected_tuples``: those passing the sec. 5.3.1 filters over the whole stream;
    ``top16_share``: the share of the events that the 16 most frequent tuples make
    (what ``A_16`` can hold); ``lag_repeat``: the share of events whose key equals the
    key ``LAG`` events earlier, over what independent draws with the same frequencies
    give (1 = no periodicity at the sampling period; large = periodic).
    """
    unique, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    freq = counts / len(keys)
    ideal = IdealProfile(keys, [len(keys)])
    ids = ideal.selected[0][0]
    same = float(np.mean(keys[LAG:] == keys[:-LAG]))
    return {"events": int(len(keys)), "distinct": int(len(unique)),
            "loads": int(len(np.unique(unique >> np.uint64(32)))),
            "selected_tuples": int(len(ids)),
            "selected_loads": int(len(np.unique(ideal.pc_of[ids]))),
            "top16_share": float(np.sort(freq)[-16:].sum()),
            "lag_repeat": same / float(np.sum(freq ** 2))}  # fmt: skip


def compressor_runs(keys: np.ndarray, seed: int, checkpoints: int) -> dict:
    """Every compressor of :data:`COMPRESSORS` on ``keys`` with ``seed``: its error curve,
    first and lasting 5 % points, and (R, H[P], tagged) ``A_16`` compression."""
    cps = checkpoints_for(len(keys), checkpoints)
    ideal = IdealProfile(keys, cps)
    out, cache = {}, {}
    for name in COMPRESSORS:
        counts = compressor_counts(name, keys, seed, cache)
        errors = ideal.errors(counts)
        reach, stay = reach_and_stay(cps, errors)
        out[name] = {
            "errors": errors,
            "reach": reach,
            "stay": stay,
            "final": errors[-1],
            "messages": int(np.count_nonzero(counts)),
        }
        if name != "P_256":
            out[name]["a16"] = assoc_compression(keys, counts)
    return {"checkpoints": cps, "runs": out}


def _spread(values) -> dict | None:
    """Mean, min and max, or None with the count where some seed has no value."""
    if any(v is None for v in values):
        return None
    return {
        "mean": float(np.mean(values)),
        "min": float(np.min(values)),
        "max": float(np.max(values)),
    }


def summarise(per_seed: list[dict], props: list[dict]) -> dict:
    """One cell (or program): per compressor the spread over the seeds of its final
    error, reach, stay and A_16, and the ratios R/H[P] per seed."""
    out = {"checkpoints": per_seed[0]["checkpoints"], "compressors": {}, "ratios": {}}
    for name in COMPRESSORS:
        runs = [s["runs"][name] for s in per_seed]
        out["compressors"][name] = {
            key: _spread([r.get(key) for r in runs])
            for key in ("final", "reach", "stay", "messages", "a16")
            if key in runs[0]
        }
        out["compressors"][name]["reached_seeds"] = sum(r["reach"] is not None for r in runs)
        out["compressors"][name]["mean_curve"] = [
            None if any(r["errors"][i] is None for r in runs)
            else float(np.mean([r["errors"][i] for r in runs]))
            for i in range(len(out["checkpoints"]))]  # fmt: skip
    for what in ("reach", "stay"):
        ratios = []
        for s in per_seed:
            r, h = s["runs"]["R_256"][what], s["runs"]["H[P_256]_2048"][what]
            ratios.append(r / h if r is not None and h else None)
        out["ratios"][what] = _spread(ratios)
        out["ratios"][f"{what}_seeds"] = ratios
    finals = [{n: s["runs"][n]["final"] for n in COMPRESSORS} for s in per_seed]
    out["tagged_best_seeds"] = sum(
        f["tagged"] is not None and all(v is not None and f["tagged"] <= v for v in f.values())
        for f in finals
    )
    out["properties"] = {k: float(np.mean([p[k] for p in props])) for k in props[0]}
    return out


def run_cell(
    loads: int, order: str, rest: str, seeds: int, events: int, checkpoints: int, seed: int = 1
) -> dict:
    """One generator setting over ``seeds`` seeds (seed index ``s``: generator seed
    ``seed + s``, compressor seed ``seed + s``)."""
    per_seed, props = [], []
    for s in range(seeds):
        keys = value_stream(seed + s, events, loads, SKEW, order, rest)
        props.append(stream_properties(keys))
        per_seed.append(compressor_runs(keys, seed + s, checkpoints))
    return {"loads_setting": loads, "order": order, "rest": rest, **summarise(per_seed, props)}


def real_programs(output_dir: Path, log, quick: bool) -> dict:
    """Properties of the real programs' load streams (as stratified-values reads them) and
    that run's outcomes, from ``stratified-values.json`` in ``output_dir`` (none: {}).

    The traces are those of stratified-values' options (captured when absent); each
    program's instructions per load, from the trace read and from stratified-values'
    record, tell whether the two read the same capture.
    """
    from ..traces import workloads
    from .stratified_values import FULL, read_streams

    values = Path(output_dir) / "stratified-values.json"
    if quick or not values.exists():
        return {}
    record = json.loads(values.read_text())
    out = {}
    for name, claims in record["claims"].items():
        path = workloads.trace_for(name, kinds="loads,branches", limit=FULL["capture_limit"],
                                   scale=workloads.LARGE_SCALE[name])  # fmt: skip
        keys, _, per_load, _ = read_streams(Path(path), REAL_EVENTS)
        props = stream_properties(keys)
        log(f"{name}: {props}")
        c = record["programs"][name]["compressors"]
        out[name] = {
            "properties": props,
            "trace": Path(path).name,
            "instructions_per_load": {
                "read": per_load,
                "stratified_values": record["programs"][name].get("instructions_per_load"),
            },
            "reach_ratio": claims["reach_ratio_R_over_HP"],
            "stay_ratio": claims["stay_ratio_R_over_HP"],
            "final": claims["final_error"],
            "tagged_most_accurate": claims["tagged_most_accurate"],
            "a16": claims["a16_compression"],
            "p_over_r": claims["P_over_R_mean_error"],
            "events": record["programs"][name]["events"],
            "reach": {n: c[n].get("reach") for n in ("R_256", "H[P_256]_2048")},
        }
    return out


def grid(quick: bool) -> list[tuple[int, str, str]]:
    """``(loads, order, rest)`` of every cell of the sweep."""
    return list(QUICK["grid"] if quick else GRID)


def run(output_dir: Path, seed: int, quick: bool, run_options=None) -> dict:
    """Run the sweep, one unit per generator setting (:mod:`hwprof.run`; ``run_options``:
    where they run), and measure the real programs in the full form; write
    ``stratified-conditions[-quick].{json,md,png}`` into ``output_dir``.

    An earlier record there with the same sweep settings keeps its cells
    (:func:`previous_sweep`): only the programs are measured again. When it keyed the
    programs' tuples otherwise, the new record carries its numbers, and the page says
    what moved (:mod:`hwprof.experiments.moved`).
    """

    def log(text):
        print(f"{NAME}: {text}", file=sys.stderr, flush=True)

    start = time.perf_counter()
    seeds = QUICK["seeds"] if quick else SEEDS
    events = QUICK["events"] if quick else EVENTS
    checkpoints = QUICK["checkpoints"] if quick else CHECKPOINTS
    stem = f"{NAME}-quick" if quick else NAME
    settings = {
        "version": SWEEP_VERSION,
        "seed": seed,
        "seeds": seeds,
        "events": events,
        "checkpoints": checkpoints,
        "grid": [list(g) for g in grid(quick)],
    }
    cells = previous_sweep(Path(output_dir) / f"{stem}.json", settings, log)
    before = before_key_change(Path(output_dir) / f"{stem}.json", DEFAULT_VALUE_MAP,
                               EARLIER_VALUE_MAP, real_headline, MOVED)  # fmt: skip
    if cells is None:
        todo = {f"L{loads}-{order}-{rest}": {"loads": loads, "order": order, "rest": rest,
                                             "seeds": seeds, "events": events,
                                             "checkpoints": checkpoints, "seed": seed}
                for loads, order, rest in grid(quick)}  # fmt: skip
        done = sweep_cells(NAME, stem, settings, run_cell, todo, run_options)
        cells = [done[key] for key in todo]
        for (loads, order, rest), c in zip(grid(quick), cells, strict=True):
            r = c["ratios"]
            log(
                f"loads={loads} order={order} rest={rest}: reach R/H[P] {r['reach']}, "
                f"stay {r['stay']}"
            )
    record = {"seed": seed, "quick": quick, "seeds": seeds, "events": events,
              "settings": settings, "paper": PAPER, "cells": cells,
              "real": real_programs(Path(output_dir), log, quick),
              "value_map": DEFAULT_VALUE_MAP, "seconds": time.perf_counter() - start}  # fmt: skip
    # a comparison base only where both records measured the programs
    record["before_key_change"] = (
        before if record["real"] and before and before["numbers"] else None
    )
    record["conditions"] = conditions(record)
    write_results(output_dir, NAME, quick, record, markdown(record, stem))
    plots(record, Path(output_dir), stem)
    return record["conditions"]


def _in(value, bounds) -> bool:
    return value is not None and bounds[0] <= value <= bounds[1]


def conditions(r: dict) -> dict:
    """Per claim, the cells where the paper's number lies inside our seed spread (or,
    for the ratios, where our mean reaches the paper's)."""
    lo, hi = PAPER["reach_ratio"]
    out = {"reach": [], "stay": [], "tagged": [], "a16": []}
    for c in r["cells"]:
        name = f"{c['loads_setting']} {c['order']} {c['rest']}"
        reach, stay = c["ratios"]["reach"], c["ratios"]["stay"]
        if reach and reach["min"] <= hi and reach["max"] >= lo:
            out["reach"].append(name)
        if stay and stay["max"] >= PAPER["stay_ratio"]:
            out["stay"].append(name)
        if c["tagged_best_seeds"] == r["seeds"]:
            out["tagged"].append(name)
        a16 = [c["compressors"][n].get("a16") for n in ("R_256", "H[P_256]_2048", "tagged")]
        if all(a and a["max"] >= PAPER["a16_compression"][0] for a in a16):
            out["a16"].append(name)
    return out


def _f(x, spec=".2f"):
    return "-" if x is None else f"{x:{spec}}"


def _sp(s, spec=".2f"):
    return "-" if s is None else f"{s['mean']:{spec}} [{s['min']:{spec}}-{s['max']:{spec}}]"


def markdown(r: dict, stem: str) -> str:
    """The results file, every number from the record ``r``."""
    cmd = f"hwprof experiment {NAME}" + (" --quick" if r["quick"] else "")
    p = r["paper"]
    L = ["# When does stratified sampling beat random sampling? Value streams by property",
         "", f"Produced by `{cmd}`: {len(r['cells'])} generator settings, {r['seeds']} seeds "
         f"each (generator, hash tables and LFSR), {r['events']:,} load events per stream; "
         "compressors, error metric and filters of `stratified-values` (sec. 5.3.1). Mean "
         "[min-max] over the seeds.", "",
         "## The paper's claims", "",
         f"- gcc: H[P_256]_2048 first reaches 5 % {p['reach_ratio'][0]}-{p['reach_ratio'][1]}x "
         f"sooner than R_256, and stays below 5 % about {p['stay_ratio']:.0f}x sooner (Fig. 7).",
         "- The tagged compressor has the best accuracy (sec. 5.4).",
         f"- A_16 adds {p['a16_compression'][0]}-{p['a16_compression'][1]}x compression "
         f"(sec. 3.4, Fig. 10); {p['a16']}.",
         f"- What the paper says of its streams: gcc is {p['gcc']}; {p['order']}. It gives no "
         "count of gcc's loads or tuples.", "",
         "## The sweep", "",
         "Properties (`stream_properties`): distinct tuples, static loads, loads that pass "
         "the filters, the 16 most frequent tuples' share of the events, and lag-256 repeats "
         "(events equal to the one 256 before, over the independent-draw expectation: 1 = "
         "no periodicity at the sampling period).", "",
         "| loads | order | rest | distinct | selected loads | top-16 share | lag-256 repeats | "
         "R reach | H[P] reach | reach R/H[P] | stay R/H[P] | final R / P / H[P] / tagged % "
         "| tagged best (seeds) | A_16: R, H[P], tagged |",
         "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: "
         "| --- |"]  # fmt: skip
    for c in r["cells"]:
        q, k = c["properties"], c["compressors"]
        finals = " / ".join(_f((k[n]["final"] or {}).get("mean")) for n in COMPRESSORS)
        a16 = ", ".join(
            _f((k[n].get("a16") or {}).get("mean")) for n in ("R_256", "H[P_256]_2048", "tagged")
        )
        L.append(
            f"| {c['loads_setting']:,} | {c['order']} | {c['rest']} | {q['distinct']:,.0f} | "
            f"{q['selected_loads']:,.0f} | {q['top16_share']:.2f} | "
            f"{q['lag_repeat']:.1f} | {_sp(k['R_256']['reach'], ',.0f')} | "
            f"{_sp(k['H[P_256]_2048']['reach'], ',.0f')} | {_sp(c['ratios']['reach'])} | "
            f"{_sp(c['ratios']['stay'])} | {finals} | "
            f"{c['tagged_best_seeds']}/{r['seeds']} | {a16} |"
        )
    k = r["conditions"]
    L += [
        "",
        "A reach or stay point of '-' means some seed's curve never got (or stayed) "
        "below 5 % by the last event.",
        "",
        f"![sweep]({stem}.png)",
        "",
        "## Where the paper's numbers appear",
        "",
        f"- Reach ratio {p['reach_ratio'][0]}-{p['reach_ratio'][1]} inside our seed "
        f"spread: {', '.join(k['reach']) or 'no cell'}.",
        f"- Stay ratio {p['stay_ratio']:.0f} reached by some seed: "
        f"{', '.join(k['stay']) or 'no cell'} (the sweep's settings over 16M events, "
        "each with its verdict: [stratified-long](stratified-long.md)).",
        f"- Tagged most accurate in every seed: {', '.join(k['tagged']) or 'no cell'}.",
        f"- A_16 at least {p['a16_compression'][0]}x for R, H[P] and tagged in some seed: "
        f"{', '.join(k['a16']) or 'no cell'}.",
        "",
        _real_section(r),
        "",
        _verdict(r),
        "",
    ]
    return "\n".join(L + moved_lines(r, real_headline, MOVED, metric=moved_metric))


def real_headline(r: dict) -> list[tuple[str, str, str]]:
    """The real programs' rows compared across a key change (none without programs)."""
    real = r.get("real") or {}
    if not real:
        return []

    def row(get, spec):
        return "; ".join(f"{name} {_f(get(x), spec)}" for name, x in real.items())

    lo, hi = r["paper"]["reach_ratio"]
    return [("reach ratio R/H[P], real programs", f"{lo}-{hi} (gcc)",
             row(lambda x: x["reach_ratio"], ".2f")),
            ("stay ratio R/H[P], real programs", f"{r['paper']['stay_ratio']:.0f}",
             row(lambda x: x["stay_ratio"], ".2f")),
            (f"distinct tuples in the first {REAL_EVENTS:,} loads", "-",
             row(lambda x: x["properties"]["distinct"], ".0f")),
            ("top-16 tuples' share of the events", "-",
             row(lambda x: x["properties"]["top16_share"], ".2f"))]  # fmt: skip


def moved_metric(path: str) -> str:
    """The metric (with its unit) of a :data:`MOVED` number at ``path``."""
    parts = path.split("/")
    return MOVED_UNITS[parts[3] if parts[2] == "properties" else parts[2]]


def _real_section(r: dict) -> str:
    if not r["real"]:
        return (
            "## Our real programs\n\nNot measured in this run (the quick form, or no "
            "stratified-values.json beside the results)."
        )
    L = [
        "## Our real programs",
        "",
        f"Properties of the first {REAL_EVENTS:,} loads of each program's stream as "
        "stratified-values reads it, and that run's outcomes over its events "
        "(stratified-values.json, mean over its seeds):",
        "",
        "| program | events (stratified-values) | distinct | selected loads | top-16 share | "
        "lag-256 repeats | "
        "reach R/H[P] | stay R/H[P] | P/R mean error | tagged most accurate | A_16: R, "
        "H[P], tagged |",
        "| --- |" + " ---: |" * 8 + " --- | --- |",
    ]
    for name, x in r["real"].items():
        q = x["properties"]
        a16 = ", ".join(_f(x["a16"][n]) for n in ("R_256", "H[P_256]_2048", "tagged"))
        L.append(
            f"| {name} | {x['events']:,} | {q['distinct']:,} | {q['selected_loads']:,} | "
            f"{q['top16_share']:.2f} | {q['lag_repeat']:.1f} | {_f(x['reach_ratio'])} | "
            f"{_f(x['stay_ratio'])} | {_f(x['p_over_r'])} | "
            f"{'yes' if x['tagged_most_accurate'] else 'no'} | {a16} |"
        )
    drift = _capture_drift(r["real"])
    if drift is not None:
        L += [
            "",
            "The traces read for the properties have the options of stratified-values' "
            "captures; their instructions per load differ from those stratified-values "
            f"recorded by at most {drift:.4f} % (0: the same capture; a recapture with the "
            "same options is not always identical, so part of a property's move in the "
            "table of what moved can come from the capture rather than the key).",
        ]
    return "\n".join(L)


def _capture_drift(real: dict) -> float | None:
    """The largest relative difference (%) between a program's instructions per load in
    the trace read and in stratified-values' record; None where either is missing."""
    pairs = [x.get("instructions_per_load") or {} for x in real.values()]
    if not pairs or any(p.get("read") is None or not p.get("stratified_values") for p in pairs):
        return None
    return max(100 * abs(p["read"] / p["stratified_values"] - 1) for p in pairs)


def _verdict(r: dict) -> str:
    k = r["conditions"]
    groups = {}
    for c in r["cells"]:
        groups.setdefault(f"{c['order']}, {c['rest']}", []).append(c)
    parts = []
    for order, cells in groups.items():
        ratios = [c["ratios"]["reach"]["mean"] for c in cells if c["ratios"]["reach"]]
        a16 = [
            c["compressors"]["R_256"]["a16"]["mean"]
            for c in cells
            if c["compressors"]["R_256"].get("a16")
        ]
        lag = [c["properties"]["lag_repeat"] for c in cells]
        parts.append(
            f"{order} (lag-256 repeats {min(lag):.1f}-{max(lag):.1f}): reach ratio "
            + (f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "-")
            + (f", R_256's A_16 {min(a16):.2f}-{max(a16):.2f}" if a16 else "")
        )
    text = (
        "## Verdict\n\nBy order of the events and rest values: "
        + "; ".join(parts)
        + ". The paper's reach ratio lies inside our spread in "
        f"{len(k['reach'])} of {len(r['cells'])} cells, its stay ratio in "
        f"{len(k['stay'])}, the tagged compressor is best in every seed in "
        f"{len(k['tagged'])}, A_16 reaches the paper's lowest gain in {len(k['a16'])}."
    )
    if r["real"]:
        lag = [x["properties"]["lag_repeat"] for x in r["real"].values()]
        top = [x["properties"]["top16_share"] for x in r["real"].values()]
        text += (
            f" Our real programs' streams have lag-256 repeats {min(lag):.1f}-"
            f"{max(lag):.1f} and a top-16 share of {min(top):.2f}-{max(top):.2f}."
        )
    return text


def error_curves(ax, cell: dict, seeds: int, title: str) -> None:
    """One panel: each compressor's mean error curve over the ``seeds`` seeds of ``cell``
    (a cell of this sweep or of stratified-long) and the 5 % line, log-log."""
    for name in COMPRESSORS:
        ys = [np.nan if y is None else y for y in cell["compressors"][name]["mean_curve"]]
        ax.plot(cell["checkpoints"], ys, label=name, lw=1)
    ax.axhline(5.0, color="red", lw=0.6, linestyle=":")
    ax.set(xscale="log", yscale="log", title=title, xlabel="load events",
           ylabel=f"error % (mean of {seeds})")  # fmt: skip


def plots(r: dict, output_dir: Path, stem: str) -> None:
    """Mean error curves of the compressors, one panel per cell; and the reach ratio and
    A_16 against lag-256 repeats and the top-16 share, real programs beside the cells."""
    import matplotlib.pyplot as plt

    cells = r["cells"]
    fig, flat = panel_grid(len(cells) + 2, 4, 3.4, 3.0)
    for ax, c in zip(flat, cells, strict=False):
        error_curves(ax, c, r["seeds"], f"{c['loads_setting']} loads, {c['order']}, {c['rest']}")
    flat[0].legend(fontsize=6)
    ax = flat[len(cells)]
    for c in cells:
        rr = c["ratios"]["reach"]
        if rr:
            ax.errorbar(c["properties"]["lag_repeat"], rr["mean"],
                        yerr=[[rr["mean"] - rr["min"]], [rr["max"] - rr["mean"]]],
                        marker="o", color="tab:blue", capsize=2)  # fmt: skip
    for name, x in r["real"].items():
        if x["reach_ratio"] is not None:
            ax.scatter(
                x["properties"]["lag_repeat"], x["reach_ratio"], marker="*", s=80, color="tab:red"
            )
            ax.annotate(name, (x["properties"]["lag_repeat"], x["reach_ratio"]), fontsize=7)
    ax.axhspan(*r["paper"]["reach_ratio"], color="red", alpha=0.15, label="paper (gcc)")
    ax.set(xscale="log", xlabel="lag-256 repeats", ylabel="reach 5 %: R / H[P]")
    ax.legend(fontsize=6)
    ax = flat[len(cells) + 1]
    for c in cells:
        a = c["compressors"]["R_256"].get("a16")
        if a:
            ax.scatter(c["properties"]["top16_share"], a["mean"], color="tab:blue")
    for name, x in r["real"].items():
        ax.scatter(
            x["properties"]["top16_share"], x["a16"]["R_256"], marker="*", s=80, color="tab:red"
        )
        ax.annotate(name, (x["properties"]["top16_share"], x["a16"]["R_256"]), fontsize=7)
    ax.axhspan(*r["paper"]["a16_compression"], color="red", alpha=0.15, label="paper")
    ax.set(xlabel="top-16 tuples' share of events", ylabel="A_16 compression (R_256)")
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(output_dir / f"{stem}.png", dpi=100)
    plt.close(fig)


def headline(r: dict) -> list[tuple[str, str, str]]:
    """The paper's gcc ratios against the cells where they appear."""
    k, n = r["conditions"], len(r["cells"])
    lo, hi = r["paper"]["reach_ratio"]
    return [("cells with the reach ratio R/H[P] inside our spread", f"{lo}-{hi} (gcc)",
             cell(len(k["reach"]), "d") + f" of {n}"),
            ("cells where a seed's stay ratio reaches the paper's",
             f"{r['paper']['stay_ratio']:.0f}",
             cell(len(k["stay"]), "d") + f" of {n}"),
            ("cells with A_16 >= 1.15x for R, H[P] and tagged", "all programs",
             cell(len(k["a16"]), "d") + f" of {n}")]  # fmt: skip


EXPERIMENTS = [Experiment(NAME, "stratified, random, periodic and tagged compressors swept "
                          "over the value stream's working set and event order (Figs. 7, 10)",
                          run, units=True, headline=headline)]  # fmt: skip
