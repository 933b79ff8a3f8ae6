"""Multi-hash profiler on real value profiles (Narayanasamy et al., Figs. 4-5, 10-13).

Tuples ``<load PC, loaded value>`` of real programs (``hwprof.traces.workloads``,
captured with our valgrind tool after their initialisation, or any ``--trace``
files), keyed by :func:`hwprof.traces.keys.trace_keys` (its default key, the mix-fold). For each
program: the distinct tuples and true candidates per interval (Figs. 4-5), then
for the paper's two configurations (10,000 / 1% / 100 entries and 1,000,000 /
0.1% / 1000 entries, 2048 counters, retaining on) the error of formula (1) for
1, 2, 4, 8 tables x C0/C1 x R0/R1 (Figs. 10-11; with one table C has no
effect), 16 tables C1-R0 (Fig. 12), each with 5 hash seeds, the per-interval
error of the best single hash and of 4 tables C1-R0 (Fig. 13), and the
baselines of :mod:`hwprof.experiments.baselines` at equal memory. An interval
with false positives only is averaged in (formula (1) sums over the candidates of
either profiler); one with no candidate in either is 0/0 and counted apart.
"""

from __future__ import annotations

import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

from ..golden.interval_error import Bulk, profile_stream
from ..golden.multihash import PRESETS, MultiHashConfig
from ..traces.keys import DEFAULT_VALUE_MAP, KEY_TEXT, SyntheticValueTrace, trace_keys
from . import Experiment, cell, file_identity
from .baselines import baselines_for, budget_bytes
from .moved import before_key_change, moved_lines

__all__ = ["EXPERIMENTS", "run", "configurations", "add_programs"]

PROGRAMS = ("xz", "bzip2", "perl", "python", "sort")
#: programs profiled beside :data:`PROGRAMS` but not looped over by the experiments that
#: borrow that list: sha256sum, whose load values are spread thin (few tuples repeat; the
#: favourable side of multihash-conditions' rules)
MORE_PROGRAMS = ("sha256sum",)
#: loads captured per program (after its skip, at the input scale of
#: ``workloads.LARGE_SCALE``): 100 intervals of 1M
LIMIT = 100_000_000
#: intervals of 10K used per program (the first ones); of 1M: all 100
INTERVALS_10K = 100
INTERVALS_1M = None
#: the order of the 1M runs (the slow part; a run cut short keeps the programs done)
ORDER_1M = ("bzip2", "perl", "python", "sort", "xz", "sha256sum")
#: threads for the profilers (the numba kernels release the GIL)
WORKERS = 4
SEEDS = 5
#: the --quick form (a smoke test of every path for the test suite): 10K only, 30 intervals
#: of the shipped xz trace, 2 seeds
QUICK_SEEDS = 2
QUICK_INTERVALS = 30
VARIANTS = {"C0R0": (False, False), "C0R1": (False, True), "C1R0": (True, False),
            "C1R1": (True, True)}  # fmt: skip
TABLES = (1, 2, 4, 8, 16)
PARTS = ("false_positive", "false_negative", "neutral_positive", "neutral_negative")
BASELINES = ("count-min", "frequent-items", "hotlist")
#: accumulator organisations compared at 4 tables C1-R0 (the RTL's choice, docs/multihash.md):
#: 0 = the paper's fully associative table, W = W-way set-associative (block RAM)
ORGANISATIONS = (0, 4, 10)


def organisation_label(ways: int) -> str:
    """Label of the 4-table C1-R0 profiler with the accumulator organisation ``ways``."""
    return "C1R0 4" if ways == 0 else f"C1R0 4 {ways}-way"


#: the paper's numbers, from its text (the figures' bars are not in the text): section
#: 6.4.1 (Fig. 12) for the best multi-hash / single hash errors, the 4-table improvement
#: on go and the average; section 6.3 for resetting's false negatives (Fig. 10) and C0-R1
#: on go (Fig. 11: "even with immediate resetting the error rate without conservative
#: update still remains around 100% or higher for go")
PAPER = {
    "best_multihash_1m": {"gcc": 5.0, "go": 1.5},
    "best_single_1m": {"gcc": 10.0, "go": 20.0},
    "improvement_4_tables_go_1m": 10.0,
    "average_multihash": "< 1 %",
    "r1_8_tables_extra_fn_go_10k": 4.0,
    "c0r1_1m_go": "~100 % or higher",
}


def configurations():
    """``(label, tables, conservative, reset)`` of the sweep (retaining always on)."""
    out = [("C1R0 1", 1, True, False), ("C1R1 1", 1, True, True)]
    for tables in (2, 4, 8):
        out += [(f"{v} {tables}", tables, c, r) for v, (c, r) in VARIANTS.items()]
    return out + [("C1R0 16", 16, True, False)]


def hash_seed(s: int) -> int:
    """Hash seed of seed index ``s`` (table ``i`` uses ``hash_seed + i``; no overlap)."""
    return 1 + 100 * s


def _sources(quick: bool, traces, seed: int, log):
    """``[(name, source)]``: --trace files, shipped traces (quick) or captured ones; a
    source is ``{"path": absolute path}`` or ``{"synthetic": [seed, n]}``
    (:func:`_open_source`)."""

    if traces:
        return [(Path(p).name, {"path": str(Path(p).absolute())}) for p in traces]
    try:
        from ..traces import workloads
    except ImportError:  # no workloads: the synthetic stand-in
        log("no hwprof.traces.workloads: synthetic value streams")
        n = 500_000 if quick else 20_000_000
        return [(f"synthetic-{i}", {"synthetic": [seed + i, n]}) for i in range(2)]
    if quick:
        return [("xz (shipped)", {"path": str(Path(workloads.shipped_trace("xz")).absolute())})]
    return _program_sources(PROGRAMS + MORE_PROGRAMS, seed, log)


def _program_sources(names, seed: int, log):
    """``[(name, {"path": ...})]`` of the captured traces of the programs ``names`` (a
    program's shipped trace where it cannot be captured)."""
    from ..traces import workloads
    from ..traces.tracefile import TraceError

    out = []
    for name in names:
        try:
            path = workloads.trace_for(name, kinds="loads", limit=LIMIT, seed=seed,
                                       scale=workloads.LARGE_SCALE[name])  # fmt: skip
        except TraceError as exc:
            log(f"{name}: {exc}; using the shipped trace")
            path = workloads.shipped_trace(name)
        out.append((name, {"path": str(Path(path).absolute())}))
    return out


def _open_source(source: dict):
    """The trace object of a :func:`_sources` entry."""
    from ..traces.tracefile import open_trace

    if "path" in source:
        return open_trace(source["path"])
    return SyntheticValueTrace(*source["synthetic"])


#: The key of the records written before the value map was recorded.
EARLIER_VALUE_MAP = "xor-fold"
#: The numbers the "moved" table compares across a key change: every error cell.
MOVED = (("presets", "*", "*", "errors", "*", "total"),)


def moved_metric(path: str) -> str:
    """The metric (with its unit) of a :data:`MOVED` number at ``path``: the total error
    of one preset."""
    return f"total error, preset {path.split('/')[1]} (%)"


def _key_collisions(trace, n: int = 1_000_000) -> dict:
    """Distinct full ``<pc, value>`` pairs vs distinct 64-bit keys in the first ``n`` loads."""
    pcs, values, got = [], [], 0
    for pc, value in trace.value_tuples():
        pcs.append(pc)
        values.append(value)
        got += len(pc)
        if got >= n:
            break
    pc, value = np.concatenate(pcs)[:n], np.concatenate(values)[:n]
    pairs = len(np.unique(np.stack([pc, value], axis=1), axis=0))
    keys = len(np.unique(np.concatenate(list(trace_keys(trace, limit=n)))))
    return {"tuples": int(len(pc)), "pairs": int(pairs), "keys": int(keys)}


