"""The Verilator environment and build sharing of hwprof.sim.runner."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from hwprof.catalog import TOPS
from hwprof.sim.runner import build_lock, build_model, simulator_command, verilator_environment
from hwprof.synth import to_verilog
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


def _replay(command, results, params):
    env = {**command["env"], "COCOTB_RESULTS_FILE": str(results),
           "HWPROF_PARAMS": json.dumps(params)}  # fmt: skip
    for cmd in command["cmds"]:
        subprocess.run(cmd, cwd=command["cwd"], env=env, capture_output=True, timeout=300)
    from cocotb_tools.runner import get_results

    return get_results(results)


@pytest.mark.cocotb
def test_the_captured_simulator_command_runs_the_test(tmp_path, seed):
    """Replayed without the runner, the captured command runs the check: it passes on the
    build's own parameters and fails on other ones."""
    top = TOPS["lfsr"]
    params = top.resolve({"width": 8})
    build_dir = tmp_path / "lfsr"
    # the default build root: its runtime objects are reused (a new one compiles them)
    exe = build_model(to_verilog(top.construct({"width": 8}), "lfsr"), "lfsr", build_dir)
    assert exe == build_dir.resolve() / "lfsr" and exe.exists()
    extra = {"HWPROF_SEED": str(seed), "HWPROF_CYCLES": "500"}
    command = simulator_command(top.cocotb_module, "lfsr", build_dir, extra_env=extra, seed=seed)
    assert command["cmds"] == [[str(exe)]], command["cmds"]
    assert command["env"]["COCOTB_TOPLEVEL"] == "lfsr"
    assert command["env"]["COCOTB_RANDOM_SEED"] == str(seed)
    assert "SIM_CMD_PREFIX" not in command["env"] and "SIM_CMD_PREFIX" not in os.environ
    assert _replay(command, tmp_path / "good.xml", params) == (1, 0), f"seed {seed}"
    wrong = {**params, "seed": params["seed"] ^ 1}
    tests, failed = _replay(command, tmp_path / "wrong.xml", wrong)
    assert tests >= 1 and failed >= 1, f"a wrong golden model passed, seed {seed}"


def test_a_failing_build_names_its_log(tmp_path):
    with pytest.raises(RuntimeError, match=r"verilator failed .*build\.log"):
        build_model("module broken(input a\n", "broken", tmp_path / "b", build_root=tmp_path)
    assert "%Error" in (tmp_path / "b" / "build.log").read_text()


@pytest.mark.parametrize(
    "value, expected", [("", "build/sim"), ("/tmp/x/sim-shared", "/tmp/x/sim-shared")]
)
def test_build_root_follows_hwprof_sim_build(value, expected):
    """``HWPROF_SIM_BUILD`` selects the build root."""
    import subprocess
    import sys

    env = {**os.environ, "HWPROF_SIM_BUILD": value}
    code = "from hwprof.sim.runner import DEFAULT_BUILD_ROOT as r; print(r.as_posix())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()  # fmt: skip
    assert out == expected


#: a second process: waits for the build lock of argv[1], then appends "second" to argv[2]
SECOND_BUILDER = """
import sys
from pathlib import Path
from hwprof.sim.runner import build_lock
with build_lock(Path(sys.argv[1])):
    with open(sys.argv[2], "a") as f:
        f.write("second\\n")
"""


def test_a_second_process_waits_for_the_build_lock(tmp_path):
    """Parallel test workers share one build root: a build directory's lock keeps a second
    process out until the first is done (it would otherwise build in the same place)."""
    import subprocess
    import sys
    import time

    order = tmp_path / "order"
    with build_lock(tmp_path):
        proc = subprocess.Popen([sys.executable, "-c", SECOND_BUILDER, str(tmp_path), str(order)])
        time.sleep(2.0)  # the second process has started and is waiting
        assert proc.poll() is None and not order.exists()
        order.write_text("first\n")
    assert proc.wait(timeout=60) == 0
    assert order.read_text() == "first\nsecond\n"


def test_parallel_workers_share_the_build_root():
    """Under ``make test`` (pytest-xdist) every worker builds in the same root."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        pytest.skip("not run by a pytest-xdist worker")
    from hwprof.sim.runner import DEFAULT_BUILD_ROOT

    expected = os.environ.get("HWPROF_SIM_BUILD") or os.path.join("build", "sim")
    assert DEFAULT_BUILD_ROOT == Path(expected)
