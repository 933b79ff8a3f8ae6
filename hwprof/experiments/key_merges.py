"""How many distinct ``<pc, x>`` tuples of a trace share one profile key (the key's merge rate).

``hwprof experiment key-merges [--trace FILE ...]``: a profiler counts keys, not
tuples; :func:`hwprof.traces.keys.trace_keys` packs a tuple into 64 bits, ``pc[31:0]``
and a 32-bit field made of the 64-bit ``x`` (the loaded value, or a branch's target),
so two different tuples can share a key before any profiler sees them. For each
trace and each way of making the field (:data:`hwprof.traces.keys.VALUE_MAPS`:
``mix-fold``, ``(x ^ mix64(x >> 32)) mod 2**32`` with ``mix64`` splitmix64's output
function, the key of the value experiments; ``mix``, the top 32 bits of ``mix64(x)``;
``xor-fold``,
``(x ^ x >> 32) mod 2**32``, the earlier key of ``multihash-values``; ``low``,
``x mod 2**32``, the earlier key of ``stratified-values``, ``multihash-profiles`` and
the benches), it counts exactly the distinct full tuples (64-bit pc and x) and the
distinct keys they give: *merged* = tuples - keys, in % of the distinct tuples.
Beside them: the merges a random 32-bit field would give by chance, the sum
over pcs of ``n (n - 1) / 2 / 2**32`` for a pc's ``n`` distinct values.

Tuples: the loads' ``<pc, value>`` (and the control-flow edges ``<pc, target>``
where the trace has branches), over the whole trace and over its first 1,000,000
loads (one interval of the multi-hash paper's 1M configuration). Traces: the
shipped ones (``--quick``); the full run adds the captured traces that
``multihash-values`` (100M loads) and ``stratified-values`` (40M records of loads
and transfers) read. A full run keeps the measures of an earlier full run's record for the
captured traces whose file names it holds (the name hashes the capture tool, the
workload and its input), so a capture removed from the cache is not made again.
:data:`BOUND`: the merge rate a key must stay under on every trace.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..traces.common import KIND_NAMES, LOAD, TraceError
from ..traces.keys import EDGE_KINDS, VALUE_MAPS, trace_tuples, tuple_keys
from ..traces.tracefile import open_trace
from . import Experiment, cell, write_results

__all__ = ["EXPERIMENTS", "BOUND", "distinct_tuples", "merge_counts", "run"]

#: The largest merged share of distinct tuples (%) a key may have on any trace.
BOUND = 0.01
#: The tuples of one interval of the 1M configuration.
INTERVAL = 1_000_000
#: Distinct pairs held before :func:`distinct_tuples` merges its chunks' pairs again.
COMPACT = 1 << 22
#: What each experiment keyed its tuples with before ``mix-fold``.
EARLIER = {"multihash-values": "xor-fold", "stratified-values": "low",
           "multihash-profiles": "low"}  # fmt: skip


def _unique_pairs(pc: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``(pc, x)`` pairs, sorted by pc then x."""
    order = np.lexsort((x, pc))
    pc, x = pc[order], x[order]
    keep = np.ones(len(pc), bool)
    keep[1:] = (pc[1:] != pc[:-1]) | (x[1:] != x[:-1])
    return pc[keep], x[keep]


def distinct_tuples(chunks) -> tuple[np.ndarray, np.ndarray, int]:
    """``(pcs, xs, tuples)``: the distinct pairs of ``(pc, x)`` chunks (sorted by pc, then
    x; exact, on the full 64-bit words) and the number of pairs read."""
    pcs, xs, held, compacted, total = [], [], 0, 0, 0
    for pc, x in chunks:
        total += len(pc)
        pc, x = _unique_pairs(np.asarray(pc, np.uint64), np.asarray(x, np.uint64))
        pcs.append(pc)
        xs.append(x)
        held += len(pc)
        if held > 2 * compacted + COMPACT:  # amortised: each pass at least doubles
            pc, x = _unique_pairs(np.concatenate(pcs), np.concatenate(xs))
            pcs, xs, held = [pc], [x], len(pc)
            compacted = held
    if not pcs:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64), 0
    pc, x = _unique_pairs(np.concatenate(pcs), np.concatenate(xs))
    return pc, x, total


