"""The executor of long jobs (``hwprof mutate``, ``prove``, ``report --fpga``,
``experiment``): a list of independent units run in-process, on a local Dask cluster
or on a given one, with a journal for ``--resume``; see docs/run.md."""

from __future__ import annotations

import os
from pathlib import Path

from .executor import (
    SCHEDULER_ENV,
    Journal,
    Outcome,
    RunError,
    RunOptions,
    Unit,
    machine_jobs,
    run_units,
)

__all__ = ["Unit", "Outcome", "RunOptions", "RunError", "Journal", "run_units", "machine_jobs",
           "add_run_arguments", "options_from_args", "journal_path", "RUNS_DIR",
           "RUNS_ENV"]  # fmt: skip

#: where the journals of runs go (relative to the working directory)
RUNS_DIR = Path("build/runs")
#: the environment variable that puts the journals elsewhere
RUNS_ENV = "HWPROF_RUNS_DIR"


def add_run_arguments(parser) -> None:
    """``--jobs``, ``--scheduler`` and ``--resume`` on an argparse (sub)parser."""
    group = parser.add_argument_group("where the units run (docs/run.md)")
    group.add_argument("--jobs", type=int, default=None, metavar="N",
                       help="worker processes of a local Dask cluster (default: one per "
                       "core); 1 runs every unit in this process, without Dask")  # fmt: skip
    group.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help=f"run on the Dask cluster of this scheduler (tcp://host:8786; "
                       f"default ${SCHEDULER_ENV} if set and --jobs is not given)")
    group.add_argument("--resume", action="store_true",
                       help=f"skip the units the journal of the same run holds (build/runs/, or "
                       f"${RUNS_ENV} if set)")


def options_from_args(args) -> RunOptions:
    """The :class:`RunOptions` of parsed ``args`` (:func:`add_run_arguments`); raises
    :class:`RunError` for bad values."""
    if args.jobs is not None and args.scheduler is not None:
        raise RunError("give --jobs (a local cluster) or --scheduler (an existing one), "
                       "not both")  # fmt: skip
    scheduler = args.scheduler
    if scheduler is None and args.jobs is None:
        scheduler = os.environ.get(SCHEDULER_ENV) or None
    return RunOptions(jobs=args.jobs, scheduler=scheduler, resume=args.resume)


def journal_path(name: str) -> Path:
    """The journal of the run called ``name`` (``mutate-brr``, ``experiment-...``): in the
    directory ``$HWPROF_RUNS_DIR`` names, else in :data:`RUNS_DIR` of the working
    directory."""
    return Path(os.environ.get(RUNS_ENV) or RUNS_DIR) / f"{name}.jsonl"
