"""Simulate the system in Verilator: build once (cached), run programs, check brr.

:func:`build_system` compiles the system's Verilog with the native harness
(``harness/system.cpp``) into ``build/system/model-<hash>/`` (the hash covers the
Verilog, the harness and the options; the directory appears only when complete).
:func:`run_program` compiles a C program, runs it and returns a :class:`Run`:
status, exit code, cycles, instructions retired, brr retired/taken, console output
and the logged events (every retired brr with pc, freq, outcome and the LFSR state it
read; every LFSR load). :func:`check_brr` replays the events through the golden
model :class:`hwprof.golden.brr.Brr`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..sim.runner import VERILATOR_WAIVED_WARNINGS, verilator_environment
from .firmware import compile_program
from .soc import DEFAULT_RAM_SIZE, system_verilog

__all__ = ["BUILD_ROOT", "CORE_HALF_PERIOD", "build_system", "run_program", "run_image", "Run",
           "check_brr", "TRAP_CAUSES", "trap_cause", "read_loads"]  # fmt: skip

HARNESS = Path(__file__).resolve().parent / "harness" / "system.cpp"
BUILD_ROOT = Path(os.environ.get("HWPROF_SYSTEM_BUILD") or Path("build") / "system")
VERILATOR_OPTIONS = ("-O3", "--x-assign", "fast", "--x-initial", "fast", "--noassert")
OPT = "-O2"
#: The core's half clock period in the harness's time units; a model built with the
#: profiler's ``own_clock`` takes the profiler's at run time (``run_image``'s
#: ``prof_half``: ``CORE_HALF_PERIOD / R`` for R times the core's frequency).
CORE_HALF_PERIOD = 60
#: RISC-V exception codes of the traps PicoRV32 takes (without its interrupt extension).
TRAP_CAUSES = {0: "instruction address misaligned", 2: "illegal instruction",
               3: "breakpoint", 4: "load address misaligned", 6: "store address misaligned",
               11: "environment call"}  # fmt: skip


def trap_cause(insn: int) -> int:
    """The RISC-V cause of a PicoRV32 trap at instruction word ``insn``.

    PicoRV32 stops on every trap without recording a cause; its traps are: ecall,
    ebreak, a misaligned load/store/jump target (``CATCH_MISALIGN``) and any other
    word it does not decode (``CATCH_ILLINSN``), so the word tells which.
    """
    opcode = insn & 0x7F
    if insn == 0x00000073:
        return 11
    if insn == 0x00100073:
        return 3
    if opcode == 0x03:
        return 4
    if opcode == 0x23:
        return 6
    if opcode in (0x63, 0x67, 0x6F):
        return 0
    return 2


def _source_key(ram_size, brr_params, profiler=None, dispatch_filter=None) -> str:
    """Hash of everything the system's Verilog is made from: hwprof's Python sources
    (golden, rtl, tops, catalog, system), the core package's file, amaranth's and
    amaranth-soc's versions, and the parameters. Finds a built model without
    elaborating the design (seconds) again."""
    from importlib import metadata

    from .core import core_source

    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha1()
    files = [root / "catalog.py", core_source(), HARNESS]
    for sub in ("golden", "rtl", "tops", "system"):
        files += sorted((root / sub).rglob("*.py"))
    for f in files:
        digest.update(str(f.relative_to(f.parents[1])).encode())
        digest.update(f.read_bytes())
    versions = [metadata.version(p) for p in ("amaranth", "luna-soc", "verilator")]
    digest.update(json.dumps([versions, ram_size, brr_params, VERILATOR_OPTIONS, OPT]
                             + ([profiler] if profiler is not None else [])
                             + ([f"{dispatch_filter.__module__}.{dispatch_filter.__qualname__}"]
                                if dispatch_filter is not None else []),
                             sort_keys=True, default=str).encode())  # fmt: skip
    return digest.hexdigest()[:16]


def build_system(ram_size: int = DEFAULT_RAM_SIZE, brr_params: dict | None = None,
                 build_root: Path = BUILD_ROOT, profiler: dict | None = None,
                 dispatch_filter=None) -> Path:  # fmt: skip
    """The simulator executable of the system, built on first use.

    Cached twice: ``model-<hash of the Verilog, harness and options>/`` holds the
    executable; ``index/<hash of the sources>`` names that directory, so a later
    call finds it without generating the Verilog again. ``profiler``: build the system
    with the multi-hash profiler (:class:`hwprof.system.soc.System`'s parameter).
    ``dispatch_filter``: builds the selective-dispatch filter (a test's faulty one).
    """
    build_root = Path(build_root).resolve()
    index = build_root / "index" / _source_key(ram_size, brr_params, profiler, dispatch_filter)
    if index.exists():
        exe = build_root / index.read_text().strip() / "obj" / "system"
        if exe.exists():
            return exe
    build_root.mkdir(parents=True, exist_ok=True)
    with open(build_root / ".lock", "w") as lock:  # one build at a time (pytest workers)
        fcntl.flock(lock, fcntl.LOCK_EX)
        if index.exists():  # built by another process while this one waited
            exe = build_root / index.read_text().strip() / "obj" / "system"
            if exe.exists():
                return exe
        return _build(ram_size, brr_params, profiler, build_root, index, dispatch_filter)


def _harness_defines(profiler) -> list[str]:
    """The harness's C++ defines for a system built with ``profiler`` (or without)."""
    if profiler is None:
        return []
    return ["-DHWPROF_PROFILER"] + (["-DHWPROF_PROF_CLOCK"] if profiler.get("own_clock") else [])


def _build(ram_size, brr_params, profiler, build_root: Path, index: Path,
           dispatch_filter=None) -> Path:  # fmt: skip
    verilog = system_verilog(ram_size, brr_params, profiler, dispatch_filter)
    defines = _harness_defines(profiler)
    key = json.dumps({"verilog": verilog, "harness": HARNESS.read_text(),
                      "options": [*VERILATOR_OPTIONS, OPT, *defines]})  # fmt: skip
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    final = build_root / f"model-{digest}"
    exe = final / "obj" / "system"
    if not exe.exists():
        _verilate(verilog, build_root, final, defines)
    index.parent.mkdir(parents=True, exist_ok=True)
    staging = index.with_name(f".{index.name}.{os.getpid()}")
    staging.write_text(final.name)
    os.replace(staging, index)
    return exe


def _verilate(verilog: str, build_root: Path, final: Path, defines=()) -> None:
    verilator_environment()
    build_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=build_root, prefix=".model-"))
    try:
        (tmp / "hwprof_system.v").write_text(verilog)
        env = dict(os.environ)
        flags = " ".join(f for f in env.get("MAKEFLAGS", "").split() if not f.startswith("OPT_"))
        env["MAKEFLAGS"] = f"{flags} OPT_FAST={OPT} OPT_SLOW=-O0 OPT_GLOBAL={OPT}".strip()
        cmd = ["verilator", "--cc", "--exe", "--build", "-j", "2", "--top-module",
               "hwprof_system", *(f"-Wno-{w}" for w in VERILATOR_WAIVED_WARNINGS),
               "-Wno-fatal", *VERILATOR_OPTIONS, *(a for d in defines for a in ("-CFLAGS", d)),
               "--Mdir", str(tmp / "obj"), "-o", "system",
               str(tmp / "hwprof_system.v"), str(HARNESS)]  # fmt: skip
        proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
            raise RuntimeError(f"Verilator build of the system failed:\n{tail}")
        # the object files are not needed to run; keep the directory small
        for f in (tmp / "obj").iterdir():
            if f.suffix in (".o", ".d", ".a", ".cpp", ".h", ".mk", ".dat"):
                f.unlink()
        try:
            tmp.rename(final)
        except OSError:  # another process finished the same build first
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@dataclass
class Run:
    """The outcome of one program run (see :func:`run_image`)."""

    status: str  # exit, trap, bus_error, timeout
    exit_code: int
    cycles: int
    instret: int
    brr_retired: int
    brr_taken: int
    pc: int
    insn: int
    bus_error_addr: int
    lfsr_state: int
    output: str
    wall_seconds: float
    cpu_seconds: float
    #: events: kind (1 brr, 2 load), freq, taken, pc, value (state read / loaded), cycle
    events: dict = field(default_factory=dict, repr=False)
    #: with the profiler: tuples offered to it, and of them dropped (FIFO full)
    offered: int = 0
    dropped: int = 0
    #: with ``loads=``: the offered tuples in order, arrays pc, value, addr, size, dropped
    loads: dict = field(default_factory=dict, repr=False)

    @property
    def cause(self) -> int | None:
        return trap_cause(self.insn) if self.status == "trap" else None

    def summary(self) -> dict:
        keys = ("status", "exit_code", "cycles", "instret", "brr_retired", "brr_taken")
        out = {k: getattr(self, k) for k in keys}
        if self.status == "trap":
            out.update(pc=self.pc, cause=self.cause, insn=self.insn)
        if self.status == "bus_error":
            out.update(pc=self.pc, address=self.bus_error_addr)
        return out


