"""Burrows et al. on real load streams: one hotlist per load site, and the sampling rate.

``hwprof experiment burrows-hotlist [--trace FILE ...]``. Burrows, Erlingsson, Leung,
Vandevoorde, Waldspurger, Walker and Weihl, "Efficient and Flexible Value Sampling"
(ASPLOS 2000) keep "only one value hotlist for each PC" (sec. 2.4), the Gibbons-Matias
algorithm with ``N = 16``, ``f = 16/15`` (sec. 2.2), fed by randomized periodic
interrupts ("on the average every 62K instructions", sec. 3.4; *vprof* interprets 4
instructions at one interrupt in two, Table 2a). The paper measures overheads on an
Alpha 21264 (Tables 1, 2a-c), not accuracy; this experiment measures what our models
can:

(a) the per-site hotlists (:mod:`hwprof.golden.site_hotlist`, every load sampled) on
    the ``<load pc, value>`` streams of the multi-hash experiment (keys of
    :func:`hwprof.traces.keys.trace_keys`), scored with formula (1) of Narayanasamy et
    al. (:func:`hwprof.golden.interval_error.profile_stream`) at the multi-hash paper's
    two configurations (10K loads / 1 %, 1M loads / 0.1 %), beside the multi-hash
    profiler (4 tables, conservative update, no resetting), the one global hotlist of
    :mod:`hwprof.experiments.baselines` and the stratified sampler ``H[P_r]_2048``
    (:func:`hwprof.golden.compressors_fast.stratified_counts`), each with its storage
    counted in bits (:func:`storage`);
(b) the sampling rate: the per-site hotlists (``N = 16``) fed a fraction ``1/R`` of
    the loads by the randomized periodic sampler (gaps ``R +- R // 31``: 60K-64K for
    62K), from every load to the paper's operating point, and at one fraction the
    loads per interrupt (Table 2c's trade, in accuracy instead of overhead), at the
    two configurations and on 10M-load intervals (0.1 %);
(c) every figure over :data:`SEEDS` seeds (hash seeds, coins, sampler phases), with
    the min-max spread.

Every profiler restarts at each interval (the multi-hash flush, the hotlists emptied,
the stratified table cleared); the sampler runs on.
"""

from __future__ import annotations

import datetime
import time
from pathlib import Path

import numpy as np

from ..golden import compressors_fast as cf
from ..golden.interval_error import Bulk, profile_stream
from ..golden.multihash import PRESETS, MultiHashConfig
from ..golden.site_hotlist import (
    SiteProfiler,
    counter_bits,
    default_factor,
    site_profiles,
    site_storage_bits,
)
from ..traces.common import TraceError
from ..traces.keys import DEFAULT_VALUE_MAP, KEY_TEXT, trace_keys
from ..traces.tracefile import open_trace, recorded_instructions
from . import Experiment, cell, label_axes, write_results
from .baselines import HotlistBaseline, budget_bytes
from .multihash_values import PROGRAMS, hash_seed
from .stratified_values import INVARIANT_SHARE, LOAD_INVARIANT_SHARE, MIN_LOAD_EXECUTIONS

__all__ = [
    "EXPERIMENTS",
    "run",
    "storage",
    "profilers_for",
    "invariance",
    "hotlist_invariance_error",
]

NAME = "burrows-hotlist"
SEEDS = 5
#: Hotlist entries per site swept (the paper's 16 among them).
ENTRIES = (1, 4, 16, 64)
#: Sampling periods ``R`` (a fraction 1/R of the loads sampled), with N = 16; the last is
#: the paper's operating point (:data:`PAPER_PERIOD`).
PERIODS = (4, 16, 64, 256, 1024, 4096, 16384, 31_000)
#: Loads per interrupt swept at the fraction 1 / :data:`BURST_FRACTION` (Table 2c).
BURSTS = (1, 4, 16, 64)
BURST_FRACTION = 256
#: Periods of the stratified sampler H[P_r]_2048: the paper's 256 and 16 (a candidate
#: of a 10K interval, 100 occurrences, is at least 6 periods of 16).
STRATIFIED_RATES = (16, 256)
STRATIFIED_ENTRIES = 2048
#: Loads used per program and configuration (the first ones after the trace's skip).
FULL = {"10k": 2_000_000, "1m": 10_000_000}
QUICK = {"10k": 300_000, "1m": 1_000_000}
#: The whole-profile measure (sec. 5.3.1 invariance error): the first loads of a program.
PREFIX = {"full": 10_000_000, "quick": 1_000_000}
#: The stratified-values compressors set beside it (one message per 256 loads).
INVARIANCE_COMPRESSORS = ("R_256", "H[P_256]_2048")
QUICK_SEEDS = 2
QUICK_PERIODS = (16, 256, 4096)
#: The captured traces of ``multihash-values`` (100M loads, inputs enlarged).
LIMIT = 100_000_000