def _summarise(errors) -> dict:
    totals = [100 * e.total for e in errors]
    return {"total": float(np.mean(totals)), "min": float(np.min(totals)),
            "max": float(np.max(totals)), "seeds": totals,
            **{p: float(np.mean([100 * getattr(e, p) for e in errors])) for p in PARTS},
            "intervals": errors[0].intervals, "no_candidate": errors[0].no_candidate,
            "no_candidate_reported": [e.no_candidate_reported for e in errors],
            "undefined": [e.undefined for e in errors]}  # fmt: skip


#: the labels whose per-interval errors (seed index 0) are kept for Fig. 13
FIG13 = ("C1R1 1", "C1R0 1", "C1R0 4")


def seed_profilers(preset: dict, s: int) -> tuple[list, list]:
    """``(profilers, labels)`` of seed index ``s``: every configuration of the sweep, the
    accumulator organisations and the baselines."""
    profilers, labels = [], []
    for label, tables, conservative, reset in configurations():
        profilers.append(Bulk(tables=tables, conservative=conservative, reset=reset,
                              retain=True, hash_seed=hash_seed(s), **preset))  # fmt: skip
        labels.append(label)
    for ways in ORGANISATIONS[1:]:
        profilers.append(Bulk(tables=4, conservative=True, reset=False, retain=True,
                              hash_seed=hash_seed(s), ways=ways, **preset))  # fmt: skip
        labels.append(organisation_label(ways))
    for name, profiler in baselines_for(MultiHashConfig(**preset), seed=s + 1).items():
        profilers.append(profiler)
        labels.append(name)
    return profilers, labels


def _error_fields(err, keep_intervals: bool) -> dict:
    out = {k: getattr(err, k) for k in (*PARTS, "total", "intervals", "no_candidate",
                                        "no_candidate_reported", "undefined")}  # fmt: skip
    if keep_intervals:
        out["per_interval"] = [None if np.isnan(x) else 100 * x for x in err.per_interval]
    return out


def program_seed(source: dict, preset: str, s: int, max_intervals, workers=None) -> dict:
    """The unit of work of a run (:mod:`hwprof.run`): one program (``source``: a trace
    ``path``, read where the unit runs, or ``synthetic: [seed, n]``), one preset, hash
    seed index ``s``: the stream's statistics and each profiler's error."""
    trace = _open_source(source)
    profilers, labels = seed_profilers(PRESETS[preset], s)
    result = profile_stream(trace_keys(trace), profilers,
                            PRESETS[preset]["interval_length"], PRESETS[preset]["threshold"],
                            max_intervals=max_intervals,
                            workers=workers)  # fmt: skip
    return {"intervals": result.intervals, "tuples": result.tuples,
            "profilers": len(profilers),
            "distinct": float(np.mean(result.distinct)) if result.distinct else 0.0,
            "candidates": float(np.mean(result.candidates)) if result.candidates else 0.0,
            "candidates_max": int(max(result.candidates, default=0)),
            "errors": {label: _error_fields(err, s == 0 and label in FIG13)
                       for label, err in zip(labels, result.errors, strict=True)}}  # fmt: skip


def combine_seeds(per_seed: list[dict]) -> dict:
    """The :func:`program_seed` results of one program and preset, in seed order, as one
    program record: the stream's statistics, each label's summary over the seeds and
    the per-interval errors of Fig. 13."""
    from types import SimpleNamespace

    first = per_seed[0]
    by_label = {label: [SimpleNamespace(**r["errors"][label]) for r in per_seed]
                for label in first["errors"]}  # fmt: skip
    return {**{k: first[k] for k in ("intervals", "tuples", "distinct", "candidates",
                                     "candidates_max")},
            "profilers": sum(r["profilers"] for r in per_seed),
            "errors": {label: _summarise(errs) for label, errs in by_label.items()},
            "per_interval": {label: first["errors"][label]["per_interval"]
                             for label in FIG13}}  # fmt: skip


def run_program(trace, preset: dict, seeds: int, max_intervals: int, workers=None) -> dict:
    """One program, one configuration of the paper: streams stats, every config, baselines
    (all seeds in one pass over the stream)."""
    profilers, labels = [], []
    for s in range(seeds):
        more, names = seed_profilers(preset, s)
        profilers += more
        labels += [(s, name) for name in names]
    result = profile_stream(trace_keys(trace), profilers, preset["interval_length"],
                            preset["threshold"], max_intervals=max_intervals,
                            workers=workers)  # fmt: skip
    per_seed = [{"intervals": result.intervals, "tuples": result.tuples,
                 "profilers": len(profilers) // seeds,
                 "distinct": float(np.mean(result.distinct)) if result.distinct else 0.0,
                 "candidates": float(np.mean(result.candidates)) if result.candidates else 0.0,
                 "candidates_max": int(max(result.candidates, default=0)), "errors": {}}
                for _ in range(seeds)]  # fmt: skip
    for (s, label), err in zip(labels, result.errors, strict=True):
        per_seed[s]["errors"][label] = _error_fields(err, s == 0 and label in FIG13)
    return combine_seeds(per_seed)


def organisation_errors(
    trace, preset: str, seeds: int = SEEDS, max_intervals=None, workers=WORKERS
) -> dict:
    """Only the accumulator organisations of :data:`ORGANISATIONS` (4 tables C1-R0).

    ``{label: summary}`` with the mean, min-max and parts over ``seeds`` hash seeds,
    for a longer stream than the full sweep affords (docs/multihash.md).
    """
    config = PRESETS[preset]
    profilers, labels = [], []
    for ways in ORGANISATIONS:
        for s in range(seeds):
            profilers.append(Bulk(tables=4, conservative=True, reset=False, retain=True,
                                  hash_seed=hash_seed(s), ways=ways, **config))  # fmt: skip
            labels.append(organisation_label(ways))
    result = profile_stream(trace_keys(trace), profilers, config["interval_length"],
                            config["threshold"], max_intervals=max_intervals,
                            workers=workers)  # fmt: skip
    by_label: dict = {}
    for label, err in zip(labels, result.errors, strict=True):
        by_label.setdefault(label, []).append(err)
    out = {label: _summarise(errs) for label, errs in by_label.items()}
    out["candidates"] = float(np.mean(result.candidates)) if result.candidates else 0.0
    out["candidates_max"] = int(max(result.candidates, default=0))
    return out


def best_multi(errors: dict, labels=None) -> str:
    """The lowest-error multi-hash configuration (2 or more tables) of a program.

    The paper's Fig. 12 comparison is best against best ("the lowest multi-hash
    errors"); chosen on the same runs it scores, so it is an optimistic pick.
    """
    labels = labels or [label for label, tables, _, _ in configurations() if tables > 1]
    return min(labels, key=lambda k: errors[k]["total"])


def best_single(errors: dict) -> str:
    """The best single hash of a program: the lower of 1-table R0 and R1 (retaining on)."""
    return min(("C1R0 1", "C1R1 1"), key=lambda k: errors[k]["total"])


#: how the page labels a program of :data:`MORE_PROGRAMS`: one chosen for a property, kept
#: out of every mean and every comparison with the paper
SELECTED = "chosen for its low concentration (multihash-conditions)"