def _read_events(path: Path) -> dict:
    raw = np.fromfile(path, dtype="<u4").reshape(-1, 4) if path.exists() else np.zeros((0, 4))
    raw = raw.astype(np.uint64)
    return {"kind": raw[:, 0] & 0xFF, "freq": raw[:, 0] >> 8 & 0xF,
            "taken": raw[:, 0] >> 12 & 1, "pc": raw[:, 1], "value": raw[:, 2],
            "cycle": raw[:, 3]}  # fmt: skip


def read_loads(path: Path) -> dict:
    """The harness's LOADS_OUT records: arrays ``pc``, ``value``, ``addr``, ``size``,
    ``dropped`` (uint64), one element per tuple offered to the profiler, in order."""
    raw = np.fromfile(path, dtype="<u4").reshape(-1, 4).astype(np.uint64)
    return {"pc": raw[:, 0], "value": raw[:, 1], "addr": raw[:, 2], "size": raw[:, 3] & 0xFF,
            "dropped": raw[:, 3] >> 8 & 1}  # fmt: skip


def run_image(exe: Path, image: bytes, *, cycles: int, seed: int, work: Path,
              events: bool = True, loads: bool = False,
              prof_half: int | None = None) -> Run:  # fmt: skip
    """Run a program image on the simulator ``exe`` (files written under ``work``).

    ``loads``: record the tuples offered to the profiler (:attr:`Run.loads`; the model
    must be built with ``profiler``). ``prof_half``: the profiler's half period where
    the core's is 60 (a model built with ``profiler={..., "own_clock": True}``).
    """
    work = Path(work)
    work.mkdir(parents=True, exist_ok=True)
    (work / "program.bin").write_bytes(image)
    ev, summary, lf = work / "events.bin", work / "summary.json", work / "loads.bin"
    for f in (ev, summary, lf):
        f.unlink(missing_ok=True)
    extra = [str(lf) if loads else "-"] if loads or prof_half is not None else []
    if prof_half is not None:
        extra.append(str(prof_half))
    proc = subprocess.run([str(exe), str(work / "program.bin"), str(cycles), str(seed),
                           str(ev) if events else "-", str(summary), *extra],
                          capture_output=True)  # fmt: skip
    if proc.returncode != 0 or not summary.exists():
        raise RuntimeError(f"system simulator failed ({proc.returncode}): "
                           f"{proc.stderr.decode(errors='replace').strip()[-2000:]}")  # fmt: skip
    s = json.loads(summary.read_text())
    return Run(output=proc.stdout.decode("latin-1"), events=_read_events(ev) if events else {},
               loads=read_loads(lf) if loads else {}, **s)  # fmt: skip


