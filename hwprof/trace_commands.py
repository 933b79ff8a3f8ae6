"""The ``hwprof trace`` commands: info, dump, convert (capture lives in hwprof/sim/)."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from .golden.trace_stats import IntervalTuples, PcCounts
from .traces.lackey import open_for_convert
from .traces.tracefile import (
    BRANCH_KINDS,
    COLUMNS,
    EDGE,
    KIND_NAMES,
    LOAD,
    TraceWriter,
    open_trace,
    parse_kinds,
)

__all__ = ["cmd_info", "cmd_dump", "cmd_convert", "INTERVALS", "PERCENTS"]

#: The multi-hash paper's interval lengths and candidate thresholds (percent).
INTERVALS = (10_000, 1_000_000)
PERCENTS = (1.0, 0.1)
TOP_PCS = 10


def _group(n: int) -> str:
    return f"{n:,}"


def trace_info(path, top: int = TOP_PCS) -> dict:
    """Everything ``hwprof trace info`` prints, as a dict (one streaming pass)."""
    reader = open_trace(path)
    has_edges = reader.counts.get("edge", 0) > 0
    stats = {}
    has_loads = reader.counts.get("load", 0) > 0 or not has_edges
    for length in INTERVALS:
        if has_loads:
            stats[("loads", "<pc,value>", length)] = IntervalTuples(length, PERCENTS)
            stats[("loads", "<pc,address>", length)] = IntervalTuples(length, PERCENTS)
        if has_edges:
            stats[("edges", "<source,destination>", length)] = IntervalTuples(length, PERCENTS)
    pcs = PcCounts()
    records = 0
    with reader:
        for chunk in reader.chunks(columns=("kind", "pc", "addr", "value")):
            records += len(chunk)
            is_load = chunk.kind == LOAD
            pcs.add(chunk.pc, is_load)
            loads = None if is_load.all() else is_load
            edges = chunk.kind == EDGE if has_edges else None
            for (group, tuple_name, _), acc in stats.items():
                mask = loads if group == "loads" else edges
                pc = chunk.pc if mask is None else chunk.pc[mask]
                x = chunk.value if tuple_name == "<pc,value>" else chunk.addr
                acc.add(pc, x if mask is None else x[mask])
    tuples = []
    for (group, tuple_name, length), acc in stats.items():
        acc.finish()
        row = {"records": group, "tuple": tuple_name, "interval": length,
               "intervals": acc.intervals, "leftover": acc.leftover,
               "distinct": float(acc.distinct.mean()) if acc.intervals else None,
               "candidates": {p: (float(acc.candidates[p].mean()) if acc.intervals else None)
                              for p in PERCENTS},
               "thresholds": dict(zip(PERCENTS, acc.thresholds, strict=True))}  # fmt: skip
        tuples.append(row)
    return {"path": str(path), "header": reader.header, "footer": reader.footer,
            "records": records, "size": os.path.getsize(path), "tuples": tuples,
            "top_pcs": pcs.top(top), "distinct_pcs": len(pcs.pcs)}  # fmt: skip


def format_info(info: dict) -> str:
    header, footer = info["header"], info["footer"]
    version = header.get("format_version")
    fmt = header.get("format", f"hwprof trace format {version}")
    lines = [f"{info['path']}: {fmt}, {_group(info['records'])} records, "
             f"{_group(info['size'])} bytes"]  # fmt: skip
    argv = header.get("argv")
    for key in ("program", "argv", "captured", "kinds", "options", "comment", "converted_from"):
        value = header.get(key)
        if value in (None, "", [], {}):
            continue
        if key == "argv":
            value = shlex.join(str(a) for a in argv).replace("\n", "\\n")
        elif key == "kinds" and isinstance(value, list):
            value = ", ".join(value)
        lines.append(f"{key + ':':15} {value}")
    extra = {k: v for k, v in footer.items() if k not in ("counts", "records", "chunks")}
    if extra:
        lines.append(f"{'footer:':15} {extra}")
    lines.append("records per kind:")
    total = max(1, info["records"])
    for name, count in sorted(footer.get("counts", {}).items(), key=lambda kv: -kv[1]):
        lines.append(f"  {name:16} {_group(count):>15} {100 * count / total:6.2f}%")
    lines.append("tuples per interval, mean over the complete intervals (multi-hash paper "
                 "Figs. 4-5);")  # fmt: skip
    lines.append("  a candidate is a tuple whose count in the interval reaches "
                 "T = ceil(interval x threshold)")  # fmt: skip
    cands = "".join(f"  cand>={p:g}%" for p in PERCENTS)
    lines.append(f"  {'records':7} {'tuple':21} {'interval':>9} {'intervals':>9} "
                 f"{'distinct':>10}{cands}  (T)")  # fmt: skip
    for row in info["tuples"]:
        if row["intervals"]:
            values = f"{row['distinct']:10.1f}" + "".join(
                f"{row['candidates'][p]:12.2f}" for p in PERCENTS
            )
        else:
            values = f"{'-':>10}" + "".join(f"{'-':>12}" for _ in PERCENTS)
        ts = ",".join(str(row["thresholds"][p]) for p in PERCENTS)
        lines.append(f"  {row['records']:7} {row['tuple']:21} {_group(row['interval']):>9} "
                     f"{row['intervals']:9} {values}  ({ts})")  # fmt: skip
    lines.append(f"top PCs ({_group(info['distinct_pcs'])} distinct), records: loads / others:")
    for pc, loads, others in info["top_pcs"]:
        share = 100 * (loads + others) / total
        lines.append(f"  {pc:#018x} {_group(loads):>13} / {_group(others):<13} {share:6.2f}%")
    return "\n".join(lines)


def cmd_info(args) -> int:
    info = trace_info(args.file, top=args.top)
    if args.json:
        import json

        print(json.dumps(info, indent=2, default=str))
    else:
        print(format_info(info))
    return 0


def _dump_lines(chunk) -> list[str]:
    kind = chunk.kind.tolist()
    pc, addr, value, size = (c.tolist() for c in (chunk.pc, chunk.addr, chunk.value, chunk.size))
    out = []
    for k, p, a, v, s in zip(kind, pc, addr, value, size, strict=True):
        if k == LOAD:
            out.append(f"L {p:x} {a:x} {v:x} {s:x}")
        elif k == EDGE:
            out.append(f"E {p:x} {a:x}")
        elif k in BRANCH_KINDS:
            out.append(f"B {p:x} {a:x} {KIND_NAMES[k]}")
        else:
            out.append(f"S {p:x}")
    return out


def cmd_dump(args) -> int:
    kinds = None if args.kind is None else parse_kinds(args.kind)
    left = args.limit
    with open_trace(args.file) as reader:
        for chunk in reader.chunks(kinds=kinds, columns=COLUMNS):
            if left is not None:
                if left <= 0:
                    break
                chunk = type(chunk)(*(c[:left] for c in chunk.columns()))
                left -= len(chunk)
            lines = _dump_lines(chunk)
            sys.stdout.write("\n".join(lines) + "\n")
    return 0


def cmd_convert(args) -> int:
    source, target = Path(args.source), Path(args.target)
    with open_for_convert(source) as reader:
        names = [KIND_NAMES[k] for k in sorted(KIND_NAMES) if reader.counts.get(KIND_NAMES[k])]
        header = {"program": reader.header.get("program"), "argv": reader.header.get("argv", []),
                  "kinds": reader.header.get("kinds", names),
                  "options": reader.header.get("options", {}),
                  "converted_from": str(source)}  # fmt: skip
        if reader.header.get("comment"):
            header["comment"] = reader.header["comment"]
        if reader.header.get("captured"):
            header["captured"] = reader.header["captured"]
        level = {} if getattr(args, "level", None) is None else {"level": args.level}
        with TraceWriter(target, header=header, **level) as writer:
            for chunk in reader.chunks():
                writer.write(kind=chunk.kind, size=chunk.size, pc=chunk.pc, addr=chunk.addr,
                             value=chunk.value)  # fmt: skip
            extra = {k: v for k, v in reader.footer.items()
                     if k not in ("counts", "records", "chunks")}  # fmt: skip
            writer.close(extra)
    print(f"{target}: {_group(writer.records)} records in {writer.chunks} chunks")
    return 0