#: The paper's numbers (sec. 2.1, 2.2, 3.4, Tables 1 and 2).
PAPER = {
    "entries": 16,
    "factor": "16/15",
    "interrupt_instructions": 62_000,
    "interrupt_instructions_text": "on the average every 62K instructions (sec. 3.4); "
                                   "about 64K with a small randomization (sec. 2.1)",
    "vprof_interpret_length": 4,
    "vprof_interpret_frequency": 0.5,
    "slowdown_pct": {"no vprof": 3.9, "vprof": 10.7, "vprof with context": 12.2,
                     "vreplay": 5.9, "vreplay with context": 6.8},
    "slowdown_length_pct": {"4": 10.7, "8": 14.8, "16": 22.7, "32": 40.4},
    "slowdown_same_mean_pct": {"4 x 1/2": 10.7, "8 x 1/4": 10.8, "16 x 1/8": 9.7,
                               "32 x 1/16": 9.3, "64 x 1/32": 9.2},
    "cache_blocks_never_missed_pct": 88,
}  # fmt: skip
#: The paper's sampled fraction of instructions (so of loads): 4 instructions at one
#: interrupt in two, an interrupt every 62K instructions.
PAPER_PERIOD = round(
    PAPER["interrupt_instructions"]
    / (PAPER["vprof_interpret_length"] * PAPER["vprof_interpret_frequency"])
)


def jitter_for(period: int) -> int:
    """Half-width of the randomized gap: ``period // 31`` (62K +- 2K: 60K-64K)."""
    return period // 31


def configurations(quick: bool = False) -> dict:
    """``{name: (interval_length, threshold, accumulator)}``: the multi-hash presets."""
    return {k: (PRESETS[k]["interval_length"], PRESETS[k]["threshold"],
                PRESETS[k]["accumulator"]) for k in ("10k", "1m")}  # fmt: skip


# --- storage -------------------------------------------------------------------------


def storage(label: str, preset: str, interval_length: int, sites=None, profile_keys=None):
    """Bits of a profiler's structure: ``{"bits", "how"}`` (``sites``: per interval, for
    the per-site hotlists; ``profile_keys``: distinct tuples the stratified sampler's
    messages named per interval)."""
    if label == "multi-hash C1R0 4":
        b = budget_bytes(MultiHashConfig(**PRESETS[preset]))
        return {"bits": 8 * b["total"],
                "how": f"counters {8 * b['counters']:,} + accumulator {8 * b['accumulator']:,} "
                       "(budget_bytes: 2048 x 24-bit counters; entries x (64-bit key + "
                       "24-bit count + 2 flags))"}  # fmt: skip
    if label == "global hotlist":
        h = HotlistBaseline(MultiHashConfig(**PRESETS[preset]))
        return {"bits": 8 * h.bytes, "how": f"{h.entries} entries x (64-bit key + 24-bit count)"}
    if label.startswith("H[P_"):
        rate = int(label[4:].split("]")[0])
        table = STRATIFIED_ENTRIES * (rate - 1).bit_length()
        entry = 64 + counter_bits(interval_length)
        most = int(max(profile_keys, default=0))
        return {"bits": table + most * entry,
                "how": f"table {STRATIFIED_ENTRIES} x {(rate - 1).bit_length()} bits + the "
                       f"interval's profile in software, {most:,} tuples (most of any "
                       f"interval) x {entry} bits"}  # fmt: skip
    entries = int(label.split("N=")[1].split()[0])
    most = int(max(sites, default=0))
    return {
        "bits": site_storage_bits(most, entries, interval_length),
        "how": f"{most:,} sites (most of any interval) x (32-bit pc + 16-bit level + "
        f"{entries} x (32-bit value + {counter_bits(interval_length)}-bit count))",
    }


# --- profilers ------------------------------------------------------------------------


class StratifiedProfiler:
    """``H[P_r]_n`` per interval (table cleared at each start): a tuple's estimate is the
    sum of its messages' counts in the interval (``r`` each); reported when at least
    ``threshold``."""

    needs_truth = False

    def __init__(self, rate: int, interval_length: int, threshold: int, hash_seed: int):
        self.rate, self.length, self.threshold = rate, interval_length, threshold
        self.hash_seed = hash_seed
        self.profile_keys: list[int] = []

    def feed(self, keys, truth=None):
        index = cf.hash_index(keys, STRATIFIED_ENTRIES.bit_length() - 1, self.hash_seed)
        out_keys, out_counts, ends = [], [], []
        done = 0
        for start in range(0, len(keys), self.length):
            part = slice(start, start + self.length)
            counts = cf.stratified_counts(keys[part], self.rate, STRATIFIED_ENTRIES,
                                          self.hash_seed, index=index[part])  # fmt: skip
            sent = np.flatnonzero(counts)
            unique, inverse = np.unique(keys[part][sent], return_inverse=True)
            estimate = np.bincount(inverse, weights=counts[sent], minlength=len(unique))
            self.profile_keys.append(len(unique))
            keep = estimate >= self.threshold
            out_keys.append(unique[keep])
            out_counts.append(estimate[keep].astype(np.int64))
            done += int(keep.sum())
            ends.append(done)
        return (np.concatenate(out_keys) if out_keys else np.zeros(0, np.uint64),
                np.concatenate(out_counts) if out_counts else np.zeros(0, np.int64),
                np.array(ends, np.int64))  # fmt: skip