def run_program(sources, *, cycles: int = 100_000_000, seed: int = 1, exe: Path | None = None,
                work: Path | None = None, defines: dict | None = None,
                events: bool = True, extra_flags: tuple[str, ...] = ()) -> Run:  # fmt: skip
    """Compile ``sources`` (C files) and run them on the system (built if needed)."""
    exe = exe or build_system()
    if work is None:
        work = Path(tempfile.mkdtemp(prefix="hwprof-system-"))
    program = compile_program(sources, Path(work) / "fw", defines=defines,
                              extra_flags=extra_flags)  # fmt: skip
    if len(program.image) > DEFAULT_RAM_SIZE:
        raise RuntimeError(f"the program image ({len(program.image)} bytes) does not fit in "
                           f"RAM ({DEFAULT_RAM_SIZE} bytes)")  # fmt: skip
    return run_image(exe, program.image, cycles=cycles, seed=seed, work=work, events=events)


def check_brr(run: Run, brr_params: dict | None = None) -> dict:
    """Replay ``run``'s events through the golden brr model; counts of mismatches.

    For each retired brr: the LFSR state it read must be the golden state, and its
    outcome the golden outcome; each load sets the golden state. The final state
    (after the last event) must equal the system's.
    """
    from ..golden.brr import Brr, BrrConfig

    cfg = BrrConfig(**(brr_params or {}))
    golden = Brr(cfg)
    ev = run.events
    state_mismatch = taken_mismatch = 0
    first = None
    brr = 0
    for i in range(len(ev["kind"])):
        kind, value = int(ev["kind"][i]), int(ev["value"][i])
        if kind == 2:
            golden.step(load_valid=1, load_data=value)
            continue
        freq, taken = int(ev["freq"][i]), int(ev["taken"][i])
        out = golden.step(decode_valid=1, freq=freq)
        bad = (out.state != value, out.taken != taken)
        state_mismatch += bad[0]
        taken_mismatch += bad[1]
        if any(bad) and first is None:
            first = {"brr": brr, "pc": int(ev["pc"][i]), "freq": freq, "state": value,
                     "golden_state": out.state, "taken": taken,
                     "golden_taken": out.taken}  # fmt: skip
        brr += 1
    return {"brr": brr, "state_mismatches": state_mismatch, "taken_mismatches": taken_mismatch,
            "final_state": run.lfsr_state, "golden_final_state": golden.state,
            "first_mismatch": first}  # fmt: skip