def split_programs(names) -> tuple[list, list]:
    """``(standard, selected)``: the programs of ``names`` that are not in
    :data:`MORE_PROGRAMS` (the means and the paper comparisons are over these) and those that
    are (chosen for a property: shown apart). With no standard program at all (a run on
    other traces), every program counts as standard."""
    names = list(names)
    standard = [n for n in names if n not in MORE_PROGRAMS]
    if not standard:
        return names, []
    return standard, [n for n in names if n in MORE_PROGRAMS]


def _per_program(programs: dict, common: str) -> dict:
    """The per-program figures of :func:`_claims` (``common``: the one configuration for all
    programs, chosen on the standard programs)."""
    multi_labels = [label for label, tables, _, _ in configurations() if tables > 1]
    bsh = {p: r["errors"][best_single(r["errors"])]["total"] for p, r in programs.items()}
    c1r0_4 = {p: r["errors"]["C1R0 4"]["total"] for p, r in programs.items()}
    best = {p: best_multi(r["errors"], multi_labels) for p, r in programs.items()}
    return {
        "best_multi": best,
        "best_multi_error": {p: programs[p]["errors"][b]["total"] for p, b in best.items()},
        "best_gain": {p: bsh[p] - programs[p]["errors"][b]["total"] for p, b in best.items()},
        "common_best_error": {p: r["errors"][common]["total"] for p, r in programs.items()},
        "c1r0_4": c1r0_4, "bsh": bsh,
        "gain": {p: bsh[p] - c1r0_4[p] for p in programs},
        "best_tables": {p: min(TABLES, key=lambda t, r=r: r["errors"][f"C1R0 {t}"]["total"])
                        for p, r in programs.items()},
        "c1_beats_c0_at_4": {p: r["errors"]["C1R0 4"]["total"] <= r["errors"]["C0R0 4"]
                             ["total"] for p, r in programs.items()},
        "r1_fn_8": {p: (r["errors"]["C1R1 8"]["false_negative"],
                        r["errors"]["C1R0 8"]["false_negative"])
                    for p, r in programs.items()},
    }  # fmt: skip


def _claims(result: dict) -> dict:
    """Per preset, the paper's claims checked over the standard programs
    (:func:`split_programs`): their means, the one configuration for all of them, the
    verdicts; the selected programs' own figures under ``"selected"``."""
    out = {}
    for preset, every in result["presets"].items():
        standard, selected = split_programs(every)
        programs = {p: every[p] for p in standard}
        multi_labels = [label for label, tables, _, _ in configurations() if tables > 1]
        # one configuration for every program: the lowest mean over the programs
        common = min(
            multi_labels,
            key=lambda k: np.mean([r["errors"][k]["total"] for r in programs.values()]),
        )
        per = _per_program(programs, common)
        c1r0_4 = per["c1r0_4"]
        out[preset] = {
            "programs": standard,
            "common_best": common,
            **per,
            "c1r0_4_mean": float(np.mean(list(c1r0_4.values()))),
            "under_1pct": bool(np.mean(list(c1r0_4.values())) < 1.0),
            "c1r0_4_beats_bsh": all(c1r0_4[p] < per["bsh"][p] for p in programs),
        }  # fmt: skip
        if selected:
            out[preset]["selected"] = _per_program({p: every[p] for p in selected}, common)
    return out


def _fmt(cell) -> str:
    return f"{cell['total']:.2f} [{cell['min']:.2f}-{cell['max']:.2f}]"


def _timing_line(timing: dict) -> str:
    """The summary's one line that depends on when and where the run went."""
    cpu = ", ".join(f"{k} {v:.0f}" for k, v in timing.get("cpu_seconds", {}).items())
    added = "".join(f" {', '.join(a['programs'])} were profiled alone afterwards and merged "
                    f"in (`python -m hwprof.experiments.multihash_values --add "
                    f"{' '.join(a['programs'])}`, the same seeds): {a['seconds']:.0f} s wall."
                    for a in timing.get("added", []))  # fmt: skip
    return (
        f"This run: {timing['seconds']:.0f} s wall"
        + (
            f"; CPU seconds of the units per preset and program ({WORKERS} threads each, "
            f"reading the trace, exact counts and formula (1) included): {cpu}."
            if cpu
            else "."
        )
        + added
    )


def _shown(name: str, selected) -> str:
    """A program's name on the page: a selected one (:func:`split_programs`) marked so."""
    return f"{name} (selected)" if name in selected else name


def _selected_sentence(result: dict) -> list[str]:
    """The paragraph that names the standard programs and the selected ones (none: [])."""
    names = list(dict.fromkeys(n for v in result["presets"].values() for n in v))
    standard, selected = split_programs(names)
    if not selected:
        return []
    return [f"Standard programs: {', '.join(standard)}. {', '.join(selected)} (marked "
            f"*selected*) {'was' if len(selected) == 1 else 'were'} {SELECTED}, a test of "
            "its rules, not one more sample of programs (like brr-resonance's programs "
            f"written to have a property): shown in {'its' if len(selected) == 1 else 'their'} "
            "own columns and rows, in no mean, not in \"one configuration for all programs\" "
            "and not compared with the paper.", ""]  # fmt: skip


def _no_candidate_note(name: str, r: dict, preset: str) -> str:
    """A sentence on a program with no true candidate in any interval of ``preset`` (its
    errors there are false positives only, or 0/0); "" for any other (counts from ``r``)."""
    n = r["intervals"]
    if r["errors"]["C1R0 4"]["no_candidate"] != n:
        return ""
    empty = [label for label, e in r["errors"].items() if all(u == n for u in e["undefined"])]
    some = [label for label in r["errors"] if label not in empty]
    return (
        f"{name} has no true candidate in any of its {n} {preset} intervals: an error "
        "there is over the intervals where a profiler reported a tuple (false positives "
        f"only); {len(empty)} of the {len(r['errors'])} profilers reported none in any "
        "interval and seed (0/0 throughout: their 0.00 measures nothing)"
        + (f"; the others: {', '.join(some)}" if some else "")
        + "."
    )


def _no_candidate_short(r: dict) -> str:
    """ " (no true candidate in any of its N intervals: ...)" for a program without one in
    any interval of the preset of ``r``; "" for any other."""
    n = r["intervals"]
    if r["errors"]["C1R0 4"]["no_candidate"] != n:
        return ""
    return f" (no true candidate in any of its {n} intervals: 0/0 where nothing is reported)"


