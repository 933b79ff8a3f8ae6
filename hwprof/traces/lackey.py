"""Edge-profile traces: ``<source, destination>`` of consecutive superblocks (valgrind lackey).

Trace file format: gzip'd text, one tuple per line, two hexadecimal numbers
``<pc> <value>`` (source and destination superblock address, no ``0x``).
Lines starting with ``#`` are comments (the legacy format: the binary format of
:mod:`hwprof.traces.tracefile` replaces it, and reads it as ``edge`` records).
:func:`read_trace` returns the keys ``(pc << 32) | value``
(:func:`hwprof.golden.hashing.pack_key` layout, 32-bit fields: both addresses
are truncated to their low 32 bits) of either format.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from .tracefile import EDGE, LOAD, TraceError, open_trace

__all__ = ["TraceError", "read_trace", "write_trace", "capture", "WORKLOADS"]

MASK32 = (1 << 32) - 1


def write_trace(path: Path, pcs, values, comment: str = "") -> None:
    """Write ``pcs[i] values[i]`` pairs as a gzip'd text trace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt") as out:
        if comment:
            out.write(f"# {comment}\n")
        for pc, value in zip(pcs, values, strict=True):
            out.write(f"{int(pc):x} {int(value):x}\n")


def read_trace(path: Path) -> np.ndarray:
    """Keys ``(pc << 32) | value`` of a trace file; :class:`TraceError` if malformed.

    A legacy gzip'd text trace gives its edges ``<source, destination>``; a trace
    of the binary format (:mod:`hwprof.traces.tracefile`) its edges if it holds
    any, else its loads' ``<pc, value>``. Fields keep their low 32 bits.
    """
    with open_trace(path) as trace:
        if trace.counts.get("edge"):
            chunks = list(trace.keys(field="address", kinds=[EDGE]))
        else:
            chunks = list(trace.keys(field="value", kinds=[LOAD]))
    keys = np.concatenate(chunks) if chunks else np.zeros(0, np.uint64)
    if not len(keys):
        raise TraceError(f"{path}: no tuples")
    return keys


def _workload_inputs(name: str, seed: int, work: Path) -> list[str]:
    rng = np.random.default_rng(seed)
    data = work / "input.txt"
    if name == "gzip":
        words = rng.zipf(1.3, 15_000) % 5000
        data.write_text("\n".join(f"w{w} {w * 7919 % 1000}" for w in words) + "\n")
        return ["gzip", "-c", str(data)]
    if name == "sort":
        data.write_text("\n".join(f"{v:08x}" for v in rng.integers(0, 1 << 32, 6_000)) + "\n")
        return ["sort", str(data)]
    if name == "awk":
        data.write_text("\n".join(str(v) for v in rng.integers(0, 100, 10_000)) + "\n")
        return ["awk", "{s[$1]+=$1} END {for (k in s) n++; print n}", str(data)]
    raise KeyError(name)


#: The captured workloads (inputs generated from the seed).
WORKLOADS = ("gzip", "sort", "awk")


def capture(name: str, seed: int, cache: Path, limit: int) -> Path:
    """Trace of workload ``name`` (cached in ``cache``): lackey's SB sequence as edges."""
    path = Path(cache) / f"{name}-seed{seed}-{limit}.trace.gz"
    if path.exists():
        return path
    if shutil.which("valgrind") is None:
        raise TraceError("valgrind not found: install valgrind, or pass --trace FILE")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        command = _workload_inputs(name, seed, work)
        log = work / "lackey.log"
        subprocess.run(["valgrind", "--tool=lackey", "--trace-superblocks=yes",
                        f"--log-file={log}", *command], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        blocks = []
        with open(log) as lines:
            for line in lines:
                if line.startswith("SB "):
                    blocks.append(int(line[3:], 16))
                    if len(blocks) > limit:
                        break
    write_trace(path, blocks[:-1], blocks[1:], comment=f"{name}: {' '.join(command[:2])}")
    return path
