"""`hwprof experiment system-workload --quick`: a compressor/sort workload sampled by brr
on the system; its printed profile against the golden model; host comparison."""

from __future__ import annotations

import pytest

from hwprof.experiments import system_workload
from hwprof.golden.brr import LAYOUTS
from hwprof.system.sim import build_system, run_program

pytestmark = pytest.mark.cocotb


def test_quick_workload(tmp_path):
    r = system_workload.run(tmp_path, seed=1, quick=True)
    for row in r["rows"]:
        assert row["sampled_mismatches"] == 0 and row["full_mismatches"] == 0
        assert row["brr_outside_sites"] == 0 and row["sites"] == len(r["site_names"])
        assert row["sampled"] == row["golden_sampled"] and row["samples"] > 0
        assert sum(row["full"]) == row["site_executions"]
        assert 0 < row["overlap_accuracy"] <= 100
    assert r["host_equal"], (r["system_output"], r["host_output"])
    assert "roundtrip 00000001" in r["system_output"]


def test_profile_check_fails_on_an_lfsr_stepping_twice_per_brr(tmp_path):
    """The workload on a system whose brr unit steps its LFSR 16 instead of 8 times per
    brr: its printed profile differs from the golden model's."""
    steps, positions = LAYOUTS[20]
    exe = build_system(brr_params={"lfsr_steps": 2 * steps, "positions": positions})
    run = run_program([system_workload.WORKLOAD], exe=exe, seed=77, work=tmp_path,
                      defines={"TEXT": 800, "FULL_PROFILE": 1})  # fmt: skip
    check = system_workload.profile_check(run)
    assert check["full_mismatches"] == 0  # executions are counted right
    assert check["sampled_mismatches"] > 0
