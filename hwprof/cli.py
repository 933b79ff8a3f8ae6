"""The ``hwprof`` command line (see README.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

# not hwprof.traces.tracefile: that imports numpy, which `trace capture` imports only once
# valgrind runs (docs/traces.md, capture speed)
from .run import add_run_arguments, options_from_args
from .traces.common import TraceError

if TYPE_CHECKING:
    from .catalog import Top


# The catalog (every block's RTL, amaranth) loads on first use: `hwprof trace ...` never
# needs it, and importing it costs about half a CPU-second (docs/traces.md, capture speed).
def _tops() -> dict:
    from .catalog import TOPS

    return TOPS


def get_top(name: str) -> Top:
    from .catalog import get_top as get

    return get(name)


def parse_params(top: Top, assignments: list[str]) -> dict:
    from .catalog import parse_params as parse

    return parse(top, assignments)


def _user_errors() -> tuple[type[Exception], ...]:
    """Exceptions that are one line for the user (CatalogError only once the catalog is in)."""
    from .run import RunError

    catalog = sys.modules.get(f"{__package__}.catalog")
    return (UsageError, TraceError, RunError) + ((catalog.CatalogError,) if catalog else ())

__all__ = ["main"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # what a shell shows for a program stopped by Ctrl-C (SIGINT)
EXIT_BROKEN_PIPE = 141  # what a shell shows for a program killed by SIGPIPE


class UsageError(Exception):
    """One line for stderr, exit status 2."""


def _selected(names: list[str]) -> list[Top]:
    return [get_top(n) for n in names] if names else list(_tops().values())


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
    if args.json:
        print(json.dumps([{"name": top.name, "description": top.description,
                           "params": [{"name": p.name, "default": p.default, "kind": p.kind,
                                       "help": p.help} for p in top.params]}
                          for top in _tops().values()], indent=2))  # fmt: skip
        return 0
    for top in _tops().values():
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


def _warn_unhashed_mutation_records(path: Path) -> None:
    """One line on stderr naming the mutation records without the sha256 of their Verilog
    (comparing the others with today's Verilog elaborates every top: the soak test of
    tests/test_docs_tables.py)."""
    if not path.exists():
        return
    unhashed = [r["block"] for r in json.loads(path.read_text()) if not r.get("verilog_sha256")]
    if unhashed:
        print(f"warning: {path}: no verilog_sha256 in the records of {', '.join(unhashed)} "
              "(not checkable against today's Verilog; rerun hwprof mutate TOP -n 100 --json)",
              file=sys.stderr)  # fmt: skip


def cmd_report(args) -> int:
    from .run import journal_path

    if args.top and not (args.fpga or args.asic):
        raise UsageError("--top applies to report --fpga or --asic only")
    if not (args.fpga or args.asic) and (args.jobs is not None or args.scheduler is not None
                                         or args.resume):  # fmt: skip
        raise UsageError("--jobs, --scheduler and --resume apply to report --fpga or --asic")
    if args.fpga and args.asic:
        raise UsageError("report takes --fpga or --asic, not both")
    if args.page_only and not args.asic:
        raise UsageError("--page-only applies to report --asic only")
    if args.docs is not None:
        from .docs_tables import DocsError, fill_docs

        if not Path(args.docs, "records").is_dir():
            raise UsageError(f"{args.docs}/records/ not found (run from the checkout's top)")
        try:
            changed = fill_docs(Path(args.docs))
        except DocsError as exc:
            raise UsageError(str(exc)) from None
        changed += _refresh_asic_page(Path(args.docs))
        print("\n".join(f"updated {page}" for page in changed) or "every table is up to date")
        _warn_unhashed_mutation_records(Path(args.docs, "records", "mutation.json"))
        return 0
    if args.asic:
        from .asic_report import rewrite_page, run_asic_report
        from .synth.asic import AsicError

        if args.page_only:
            try:
                rewrite_page(Path(args.output), Path(args.page))
            except AsicError as exc:
                raise UsageError(str(exc)) from None
            return 0
        tops = [get_top(name) for name in args.top] or None
        _check_asic_tools("osu018")
        run_asic_report(Path(args.output), Path(args.page), tops=tops,
                        run_options=options_from_args(args),
                        journal=journal_path("report-asic"))  # fmt: skip
        return 0
    if args.fpga:
        from .fpga_report import run_fpga_report

        _check_device(args.device)
        tops = [get_top(name) for name in args.top] or None
        run_fpga_report(Path(args.output), device=args.device, tops=tops,
                        run_options=options_from_args(args),
                        journal=journal_path(f"report-fpga-{args.device}"))  # fmt: skip
        return 0
    from .report import run_report
    from .synth import SynthError

    try:
        run_report(Path(args.output), include_slow=args.all)
    except SynthError as exc:
        print(f"hwprof: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


def _refresh_asic_page(docs: Path) -> list[Path]:
    """Write DOCS/asic.md again from DOCS/records/asic.json (it also shows fpga.json)."""
    from .asic_report import rewrite_page

    page = docs / "asic.md"
    if not (docs / "records" / "asic.json").exists():
        return []
    before = page.read_text() if page.exists() else None
    rewrite_page(docs / "records", page)
    return [page] if page.read_text() != before else []


def _check_device(device: str) -> None:
    from .synth.fpga import DEVICES

    if device not in DEVICES:
        raise UsageError(f"unknown device {device!r} (known: {', '.join(DEVICES)})")


def cmd_fpga(args) -> int:
    from .fpga_report import format_fpga_table, fpga_record
    from .synth.fpga import FpgaError

    _check_device(args.device)
    built = _build_all(_selected(args.tops), args.param)
    return _print_records(built, fpga_record, FpgaError, format_fpga_table, args.json,
                          device=args.device)  # fmt: skip


def _print_records(built, make_record, flow_error, format_table, as_json: bool,
                   **options) -> int:
    """One flow record per built top, printed as a table (or JSON); 1 on a flow error."""
    try:
        records = [make_record(top, params, component, **options)
                   for top, params, component in built]  # fmt: skip
    except flow_error as exc:
        print(f"hwprof: {exc}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(records[0] if len(records) == 1 else records, indent=2))
    else:
        print(format_table(records))
    return 0


def _period(text: str) -> float:
    """``--period``: a positive number of nanoseconds (UsageError, one line, otherwise)."""
    import math

    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"--period must be a positive number of ns, not {text!r}")
    return value


def _check_asic_tools(library: str) -> None:
    from .synth.asic import LIBRARIES, MissingTool, check_tools

    if library not in LIBRARIES:
        raise UsageError(f"unknown library {library!r} (known: {', '.join(LIBRARIES)})")
    try:
        check_tools(library)
    except MissingTool as exc:
        raise UsageError(str(exc)) from None


def cmd_asic(args) -> int:
    from .asic_report import asic_record, format_asic_table
    from .synth.asic import AsicError

    period = _period(args.period)
    _check_asic_tools(args.lib)
    built = _build_all(_selected(args.tops), args.param)
    return _print_records(built, asic_record, AsicError, format_asic_table, args.json,
                          library=args.lib, period=period)  # fmt: skip


def cmd_regress(args) -> int:
    from .verify.regress import regress

    tops = _selected(args.tops)
    return 0 if regress(tops, seed=args.seed, cycles=args.cycles) else 1


def cmd_prove(args) -> int:
    from .run import journal_path
    from .verify.prove import provable, prove_tops

    tops = [get_top(n) for n in args.tops] if args.tops else \
        [t for t in _tops().values() if t.properties is not None]
    for top in tops:
        if top.properties is None:
            raise UsageError(f"top {top.name!r} has no properties (have: {', '.join(provable())})")
    if args.param and len(tops) != 1:
        raise UsageError("-p applies to exactly one top; name one top with -p")
    overrides = parse_params(tops[0], args.param) if args.param else {}
    workdir = Path(args.output) if args.output else None
    from .verify.formal import FormalError

    records = [] if args.json else None
    try:
        ok = prove_tops(tops, overrides, workdir=workdir, run_options=options_from_args(args),
                        journal=journal_path("prove"), records=records,
                        out=(lambda line: None) if args.json else print)  # fmt: skip
    except FormalError as exc:
        first = str(exc).splitlines()[0]
        raise UsageError(f"{first} (rerun with -o DIR to keep the yosys log)") from None
    except ValueError as exc:  # a parameter out of range, found by the properties' setup
        raise UsageError(str(exc).splitlines()[0]) from None
    if args.json:
        print(json.dumps(records, indent=2))
    return 0 if ok else 1


def cmd_mutate(args) -> int:
    from .verify.mutate import MutateError, mutate_top

    top = get_top(args.top)
    if top.cocotb_module is None:
        raise UsageError(f"top {top.name!r} has no cocotb regression")
    if args.n < 1:
        raise UsageError(f"-n must be a positive integer, not {args.n}")
    overrides = parse_params(top, args.param)
    top.resolve(overrides)
    only = None
    if args.equiv_timeout is not None and not args.equiv_timeout > 0:
        raise UsageError(f"--equiv-timeout must be positive, not {args.equiv_timeout}")
    if args.only is not None:
        try:
            only = {int(i) for i in args.only.split(",")}
        except ValueError:
            raise UsageError(f"--only takes mutant indices like 3,17, not {args.only!r}") from None
        if not all(1 <= i <= args.n for i in only):
            raise UsageError(f"--only: mutant indices must be between 1 and -n {args.n}")
    from .run import journal_path
    from .synth import write_atomically

    options = options_from_args(args)
    try:
        report = mutate_top(top, args.n, args.seed, overrides=overrides, cycles=args.cycles,
                            workdir=Path(args.output) if args.output else None,
                            only=only, equiv_timeout=args.equiv_timeout,
                            bench=args.bench, run_options=options,
                            journal=journal_path(f"mutate-{top.name}"))  # fmt: skip
    except (MutateError, ValueError) as exc:
        raise UsageError(str(exc).splitlines()[0]) from None
    results = Path(args.records) if args.records else Path("build/mutate") / f"{top.name}.json"
    write_atomically(results, json.dumps({**report.record(), "n": args.n, "bench": args.bench,
                                          "timing": {"seconds": round(report.seconds, 1)}},
                                         indent=1) + "\n")  # fmt: skip
    if args.json:
        survivors = [m.index for m in report.mutants if m.status == "survived"]
        print(json.dumps({"block": top.name, "params": report.params, "n": args.n,
                          "seed": args.seed, "bench": args.bench,
                          "verilog_sha256": report.verilog_sha256,
                          "killed": report.count("killed"),
                          "equivalent": report.count("equivalent"),
                          "equivalent_by_hand": 0, "by_hand_mutants": [],
                          "survived": len(survivors), "survivors": survivors,
                          "seconds": round(report.seconds, 1)}, indent=2))  # fmt: skip
    else:
        print(f"records: {results}")
    return 0 if report.count("survived") + report.count("error") == 0 else 1


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
    from .traces.common import TraceError

    extra = {"traces": args.trace} if args.trace else {}
    if experiment.units:
        extra["run_options"] = options_from_args(args)
    elif args.jobs is not None or args.scheduler is not None or args.resume:
        raise UsageError(f"experiment {args.name!r} runs in one process (no --jobs, "
                         "--scheduler or --resume)")  # fmt: skip
    output = Path(args.output)
    before = _files(output)
    try:  # such an experiment reads every trace before it writes anything
        summary = experiment.run(output, args.seed, args.quick, **extra)
    except TraceError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
        return 0
    from .experiments import headline_table

    record_path = output / f"{experiment.name}{'-quick' if args.quick else ''}.json"
    record = json.loads(record_path.read_text()) if record_path.exists() else {}
    table = headline_table(experiment, record)
    print(f"{experiment.name}: {experiment.description}\n")
    if table:
        print(f"The paper beside ours ({record_path}):\n\n{table}\n")
    written = sorted(path for path, stamp in _files(output).items() if before.get(path) != stamp)
    print("Wrote:" if written else "Wrote nothing.")
    for path in written:
        print(f"  {path}")
    return 0


def _files(directory: Path) -> dict[Path, int]:
    """Every file under ``directory`` with its modification time (ns)."""
    if not directory.is_dir():
        return {}
    return {p: p.stat().st_mtime_ns for p in sorted(directory.rglob("*")) if p.is_file()}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hwprof", description="RTL, golden models and area for hardware profiling blocks."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    lst = sub.add_parser("list", help="every top and its parameters")
    lst.add_argument("--json", action="store_true", help="print the same as JSON")
    lst.set_defaults(func=cmd_list)

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
                     help="also the slow variants (tens of minutes of yosys each; "
                          "without --all the table lists them)")  # fmt: skip
    rep.add_argument("--fpga", action="store_true",
                     help="place and route every top instead (slow): fpga.{md,json}")  # fmt: skip
    rep.add_argument("--asic", action="store_true",
                     help="the ASIC flow on every top instead (slow): asic.json, docs/asic.md")
    rep.add_argument("--page", default="docs/asic.md", help="with --asic: the page to write")
    rep.add_argument("--page-only", action="store_true",
                     help="with --asic: write the page from OUTPUT/asic.json, run nothing")
    rep.add_argument("--device", default="ecp5-85k", help="with --fpga: ecp5-85k or ice40-up5k")
    rep.add_argument("--top", action="append", default=[], metavar="TOP",
                     help="with --fpga/--asic: only TOP, replacing its record")  # fmt: skip
    rep.add_argument("--docs", nargs="?", const="docs", default=None, metavar="DIR",
                     help="instead: fill the generated tables of DIR/*.md (default docs) "
                          "and write DIR/asic.md from the records in DIR/records/ (the "
                          "results headlines from DIR/results/*.json)")  # fmt: skip
    add_run_arguments(rep)
    rep.set_defaults(func=cmd_report)
    fpga = with_tops(sub.add_parser("fpga", help="FPGA place and route (yosys + nextpnr)"))
    fpga.add_argument("--device", default="ecp5-85k", help="ecp5-85k (default) or ice40-up5k")
    fpga.add_argument("--json", action="store_true", help="print JSON records")
    fpga.set_defaults(func=cmd_fpga)
    asic = with_tops(sub.add_parser("asic", help="standard-cell area and static timing "
                                                 "(yosys + OpenSTA, OSU 0.18 um)"))
    asic.add_argument("--lib", default="osu018", metavar="LIB",
                      help="osu018 (area and timing, the default) or sky130-area "
                           "(area estimate from sky130 LEF sizes, no timing)")  # fmt: skip
    asic.add_argument("--period", default="10", metavar="NS",
                      help="clock constraint in ns (default 10); the reported minimum "
                           "period does not depend on it")  # fmt: skip
    asic.add_argument("--json", action="store_true", help="print JSON records")
    asic.set_defaults(func=cmd_asic)
    reg = with_tops(sub.add_parser("regress", help="cocotb regression on Verilator"), False)
    reg.add_argument("--seed", type=int, default=None, help="reproduce a failing seed")
    reg.add_argument("--cycles", type=int, default=None, help="override the cycle count")
    reg.set_defaults(func=cmd_regress)
    prv = with_tops(sub.add_parser("prove", help="prove the blocks' properties (yosys sat)"))
    prv.add_argument("--json", action="store_true", help="print the results as JSON records")
    prv.add_argument("-o", "--output", default=None,
                     help="keep each proof's files (and counterexample VCD) under DIR/TOP/PROPERTY")
    add_run_arguments(prv)
    prv.set_defaults(func=cmd_prove)
    mut = sub.add_parser("mutate", help="mutation coverage of a top's cocotb regression")
    mut.add_argument("top", metavar="TOP", help="catalog name")
    mut.add_argument("-p", "--param", action="append", default=[], metavar="K=V",
                     help="set a parameter of the top")  # fmt: skip
    mut.add_argument("-n", type=int, default=20, help="number of mutants (default 20)")
    mut.add_argument("--seed", type=int, default=1, help="mutant selection and test seed")
    mut.add_argument("--cycles", type=int, default=None, help="override the cycle count")
    mut.add_argument("-o", "--output", default=None, help="keep the mutants' files in DIR")
    mut.add_argument("--json", action="store_true",
                     help="print the tally as a JSON record (docs/records/mutation.json)")
    mut.add_argument("--only", default=None, metavar="I,J",
                     help="run only these mutants of the -n list (replay survivors)")
    mut.add_argument("--equiv-timeout", type=float, default=None, metavar="S",
                     help="seconds for each yosys run of a survivor's equivalence check")
    mut.add_argument("--bench", choices=("cocotb", "native"), default="cocotb",
                     help="what runs each mutant: cocotb (the top's cocotb regression, the "
                     "default) or native (a real trace through a C++ Verilator harness, for "
                     "tops whose catalog entry has a native bench; its survivors then run "
                     "the cocotb regression; docs/verification.md)")  # fmt: skip
    mut.add_argument("--records", default=None, metavar="FILE",
                     help="the run's JSON records (default build/mutate/TOP.json)")
    add_run_arguments(mut)
    mut.set_defaults(func=cmd_mutate)
    exp = sub.add_parser("experiment", help="paper reproduction -> docs/results/")
    exp.add_argument("name", nargs="?", help="experiment name (omit to list them)")
    exp.add_argument("-o", "--output", default="docs/results", help="output directory")
    exp.add_argument("--seed", type=int, default=1, help="seed of every random choice")
    exp.add_argument("--quick", action="store_true", help="reduced size (for tests)")
    exp.add_argument("--json", action="store_true",
                     help="print the run's summary as JSON instead of the table")  # fmt: skip
    exp.add_argument("--trace", action="append", default=[], metavar="FILE",
                     help="trace file (docs/traces.md; convert a legacy gzip'd text trace "
                          "first with 'hwprof trace convert')")  # fmt: skip
    add_run_arguments(exp)
    exp.set_defaults(func=cmd_experiment)
    _trace_parser(sub)
    _system_parser(sub)
    return parser


def _trace_command(name: str):
    def run(args) -> int:
        from . import trace_commands

        return getattr(trace_commands, name)(args)

    return run


def _kinds(text: str) -> str:
    """argparse type of ``--kinds``: validated, returned as given (comma-separated names)."""
    from .traces.common import parse_kinds

    try:
        parse_kinds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _capture(args) -> int:
    """``hwprof trace capture``, without hwprof.trace_commands (numpy) before valgrind runs."""
    try:
        from .traces.capture import capture_command
    except ModuleNotFoundError as exc:
        if exc.name not in ("hwprof.traces.capture",):
            raise
        raise TraceError("trace capture is not available in this hwprof "
                         "(hwprof/traces/capture.py is missing)") from None  # fmt: skip
    return capture_command(args)


def _level(text: str) -> int:
    """argparse type of ``--level``: a zstd compression level, 1..19."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 19:
        raise argparse.ArgumentTypeError(f"expected a zstd level 1..19, not {text!r}")
    return value


