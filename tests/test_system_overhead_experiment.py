"""`hwprof experiment system-overhead --quick`: the overhead microbenchmark on the
system (Verilator tier)."""

from __future__ import annotations

import pytest

from hwprof.experiments.system_overhead import run

pytestmark = pytest.mark.cocotb


def test_quick_overhead_run(tmp_path):
    loop = run(tmp_path, seed=1, quick=True)
    assert (tmp_path / "system-overhead-quick.md").exists()
    for r in (loop, loop["empty_loop"]):
        _check(r)


def _check(r):
    assert r["same_checksum"]  # instrumentation never changes what the kernel computes
    for fit in r["brr_fit"].values():
        # an in-order core: extra cycles are exactly sites * a + samples * b
        assert fit["max_residual_cycles"] < 1e-6
        assert fit["taken"] > fit["not_taken"] > 0
    rows = r["rows"]
    samples = [row["samples"] for row in rows]
    assert samples == sorted(samples, reverse=True) and samples[0] > 0
    for row in rows:
        assert 0 < row["brr_framework"] <= row["brr"]
        assert row["brr"] < row["countdown"]