def merge_counts(pcs: np.ndarray, xs: np.ndarray) -> dict:
    """Distinct pairs, keys per value map, merged %, and the merges of a random field."""
    pairs = len(pcs)
    keys = {m: len(np.unique(tuple_keys(pcs, xs, value_map=m))) for m in VALUE_MAPS}
    field = pcs & np.uint64(0xFFFF_FFFF)
    per_pc = np.unique(field, return_counts=True)[1].astype(np.float64)
    return {"pairs": pairs, "pcs": len(per_pc), "keys": keys,
            "merged": {m: pairs - k for m, k in keys.items()},
            "merged_pct": {m: 100.0 * (pairs - k) / max(pairs, 1) for m, k in keys.items()},
            "chance_merges": float(np.sum(per_pc * (per_pc - 1) / 2) / 2.0**32)}  # fmt: skip


def measure(path: Path, name: str) -> dict:
    """The merge counts of a trace's loads (whole and first interval) and edges."""
    with open_trace(path) as reader:
        counts = reader.footer.get("counts", {})
        header = dict(reader.header)
    out = {"name": name, "file": Path(path).name, "workload": header.get("workload"),
           "scale": header.get("scale", 1), "tuples": {}}  # fmt: skip
    kinds = {"loads": (LOAD,), "edges": EDGE_KINDS}
    for label, codes in kinds.items():
        if not any(counts.get(k) for k in (KIND_NAMES[c] for c in codes)):
            continue
        pcs, xs, total = distinct_tuples(trace_tuples(path, codes))
        entry = {"tuples": total, **merge_counts(pcs, xs)}
        if label == "loads":
            pcs, xs, total = distinct_tuples(trace_tuples(path, codes, limit=INTERVAL))
            entry["first_interval"] = {"tuples": total, **merge_counts(pcs, xs)}
        out["tuples"][label] = entry
    return out


def _sources(quick: bool, traces, log, kept=frozenset()) -> list[tuple[str, Path, bool]]:
    """``[(name, path, kept)]``: ``--trace`` files, else the shipped traces (and, full, the
    captured traces of the value experiments). A captured trace whose ``(name, file
    name)`` is in ``kept`` is not captured again (its path need not exist) and comes
    with ``kept`` true; every other source is measured."""
    if traces:
        return [(Path(p).name, Path(p), False) for p in traces]
    from ..traces import workloads
    from .multihash_values import LIMIT
    from .stratified_values import FULL

    out = [(f"{n} (shipped)", workloads.shipped_trace(n), False) for n in workloads.WORKLOADS]
    if quick:
        return out
    for kinds, limit, what in (("loads,branches", FULL["capture_limit"], "stratified-values"),
                               ("loads", LIMIT, "multihash-values")):  # fmt: skip
        for name in workloads.WORKLOADS:
            scale = workloads.LARGE_SCALE[name]
            label = f"{name} x{scale} ({what})"
            options = {"kinds": kinds, "limit": limit, "scale": scale}
            cached = workloads.cached_trace_path(
                name, skip=workloads.WORKLOADS[name].skip, seed=workloads.DEFAULT_SEED,
                cache=Path("build/traces"), **options)  # fmt: skip
            if (label, cached.name) in kept:
                out.append((label, cached, True))
                continue
            try:
                path = workloads.trace_for(name, progress=True, **options)
            except TraceError as exc:
                log(f"key-merges: {exc}; skipping {name} of {what}")
                continue
            out.append((label, path, False))
    return out


def earlier_measures(path: Path, quick: bool, traces) -> dict:
    """``{(name, file name): measure}`` of the earlier full run's record at ``path`` made
    with the same value maps and interval; empty for ``--quick`` and ``--trace`` runs. A
    captured trace's file name carries a hash of the capture tool, the workload and its
    input, so the same name is the same trace: it is not read (or captured) again."""
    if quick or traces:
        return {}
    try:
        old = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return {}
    if old.get("value_maps") != list(VALUE_MAPS) or old.get("interval") != INTERVAL:
        return {}
    return {(t["name"], t["file"]): t for t in old.get("traces", [])}


def run(output_dir: Path, seed: int, quick: bool, traces=()) -> dict:
    """Measure every trace; write ``key-merges[-quick].json`` and ``.md``; return the record."""
    earlier = earlier_measures(Path(output_dir) / "key-merges.json", quick, traces)
    sources = _sources(quick, traces, print, kept=frozenset(earlier))
    record = {"quick": quick, "bound_pct": BOUND, "value_maps": list(VALUE_MAPS),
              "earlier": EARLIER, "interval": INTERVAL, "traces": [], "complete": False,
              "planned": [name for name, _, _ in sources]}  # fmt: skip
    for name, path, kept in sources:  # written after each trace: a run cut short keeps those done
        done = earlier[(name, Path(path).name)] if kept else None
        print(f"key-merges: {name}" + (" (kept from the earlier run)" if done else ""),
              flush=True)  # fmt: skip
        record["traces"].append(done or measure(path, name))
        record["complete"] = len(record["traces"]) == len(sources)
        record["within_bound"] = within_bound(record)
        write_results(output_dir, "key-merges", quick, record, markdown(record))
    return record


