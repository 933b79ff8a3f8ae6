"""``dask worker --preload tests.run_slow_worker``: every stratified-values unit starts with
a one-second sleep, so that tests/test_run_commands.py kills a worker while it runs one.

With ``HWPROF_TEST_GATE`` set to a folder, a unit first waits until the file ``open``
is in it, unless it takes the one-unit pass ``pass`` (renamed to ``pass.taken``); a
unit that waited then sleeps five seconds instead of one. tests/test_run_commands.py
closes the gate, interrupts the run once the pass holder has finished, and opens the
gate at once: the driver has five seconds to take the interrupt before another unit
can finish, and no unit is left blocked while the driver shuts down.
"""

import os
import time
from pathlib import Path

from hwprof.experiments import stratified_values

_seed_runs = stratified_values.seed_runs


def _waited_at_gate() -> bool:
    """Wait while the gate is closed (unless this unit takes the pass); True if it waited."""
    gate = os.environ.get("HWPROF_TEST_GATE")
    if not gate:
        return False
    gate, waited = Path(gate), False
    while not (gate / "open").exists():
        try:
            os.rename(gate / "pass", gate / "pass.taken")
            return waited
        except FileNotFoundError:
            waited = True
            time.sleep(0.05)
    return waited


def _slow_seed_runs(*args, **kwargs):
    time.sleep(5.0 if _waited_at_gate() else 1.0)
    return _seed_runs(*args, **kwargs)


stratified_values.seed_runs = _slow_seed_runs
