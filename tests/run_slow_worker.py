"""``dask worker --preload tests.run_slow_worker``: every stratified-values unit starts with
a one-second sleep, so that tests/test_run_commands.py kills a worker while it runs one."""

import time

from hwprof.experiments import stratified_values

_seed_runs = stratified_values.seed_runs


def _slow_seed_runs(*args, **kwargs):
    time.sleep(1.0)
    return _seed_runs(*args, **kwargs)


stratified_values.seed_runs = _slow_seed_runs