def _count(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, not {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, not {text!r}")
    return value


def _system_parser(sub) -> None:
    """``hwprof system run|generate`` (docs/system.md)."""
    from .system.commands import add_parser

    add_parser(sub)


def _trace_parser(sub) -> None:
    """``hwprof trace capture|info|dump|convert`` (docs/traces.md)."""
    trace = sub.add_parser("trace", help="program traces: capture, info, dump, convert")
    tsub = trace.add_subparsers(dest="trace_command", required=True)
    cap = tsub.add_parser("capture", help="record a program with our valgrind tool")
    cap.add_argument("-o", "--output", required=True, metavar="FILE", help="trace file to write")
    cap.add_argument(
        "--kinds",
        type=_kinds,
        default="loads,branches",
        help="record kinds: loads,branches[,blocks] (default: loads,branches)",
    )
    cap.add_argument(
        "--skip", type=_count, default=0, metavar="N", help="instructions to skip before recording"
    )
    cap.add_argument("--limit", type=_count, default=None, metavar="N", help="stop after N records")
    cap.add_argument("--level", type=_level, default=None, metavar="L",
                     help="zstd level of the file (default 1, the fastest; "
                          "'trace convert --level' recompresses)")  # fmt: skip
    cap.add_argument("command", nargs="+", metavar="CMD", help="-- CMD ARGS...: the program")
    cap.set_defaults(func=_capture)
    info = tsub.add_parser("info", help="header, counts, tuples per interval, top PCs")
    info.add_argument("file", metavar="FILE")
    info.add_argument("--top", type=_count, default=10, metavar="N", help="top PCs to list")
    info.add_argument("--json", action="store_true", help="print the same as JSON")
    info.set_defaults(func=_trace_command("cmd_info"))
    dump = tsub.add_parser("dump", help="records as hex text, one a line")
    dump.add_argument("file", metavar="FILE")
    dump.add_argument(
        "--kind",
        choices=("loads", "branches"),
        default=None,
        help="only loads ('L pc addr value size') or branches ('B pc target kind')",
    )
    dump.add_argument("--limit", type=_count, default=None, metavar="N", help="first N records")
    dump.set_defaults(func=_trace_command("cmd_dump"))
    conv = tsub.add_parser("convert", help="a legacy gzip'd text edge trace (or a trace, to "
                                           "recompress it) -> trace format")  # fmt: skip
    conv.add_argument("source", metavar="OLD")
    conv.add_argument("target", metavar="NEW")
    conv.add_argument("--level", type=_level, default=None, metavar="L",
                      help="zstd level (default 3; 19 for the smallest file)")  # fmt: skip
    conv.set_defaults(func=_trace_command("cmd_convert"))  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except BrokenPipeError:  # the reader closed early (`hwprof list | head -1`): end quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the buffered rest goes nowhere at exit
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("hwprof: interrupted; the units finished so far stay in build/runs/ "
              "(rerun with --resume to skip them)", file=sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    except Exception as exc:
        if not isinstance(exc, _user_errors()):
            raise
        print(f"hwprof: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