def site_label(entries: int, period: int = 1, burst: int = 1) -> str:
    """Label of a per-site hotlist profiler."""
    label = f"per-site N={entries}"
    if period > 1:
        label += f" 1/{period // burst}"
    if burst > 1:
        label += f" burst {burst}"
    return label


def profilers_for(preset: str, quick: bool, seed: int, s: int) -> list[tuple[str, object]]:
    """``[(label, profiler)]`` of seed index ``s`` at configuration ``preset``."""
    length, threshold, _ = configurations(quick)[preset]
    base = 1000 * seed + s

    def site(entries, period=1, burst=1):
        return (site_label(entries, period, burst),
                SiteProfiler(length, threshold, entries=entries, period=period,
                             jitter=jitter_for(period),
                             burst=burst, seed=base))  # fmt: skip

    out = [
        (
            "multi-hash C1R0 4",
            Bulk(
                tables=4,
                conservative=True,
                reset=False,
                retain=True,
                hash_seed=hash_seed(s),
                **PRESETS[preset],
            ),
        ),
        ("global hotlist", HotlistBaseline(MultiHashConfig(**PRESETS[preset]), seed=base)),
    ]
    out += [
        (f"H[P_{r}]_{STRATIFIED_ENTRIES}", StratifiedProfiler(r, length, threshold, hash_seed(s)))
        for r in STRATIFIED_RATES
    ]
    out += [site(n) for n in ENTRIES]
    out += [site(16, period) for period in (QUICK_PERIODS if quick else PERIODS)]
    out += [site(16, BURST_FRACTION * b, b) for b in BURSTS if b > 1]
    return out


# --- the run ---------------------------------------------------------------------------


def _sources(quick: bool, traces, log) -> list[tuple[str, Path]]:
    if traces:
        return [(Path(p).name, Path(p)) for p in traces]
    from ..traces import workloads

    if quick:
        return [("xz (shipped)", workloads.shipped_trace("xz"))]
    out = []
    for name in PROGRAMS:
        try:
            path = workloads.trace_for(name, kinds="loads", limit=LIMIT,
                                       scale=workloads.LARGE_SCALE[name])  # fmt: skip
        except TraceError as exc:
            log(f"{NAME}: {exc}; using the shipped trace")
            path = workloads.shipped_trace(name)
        out.append((name, path))
    return out


def _read(path: Path, limit: int):
    """``(keys, instructions per load or None)`` of the first ``limit`` loads."""
    reader = open_trace(path)
    keys = np.concatenate(list(trace_keys(reader, "loads", limit=limit)))
    footer = getattr(reader, "footer", {}) or {}
    instructions = recorded_instructions(footer)
    loads = (footer.get("counts") or {}).get("load")
    return keys, (instructions / loads if instructions and loads else None)


def _summary(totals: list[float]) -> dict:
    return {"mean": float(np.mean(totals)), "min": float(np.min(totals)),
            "max": float(np.max(totals)), "seeds": totals}  # fmt: skip


def measure(keys, preset: str, quick: bool, seed: int, seeds: int) -> dict:
    """Every profiler of ``preset`` over ``keys`` (whole intervals), all seeds at once."""
    length, threshold, _ = configurations(quick)[preset]
    labelled = [(s, label, p) for s in range(seeds)
                for label, p in profilers_for(preset, quick, seed, s)]  # fmt: skip
    result = profile_stream([keys], [p for _, _, p in labelled], length, threshold,
                            workers=1, prefetch=False)  # fmt: skip
    by_label: dict = {}
    for (_, label, profiler), err in zip(labelled, result.errors, strict=True):
        entry = by_label.setdefault(label, {"totals": [], "parts": [], "sites": [],
                                            "sampled": [], "profile_keys": []})  # fmt: skip
        entry["totals"].append(100 * err.total)
        entry["parts"].append([100 * getattr(err, k) for k in
                               ("false_positive", "false_negative", "neutral_positive",
                                "neutral_negative")])  # fmt: skip
        entry["undefined"] = err.undefined
        if isinstance(profiler, SiteProfiler):
            entry["sites"] += profiler.sites
            entry["sampled"].append(sum(profiler.sampled))
        if isinstance(profiler, StratifiedProfiler):
            entry["profile_keys"] += profiler.profile_keys
    out = {"intervals": result.intervals, "tuples": result.tuples,
           "distinct": float(np.mean(result.distinct)),
           "candidates": float(np.mean(result.candidates)), "profilers": {}}  # fmt: skip
    for label, e in by_label.items():
        row = {
            **_summary(e["totals"]),
            "parts": np.mean(e["parts"], axis=0).tolist(),
            "undefined": e["undefined"],
            "storage": storage(label, preset, length, e["sites"], e["profile_keys"]),
        }
        if e["sites"]:
            row["sites"] = {"mean": float(np.mean(e["sites"])), "max": int(max(e["sites"]))}
            row["sampled_fraction"] = float(np.mean(e["sampled"])) / result.tuples
        out["profilers"][label] = row
    return out


