"""The generated Verilog on whole real traces, checked against the golden models.

``python -m hwprof.verify.trace_verify [TOP..] [--trace F..] [--limit N] [--ready R]``
streams every ``<load pc, value>`` tuple of each trace (default: the shipped
``hwprof/traces/shipped/*.trace``) through a native Verilator build of each top
(:class:`hwprof.sim.native.StreamHarness`, ``hwprof/sim/native/stream.cpp``) and
compares what the Verilog sends with the golden model's output for the same
tuples:

The tops checked are those of the catalog with a trace check
(:class:`hwprof.block.TraceCheck`):

* a top whose output is messages: every message's cycle, key and count. With the
  output always ready (default) nothing stalls, so the check's golden bulk path,
  where it has one (``counts``: the count sent for each tuple, tested bit for bit
  against the cycle model), gives the message of tuple ``t`` in cycle ``t +
  latency`` (the golden model's ``latency``). With ``--ready R < 1``, or without a
  bulk path, the output is back-pressured on a seeded fraction of cycles and the
  golden cycle model is stepped under the same stimulus
  (:func:`hwprof.sim.native.golden_transfers`; Python per cycle, for slices).
* a top whose check reads out profiles (``profiles``): every interval profile read
  out (records split at the end markers) against the check's golden profiles.

Prints one line per (top, trace) and, with ``--markdown``, the table of
docs/verification.md. Exit status 1 if anything mismatches.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..block import TraceCheck
from ..catalog import TOPS, CatalogError, get_top, parse_params
from ..sim.native import (
    OPT,
    StreamHarness,
    compare_counts,
    compare_transfers,
    golden_transfers,
)
from ..synth import to_verilog
from ..traces.keys import PORT_VALUE_MAP, trace_keys
from ..traces.tracefile import open_trace
from ..traces.workloads import SHIPPED_DIR

__all__ = ["checked_tops", "golden_model", "bulk_counts", "Check", "main"]

def checked_tops() -> list[str]:
    """The catalog's tops that have a trace check (:class:`hwprof.block.TraceCheck`)."""
    return [name for name, top in TOPS.items() if top.trace_check is not None]


def _trace_check(name: str) -> TraceCheck:
    check = get_top(name).trace_check
    if check is None:
        raise ValueError(f"no trace check for top {name!r} (one of {', '.join(checked_tops())})")
    return check


def golden_model(name: str, params: dict):
    """The golden cycle model of top ``name`` with its resolved ``params``."""
    return _trace_check(name).model(params)


def bulk_counts(name: str, params: dict, keys: np.ndarray):
    """Per-tuple message counts of the golden bulk path, or None if it has none."""
    counts = _trace_check(name).counts
    return None if counts is None else counts(params, keys)


@dataclass
class Check:
    """A top built once for trace checks (``opt``: its C++ optimisation)."""

    name: str
    params: dict
    harness: StreamHarness

    @classmethod
    def build(cls, name: str, overrides: dict | None = None, opt: str = OPT) -> Check:
        top = get_top(name)
        return cls.of(name, top.construct(overrides or {}), top.resolve(overrides or {}), opt)

    @classmethod
    def of(cls, name: str, component, params: dict, opt: str = OPT) -> Check:
        """Top ``name``'s check on ``component`` (e.g. a mutant of the block) built with
        ``params`` (resolved: the golden model's)."""
        harness = StreamHarness(component, to_verilog(component, name), name, opt=opt)
        return cls(name, params, harness)

    drain_cycles: int | None = None

    def drain(self) -> int:
        """Cycles after the last tuple: the model's latency, or a multi-hash readout
        (``drain_cycles`` if set)."""
        if self.drain_cycles is not None:
            return self.drain_cycles
        drain = _trace_check(self.name).drain
        if drain is not None:
            return drain(self.params)
        return getattr(golden_model(self.name, self.params), "latency", 1) + 2

    def run(self, keys, work: Path, ready: float = 1.0, seed: int = 1, golden=None) -> dict:
        """Stream ``keys``; the comparison with the golden model (``golden``: the
        parameters' model unless given, e.g. a wrong one to show the check fails)."""
        keys = np.asarray(keys, dtype=np.uint64)
        run = self.harness.run(keys, work, self.drain(), ready, seed)
        started = time.perf_counter()
        if _trace_check(self.name).profiles is not None:
            report = self._profiles(run, keys, golden)
        else:
            model = golden if golden is not None else golden_model(self.name, self.params)
            counts = bulk_counts(self.name, self.params, keys) if golden is None else None
            if ready >= 1.0 and counts is not None:
                report = compare_counts(run, keys, counts, getattr(model, "latency", 1))
            else:
                want = golden_transfers(model, keys, self.drain(), ready, seed)
                report = compare_transfers(run, want)
        report.update(top=self.name, rtl_cycles_per_second=round(run.cycles_per_second),
                      rtl_cpu_cycles_per_second=round(run.cpu_cycles_per_second),
                      rtl_seconds=round(run.seconds, 2),
                      check_seconds=round(time.perf_counter() - started, 2))  # fmt: skip
        return report

    def _profiles(self, run, keys, golden) -> dict:
        check = _trace_check(self.name)
        got = check.readout(run)
        want = golden.run(keys) if golden is not None else check.profiles(self.params, keys)
        differ = sum(a != b for a, b in zip(got, want, strict=False)) + abs(len(got) - len(want))
        flat_got = [r for p in got for r in p]
        flat_want = [r for p in want for r in p]
        records = sum(a != b for a, b in zip(flat_got, flat_want, strict=False))
        records += abs(len(flat_got) - len(flat_want))
        return {"cycles": run.cycles, "tuples": run.tuples, "stalls": run.stalls,
                "intervals": len(want), "messages": len(flat_want),
                "mismatches": differ + records, "interval_mismatches": differ}  # fmt: skip


