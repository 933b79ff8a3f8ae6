"""The ``hwprof`` command line (see README.md)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .catalog import TOPS, CatalogError, Top, get_top, parse_params

__all__ = ["main"]

EXIT_USAGE = 2


class UsageError(Exception):
    """One line for stderr, exit status 2."""


def _selected(names: list[str]) -> list[Top]:
    return [get_top(n) for n in names] if names else list(TOPS.values())


def _build_all(tops: list[Top], assignments: list[str]) -> list[tuple[Top, dict, object]]:
    """Validate every top and its parameters *before* any output is written."""
    if assignments and len(tops) != 1:
        raise UsageError("-p applies to exactly one top; name one top with -p")
    built = []
    for top in tops:
        overrides = parse_params(top, assignments)
        built.append((top, top.resolve(overrides), top.construct(overrides)))
    return built


def cmd_list(args) -> int:
    for top in TOPS.values():
        print(f"{top.name}: {top.description}")
        for p in top.params:
            default = "derived" if p.default is None else json.dumps(p.default)
            print(f"    {p.name}={default}  ({p.kind}) {p.help}")
    return 0


def cmd_generate(args) -> int:
    from .synth import to_verilog, write_atomically

    built = _build_all(_selected(args.tops), args.param)
    texts = [(top, to_verilog(component, top.name)) for top, _, component in built]
    out = Path(args.output)
    for top, text in texts:
        write_atomically(out / f"{top.name}.v", text)
        print(out / f"{top.name}.v")
    return 0


def cmd_synth(args) -> int:
    from .report import area_record, format_table

    built = _build_all(_selected(args.tops), args.param)
    records = [area_record(top, params, component) for top, params, component in built]
    if args.json:
        print(json.dumps(records[0] if len(records) == 1 else records, indent=2))
    else:
        print(format_table(records))
    return 0


def cmd_report(args) -> int:
    if args.top and not args.fpga:
        raise UsageError("--top applies to report --fpga only")
    if args.fpga:
        from .fpga_report import run_fpga_report

        _check_device(args.device)
        tops = [get_top(name) for name in args.top] or None
        run_fpga_report(Path(args.output), device=args.device, tops=tops)
        return 0
    from .report import run_report

    run_report(Path(args.output), include_slow=args.all)
    return 0


def _check_device(device: str) -> None:
    from .synth.fpga import DEVICES

    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r} (known: {', '.join(DEVICES)})")


def cmd_fpga(args) -> int:
    from .fpga_report import format_fpga_table, fpga_record
    from .synth.fpga import FpgaError

    _check_device(args.device)
    built = _build_all(_selected(args.tops), args.param)
    try:
        records = [fpga_record(top, params, component, device=args.device)
                   for top, params, component in built]  # fmt: skip
    except FpgaError as exc:
        print(f"hwprof: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(records[0] if len(records) == 1 else records, indent=2))
    else:
        print(format_fpga_table(records))
    return 0


def cmd_regress(args) -> int:
    from .regress import regress

    tops = _selected(args.tops)
    return 0 if regress(tops, seed=args.seed, cycles=args.cycles) else 1


def cmd_experiment(args) -> int:
    from .experiments import all_experiments

    experiments = all_experiments()
    if args.name is None:
        for experiment in experiments.values():
            print(f"{experiment.name}: {experiment.description}")
        return 0
    if args.name not in experiments:
        known = ", ".join(sorted(experiments)) or "none"
        raise UsageError(f"unknown experiment {args.name!r} (known: {known})")
    experiment = experiments[args.name]
    if args.trace and not experiment.takes_traces:
        raise UsageError(f"experiment {args.name!r} does not take --trace")
    from .experiments.traces import TraceError

    extra = {"traces": args.trace} if args.trace else {}
    try:  # such an experiment reads every trace before it writes anything
        summary = experiment.run(Path(args.output), args.seed, args.quick, **extra)
    except TraceError as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(summary, indent=2, default=str))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hwprof", description="RTL, golden models and area for hardware profiling blocks."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="every top and its parameters").set_defaults(func=cmd_list)

    def with_tops(p, params=True):
        p.add_argument("tops", nargs="*", metavar="TOP", help="catalog names (default: all)")
        if params:
            p.add_argument("-p", "--param", action="append", default=[], metavar="K=V",
                           help="set a parameter of the (single) top")  # fmt: skip
        return p

    gen = with_tops(sub.add_parser("generate", help="write Verilog, one file per top"))
    gen.add_argument("-o", "--output", default="build/verilog", help="output directory")
    gen.set_defaults(func=cmd_generate)
    syn = with_tops(sub.add_parser("synth", help="area records (yosys + ABC)"))
    syn.add_argument("--json", action="store_true", help="print JSON records")
    syn.set_defaults(func=cmd_synth)
    rep = sub.add_parser("report", help="generate + synthesize every top, area table")
    rep.add_argument("-o", "--output", default="build", help="output directory")
    rep.add_argument("--all", action="store_true",
                     help="also the slow variants (multihash 1M/0.1%%: half an hour)")  # fmt: skip
    rep.add_argument("--fpga", action="store_true",
                     help="place and route every top instead (slow): fpga.{md,json}")  # fmt: skip
    rep.add_argument("--device", default="ecp5-85k", help="with --fpga: ecp5-85k or ice40-up5k")
    rep.add_argument("--top", action="append", default=[], metavar="TOP",
                     help="with --fpga: only TOP, replacing its row in fpga.json")  # fmt: skip
    rep.set_defaults(func=cmd_report)
    fpga = with_tops(sub.add_parser("fpga", help="FPGA place and route (yosys + nextpnr)"))
    fpga.add_argument("--device", default="ecp5-85k", help="ecp5-85k (default) or ice40-up5k")
    fpga.add_argument("--json", action="store_true", help="print JSON records")
    fpga.set_defaults(func=cmd_fpga)
    reg = with_tops(sub.add_parser("regress", help="cocotb regression on Verilator"), False)
    reg.add_argument("--seed", type=int, default=None, help="reproduce a failing seed")
    reg.add_argument("--cycles", type=int, default=None, help="override the cycle count")
    reg.set_defaults(func=cmd_regress)
    exp = sub.add_parser("experiment", help="paper reproduction -> docs/results/")
    exp.add_argument("name", nargs="?", help="experiment name (omit to list them)")
    exp.add_argument("-o", "--output", default="docs/results", help="output directory")
    exp.add_argument("--seed", type=int, default=1, help="seed of every random choice")
    exp.add_argument("--quick", action="store_true", help="reduced size (for tests)")
    exp.add_argument("--trace", action="append", default=[], metavar="FILE",
                     help="trace file (gzip'd '<pc> <value>' hex lines), repeatable")  # fmt: skip
    exp.set_defaults(func=cmd_experiment)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (CatalogError, UsageError) as exc:
        print(f"hwprof: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