def within_bound(record: dict) -> dict:
    """Per value map: the traces (and tuple kinds) whose merged share exceeds the bound."""
    out = {}
    for m in record["value_maps"]:
        over = [f"{t['name']} {label}" for t in record["traces"]
                for label, e in t["tuples"].items()
                if e["merged_pct"][m] > record["bound_pct"]]  # fmt: skip
        out[m] = {"all": not over, "over": over}
    return out


def _table(record: dict, label: str, first: bool = False) -> list[str]:
    maps = record["value_maps"]
    head = ("| trace | tuples | distinct | pcs | "
            + " | ".join(f"merged `{m}`" for m in maps) + " | random field, by chance |")
    lines = [head, "|" + " --- |" * 1 + " ---: |" * (4 + len(maps))]
    for t in record["traces"]:
        e = t["tuples"].get(label)
        if e is None:
            continue
        e = e["first_interval"] if first else e
        merged = " | ".join(f"{cell(e['merged_pct'][m], '.4f')} % ({e['merged'][m]:,})"
                            for m in maps)  # fmt: skip
        lines.append(f"| {t['name']} | {e['tuples']:,} | {e['pairs']:,} | {e['pcs']:,} | "
                     f"{merged} | {e['chance_merges']:.1f} |")
    return lines


def markdown(record: dict) -> str:
    """The results page, every number from ``record``."""
    bound = record["bound_pct"]
    lines = ["# Merged profile keys (`hwprof experiment key-merges`)", "",
             "Distinct full `<pc, x>` tuples (64-bit pc and x) that share a 64-bit key "
             "`pc[31:0] : f(x)` with another, in % of the distinct tuples (count in "
             "brackets), for each `f` of `hwprof.traces.keys.VALUE_MAPS`: `mix-fold` "
             "(`(x ^ mix64(x >> 32)) mod 2^32`, `mix64` splitmix64's output function: the "
             "key of the value experiments; a value below 2^32 keys as itself), `mix` (the "
             "top 32 bits of `mix64(x)`), "
             "`xor-fold` (`(x ^ x >> 32) mod 2^32`) and `low` (`x mod 2^32`). "
             "\"By chance\": the merges a random 32-bit field would give, "
             "sum over pcs of n(n-1)/2 / 2^32. Bound: "
             f"{bound} % on every trace. Earlier keys: "
             + ", ".join(f"`{e}` {m}" for e, m in record["earlier"].items()) + ".", ""]
    if not record.get("complete", True):
        done = {t["name"] for t in record["traces"]}
        lines += ["**Partial: the run was cut short; not measured: "
                  + ", ".join(n for n in record["planned"] if n not in done) + ".**", ""]
    for m, v in record["within_bound"].items():
        verdict = "within the bound on every trace" if v["all"] else (
            f"over the bound on {len(v['over'])}: " + ", ".join(v["over"]))
        lines.append(f"* `{m}`: {verdict}.")
    lines += ["", "## Loads `<pc, value>`, whole trace", "", *_table(record, "loads"), "",
              f"## Loads, the first {record['interval']:,} of each trace", "",
              *_table(record, "loads", first=True), ""]
    if any("edges" in t["tuples"] for t in record["traces"]):
        lines += ["## Control-flow edges `<pc, target>`, whole trace", "",
                  *_table(record, "edges"), ""]
    return "\n".join(lines)


def headline(record: dict) -> list[tuple[str, str, str]]:
    """Worst merged share per value map over the traces."""
    rows = []
    for m in record["value_maps"]:
        worst = max((e["merged_pct"][m] for t in record["traces"]
                     for e in t["tuples"].values()), default=None)  # fmt: skip
        rows.append((f"largest merged share, `{m}` (%)", "-", cell(worst, ".4f")))
    return rows


EXPERIMENTS = [
    Experiment(
        name="key-merges",
        description="distinct <pc, x> tuples merged into one profile key, per value map",
        run=run, takes_traces=True, headline=headline),
]
