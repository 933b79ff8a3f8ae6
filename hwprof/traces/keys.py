"""Profile keys of a trace: :func:`trace_keys`, the one way from a trace to keys.

A profiler's key packs a ``<pc, x>`` tuple into one 64-bit word, the layout of
:func:`hwprof.golden.hashing.pack_key`: ``x`` is the loaded value of a load
record and the target address of a control transfer (``<pc, target>``: a
control-flow edge; the ``edge`` records of a converted legacy trace give
``<source, destination>``). Experiments, the trace verification and the
benches read keys only through :func:`trace_keys`.

``x`` (64 bits) goes into the key's ``value_bits`` by the ``mix-fold``: its low
``value_bits`` bits xor those of :func:`mix64` (splitmix64's output function) of its
high bits. A value that fits the field keys as itself (``mix64(0) == 0``), values
that share their high bits never merge, and other values merge only by chance;
keeping ``x``'s low bits merges values that differ only above them (pointers,
8-byte text), xor-folding its halves merges text whose halves xor alike
(``hwprof experiment key-merges`` counts them).

:class:`SyntheticValueTrace` is a seeded stand-in for a captured load trace
(same ``chunks`` and ``value_tuples`` API as
:class:`hwprof.traces.tracefile.TraceReader`), used where no captured trace is
available (the tests' ``--quick`` runs and the speed benchmark).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from .common import BRANCH_KINDS, COLUMNS, EDGE, LOAD, RETURN, parse_kinds
from .tracefile import Chunk, open_trace

__all__ = ["trace_keys", "trace_tuples", "tuple_keys", "value_field", "mix64", "VALUE_MAPS",
           "PORT_VALUE_MAP",
           "DEFAULT_VALUE_MAP", "KEY_TEXT", "SyntheticValueTrace", "EDGE_KINDS"]  # fmt: skip

#: Control transfers whose ``<pc, target>`` is a control-flow edge (returns are left
#: out: the call sites give their targets).
EDGE_KINDS = tuple(kind for kind in BRANCH_KINDS if kind != RETURN)


#: How ``x`` becomes the key's value field (:func:`value_field`): ``"mix-fold"`` (the
#: default), ``"mix"``, ``"low"`` and ``"xor-fold"`` (kept to measure them against it).
VALUE_MAPS = ("mix-fold", "mix", "low", "xor-fold")
#: The value map of :func:`trace_keys` (the one the experiments record as ``value_map``).
DEFAULT_VALUE_MAP = "mix-fold"
#: The 32:32 key of each value map, in words (for results pages).
KEY_TEXT = {"mix-fold": "pc[31:0] : value[31:0] ^ mix64(value >> 32)[31:0] (mix64: "
                        "splitmix64's output function)",
            "mix": "pc[31:0] : mix64(value)[63:32] (mix64: splitmix64's output function)",
            "low": "pc[31:0] : value[31:0]",
            "xor-fold": "pc[31:0] : (value ^ value >> 32)[31:0]"}  # fmt: skip
#: The value map of keys fed to a hardware block (trace verification, the RTL benches,
#: the system's profiler): its key port takes the low bits of pc and value, with no mixer.
PORT_VALUE_MAP = "low"

#: The multipliers of splitmix64's output function (Steele, Lea & Flood, "Fast splittable
#: pseudorandom number generators", OOPSLA 2014; the constants and shifts 30, 27, 31 of
#: Vigna's reference ``splitmix64.c``, prng.di.unimi.it, Stafford's "Mix13").
MIX64_MULTIPLIERS = (0xBF58476D1CE4E5B9, 0x94D049BB133111EB)


def mix64(x) -> np.ndarray:
    """splitmix64's output function of 64-bit words, a bijection.

    ``z = (x ^ x >> 30) * 0xBF58476D1CE4E5B9; z = (z ^ z >> 27) * 0x94D049BB133111EB;
    return z ^ z >> 31``, products modulo ``2**64``: what the reference ``splitmix64.c``
    returns for the state ``x`` (after its increment). Every output bit depends on every
    input bit, so any ``value_bits`` of it split the values like a random function.

    Parameters
    ----------
    x : array_like of uint64

    Returns
    -------
    numpy.ndarray
        uint64, the shape of ``x``.
    """
    z = np.array(x, dtype=np.uint64, ndmin=1)
    m1, m2 = (np.uint64(m) for m in MIX64_MULTIPLIERS)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * m1
        z = (z ^ (z >> np.uint64(27))) * m2
    return (z ^ (z >> np.uint64(31))).reshape(np.shape(x))


def value_field(x: np.ndarray, value_bits: int,
                value_map: str = DEFAULT_VALUE_MAP) -> np.ndarray:  # fmt: skip
    """The key's ``value_bits``-bit field of the 64-bit words ``x`` (uint64).

    ``"mix-fold"``: ``(x ^ mix64(x >> value_bits)) mod 2**value_bits`` (``x`` itself
    for 64 bits); ``"mix"``: the top ``value_bits`` bits of :func:`mix64`; ``"low"``:
    ``x mod 2**value_bits``; ``"xor-fold"``: the xor of the ``value_bits``-wide slices
    of ``x`` (``(x ^ x >> 32) mod 2**32`` for 32 bits).
    """
    if value_map not in VALUE_MAPS:
        raise ValueError(f"value_map must be one of {', '.join(VALUE_MAPS)}, not {value_map!r}")
    if value_map == "mix":
        return mix64(x) >> np.uint64(64 - value_bits)
    if value_map == "mix-fold" and value_bits < 64:
        x = x ^ mix64(x >> np.uint64(value_bits))
    elif value_map == "xor-fold":
        folded = np.zeros(len(x), np.uint64)
        for start in range(0, 64, value_bits):
            folded ^= x >> np.uint64(start)
        x = folded
    return x.copy() if value_bits == 64 else x & np.uint64((1 << value_bits) - 1)


def tuple_keys(pc: np.ndarray, x: np.ndarray, *, pc_bits: int = 32, value_bits: int = 32,
               value_map: str = DEFAULT_VALUE_MAP) -> np.ndarray:  # fmt: skip
    """The keys ``(pc mod 2**pc_bits) << value_bits | f(x)`` of uint64 arrays (as
    :func:`trace_keys` packs them)."""
    keys = value_field(x, value_bits, value_map)
    if pc_bits:
        pc = pc if pc_bits == 64 else pc & np.uint64((1 << pc_bits) - 1)
        keys = keys | pc << np.uint64(value_bits)
    return keys


def _auto_kinds(reader) -> tuple[int, ...]:
    """``kinds="auto"``: edges of a converted legacy trace, else loads, else control-flow edges."""
    counts = reader.footer.get("counts", {})
    if counts.get("edge"):
        return (EDGE,)
    if counts.get("load"):
        return (LOAD,)
    return EDGE_KINDS


def trace_keys(trace, kinds="loads", *, pc_bits: int = 32, value_bits: int = 32,
               value_map: str = DEFAULT_VALUE_MAP,
               limit: int | None = None) -> Iterator[np.ndarray]:  # fmt: skip
    """The profile keys of a trace's ``<pc, x>`` tuples, in program order, chunk by chunk.

    ``key = (pc mod 2**pc_bits) << value_bits | f(x)``, a uint64, where ``x`` is
    the loaded value of a load record and the target address (the ``addr``
    column) of any other record, and ``f(x)`` by default
    ``(x ^ mix64(x >> value_bits)) mod 2**value_bits`` (``value_map="mix-fold"``:
    ``x`` if it fits, and tuples merge only by chance) or, to compare, the top bits of
    ``mix64(x)`` (``"mix"``), ``x mod 2**value_bits`` (``"low"``) or the xor of ``x``'s
    ``value_bits``-wide slices (``"xor-fold"``): :func:`value_field`.

    Parameters
    ----------
    trace : path or reader
        A trace file (opened with :func:`~hwprof.traces.tracefile.open_trace`, so a
        legacy gzip'd text file is refused with a line naming ``hwprof trace
        convert``), an open :class:`~hwprof.traces.tracefile.TraceReader` or a
        :class:`SyntheticValueTrace`.
    kinds : str or iterable of int
        The records that make tuples: kind codes, names as in
        :func:`~hwprof.traces.tracefile.parse_kinds` (``"loads"``, the default;
        ``"branches"``), or ``"auto"``: the ``edge`` records if the trace holds
        any (a converted legacy trace), else its loads if it holds any, else its
        control-flow edges (:data:`EDGE_KINDS`: a branch trace).
    pc_bits, value_bits : int
        Field widths: ``0 <= pc_bits``, ``1 <= value_bits``, sum at most 64.
    value_map : str
        ``"mix-fold"`` (default), ``"mix"``, ``"low"`` or ``"xor-fold"``
        (:data:`VALUE_MAPS`).
    limit : int, optional
        Stop after this many keys (default: all).

    Yields
    ------
    numpy.ndarray
        uint64 keys, one array a chunk of the trace (at most the reader's chunk
        size); at least one array, empty when the trace holds no such tuples.
        ``np.concatenate(list(trace_keys(...)))`` is the whole stream.

    Raises
    ------
    TraceError
        The file is not a readable trace (on opening, or from a chunk as it is read).
    ValueError
        Field widths out of range, an unknown kind name or value map, or a negative limit.
    """
    if value_map not in VALUE_MAPS:
        raise ValueError(f"value_map must be one of {', '.join(VALUE_MAPS)}, not {value_map!r}")
    if not (0 <= pc_bits and 1 <= value_bits and pc_bits + value_bits <= 64):
        raise ValueError(f"need 0 <= pc_bits, 1 <= value_bits, sum <= 64, not "
                         f"{pc_bits}, {value_bits}")  # fmt: skip
    for pc, x in trace_tuples(trace, kinds, limit=limit):
        yield tuple_keys(pc, x, pc_bits=pc_bits, value_bits=value_bits, value_map=value_map)


def trace_tuples(trace, kinds="loads", *,
                 limit: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """The ``(pc, x)`` uint64 arrays of a trace's tuples, chunk by chunk (:func:`trace_keys`
    before packing: same ``trace``, ``kinds`` and ``limit``, same errors); at least one
    pair of arrays, empty when the trace holds no such tuples."""
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, not {limit}")
    reader = open_trace(trace) if isinstance(trace, str | os.PathLike) else trace
    if kinds == "auto":
        kinds = _auto_kinds(reader)
    elif isinstance(kinds, str):
        kinds = parse_kinds(kinds)
    kinds = tuple(kinds)
    loads = LOAD in kinds
    columns = ("kind", "pc", *(("value",) if loads else ()),
               *(("addr",) if set(kinds) - {LOAD} else ()))  # fmt: skip
    left = limit
    yielded = False
    for chunk in reader.chunks(kinds=kinds, columns=columns):
        if left is not None:
            chunk = Chunk(*(None if c is None else c[:left] for c in chunk.columns()))
            left -= len(chunk)
        if not loads:
            x = chunk.addr
        elif len(kinds) == 1:
            x = chunk.value
        else:
            x = np.where(chunk.kind == LOAD, chunk.value, chunk.addr)
        yielded = True
        yield chunk.pc, x
        if left == 0:
            return
    if not yielded:
        yield np.zeros(0, np.uint64), np.zeros(0, np.uint64)


class SyntheticValueTrace:
    """A seeded stand-in for a captured load trace (the reader's ``chunks`` and ``value_tuples``).

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

    def chunks(self, kinds=None, columns=COLUMNS, threads=None) -> Iterator[Chunk]:
        """The load records, chunk by chunk (``kind``, ``pc`` and ``value``; ``threads``
        is ignored): none if ``kinds`` leaves loads out."""
        if isinstance(kinds, str):
            kinds = parse_kinds(kinds)
        if kinds is not None and LOAD not in tuple(kinds):
            return
        for pc, value in self._tuples():
            yield Chunk(np.full(len(pc), LOAD, np.uint8), None, pc, None, value)

    def value_tuples(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(pc, value)`` arrays of the loads, chunk by chunk."""
        for chunk in self.chunks():
            yield chunk.pc, chunk.value

    def _tuples(self):
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
