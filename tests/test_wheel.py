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


def test_installed_package_finds_its_data_outside_the_checkout(wheel, tmp_path):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                    "--target", str(site), str(wheel)],
                   check=True, capture_output=True)  # fmt: skip
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
