"""pytest configuration: the soak marker, shared seeds.

The parallel workers of ``make test`` (pytest-xdist) share one Verilator build root
(``build/sim``, or ``$HWPROF_SIM_BUILD``): a design that two workers need is built
once, the second waiting on the build directory's lock (``hwprof.sim.runner``).
"""

from __future__ import annotations

import os
import random

import pytest


def pytest_addoption(parser):
    parser.addoption("--soak", action="store_true", default=False,
                     help="run the long soak tests (marker: soak)")  # fmt: skip
    parser.addoption("--seed", type=int, default=None,
                     help="seed for randomized tests (default: fresh, printed on failure)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--soak"):
        return
    skip = pytest.mark.skip(reason="soak test: run with --soak (make soak)")
    for item in items:
        if "soak" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _journals_in_tmp_path(tmp_path, monkeypatch):
    """A run a test starts keeps its journal under the test's ``tmp_path`` (as
    ``build/runs`` there), never in the checkout's ``build/runs``, where it would
    overwrite the journal of a run the user may resume."""
    monkeypatch.setenv("HWPROF_RUNS_DIR", str(tmp_path / "build" / "runs"))


@pytest.fixture
def seed(request) -> int:
    """A seed for one test: --seed, else HWPROF_TEST_SEED, else fresh. Shown on failure."""
    value = request.config.getoption("--seed")
    if value is None:
        value = int(os.environ.get("HWPROF_TEST_SEED", random.SystemRandom().randrange(1 << 31)))
    request.node.user_properties.append(("seed", value))
    print(f"seed = {value} (rerun with --seed {value})")
    return value
