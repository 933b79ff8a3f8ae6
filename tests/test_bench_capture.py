"""bench/bench_trace_capture.py's ``--breakdown`` writer part: it times each part of the
trace writer's encoding on the chunks of a trace (the figures: docs/traces.md)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from hwprof.traces.common import COLUMNS
from hwprof.traces.workloads import SHIPPED_DIR

ROOT = Path(__file__).resolve().parents[1]
XZ = SHIPPED_DIR / "xz.trace"


def _bench():
    spec = importlib.util.spec_from_file_location(
        "bench_trace_capture", ROOT / "bench" / "bench_trace_capture.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_encode_parts_times_every_column_of_each_sampled_chunk():
    parts = _bench()._encode_parts(XZ, every=2)  # chunks 1, 3, ...
    chunks = parts.pop("chunks")
    assert chunks >= 1
    assert set(parts) == {"bounds", "crc", *COLUMNS}
    assert all(ms > 0 for ms in parts.values()), parts


def test_encode_parts_refuses_a_trace_with_no_sampled_chunk():
    with pytest.raises(ValueError, match="fewer than 51 chunks"):
        _bench()._encode_parts(XZ, every=100)
