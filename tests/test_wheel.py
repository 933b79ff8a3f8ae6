"""The wheel holds what the installed commands read, and they find it outside a checkout.

The package is built from a copy of the sources (``pip wheel --no-build-isolation``:
setuptools and wheel of the running environment, no network), installed into a
directory of its own, and run from another directory with only that one on
``PYTHONPATH``: the cocotb modules, the native harnesses, the valgrind tool's source
and the shipped traces must come from the installed package, not from this checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hwprof.catalog import TOPS
from hwprof.traces.workloads import WORKLOADS

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(ROOT / "hwprof", src / "hwprof",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "-q", "-w", str(out), str(src)],
                   check=True, capture_output=True)  # fmt: skip
    (built,) = out.glob("hwprof-*.whl")
    return built


def expected_data() -> set[str]:
    """The data files the commands read: one cocotb module per top that has one, its
    helpers, the harness sources (shared and the blocks' own), the valgrind tool, the
    workloads' C programs and every shipped trace."""
    names = {f"hwprof/cocotb_tests/{t.cocotb_module}.py" for t in TOPS.values()
             if t.cocotb_module}  # fmt: skip
    names |= {f"hwprof/cocotb_tests/{p.name}" for p in (ROOT / "hwprof/cocotb_tests").glob("*.py")}
    for harnesses in ("sim/native", "tops/native"):  # shared, and the blocks' own benches
        names |= {f"hwprof/{harnesses}/{p.name}" for p in (ROOT / "hwprof" / harnesses).iterdir()
                  if p.suffix in (".cpp", ".h")}  # fmt: skip
    names.add("hwprof/traces/valgrind/hwprof_trace.c")
    names |= {f"hwprof/traces/shipped/{name}.trace" for name in WORKLOADS}
    names |= {f"hwprof/traces/{p.relative_to(ROOT / 'hwprof/traces')}"
              for p in (*(ROOT / "hwprof/traces/programs").glob("*.c"),
                        *(ROOT / "hwprof/traces/shipped").glob("*.trace"))}  # fmt: skip
    return names


def test_wheel_holds_the_package_data(wheel):
    with zipfile.ZipFile(wheel) as archive:
        held = set(archive.namelist())
    missing = sorted(expected_data() - held)
    assert not missing, f"not in {wheel.name}: {missing}"
    assert not [n for n in held if n.startswith(("tests/", "bench/", "docs/"))]


def test_expected_data_names_every_kind_of_file():
    """The list checked above is not empty of any kind (a glob that matched nothing)."""
    names = expected_data()
    for part in ("cocotb_tests/test_brr.py", "cocotb_tests/harness.py", "native/harness.h",
                 "tops/native/brr_period.cpp", "valgrind/hwprof_trace.c",
                 "shipped/xz.trace"):  # fmt: skip
        assert any(n.endswith(part) for n in names), part


@pytest.fixture(scope="module")
def site(wheel, tmp_path_factory) -> Path:
    """The wheel installed into a directory of its own (its ``bin/hwprof`` too)."""
    site = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                    "--target", str(site), str(wheel)],
                   check=True, capture_output=True)  # fmt: skip
    return site


def hwprof(site: Path, cwd: Path, *args: str, path: str | None = None):
    """The installed ``hwprof`` command run in ``cwd`` with only ``site`` on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([str(site / "bin" / "hwprof"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True)  # fmt: skip


def test_installed_package_finds_its_data_outside_the_checkout(site, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    probe = (
        "import hwprof, sys\n"
        "from hwprof.sim.runner import COCOTB_TESTS\n"
        "from hwprof.sim.native import HARNESSES\n"
        "from hwprof.tops.brr_bench import BRR_PERIOD\n"
        "from hwprof.traces.capture import TOOL_SOURCE\n"
        "from hwprof.traces.workloads import shipped_trace\n"
        "for path in (hwprof.__file__, COCOTB_TESTS / 'test_brr.py', HARNESSES / 'stream.cpp',\n"
        "             BRR_PERIOD, TOOL_SOURCE, shipped_trace('xz')):\n"
        "    print(path)\n"
    )  # fmt: skip
    run = subprocess.run([sys.executable, "-c", probe], cwd=elsewhere, env=env,
                         capture_output=True, text=True, check=True)  # fmt: skip
    for line in run.stdout.split():
        path = Path(line)
        assert path.is_file(), line
        assert path.resolve().is_relative_to(site.resolve()), f"{line} is not the installed copy"
    info = subprocess.run([sys.executable, "-m", "hwprof.cli", "trace", "info",
                           str(Path(run.stdout.split()[-1]))], cwd=elsewhere, env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert info.returncode == 0, info.stderr
    assert "load" in info.stdout


@pytest.mark.cocotb
def test_installed_regress_runs_outside_the_checkout(site, tmp_path, seed):
    """``hwprof regress brr``: the installed cocotb module on Verilator, built under the
    current directory's build/."""
    run = hwprof(site, tmp_path, "regress", "brr", "--seed", str(seed), "--cycles", "2000")
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"brr: PASS (1 tests, 0 failed, seed {seed};" in run.stdout
    assert (tmp_path / "build" / "sim").is_dir()


def test_installed_capture_runs_outside_the_checkout(site, tmp_path):
    """``hwprof trace capture``: the valgrind tool built from the installed source, or,
    with no valgrind on PATH, one line that says how to install it and no file."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    run = hwprof(site, tmp_path, "trace", "capture", "-o", "none.trace", "--", "true",
                 path=str(empty))  # fmt: skip
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.splitlines()) == 1 and "valgrind not found" in run.stderr
    assert "apt-get install valgrind" in run.stderr
    assert not list(tmp_path.glob("none.trace*"))
    if shutil.which("valgrind") is None:
        pytest.skip("no valgrind on this machine: the capture itself is not run")
    run = hwprof(site, tmp_path, "trace", "capture", "-o", "true.trace", "--",
                 shutil.which("true"))  # fmt: skip
    assert run.returncode == 0, run.stderr
    info = hwprof(site, tmp_path, "trace", "info", "--json", "true.trace")
    assert info.returncode == 0, info.stderr
    assert '"load":' in info.stdout and (tmp_path / "build" / "valgrind").is_dir()


def test_installed_experiment_runs_outside_the_checkout(site, tmp_path):
    """``hwprof experiment multihash-values --quick``: the shipped xz trace from the
    installed package; the table and the files it wrote."""
    run = hwprof(site, tmp_path, "experiment", "multihash-values", "--quick", "-o", "out",
                 "--jobs", "1")  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "xz (shipped)" in run.stderr  # the progress line names the trace it read
    assert "| quantity | paper | ours |" in run.stdout
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"multihash-values-quick.json", "multihash-values-quick.md"} <= written