def _row(r: dict) -> str:
    rate = f"{r['rtl_cpu_cycles_per_second']:,} ({r['rtl_cycles_per_second']:,})"
    return (
        f"| {r['top']} | {r['trace']} | {r['tuples']:,} | {r['cycles']:,} | "
        f"{r['messages']:,} | {r['stalls']:,} | {r['mismatches']} | {rate} |"
    )


def work_dir(path: Path) -> Path:
    """``path`` as a directory for the runs' files, created (with its parents) if missing;
    ValueError naming it if it cannot be (a file there, no permission)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--work {path}: cannot be used as a directory ({exc.strerror})") from None
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hwprof.verify.trace_verify",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("tops", nargs="*", default=checked_tops(),
                        help="tops (default: every top with a trace check)")
    parser.add_argument(
        "--trace", nargs="+", type=Path, help="trace files (default: the shipped traces)"
    )
    parser.add_argument("--limit", type=int, help="the first N load tuples of each trace")
    parser.add_argument(
        "--ready",
        type=float,
        default=1.0,
        help="fraction of cycles with the output ready (< 1: cycle model)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the ready pattern")
    parser.add_argument(
        "-p",
        dest="params",
        action="append",
        default=[],
        metavar="K=V",
        help="top parameter (one top only)",
    )
    parser.add_argument("--drain", type=int,
                        help="cycles run after the last tuple (default: the golden model's "
                        "latency + 2, or the top's readout time)")  # fmt: skip
    parser.add_argument("--markdown", action="store_true", help="print a markdown table")
    parser.add_argument("--work", type=Path,
                        help="directory for key and output files (created if missing)")
    args = parser.parse_args(argv)
    traces = args.trace or sorted(SHIPPED_DIR.glob("*.trace"))
    for t in traces:
        if not Path(t).is_file():
            print(f"error: {t}: no such trace", file=sys.stderr)
            return 2
    try:
        if args.params and len(args.tops) != 1:
            raise ValueError("-p needs exactly one top")
        if not 0 < args.ready <= 1:
            raise ValueError(f"--ready must be in (0, 1], not {args.ready}")
        unknown = [name for name in args.tops if name not in checked_tops()]
        if unknown:
            raise ValueError(f"no trace check for {', '.join(unknown)} "
                             f"(one of {', '.join(checked_tops())})")
        for t in traces:
            open_trace(t).close()  # a malformed trace fails here, before any build
        overrides = parse_params(get_top(args.tops[0]), args.params) if args.params else {}
        if args.drain is not None and args.drain < 0:
            raise ValueError(f"--drain must be >= 0, not {args.drain}")
        if args.work is not None:
            work_dir(args.work)  # before the builds: a bad --work fails first
        checks = [Check.build(name, overrides) for name in args.tops]
        for check in checks:
            check.drain_cycles = args.drain
    except (ValueError, CatalogError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows, bad = [], 0
    for t in traces:
        try:
            keys = np.concatenate(list(trace_keys(t, limit=args.limit, value_map=PORT_VALUE_MAP)))
        except ValueError as exc:  # TraceError: a chunk that does not decode
            print(f"error: {exc}", file=sys.stderr)
            return 2
        for check in checks:
            with tempfile.TemporaryDirectory(dir=args.work) as tmp:
                r = {"trace": Path(t).name, **check.run(keys, Path(tmp), args.ready, args.seed)}
            print(json.dumps(r), flush=True)
            rows.append(r)
            bad += r["mismatches"] != 0
    if args.markdown:
        print(
            "\n| top | trace | tuples | cycles | messages | stalls | mismatches "
            "| cycles/s CPU (wall) |"
        )
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        for r in rows:
            print(_row(r))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