def hotlist_invariance_error(ideal, profile: dict, scale: float) -> float | None:
    """Sec. 5.3.1's invariance error (%) of whole-prefix per-site hotlists against the
    ideal profile ``ideal`` (a one-checkpoint
    :class:`~hwprof.experiments.stratified_values.IdealProfile`, whose filters pick the
    invariant tuples): ``sum n(v) |I_i(v) - I_p(v)| / sum n(v)`` as its ``errors``, with
    ``I_p(v)`` the hotlist's share of ``v`` at its site, ``round(C[v] / p * scale)``
    over the site's samples times ``scale`` (Burrows et al.'s *vtot*; 0 for a value
    not held or a site not sampled). None when no tuple passes the filters."""
    ids, n_i, i_i = ideal.selected[-1]
    if len(ids) == 0:
        return None
    held = dict(zip(profile["keys"].tolist(), profile["counts"].tolist(), strict=True))
    vtot = dict(zip(profile["site_pc"].tolist(), profile["site_samples"].tolist(), strict=True))
    i_p = np.array([held.get(k, 0) / (vtot[k >> 32] * scale) if vtot.get(k >> 32) else 0.0
                    for k in ideal.unique[ids].tolist()])  # fmt: skip
    return float(100.0 * np.sum(n_i * np.abs(i_i - i_p)) / np.sum(n_i))


def invariance(keys, quick: bool, seed: int, seeds: int) -> dict | None:
    """The whole-prefix profiles of ``keys``: per-site hotlists (N = 16, never emptied) at
    every sampling period and burst, and :data:`INVARIANCE_COMPRESSORS`, scored with
    sec. 5.3.1's invariance error; None when no tuple passes its filters."""
    from .stratified_values import IdealProfile, compressor_counts

    ideal = IdealProfile(keys, [len(keys)])
    if len(ideal.selected[-1][0]) == 0:
        return None
    periods = [1, *(QUICK_PERIODS if quick else PERIODS)]
    runs = [(site_label(16, r), r, 1) for r in periods]
    runs += [(site_label(16, BURST_FRACTION * b, b), BURST_FRACTION * b, b)
             for b in BURSTS if b > 1]  # fmt: skip
    errors: dict = {label: [] for label, _, _ in runs}
    errors |= {name: [] for name in INVARIANCE_COMPRESSORS}
    for s in range(seeds):
        for label, period, burst in runs:
            profile = site_profiles(keys, len(keys), 1, entries=16, period=period,
                                    jitter=jitter_for(period), burst=burst,
                                    seed=1000 * seed + s)  # fmt: skip
            errors[label].append(hotlist_invariance_error(ideal, profile, period / burst))
        cache: dict = {}
        for name in INVARIANCE_COMPRESSORS:
            errors[name].append(ideal.errors(compressor_counts(name, keys, seed + s, cache))[-1])
    ids, n_i, _ = ideal.selected[-1]
    return {
        "loads": len(keys),
        "tuples_kept": len(ids),
        "sites_kept": int(len(np.unique(ideal.unique[ids] >> np.uint64(32)))),
        "errors": {label: _summary(v) for label, v in errors.items()},
    }


def run(output_dir: Path, seed: int, quick: bool, traces=None) -> dict:
    """Run every configuration on every program; write the .json, .md and .png."""
    start, cpu = time.perf_counter(), time.process_time()
    sizes = QUICK if quick else FULL
    seeds = QUICK_SEEDS if quick else SEEDS
    sources = _sources(quick, traces, print)
    streams = {}
    prefix = PREFIX["quick" if quick else "full"]
    for name, path in sources:  # every trace read before anything is written
        keys, per_load = _read(path, max(prefix, *sizes.values()))
        streams[name] = (keys, per_load)
    results: dict = {preset: {} for preset in sizes}
    whole: dict = {}
    stem = f"{NAME}-quick" if quick else NAME
    output_dir = Path(output_dir)
    record: dict = {}
    for done, (name, (keys, _)) in enumerate(streams.items(), 1):
        for preset, n in sizes.items():
            length = configurations(quick)[preset][0]
            usable = min(n, len(keys)) // length * length
            if usable == 0:
                print(f"{NAME}: {name}: fewer than {length:,} loads, no {preset} interval")
                continue
            print(f"{NAME}: {name} {preset} ({usable:,} loads, {seeds} seeds)", flush=True)
            results[preset][name] = measure(keys[:usable], preset, quick, seed, seeds)
        print(f"{NAME}: {name} whole prefix ({min(prefix, len(keys)):,} loads)", flush=True)
        whole[name] = invariance(keys[:prefix], quick, seed, seeds)
        if not any(results.values()):
            continue
        # written after each program: a run cut short keeps the programs done
        record = {
            "quick": quick, "seed": seed, "seeds": seeds, "value_map": DEFAULT_VALUE_MAP,
            "programs": list(streams), "done": list(whole), "complete": done == len(streams),
            "loads_used": sizes,
            "instructions_per_load": {n: s[1] for n, s in streams.items()},
            "configurations": {k: {"interval_length": v[0], "threshold": v[1],
                                   "accumulator": v[2]}
                               for k, v in configurations(quick).items() if k in sizes},
            "entries": list(ENTRIES), "periods": list(QUICK_PERIODS if quick else PERIODS),
            "bursts": list(BURSTS), "burst_fraction": BURST_FRACTION,
            "stratified_rates": list(STRATIFIED_RATES), "paper": PAPER,
            "paper_period": PAPER_PERIOD, "factor_16": default_factor(16),
            "budget_bits": {k: 8 * budget_bytes(MultiHashConfig(**PRESETS[k]))["total"]
                            for k in ("10k", "1m")},
            "results": results, "prefix": prefix,
            "invariance": {n: w for n, w in whole.items() if w is not None},
            "invariance_filters": {"min_load_executions": MIN_LOAD_EXECUTIONS,
                                   "invariant_share": INVARIANT_SHARE,
                                   "load_invariant_share": LOAD_INVARIANT_SHARE},
        }  # fmt: skip
        record["summary"] = summarise(record)
        record["timing"] = {"date": datetime.datetime.now(datetime.UTC).strftime(
            "%Y-%m-%d %H:%M UTC"), "seconds": time.perf_counter() - start,
            "cpu_seconds": time.process_time() - cpu}  # fmt: skip
        output_dir.mkdir(parents=True, exist_ok=True)
        _plot(output_dir / f"{stem}.png", record)
        write_results(output_dir, NAME, quick, record, markdown(record, stem))
    if not record:
        raise TraceError("no trace with a whole interval of loads")
    return record["summary"]


