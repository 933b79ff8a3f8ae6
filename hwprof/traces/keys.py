"""``<load PC, value>`` streams for the profiler experiments: real traces and a synthetic one.

A value trace is anything with ``value_tuples()`` yielding ``(pc, value)`` uint64
array pairs per chunk, the API of ``hwprof.traces.tracefile.TraceReader``.
:class:`SyntheticValueTrace` has the same API and stands in where no captured
trace is available (the tests' ``--quick`` runs and the speed benchmark).

:func:`value_keys` makes the profilers' 64-bit key ``pc:value`` (32 + 32 bits)
from a 64-bit pc and a 64-bit value: the pc's low 32 bits (a program's load
pcs differ there) and the value xor-folded to 32 bits (``value ^ value >> 32``,
so values differing only in their high half, pointers say, stay apart except
for rare collisions). The experiment counts those collisions.
"""

from __future__ import annotations

import numpy as np

from .tracefile import CALL, COND_NOT_TAKEN, COND_TAKEN, INDIRECT, JUMP, iter_keys

__all__ = ["SyntheticValueTrace", "value_keys", "trace_keys", "load_keys", "EDGE_KINDS"]

#: Control transfers whose ``<pc, target>`` is a control-flow edge (returns are left
#: out: the call sites give their targets).
EDGE_KINDS = (COND_NOT_TAKEN, COND_TAKEN, JUMP, CALL, INDIRECT)

_LOW32 = np.uint64(0xFFFFFFFF)


def value_keys(pc, value) -> np.ndarray:
    """The 64-bit key ``pc[31:0] : (value ^ value >> 32)[31:0]`` of each tuple."""
    pc = np.asarray(pc, dtype=np.uint64)
    value = np.asarray(value, dtype=np.uint64)
    folded = (value ^ (value >> np.uint64(32))) & _LOW32
    return ((pc & _LOW32) << np.uint64(32)) | folded


def trace_keys(trace, skip: int = 0):
    """Keys (:func:`value_keys`) of a value trace, chunk by chunk, the first ``skip`` dropped."""
    for pc, value in trace.value_tuples():
        if skip >= len(pc):
            skip -= len(pc)
            continue
        yield value_keys(pc[skip:], value[skip:])
        skip = 0


def load_keys(trace, limit: int | None = None, *, pc_bits: int = 32,
              value_bits: int = 32) -> np.ndarray:  # fmt: skip
    """The ``<load pc, value>`` tuples of ``trace`` as 64-bit keys (``pc_bits`` and
    ``value_bits`` fields, 32 each by default), the first ``limit`` of them (all: None)."""
    out, n = [], 0
    for chunk in iter_keys(trace, pc_bits=pc_bits, value_bits=value_bits):
        if limit is not None and n + len(chunk) >= limit:
            out.append(chunk[: limit - n])
            n = limit
            break
        out.append(chunk)
        n += len(chunk)
    return np.concatenate(out) if out else np.zeros(0, np.uint64)


class SyntheticValueTrace:
    """A seeded stand-in for a captured value trace (same ``value_tuples`` API).

    ``pcs`` load instructions with Zipf(1.1) execution frequencies; each loads
    one invariant value (40 %), one of 2..16 values with Zipf weights (30 %), or
    a fresh random 64-bit value (30 %, pointers and data that rarely repeat).
    The hot set drifts: every ``phase`` tuples the pc frequencies are reshuffled.
    """

    def __init__(self, seed: int, length: int, *, pcs: int = 4000, phase: int = 3_000_000,
                 chunk: int = 1 << 20):  # fmt: skip
        self.seed, self.length, self.pcs, self.phase, self.chunk = seed, length, pcs, phase, chunk
        self.header = {"program": "synthetic", "argv": [], "seed": seed}
        self.footer = {"records": length, "counts": {"load": length}}

    def value_tuples(self):
        rng = np.random.default_rng(self.seed)
        n = self.pcs
        pc_addr = (0x400000 + 4 * rng.choice(1 << 18, n, replace=False)).astype(np.uint64)
        kind = rng.choice(3, n, p=[0.4, 0.3, 0.3])
        base = rng.integers(0, 1 << 48, n, dtype=np.uint64)
        spread = rng.integers(2, 17, n)
        weights = 1.0 / np.arange(1, n + 1) ** 1.1
        cumulative = np.cumsum(weights) / weights.sum()
        order = rng.permutation(n)
        done = 0
        while done < self.length:
            size = min(self.chunk, self.length - done, self.phase - done % self.phase)
            if done % self.phase == 0 and done:
                order = rng.permutation(n)
            idx = order[np.minimum(np.searchsorted(cumulative, rng.random(size)), n - 1)]
            value = base[idx].copy()
            few = kind[idx] == 1
            value[few] += np.minimum(rng.zipf(1.5, few.sum()), spread[idx][few]).astype(np.uint64)
            wide = kind[idx] == 2
            value[wide] = rng.integers(0, 1 << 63, wide.sum(), dtype=np.uint64)
            yield pc_addr[idx], value
            done += size
