"""``dask worker --preload tests.run_slow_worker``: every stratified-values unit starts with
a one-second sleep, so that tests/test_run_commands.py kills a worker while it runs one.

With ``HWPROF_TEST_GATE`` set to a folder, a unit then goes on only while the file
``open`` is in it, or if it takes the one-unit pass ``pass`` (renamed to ``pass.taken``);
otherwise it waits. tests/test_run_commands.py closes the gate to interrupt a run that
has finished exactly one unit, whatever the machine's load.
"""

import os
import time
from pathlib import Path

from hwprof.experiments import stratified_values

_seed_runs = stratified_values.seed_runs


def _wait_at_gate() -> None:
    gate = os.environ.get("HWPROF_TEST_GATE")
    if not gate:
        return
    gate = Path(gate)
    while not (gate / "open").exists():
        try:
            os.rename(gate / "pass", gate / "pass.taken")
            return
        except FileNotFoundError:
            time.sleep(0.05)


def _slow_seed_runs(*args, **kwargs):
    time.sleep(1.0)
    _wait_at_gate()
    return _seed_runs(*args, **kwargs)


stratified_values.seed_runs = _slow_seed_runs
