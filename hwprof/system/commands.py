"""``hwprof system run`` and ``hwprof system generate`` (docs/system.md)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["cmd_run", "cmd_generate", "EXIT_USAGE", "EXIT_TRAP", "EXIT_TIMEOUT",
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
    from .firmware import CompileError, compile_program
    from .sim import TRAP_CAUSES, build_system, run_image
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
    with tempfile.TemporaryDirectory(prefix="hwprof-system-") as work:
        try:
            program = compile_program([source], Path(work) / "fw")
        except CompileError as exc:
            print(str(exc), file=sys.stderr)
            return _error(f"{source} did not compile")
        if len(program.image) > DEFAULT_RAM_SIZE:
            return _error(f"{source}: the program ({len(program.image)} bytes) does not fit in "
                          f"RAM ({DEFAULT_RAM_SIZE} bytes)")  # fmt: skip
        if sys.stderr.isatty():
            print("hwprof: building the system model if needed...", file=sys.stderr, flush=True)
        exe = build_system()
        run = run_image(exe, program.image, cycles=args.cycles, seed=args.seed, work=Path(work),
                        events=False)  # fmt: skip
    summary = run.summary()
    if args.json:
        print(json.dumps({**summary, "output": run.output}))
    else:
        sys.stdout.write(run.output)
        if run.output and not run.output.endswith("\n"):
            sys.stdout.write("\n")
        print(f"hwprof: {run.status}: cycles {run.cycles}, instructions {run.instret}, "
              f"brr retired {run.brr_retired}, taken {run.brr_taken}")  # fmt: skip
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


def add_parser(sub) -> None:
    """``hwprof system run|generate``."""
    system = sub.add_parser("system", help="the RISC-V system: run firmware, generate Verilog")
    ssub = system.add_subparsers(dest="system_command", required=True)
    run = ssub.add_parser("run", help="compile PROGRAM.c and run it on the system (Verilator)")
    run.add_argument("program", metavar="PROGRAM.c")
    run.add_argument("--cycles", type=int, default=DEFAULT_CYCLES, metavar="N",
                     help=f"stop after N cycles (default {DEFAULT_CYCLES:,})")  # fmt: skip
    run.add_argument("--seed", type=lambda t: int(t, 0), default=1, metavar="S",
                     help="brr unit's LFSR state at start (default 1)")  # fmt: skip
    run.add_argument("--json", action="store_true",
                     help="one JSON object (summary, exit code, console output)")  # fmt: skip
    run.set_defaults(func=cmd_run)
    gen = ssub.add_parser("generate", help="the system's Verilog, header, linker script, "
                                           "register map")  # fmt: skip
    gen.add_argument("-o", "--output", required=True, metavar="DIR")
    gen.set_defaults(func=cmd_generate)
