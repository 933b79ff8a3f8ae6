"""Random trace records for the trace-format tests (full 64-bit fields, every kind)."""

from __future__ import annotations

import numpy as np

from hwprof.traces.tracefile import COLUMNS, TraceWriter


def random_records(rng: np.random.Generator, n: int, kinds=range(9)) -> dict[str, np.ndarray]:
    """``n`` records with every column exercised: kinds drawn from ``kinds``, 64-bit fields."""
    kind = rng.choice(np.array(list(kinds), dtype=np.uint8), n)
    full = np.iinfo(np.uint64).max
    return {
        "kind": kind,
        "size": rng.choice(np.array([1, 2, 4, 8, 16, 32], np.uint8), n),
        # a small pool of pcs (some with the top bit set) and arbitrary 64-bit addr/value
        "pc": rng.choice(np.array([0x401000, 0x7F00_1234_5678, full - 7, 0], np.uint64), n)
        + rng.integers(0, 64, n).astype(np.uint64),
        "addr": rng.integers(0, full, n, dtype=np.uint64, endpoint=True),
        "value": rng.integers(0, full, n, dtype=np.uint64, endpoint=True),
    }


def write_records(path, records: dict, *, chunk_records=1000, pieces=3, header=None, footer=None):
    """Write ``records`` in ``pieces`` uneven write() calls; returns the path."""
    n = len(records["kind"])
    cuts = sorted({0, n, *np.linspace(0, n, pieces + 1).astype(int)[1:-1] + 7})
    cuts = [c for c in cuts if 0 <= c <= n]
    header = {"program": "/bin/test", "argv": ["test", "-x"], "kinds": ["load"]} | (header or {})
    with TraceWriter(path, header=header, chunk_records=chunk_records) as writer:
        for lo, hi in zip(cuts, cuts[1:], strict=False):
            writer.write(**{c: records[c][lo:hi] for c in COLUMNS})
        writer.close(footer)
    return path


def read_all(reader, **kwargs) -> dict[str, np.ndarray]:
    """Every chunk concatenated (tests only: small traces)."""
    chunks = list(reader.chunks(**kwargs))
    return {c: np.concatenate([getattr(ch, c) for ch in chunks]) for c in COLUMNS}