def _markdown(result: dict, stem: str) -> str:
    cmd = "hwprof experiment multihash-values" + (" --quick" if result["quick"] else "")
    partial = "" if result["complete"] else " **Partial: the run was still going.**"
    L = ["# Multi-hash profiler on value profiles (`<load pc, value>`)", "",
         f"Produced by `.venv/bin/{cmd}` (seed {result['seed']}).{partial}", "",
         _timing_line(_old_timing(result)), "",
         *([result["note"], ""] if result.get("note") else []),
         "Tuples: every load of the program after its initialisation "
         "(`hwprof.traces.workloads`, our valgrind tool; the first 100M loads, inputs enlarged "
         "where the default one gives fewer: `LARGE_SCALE`, docs/traces.md), key = "
         f"{KEY_TEXT[result.get('value_map', EARLIER_VALUE_MAP)]}. Error = formula (1) in %, "
         "averaged over the intervals where it is defined (a candidate in either profile: "
         "an interval with false positives only is averaged in); mean over "
         f"{result['seeds']} hash seeds [min-max over the seeds]. Baselines at the "
         "multi-hash configuration's memory "
         "(`hwprof/experiments/baselines.py`).", "",
         *_selected_sentence(result),
         "## The streams (paper Figs. 4-5)", "",
         "| program | loads used | distinct `<pc,value>` / 1M (full 128-bit pairs) | "
         "interval | intervals | distinct tuples per interval | true candidates per interval "
         "(max) | intervals without a true candidate |",
         "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for preset, programs in result["presets"].items():
        selected = split_programs(programs)[1]
        for name, r in programs.items():
            col = result["collisions"][name]
            first = r["errors"]["C1R0 4"]
            L.append(f"| {_shown(name, selected)} | {r['tuples']:,} | {col['keys']:,} "
                     f"({col['pairs']:,}) | "
                     f"{preset} | {r['intervals']} | {r['distinct']:,.0f} | "
                     f"{r['candidates']:.1f} ({r['candidates_max']}) | "
                     f"{first['no_candidate']} |")  # fmt: skip
    L += ["", f"![streams]({stem}-streams.png)", ""]
    for preset, programs in result["presets"].items():
        names, selected = split_programs(programs)
        over = "the standard programs" if selected else "programs"
        L += [f"## {preset}: error % per configuration (Figs. 10-12)", "",
              "| configuration | " + " | ".join(names) + f" | mean of {len(names)} | "
              + "".join(f"{_shown(n, selected)} |" for n in selected),
              "| --- |" + " ---: |" * (len(names) + 1 + len(selected))]  # fmt: skip
        labels = [c[0] for c in configurations()] + list(BASELINES)
        for label in labels:
            cells = [programs[n]["errors"][label] for n in names]
            L.append(f"| {label} | " + " | ".join(_fmt(c) for c in cells)
                     + f" | {np.mean([c['total'] for c in cells]):.2f} |"
                     + "".join(f" {_fmt(programs[n]['errors'][label])} |"
                               for n in selected))  # fmt: skip
        if selected:
            L += ["", f"The mean is over {', '.join(names)}; {', '.join(selected)} is not in "
                  f"it: {SELECTED}."]  # fmt: skip
        notes = [_no_candidate_note(n, programs[n], preset) for n in programs]
        L += [x for note in notes if note for x in ("", note)]
        L += ["", f"Parts of the error (mean over {over} and seeds, %: false positive / "
              "false negative / neutral positive / neutral negative):", ""]  # fmt: skip
        shown = ("C1R0 1", "C1R1 1", "C0R0 4", "C1R0 4", "C1R1 8", "C1R0 8", *BASELINES)
        for label in shown:
            parts = [np.mean([programs[n]["errors"][label][p] for n in names]) for p in PARTS]
            L.append(f"- {label}: " + " / ".join(f"{v:.2f}" for v in parts))
        for n in selected:
            L += ["", f"{_shown(n, selected)}, not in these means: " + "; ".join(
                f"{label} " + " / ".join(f"{programs[n]['errors'][label][p]:.2f}"
                                         for p in PARTS) for label in shown) + "."]  # fmt: skip
        names = names + selected
        reported = {n: programs[n]["errors"]["C1R0 1"]["no_candidate_reported"] for n in names}
        L += ["", "Intervals without a true candidate, per program: " + ", ".join(
            f"{n} {programs[n]['errors']['C1R0 4']['no_candidate']} of "
            f"{programs[n]['intervals']}" for n in names) + "; of those, the single hash (R0) "
            "still reported false positives (averaged in, all error false positive) in (per "
            "seed) " + ", ".join(f"{n} {v}" for n, v in reported.items()) + ". The "
            "`undefined` counts of the .json are the intervals with no candidate in either "
            "profile (0/0, not averaged in).", ""]  # fmt: skip
        L += [f"![{preset}]({stem}-{preset}.png)", ""]
        L += _organisation_table(preset, programs)
    L += (
        [
            "## Per-interval error, 1M / 0.1 % (Fig. 13)",
            "",
            f"![intervals]({stem}-intervals.png)",
            "",
        ]
        if "1m" in result["presets"]
        else []
    )
    paper = result["paper"]
    best, single = paper["best_multihash_1m"], paper["best_single_1m"]
    gains = "- and ".join(f"{single[p] - best[p]:g}" for p in best)
    ratios = " and ".join(f"{single[p] / best[p]:.0f}x" for p in best)
    L += ["## The paper's claims, checked", "",
          "Section 6.4.1 (Fig. 12) makes these claims about the multi-hash profiler with "
          "conservative update and without resetting against the best single hash (BSH: "
          "resetting and retaining, Fig. 13's caption): \"the multi-hash profiler with 4 "
          "hash-tables consistently outperforms all other configurations including best "
          "single hash approach\"; on go at 1M \"the multi-hash with 4 hash-tables shows an "
          f"improvement in error rate of about {paper['improvement_4_tables_go_1m']:g}% "
          "(absolute) over best single hash approach\"; the lowest errors are "
          f"{_paper_pairs(paper)} for the single hash (a {gains}-point gain, {ratios}); "
          "\"the average error we see for the multi-hash architecture is under 1%\". The "
          "paper makes no order-of-magnitude claim. Ours per program, 4 tables C1-R0 "
          "against our best single hash (the lower of 1-table R0 and R1, retaining on); "
          "mean over the seeds, [min-max]; the gain is in percentage points (absolute), the "
          f"ratio only for comparison with the paper's {ratios} (\"-\" where the "
          "multi-hash error is below 0.01 %). The input properties under which 4 tables "
          "C1-R0 is the best configuration, swept with a controlled generator beside these "
          "programs' own: [multihash-conditions](multihash-conditions.md).", "",
          "| preset | program | 4 tables C1-R0 % | best single hash % | C1-R0 4 under 1 % | "
          "C1-R0 4 below BSH | gain (points) | single / multi |",
          "| --- | --- | ---: | ---: | --- | --- | ---: | ---: |"]  # fmt: skip
    for preset, programs in result["presets"].items():
        standard, selected = split_programs(programs)
        for name in standard + selected:
            r = programs[name]
            multi, bsh = r["errors"]["C1R0 4"], r["errors"][best_single(r["errors"])]
            ratio = _ratio(bsh["total"], multi["total"])
            L.append(
                f"| {preset} | {_shown(name, selected)} | {_fmt(multi)} | {_fmt(bsh)} "
                f"({best_single(r['errors'])}) | "
                f"{'yes' if multi['total'] < 1.0 else '**no**'} | "
                f"{'yes' if multi['total'] < bsh['total'] else '**no**'} | "
                f"{bsh['total'] - multi['total']:+.2f} | {ratio} |"
            )
    L += [""]
    for preset, c in result["claims"].items():
        over = "the standard programs" if c.get("selected") else "programs"
        L += [f"**{preset}.** 4 tables C1-R0: mean {c['c1r0_4_mean']:.3f} % over {over} "
              f"(per program {', '.join(f'{p} {v:.3f}' for p, v in c['c1r0_4'].items())}); "
              f"under 1 % (the paper's average): **{'yes' if c['under_1pct'] else 'no'}**. "
              f"Best single hash: {', '.join(f'{p} {v:.2f}' for p, v in c['bsh'].items())} "
              f"%. Gain of 4 tables C1-R0 over it, points (the paper: about "
              f"{result['paper']['improvement_4_tables_go_1m']:g} on go at 1M): "
              f"{', '.join(f'{p} {v:+.2f}' for p, v in c['gain'].items())}; below the best "
              f"single hash on every program: **{'yes' if c['c1r0_4_beats_bsh'] else 'no'}**. "
              f"Best C1-R0 table count per program (the paper: 4 \"consistently\"): "
              f"{', '.join(f'{p} {t}' for p, t in c['best_tables'].items())}.", ""]  # fmt: skip
        for name in c.get("selected", {}).get("c1r0_4", {}):
            m = c["selected"]
            note = _no_candidate_note(name, result["presets"][preset][name], preset)
            L += [f"**{preset}, {name} (selected)**, in no mean or verdict above, {SELECTED}: "
                  f"4 tables C1-R0 {m['c1r0_4'][name]:.3f} %, best single hash "
                  f"{m['bsh'][name]:.2f} %, gain {m['gain'][name]:+.2f} points; best C1-R0 "
                  f"table count {m['best_tables'][name]}." + (f" {note}" if note else ""),
                  ""]  # fmt: skip
    L += _best_against_best(result)
    L += ["## The paper's numbers beside ours", "", result["comparison"], ""]
    L += _moved(result)
    return "\n".join(L)


def _moved(result: dict) -> list[str]:
    """:func:`moved_lines` over the programs the record before the key change had (a
    program added since would move every mean of the headline)."""
    base = result.get("before_key_change")
    if not base:
        return []
    had = {p.split("/")[2] for p in base["numbers"]}
    added = [n for n in dict.fromkeys(n for v in result["presets"].values() for n in v)
             if n not in had]  # fmt: skip
    if not added:
        return moved_lines(result, headline, MOVED, metric=moved_metric)
    same = {**result, "presets": {preset: {n: r for n, r in programs.items() if n in had}
                                  for preset, programs in result["presets"].items()}}  # fmt: skip
    same["claims"] = _claims(same)
    lines = moved_lines(same, headline, MOVED, metric=moved_metric)
    return [
        lines[0],
        "",
        f"Over the programs both records have ({', '.join(sorted(had))}); "
        f"{', '.join(added)} came later.",
        *lines[1:],
    ]


def _paper_pairs(paper: dict) -> str:
    """The paper's lowest errors (Fig. 12): "gcc 5 % and go 1.5 % against 10 % and 20 %"."""
    best, single = paper["best_multihash_1m"], paper["best_single_1m"]
    return (" and ".join(f"{p} {v:g} %" for p, v in best.items()) + " against "
            + " and ".join(f"{single[p]:g} %" for p in best))  # fmt: skip


def _ratio(single: float, multi: float) -> str:
    """``single / multi`` for the tables; "-" where the multi-hash error is below 0.01 %."""
    return f"{single / multi:,.1f}x" if multi >= 0.01 else "-"


def _best_against_best(result: dict) -> list:
    """The claims as the paper's Fig. 12 states them: lowest multi-hash vs lowest single."""
    L = [
        "### Best against best (the paper's Fig. 12 comparison)",
        "",
        "Section 6.4.1 compares its lowest multi-hash error with its lowest single-hash "
        "error: "
        + ", ".join(
            f"{p} {v:g} % vs {result['paper']['best_single_1m'][p]:g} %"
            for p, v in result["paper"]["best_multihash_1m"].items()
        )
        + ' ("a significant improvement"). '
        "Per program the best multi-hash configuration (2-16 tables, C0/C1 x R0/R1, by mean "
        "over the seeds) is picked on the same runs it is scored on, an optimistic choice "
        "(the paper's is too); the last line names the one configuration with the lowest "
        "mean over all (standard) programs, a pick that does not look at each program.",
        "",
        "| preset | program | best multi-hash % (configuration) | best single hash % | "
        "under 1 % | gain (points) | single / multi |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: |",
    ]
    for preset, every in result["presets"].items():
        c = result["claims"][preset]
        if "best_multi" not in c:  # results written before this comparison
            return []
        standard, selected = split_programs(every)
        programs = {n: every[n] for n in standard + selected}
        more = c.get("selected", {})
        for name, r in programs.items():
            pick = c["best_multi"].get(name) or more["best_multi"][name]
            best, bsh = r["errors"][pick], r["errors"][best_single(r["errors"])]
            ratio = _ratio(bsh["total"], best["total"])
            L.append(
                f"| {preset} | {_shown(name, more.get('c1r0_4', {}))} | {_fmt(best)} "
                f"({pick}) | "
                f"{_fmt(bsh)} | {'yes' if best['total'] < 1.0 else '**no**'} | "
                f"{bsh['total'] - best['total']:+.2f} | {ratio} |"
            )
    L.append("")
    for preset, c in result["claims"].items():
        errs = c["common_best_error"]
        gains = ", ".join(f"{p} {c['bsh'][p] - v:+.2f}" for p, v in errs.items())
        more = c.get("selected", {})
        apart = more.get("common_best_error", {})
        L += [f"**{preset}, one configuration for all programs: {c['common_best']}** "
              f"(mean {np.mean(list(errs.values())):.3f} %"
              + (" over the standard programs" if apart else "") + "): "
              f"{', '.join(f'{p} {v:.2f} %' for p, v in errs.items())}; gain over the best "
              f"single hash, points: {gains}; every program under 1 %: "
              f"**{'yes' if max(errs.values()) < 1.0 else 'no'}**."
              + ("".join(f" {p} (selected, not in the pick): {v:.2f} %, gain "
                         f"{more['bsh'][p] - v:+.2f}"
                         f"{_no_candidate_short(result['presets'][preset][p])}."
                         for p, v in apart.items())),
              ""]  # fmt: skip
    return L


def _organisation_table(preset: str, programs: dict) -> list:
    """Error of 4 tables C1-R0 with each accumulator organisation, side by side."""
    names, selected = split_programs(programs)
    entries = PRESETS[preset]["accumulator"]
    L = [f"### {preset}: accumulator organisation (4 tables C1-R0, {entries} entries)", "",
         "The paper's accumulator is fully associative; the RTL's (`ways`) is set-associative "
         "in block RAM, the set chosen by the counter hashes (docs/multihash.md). A tuple "
         "whose set is full is not put into the accumulator even if other sets have room. "
         "Same hash seeds, same streams:", "",
         "| accumulator | " + " | ".join(names) + f" | mean of {len(names)} | parts FP / FN "
         "/ NP / NN |" + "".join(f" {_shown(n, selected)} |" for n in selected),
         "| --- |" + " ---: |" * (len(names) + 2 + len(selected))]  # fmt: skip
    for ways in ORGANISATIONS:
        label = organisation_label(ways)
        if any(label not in programs[n]["errors"] for n in names + selected):
            continue  # a result written before the organisations were compared
        cells = [programs[n]["errors"][label] for n in names]
        parts = [np.mean([c[p] for c in cells]) for p in PARTS]
        what = (
            "fully associative (paper)" if ways == 0 else (f"{ways}-way x {entries // ways} sets")
        )
        L.append(f"| {what} | " + " | ".join(_fmt(c) for c in cells)
                 + f" | {np.mean([c['total'] for c in cells]):.3f} | "
                 + " / ".join(f"{v:.3f}" for v in parts) + " |"
                 + "".join(f" {_fmt(programs[n]['errors'][label])} |"
                           for n in selected))  # fmt: skip
    if selected:
        L += ["", f"The mean and parts are over {', '.join(names)}; not in them: "
              + ", ".join(f"{n}{_no_candidate_short(programs[n])}" for n in selected)
              + f", {SELECTED}."]  # fmt: skip
    return L + [""]


def _comparison(result: dict) -> str:
    c = result["claims"]
    lines = []
    over = ("the standard programs" if any(m.get("selected") for m in c.values())
            else "programs")  # fmt: skip
    if "1m" in c:
        m = c["1m"]
        best, single = result["paper"]["best_multihash_1m"], result["paper"]["best_single_1m"]
        lines.append("- Paper, section 6.4.1 (Fig. 12, 1M / 0.1 %): the lowest multi-hash "
                     "errors are " + " and ".join(f"{p} {v:g} %" for p, v in best.items())
                     + ", best single hash " + " and ".join(f"{v:g} %" for v in single.values())
                     + ". Ours, 4 tables C1-R0: "
                     f"{', '.join(f'{p} {v:.2f} %' for p, v in m['c1r0_4'].items())}; best "
                     f"single hash {', '.join(f'{p} {v:.2f} %' for p, v in m['bsh'].items())}. "
                     "The paper's programs are SPEC95/2000 gcc and go run for 500M instructions "
                     "on an Alpha; ours are small text-processing runs of x86-64 binaries. "
                     "How hard a stream is depends on its distinct tuples and candidates per "
                     "interval (the streams table above; the paper gives those only as bar "
                     "charts, Figs. 4-5, whose values are not in its text), so the absolute "
                     "errors are not comparable program by program; the ranking and the "
                     "single-vs-multi gap are.")  # fmt: skip
    for preset, m in c.items():
        lines.append(f"- Paper, section 6.4.1: average multi-hash error under 1 %. Ours "
                     f"({preset}, 4 tables C1-R0, mean over {over}): "
                     f"{m['c1r0_4_mean']:.3f} %.")  # fmt: skip
        fn = {p: v[0] - v[1] for p, v in m["r1_fn_8"].items()}
        lines.append(f"- Paper, section 6.3 (Fig. 10, 10K / 1 %): with resetting, 8 tables "
                     f"add about {result['paper']['r1_8_tables_extra_fn_go_10k']:g} % of false "
                     f"negatives on go. Ours ({preset}, C1R1 8 minus C1R0 8 false negatives): "
                     f"{', '.join(f'{p} {v:+.2f} %' for p, v in fn.items())}. Resetting "
                     "drops the counts a shared counter had gathered for other tuples; how "
                     "much depends on how many candidates share counters.")  # fmt: skip
    if "1m" in c:
        programs = {n: result["presets"]["1m"][n] for n in c["1m"]["c1r0_4"]}
        c0r1 = {p: "/".join(f"{r['errors'][f'C0R1 {t}']['total']:.2f}" for t in (2, 4, 8))
                for p, r in programs.items()}  # fmt: skip
        c0r0 = {p: r["errors"]["C0R0 4"]["total"] for p, r in programs.items()}
        lines.append(
            '- Paper, section 6.3 (Fig. 11, 1M / 0.1 %): "even with immediate '
            "resetting the error rate without conservative update still remains "
            'around 100% or higher for go", i.e. C0-R1. Ours, C0-R1 with 2/4/8 '
            f"tables: {', '.join(f'{p} {v} %' for p, v in c0r1.items())} (C0-R0, 4 "
            f"tables: {', '.join(f'{p} {v:.2f} %' for p, v in c0r0.items())}). "
            "Without C1 every counter of a tuple grows with all tuples aliased to "
            "it; resetting clears a promoted tuple's counters but not the others' "
            "aliased counts. How far that floods the tables depends on the distinct "
            "tuples per interval and how evenly their counts spread (the streams "
            "table above); our programs' streams stay far from go's ~100 %."
        )
    for preset, every in result["presets"].items():
        programs = {n: every[n] for n in c[preset]["c1r0_4"]}
        cells = {b: np.mean([r["errors"][b]["total"] for r in programs.values()])
                 for b in (*BASELINES, "C1R0 4")}  # fmt: skip
        parts = {b: [np.mean([r["errors"][b][p] for r in programs.values()]) for p in PARTS]
                 for b in BASELINES}  # fmt: skip
        lines.append(
            f"- The paper compares no software sketch. Ours at equal memory ({preset}, "
            f"mean over {over}): "
            + ", ".join(f"{b} {v:.2f} %" for b, v in cells.items())
            + ". Their error parts (FP / FN / NP / NN): "
            + "; ".join(f"{b} " + " / ".join(f"{x:.2f}" for x in v) for b, v in parts.items())
            + ": "
            + _baseline_parts_sentence(parts)
            + "."
        )
    apart = list(
        dict.fromkeys(n for m in c.values() for n in m.get("selected", {}).get("c1r0_4", {}))
    )
    if apart:
        standard = next(iter(c.values()))["programs"]
        lines.append(
            f"- Every number of ours above is over {', '.join(standard)}. "
            f"{', '.join(apart)} is compared with nothing here: {SELECTED}; its "
            "numbers are in the tables above, marked selected."
        )
    return "\n".join(lines)


def _baseline_parts_sentence(parts: dict) -> str:
    """Which baselines only overestimate and which also miss, from their error parts."""
    over = [b for b in BASELINES if b != "hotlist" and parts[b][1] + parts[b][3] < 0.01]
    missing = [b for b in BASELINES if b != "hotlist" and b not in over]
    said = []
    if over:
        said.append(f"{' and '.join(over)} only overestimate (false and neutral positives)")
    if missing:
        said.append(
            f"{' and '.join(missing)} also miss true candidates (false negatives): "
            "their overestimates crowd them out of a report that keeps at most as "
            "many tuples as the hardware's accumulator"
        )
    said.append("the hotlist's sampling also misses and undercounts")
    return "; ".join(said)


def _paper_lines(ax, preset: str) -> None:
    """The paper's numbers (section 6.4.1's text) as red lines on an error plot."""
    ax.axhline(1.0, color="red", lw=0.8, label="paper: multi-hash average < 1 %")
    if preset == "1m":  # Fig. 12's lowest errors, from the text: gcc and go
        for program in ("gcc", "go"):
            ax.axhline(
                PAPER["best_multihash_1m"][program],
                color="red",
                lw=0.6,
                linestyle="--",
                label=f"paper: best multi-hash {program}",
            )
            ax.axhline(
                PAPER["best_single_1m"][program],
                color="red",
                lw=0.6,
                linestyle=":",
                label=f"paper: best single hash {program}",
            )


def _plots(result: dict, output_dir: Path, stem: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    presets = result["presets"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for preset, programs in presets.items():
        names = list(programs)
        axes[0].bar([f"{n}\n{preset}" for n in names], [programs[n]["distinct"] for n in names])
        axes[1].bar([f"{n}\n{preset}" for n in names],
                    [programs[n]["candidates"] for n in names])  # fmt: skip
    axes[0].set(yscale="log", ylabel="distinct tuples per interval (Fig. 4)")
    axes[1].set(ylabel="true candidates per interval (Fig. 5)")
    for ax in axes:
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    fig.savefig(output_dir / f"{stem}-streams.png", dpi=110)
    plt.close(fig)
    for preset, programs in presets.items():
        names = list(programs)
        fig, axes = plt.subplots(1, len(names), figsize=(3.6 * len(names), 3.6), squeeze=False)
        for ax, name in zip(axes[0], names, strict=True):
            errs = programs[name]["errors"]
            for v in VARIANTS:
                ts = [t for t in TABLES if f"{v} {t}" in errs or (t == 1 and f"C1{v[2:]} 1"
                                                                  in errs)]  # fmt: skip
                cells = [errs.get(f"{v} {t}") or errs[f"C1{v[2:]} 1"] for t in ts]
                mean = [c["total"] for c in cells]
                lo = [c["total"] - c["min"] for c in cells]
                hi = [c["max"] - c["total"] for c in cells]
                ax.errorbar(ts, mean, yerr=[lo, hi], marker="o", capsize=3, label=v)
            for b, style in zip(BASELINES, (":", "-.", "--"), strict=True):
                ax.axhline(errs[b]["total"], color="gray", linestyle=style, label=b)
            _paper_lines(ax, preset)
            ax.set(
                xscale="log",
                xticks=TABLES,
                xticklabels=TABLES,
                xlabel="hash tables",
                ylabel="error % (5 seeds: mean, min-max)",
                title=f"{name} {preset}",
            )
            ax.set_yscale("symlog", linthresh=0.1)
            ax.set_ylim(bottom=0)
            ax.minorticks_off()
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(output_dir / f"{stem}-{preset}.png", dpi=110)
        plt.close(fig)
    if "1m" in presets:
        names = list(presets["1m"])
        fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
        for ax, label, title in ((axes[0], "C1R1 1", "single hash, resetting (BSH)"),
                                 (axes[1], "C1R0 4", "4 tables, C1-R0")):  # fmt: skip
            for name in names:
                per = presets["1m"][name]["per_interval"][label]
                ys = [np.nan if y is None else y for y in per]
                ax.plot(range(len(ys)), ys, label=name, lw=0.8)
            ax.set(xlabel="interval (1M loads)", ylabel="error % (seed 1)", title=title)
            ax.set_yscale("symlog", linthresh=0.1)
            ax.set_ylim(bottom=0)
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(output_dir / f"{stem}-intervals.png", dpi=110)
        plt.close(fig)


def _write(result: dict, output_dir: Path, stem: str, timing: dict) -> None:
    result["claims"] = _claims(result)
    result["comparison"] = _comparison(result)
    result["timing"] = timing
    output_dir.mkdir(parents=True, exist_ok=True)
    (output_dir / f"{stem}.json").write_text(json.dumps(result, indent=1))
    (output_dir / f"{stem}.md").write_text(_markdown(result, stem))
    _plots(result, output_dir, stem)


def _old_timing(result: dict) -> dict:
    """The ``timing`` field of a result, also of one written before it existed."""
    if "timing" in result:
        return result["timing"]
    cpu = {f"{p} {n}": r["cpu_seconds"] for p, programs in result["presets"].items()
           for n, r in programs.items() if "cpu_seconds" in r}  # fmt: skip
    return {
        "date": result.get("date", "?"),
        "seconds": result.get("seconds", 0.0),
        "cpu_seconds": cpu,
    }


def rerender(output_dir: Path, stem: str = "multihash-values") -> None:
    """Write the .md and plots again from a run's .json (after a change of wording/plots)."""
    output_dir = Path(output_dir)
    result = json.loads((output_dir / f"{stem}.json").read_text())
    _write(result, output_dir, stem, _old_timing(result))


def _collisions(source: dict, n: int) -> dict:
    """A unit: :func:`_key_collisions` of one source."""
    return _key_collisions(_open_source(source), n)


def run(output_dir: Path, seed: int, quick: bool, traces=(), run_options=None) -> dict:
    """Run the experiment, one unit per preset x program x hash seed (:mod:`hwprof.run`;
    ``run_options``: where they run); write .md/.json/.png into ``output_dir``; return
    the headline."""
    from ..run import Journal, RunOptions, journal_path, run_units
    from ..traces.tracefile import TraceError

    start = time.perf_counter()

    def log(text):
        print(f"multihash-values: {text}", file=sys.stderr, flush=True)

    sources = _sources(quick, traces, seed, log)
    seeds = QUICK_SEEDS if quick else SEEDS
    plan = []  # (preset, program index, max intervals), the long 1M run of the first last
    if quick:
        plan = [("10k", i, QUICK_INTERVALS) for i in range(len(sources))]
    else:
        names = [name for name, _ in sources]
        order = [names.index(n) for n in ORDER_1M if n in names]
        order += [i for i in range(len(sources)) if i not in order]
        plan = ([("10k", i, INTERVALS_10K) for i in range(len(sources))]
                + [("1m", i, INTERVALS_1M) for i in order])  # fmt: skip
    result = {"seed": seed, "quick": quick, "seeds": seeds, "presets": {}, "collisions": {},
              "budget": {k: budget_bytes(MultiHashConfig(**PRESETS[k]))
                         for k in dict.fromkeys(p for p, _, _ in plan)},
              "paper": PAPER, "complete": False, "value_map": DEFAULT_VALUE_MAP,
              "traces": {name: file_identity(source["path"])
                         for name, source in sources if "path" in source}}  # fmt: skip
    output_dir = Path(output_dir)
    stem = "multihash-values-quick" if quick else "multihash-values"
    result["before_key_change"] = before_key_change(
        output_dir / f"{stem}.json", DEFAULT_VALUE_MAP, EARLIER_VALUE_MAP, headline, MOVED
    )
    units = _units(sources, plan, seeds, quick)
    identity = {"experiment": "multihash-values", "seed": seed, "quick": quick,
                "sources": [source for _, source in sources]}  # fmt: skip
    got: dict = {}
    cpu: dict = {}

    def on_done(outcome):
        """Write the results again whenever a program's seeds are all in (the full run
        keeps what it has so far)."""
        if not outcome.ok:
            return
        got[outcome.key] = outcome.value
        preset, index = (
            outcome.key.rsplit("-seed", 1)[0].rsplit("-", 1)
            if "-seed" in outcome.key
            else (None, None)
        )
        if preset is None:
            return
        label = f"{preset} {sources[int(index)][0]}"
        cpu[label] = cpu.get(label, 0.0) + outcome.timing.get("cpu_seconds", 0.0)
        keys = [f"{preset}-{index}-seed{s}" for s in range(seeds)]
        if (
            quick
            or any(k not in got for k in keys)
            or any(f"collisions-{i}" not in got for i in range(len(sources)))
        ):
            return
        _fill(result, got, sources, plan, seeds)
        if result["presets"]:
            _write(result, output_dir, stem, _timing(start, cpu))

    outcomes = run_units(
        units,
        run_options or RunOptions(jobs=1),
        name=stem,
        on_done=on_done,
        journal=Journal(journal_path(f"experiment-{stem}"), identity),
    )
    failed = [o for o in outcomes.values() if not o.ok]
    if failed:  # a trace that a worker cannot read
        where = failed[0].timing.get("worker", "in-process")
        raise TraceError(failed[0].error + ("" if where == "in-process" else f" (on {where})"))
    _fill(result, got, sources, plan, seeds)
    for preset, index, _ in plan:
        r = result["presets"][preset][sources[index][0]]
        log(f"{preset} {sources[index][0]}: {r['intervals']} intervals, {r['tuples']:,} "
            f"tuples, {r['profilers']} profilers")  # fmt: skip
    _write(result, output_dir, stem, _timing(start, cpu))
    return {p: {k: c[k] for k in ("c1r0_4_mean", "under_1pct", "gain", "c1r0_4_beats_bsh")}
            for p, c in result["claims"].items()}  # fmt: skip


def _units(sources, plan, seeds: int, quick: bool) -> list:
    """The units of a run: the key collisions of each source, then one unit per preset x
    program x hash seed of ``plan``; traces travel by path (absolute) and are read where
    each unit runs."""
    from ..run import Unit

    units = [Unit(f"collisions-{i}", _collisions,
                  {"source": source, "n": 100_000 if quick else 1_000_000})
             for i, (_, source) in enumerate(sources)]  # fmt: skip
    return units + [Unit(f"{preset}-{index}-seed{s}", program_seed,
                         {"source": sources[index][1], "preset": preset, "s": s,
                          "max_intervals": max_intervals, "workers": WORKERS})
                    for preset, index, max_intervals in plan for s in range(seeds)]  # fmt: skip


def add_programs(output_dir: Path, names, run_options=None) -> dict:
    """Profile the programs ``names`` alone and merge them into the full run's record.

    The record ``output_dir/multihash-values.json`` keeps every other program's results as
    they are; the named programs' units (both presets, the record's seed and hash seeds)
    run as in :func:`run`, their results, key collisions, traces (by SHA-256) and CPU
    seconds go into the record, the run's wall time into ``timing["added"]``, and the page
    and plots are written again. Raises ValueError (one line) on a missing or quick
    record or an unknown program.
    """
    from ..run import Journal, RunOptions, journal_path, run_units
    from ..traces.tracefile import TraceError

    start = time.perf_counter()
    output_dir = Path(output_dir)
    path = output_dir / "multihash-values.json"
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: no full multihash-values record to add to ({exc})") from None
    if record.get("quick") or not record.get("complete"):
        raise ValueError(f"{path}: a quick or partial record; add programs to a full run")
    names = list(dict.fromkeys(names))
    unknown = [n for n in names if n not in PROGRAMS + MORE_PROGRAMS]
    if not names or unknown:
        raise ValueError(f"unknown program {unknown[0] if unknown else ''!r} (known: "
                         f"{', '.join(PROGRAMS + MORE_PROGRAMS)})")  # fmt: skip

    def log(text):
        print(f"multihash-values: {text}", file=sys.stderr, flush=True)

    seed, seeds = record["seed"], record["seeds"]
    sources = _program_sources(names, seed, log)
    plan = ([("10k", i, INTERVALS_10K) for i in range(len(sources))]
            + [("1m", i, INTERVALS_1M) for i in range(len(sources))])  # fmt: skip
    identity = {"experiment": "multihash-values", "seed": seed, "quick": False,
                "added": [source for _, source in sources]}  # fmt: skip
    outcomes = run_units(_units(sources, plan, seeds, False), run_options or RunOptions(jobs=1),
                         name="multihash-values", on_done=None,
                         journal=Journal(journal_path("experiment-multihash-values-add"),
                                         identity))  # fmt: skip
    failed = [o for o in outcomes.values() if not o.ok]
    if failed:
        raise TraceError(failed[0].error)
    got = {k: o.value for k, o in outcomes.items()}
    added: dict = {"presets": {}, "collisions": {}}
    _fill(added, got, sources, plan, seeds)
    for preset, programs in added["presets"].items():
        record["presets"].setdefault(preset, {}).update(programs)
    record["collisions"].update(added["collisions"])
    record.setdefault("traces", {}).update(
        {name: file_identity(source["path"]) for name, source in sources}
    )
    timing = _old_timing(record)
    for key, outcome in outcomes.items():
        if "-seed" in key:
            preset, index = key.rsplit("-seed", 1)[0].rsplit("-", 1)
            label = f"{preset} {sources[int(index)][0]}"
            timing["cpu_seconds"][label] = round(
                timing["cpu_seconds"].get(label, 0.0) + outcome.timing.get("cpu_seconds", 0.0), 1
            )
    timing.setdefault("added", []).append(
        {
            "programs": names,
            "seconds": time.perf_counter() - start,
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        }
    )
    _write(record, output_dir, "multihash-values", timing)
    return record


def main(argv=None) -> int:
    """``python -m hwprof.experiments.multihash_values --add NAME [..]``: profile programs
    alone and merge them into docs/results/multihash-values.json (:func:`add_programs`)."""
    import argparse

    from ..run import RunError, RunOptions
    from ..traces.tracefile import TraceError

    parser = argparse.ArgumentParser(prog="python -m hwprof.experiments.multihash_values")
    parser.add_argument(
        "--add",
        nargs="+",
        required=True,
        metavar="NAME",
        help=f"programs to profile ({', '.join(PROGRAMS + MORE_PROGRAMS)})",
    )
    parser.add_argument("-o", "--output", default="docs/results", help="results directory")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (1: in-process)")
    parser.add_argument("--resume", action="store_true",
                        help="skip the units an interrupted run finished")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        options = RunOptions(jobs=args.jobs, resume=args.resume)
        add_programs(Path(args.output), args.add, options)
    except (ValueError, TraceError, RunError) as exc:
        print(f"multihash-values: {exc}", file=sys.stderr)
        return 2
    return 0


def _fill(result: dict, got: dict, sources, plan, seeds: int) -> None:
    """Put the programs whose units are all in ``got`` into ``result``, in plan order."""
    result["presets"] = {}
    for i, (name, _) in enumerate(sources):
        if f"collisions-{i}" in got:
            result["collisions"][name] = got[f"collisions-{i}"]
    done = 0
    for preset, index, _ in plan:
        keys = [f"{preset}-{index}-seed{s}" for s in range(seeds)]
        if all(k in got for k in keys):
            result["presets"].setdefault(preset, {})[sources[index][0]] = combine_seeds(
                [got[k] for k in keys]
            )
            done += 1
    result["complete"] = done == len(plan)


def _timing(start: float, cpu: dict) -> dict:
    return {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "seconds": time.perf_counter() - start,
            "cpu_seconds": {k: round(v, 1) for k, v in cpu.items()}}  # fmt: skip


def headline(r: dict) -> list[tuple[str, str, str]]:
    """Sec. 6.4.1's claims beside ours: average error, 4 tables against the best single hash."""
    paper, rows = r["paper"], []
    for c, claims in r.get("claims", {}).items():
        rows += [(f"mean error %, 4 tables C1-R0 ({c})", paper["average_multihash"],
                  cell(claims.get("c1r0_4_mean"), ".3f")),
                 (f"4 tables C1-R0 below the best single hash ({c})", "yes",
                  cell(claims.get("c1r0_4_beats_bsh")))]  # fmt: skip
        if c == "1m" and "best_multi_error" in claims:
            best_multi, best_single = claims["best_multi_error"], claims["bsh"]
            rows.append(("lowest multi-hash vs best single hash error %, per program (1m)",
                         "; ".join(f"{p} {paper['best_multihash_1m'][p]} vs "
                                   f"{paper['best_single_1m'][p]}"
                                   for p in paper["best_multihash_1m"]),
                         "; ".join(f"{p} {best_multi[p]:.2f} vs {best_single[p]:.2f}"
                                   for p in best_multi)))  # fmt: skip
    return rows


def docs_table(record: dict) -> list[str]:
    """Per preset: 4 tables C1-R0 (the RTL's default) against the paper's claims, and
    the one configuration with the lowest mean over the programs."""
    lines = ["| preset | programs | 4 tables C1-R0, mean % | its highest program % "
             "| under 1 % (paper: average) | below the best single hash on every program "
             "| one configuration for all programs (lowest mean), mean % |",
             "| --- | --- | ---: | ---: | --- | --- | --- |"]  # fmt: skip
    for preset, c in record["claims"].items():
        programs = c["programs"]
        worst = max(programs, key=lambda p: c["c1r0_4"][p])
        common = sum(c["common_best_error"][p] for p in programs) / len(programs)
        lines.append(f"| {preset} | {', '.join(programs)} | {c['c1r0_4_mean']:.3f} "
                     f"| {worst} {c['c1r0_4'][worst]:.2f} "
                     f"| {'yes' if c['under_1pct'] else 'no'} "
                     f"| {'yes' if c['c1r0_4_beats_bsh'] else 'no'} "
                     f"| {c['common_best']}, {common:.3f} |")  # fmt: skip
    return lines


EXPERIMENTS = [Experiment("multihash-values",
                          "multi-hash profiler vs single hash and sketches on <load pc, value> "
                          "streams of real programs (Figs 4-5, 10-13)",
                          run, takes_traces=True, units=True, headline=headline,
                          docs_table=docs_table)]  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