# --- what the record says -----------------------------------------------------------------


def _program_means(programs: dict, label: str) -> dict:
    """Mean over the programs of a label's per-seed errors: per seed, then summarised."""
    per_seed = np.mean([programs[p]["profilers"][label]["seeds"] for p in programs], axis=0)
    return _summary(per_seed.tolist())


def summarise(record: dict) -> dict:
    """Means over the programs (min-max over seeds), storage, the rate and burst sweeps."""
    out = {}
    for preset, programs in record["results"].items():
        if not programs:
            continue
        labels = list(next(iter(programs.values()))["profilers"])
        means = {label: _program_means(programs, label) for label in labels}
        bits = {label: float(np.mean([programs[p]["profilers"][label]["storage"]["bits"]
                                      for p in programs])) for label in labels}  # fmt: skip
        budget = record["budget_bits"].get(preset)
        length = record["configurations"][preset]["interval_length"]
        sites_max = max(r["profilers"][site_label(16)]["sites"]["max"] for r in programs.values())
        entry = {"error": means, "storage_bits": bits, "budget_bits": budget,
                 "sites_max": sites_max}  # fmt: skip
        if budget is not None:
            per_site = budget / max(sites_max, 1)
            fit = int((per_site - 48) // (32 + counter_bits(length)))
            entry["entries_within_budget"] = max(fit, 0)
            entry["site_bits_at_budget"] = per_site
            within = [label for label in labels if bits[label] <= budget
                      and label.startswith("per-site") and "/" not in label]  # fmt: skip
            entry["per_site_within_budget"] = within
            entry["best"] = min(labels, key=lambda k: means[k]["mean"])
            entry["per_site_n16_vs_multihash"] = (
                means[site_label(16)]["mean"] - means["multi-hash C1R0 4"]["mean"]
            )
        periods = [1, *record["periods"]]
        entry["rate"] = [{"period": r, "label": site_label(16, r), **means[site_label(16, r)],
                          "sampled_fraction": float(np.mean(
                              [programs[p]["profilers"][site_label(16, r)]["sampled_fraction"]
                               for p in programs]))} for r in periods]  # fmt: skip
        entry["burst"] = [{"burst": b, "label": site_label(16, BURST_FRACTION * b, b),
                           **means[site_label(16, BURST_FRACTION * b, b)]}
                          for b in record["bursts"]]  # fmt: skip
        out[preset] = entry
    programs = record.get("invariance", {})
    if programs:
        labels = list(next(iter(programs.values()))["errors"])
        means = {}
        for label in labels:
            per_seed = np.mean([programs[p]["errors"][label]["seeds"] for p in programs], axis=0)
            means[label] = _summary(per_seed.tolist())
        periods = [1, *record["periods"]]
        out["whole"] = {
            "error": means,
            "rate": [{"period": r, "label": site_label(16, r), **means[site_label(16, r)]}
                     for r in periods],
            "burst": [{"burst": b, "label": site_label(16, BURST_FRACTION * b, b),
                       **means[site_label(16, BURST_FRACTION * b, b)]}
                      for b in record["bursts"]],
            "compressors": {n: means[n] for n in INVARIANCE_COMPRESSORS}}  # fmt: skip
    return out


def _fmt(row: dict) -> str:
    return f"{row['mean']:.2f} [{row['min']:.2f}-{row['max']:.2f}]"


def _bits(bits: float) -> str:
    return f"{bits:,.0f}"


def _k(instructions: int) -> str:
    """``62000`` -> ``62K``."""
    return f"{instructions / 1000:g}K"


def markdown(record: dict, stem: str) -> str:
    """The results page; every number from ``record``."""
    paper, summary = record["paper"], record["summary"]
    interrupt = paper["interrupt_instructions"]
    cmd = f"hwprof experiment {NAME}" + (" --quick" if record["quick"] else "")
    t = record["timing"]
    ipl = ", ".join(f"{n} {cell(v, '.2f')}" for n, v in record["instructions_per_load"].items())
    L = [
        f"# Value hotlists per load site (Burrows et al.) (`{NAME}`)",
        "",
        f"Produced by `{cmd}` (seed {record['seed']}, {record['seeds']} seeds). This run: "
        f"{t['seconds']:.0f} s wall, {t['cpu_seconds']:.0f} s CPU.",
        "",
        *(
            []
            if record.get("complete", True)
            else [
                "**Partial: the run was cut short; not measured: "
                + ", ".join(p for p in record["programs"] if p not in record["done"])
                + ".**",
                "",
            ]
        ),  # fmt: skip
        "Burrows et al. keep one Gibbons-Matias hotlist of the values seen at each PC "
        f"(N = {paper['entries']}, f = {paper['factor']}, sec. 2.2 and 2.4), fed by "
        "randomized periodic interrupts (" + paper["interrupt_instructions_text"] + "; "
        f"*vprof* interprets {paper['vprof_interpret_length']} instructions at one interrupt "
        f"in {round(1 / paper['vprof_interpret_frequency'])}, Table 2a). Here: "
        "`hwprof.golden.site_hotlist` (one hotlist per load pc, emptied at each interval "
        "start) on the `<load pc, value>` streams of `multihash-values` "
        f"(key {KEY_TEXT[record['value_map']]}; the pc field names the site), the first "
        + ", ".join(f"{n:,} loads for {k}" for k, n in record["loads_used"].items())
        + " of each program. Error = formula (1) of Narayanasamy et al. in % "
        "(`hwprof.golden.interval_error`, as in `multihash-values`): mean over the "
        "programs, [min-max] over the seeds of that mean; per program in the JSON.",
        "",
    ]
    L += [
        "## What the paper measures, and what cannot be reproduced here",
        "",
        "The paper gives no accuracy figure: its evaluation is the overhead of value "
        "sampling on a 500 MHz Alpha 21264 under Tru64 UNIX with DCPI. None of it can be "
        "measured here (no Alpha, no DCPI, no interrupt-level interpreter; our traces are "
        "valgrind recordings on x86-64), so these tables stand beside ours unreproduced:",
        "",
        "| paper | its figures | why not here |",
        "| --- | --- | --- |",
        "| Table 1: primary-cache blocks missed by the profiler's perturbation | "
        f"{paper['cache_blocks_never_missed_pct']} % of blocks never missed | needs the "
        "Alpha's cache with the interrupt handler and interpreter running in it |",
        "| Table 2a: slowdown of CPU2000 int per profiling option | "
        + ", ".join(f"{k} {v} %" for k, v in paper["slowdown_pct"].items())
        + " | run time of "
        "DCPI's driver, daemon and interpreter on the Alpha |",
        "| Table 2b: slowdown vs interpret length (frequency 1/2) | "
        + ", ".join(f"{k}: {v} %" for k, v in paper["slowdown_length_pct"].items())
        + " | same |",
        "| Table 2c: slowdown at 2 interpreted instructions per interrupt | "
        + ", ".join(f"{k}: {v} %" for k, v in paper["slowdown_same_mean_pct"].items())
        + " | same; its accuracy counterpart (loads per interrupt at one sampled "
        "fraction) is measured below |",
        "",
        "What the model can show is the accuracy side of the same choices: the per-site "
        "hotlist against other structures at their storage (a), and the error as the "
        "sampled fraction falls to the paper's operating point (b).",
        "",
    ]
    L += [
        "## Storage, counted in bits",
        "",
        "* multi-hash C1R0 4 (the multi-hash paper's configuration): `budget_bytes` of "
        "`hwprof/experiments/baselines.py`, counters and accumulator;",
        "* global hotlist: the baseline of `multihash-values`, as many 64-bit key + "
        "24-bit count entries as fit that budget;",
        "* per-site hotlists: per site sampled in an interval, a 32-bit pc tag, a 16-bit "
        "thinning level (p = f^-k) and N entries of a 32-bit value field and a count wide "
        "enough for the interval ("
        + ", ".join(f"{counter_bits(c['interval_length'])} bits at {k}"
                    for k, c in record["configurations"].items())
        + "); the most sites of any interval of the program;",
        f"* H[P_r]_{STRATIFIED_ENTRIES}: the table's {STRATIFIED_ENTRIES} counters of "
        "log2(r) bits, plus the interval's profile that software builds from the messages "
        "(distinct tuples named, most of any interval, x (64-bit key + count)).",
        "",
    ]
    for preset in record["results"]:
        if preset not in summary:
            continue
        entry = summary[preset]
        conf = record["configurations"][preset]
        programs = record["results"][preset]
        names = list(programs)
        labels = list(entry["error"])
        rate_labels = {r["label"] for r in entry["rate"][1:]} | {
            b["label"] for b in entry["burst"][1:]
        }
        L += [
            f"## (a) {preset}: intervals of {conf['interval_length']:,} loads, threshold "
            f"{conf['threshold']:,}",
            "",
            f"Multi-hash budget: {_bits(entry['budget_bits'])} bits. Sites sampled "
            f"per interval, most of any program: {entry['sites_max']:,}, so "
            f"{entry['site_bits_at_budget']:,.0f} bits per site at that budget: "
            f"N = {entry['entries_within_budget']} entries per site fit"
            + (" (not one entry)" if entry["entries_within_budget"] == 0 else "")
            + ". Per-site configurations whose storage (mean over the programs) is within "
            "the budget: " + (", ".join(entry["per_site_within_budget"]) or "none") + ".",
            "",
            "| profiler | " + " | ".join(names) + " | mean [min-max] | storage bits "
            "(mean over programs) |",
            "| --- |" + " ---: |" * (len(names) + 2),
        ]
        for label in labels:
            if label in rate_labels:
                continue
            cells = [f"{programs[n]['profilers'][label]['mean']:.2f}" for n in names]
            L.append(
                f"| {label} | " + " | ".join(cells) + f" | {_fmt(entry['error'][label])}"
                f" | {_bits(entry['storage_bits'][label])} |"
            )
        first = programs[names[0]]["profilers"]
        L += ["", f"How each storage figure is counted ({names[0]}):", ""]
        L += [f"* {label}: {first[label]['storage']['how']}" for label in labels
              if label not in rate_labels]  # fmt: skip
        bits = entry["storage_bits"]
        fitting = [k for k in labels if k not in rate_labels and bits[k] <= entry["budget_bits"]]
        best_fit = min(fitting, key=lambda k: entry["error"][k]["mean"]) if fitting else None
        L += [
            "",
            f"Lowest mean error: {entry['best']} ({_bits(bits[entry['best']])} bits); "
            f"lowest within the multi-hash budget ({_bits(entry['budget_bits'])} bits): "
            + (f"{best_fit}" if best_fit else "none")
            + f". Per-site N=16 minus multi-hash "
            f"C1R0 4: {entry['per_site_n16_vs_multihash']:+.2f} points.",
            "",
        ]
        L += [
            f"(b) Sampling rate, per-site N = 16 ({record['paper_period']:,} = the paper's "
            "operating point):",
            "",
            "| one load in | sampled fraction (measured) | error % mean [min-max] |",
            "| ---: | ---: | ---: |",
        ]
        L += [
            f"| {r['period']:,} | {r['sampled_fraction']:.3g} | {_fmt(r)} |" for r in entry["rate"]
        ]
        L += [
            "",
            f"Loads per interrupt at one load in {record['burst_fraction']} sampled "
            "(the interrupt period grows with the burst):",
            "",
            "| loads per interrupt | error % mean [min-max] |",
            "| ---: | ---: |",
        ]
        L += [f"| {b['burst']} | {_fmt(b)} |" for b in entry["burst"]]
        L.append("")
    whole = summary.get("whole")
    if whole:
        inv = record["invariance"]
        f = record["invariance_filters"]
        L += [
            "## (b) Whole-profile accuracy: the value shares at each load",
            "",
            "What Burrows et al.'s hotlists report is each value's share of its load's "
            'executions ("53% of the time, the instruction at PC 0x2468 generates ... 0"; '
            "Figure 1's percentages). Scored with the invariance error of Sastry et "
            "al. sec. 5.3.1 (`IdealProfile` of `stratified-values`: loads executed at least "
            f"{f['min_load_executions']:,} times, tuples at least "
            f"{100 * f['invariant_share']:.0f} % of their load, loads at least "
            f"{100 * f['load_invariant_share']:.0f} % covered by such tuples), over the "
            f"first {record['prefix']:,} loads of each program as one profile (hotlists "
            "never emptied); a hotlist's share is C[v] / p over its site's samples "
            "(*vtot*). Tuples kept by the filters: "
            + ", ".join(
                f"{n} {w['tuples_kept']:,} at {w['sites_kept']:,} loads" for n, w in inv.items()
            )
            + ".",
            "",
            "| one load in (per-site N = 16) | " + " | ".join(inv) + " | mean [min-max] |",
            "| ---: |" + " ---: |" * (len(inv) + 1),
        ]
        for r in whole["rate"]:
            cells = [f"{w['errors'][r['label']]['mean']:.2f}" for w in inv.values()]
            L.append(f"| {r['period']:,} | " + " | ".join(cells) + f" | {_fmt(r)} |")
        for b in whole["burst"][1:]:
            cells = [f"{w['errors'][b['label']]['mean']:.2f}" for w in inv.values()]
            L.append(
                f"| {record['burst_fraction']}, {b['burst']} loads per interrupt | "
                + " | ".join(cells)
                + f" | {_fmt(b)} |"
            )
        for name, row in whole["compressors"].items():
            cells = [f"{w['errors'][name]['mean']:.2f}" for w in inv.values()]
            L.append(f"| {name} (stratified-values) | " + " | ".join(cells) + f" | {_fmt(row)} |")
        L.append("")
    L += [
        f"![{NAME}]({stem}.png)",
        "",
        "## Notes",
        "",
        "* The sampled fraction at the paper's point is of loads; the paper samples "
        "instructions, loads among them in proportion, so the fraction is the same. "
        f"Instructions per load of our traces: {ipl}.",
        "* The randomized gap is uniform on R +- R // 31 ("
        f"{_k(interrupt - jitter_for(interrupt))}-{_k(interrupt + jitter_for(interrupt))} "
        f"for {_k(interrupt)}; the paper "
        'says only "a small amount of randomization"); below R = 31 the sampler is '
        "strictly periodic after a random phase.",
        "* Formula (1) reports a tuple when its estimate reaches the threshold; once one "
        "sample is worth R loads and R reaches the threshold, every sampled tuple is "
        "reported, so at sparse rates the error is false positives. Burrows et al. read "
        "shares of a load's values over a whole run instead, the whole-profile table.",
        "",
    ]
    return "\n".join(L)


def _band(ax, x, rows, label):
    ax.plot(x, [r["mean"] for r in rows], "-o", markersize=3, label=label)
    ax.fill_between(x, [r["min"] for r in rows], [r["max"] for r in rows], alpha=0.2)


def _plot(path: Path, record: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    summary = record["summary"]
    presets = [p for p in record["results"] if p in summary]
    whole = summary.get("whole")
    fig, axes = plt.subplots(1, len(presets) + 2, figsize=(5.2 * (len(presets) + 2), 4.4))
    for ax, preset in zip(axes, presets, strict=False):
        e = summary[preset]
        for label, err in e["error"].items():
            if " 1/" in label:
                continue
            ax.errorbar([e["storage_bits"][label]], [max(err["mean"], 1e-3)],
                        yerr=[[err["mean"] - err["min"]], [err["max"] - err["mean"]]],
                        fmt="o", capsize=3, label=label)  # fmt: skip
        ax.axvline(e["budget_bits"], color="grey", linestyle=":")
        ax.set_xscale("log")
        ax.set_yscale("log")
        label_axes(ax, "storage (bits)", "formula (1) error % (mean over programs)",
                   f"(a) {preset}: error vs storage (dotted: multi-hash)")  # fmt: skip
    ax = axes[len(presets)]
    for preset in presets:
        rows = summary[preset]["rate"]
        _band(ax, [r["sampled_fraction"] for r in rows], rows, f"formula (1), {preset}")
    if whole:
        rows = whole["rate"]
        _band(ax, [1 / r["period"] for r in rows], rows, "invariance error, whole prefix")
        for name, row in whole["compressors"].items():
            ax.plot([1 / 256], [row["mean"]], "s", label=f"{name}, invariance")
    ax.axvline(1 / record["paper_period"], color="grey", linestyle=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    label_axes(ax, "sampled fraction of loads", "error % (per-site N = 16)",
               "(b) sampling rate (dotted: the paper's)")  # fmt: skip
    ax = axes[len(presets) + 1]
    for preset in presets:
        rows = summary[preset]["burst"]
        _band(ax, [b["burst"] for b in rows], rows, f"formula (1), {preset}")
    if whole:
        rows = whole["burst"]
        _band(ax, [b["burst"] for b in rows], rows, "invariance error, whole prefix")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    label_axes(ax, "loads per interrupt", "error %",
               f"one load in {record['burst_fraction']} sampled, by burst")  # fmt: skip
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def headline(record: dict) -> list[tuple[str, str, str]]:
    """The paper's settings beside ours, and what it gives no figure for."""
    summary, paper = record.get("summary", {}), record.get("paper", PAPER)
    rows = [
        (
            "hotlist entries per PC, thinning factor",
            f"{paper['entries']}, {paper['factor']}",
            f"{paper['entries']}, {record.get('factor_16', 16 / 15):.4f}",
        )
    ]
    for preset, e in summary.items():
        if preset == "whole":
            last = e["rate"][-1]
            rows.append(
                (
                    f"invariance error %, whole prefix, one load in {last['period']:,} "
                    "/ every load",
                    "-",
                    f"{_fmt(last)} / {_fmt(e['rate'][0])}",
                )
            )
            continue
        if "best" in e:
            rows.append(
                (
                    f"{preset}: error %, per-site N=16 / multi-hash C1R0 4 / global hotlist",
                    "-",
                    " / ".join(
                        f"{e['error'][k]['mean']:.2f}"
                        for k in ("per-site N=16", "multi-hash C1R0 4", "global hotlist")
                    ),
                )
            )
        last = e["rate"][-1]
        rows.append((f"{preset}: error % at one load in {last['period']:,}", "-",
                     _fmt(last)))  # fmt: skip
    rows.append(
        (
            "vprof slowdown % (Table 2a)",
            f"{paper['slowdown_pct']['vprof']}",
            "not reproducible (no Alpha 21264, DCPI)",
        )
    )
    return rows


EXPERIMENTS = [
    Experiment(
        name=NAME,
        description="Burrows et al.: one Gibbons-Matias hotlist per load pc on real value "
        "streams, against multi-hash and stratified sampling at their storage; accuracy vs "
        "sampling rate and loads per interrupt",
        run=run,
        takes_traces=True,
        headline=headline,
    ),
]
