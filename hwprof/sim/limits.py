"""Running a simulation under a CPU-time limit, with a wall-clock backstop.

A wall-clock limit on a simulation stops a run that is merely slow because other
jobs share the cores; a limit on the CPU time the simulation itself spends does
not. :func:`run_limited` runs a command with a CPU limit (``RLIMIT_CPU`` on the
process it starts, so also on each process that one starts) and a wall limit
meant only as a backstop against a process that sleeps forever, and says which
one ended the run, with the CPU seconds the command used (its own and those of
the children it waited for: ``os.wait4``).

POSIX only (``resource``, ``os.wait4``).
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

__all__ = ["LimitedRun", "RunLimitExceeded", "run_limited", "WALL_BACKSTOP_FACTOR"]

#: the wall backstop of a run with a CPU limit but no wall limit: this many times the CPU limit
WALL_BACKSTOP_FACTOR = 20.0

# sets RLIMIT_CPU (argv[1] soft, argv[2] hard) and no core file, then execs argv[3:]
_LAUNCHER = (
    "import os, resource, sys\n"
    "resource.setrlimit(resource.RLIMIT_CPU, (int(sys.argv[1]), int(sys.argv[2])))\n"
    "resource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
    "try:\n"
    "    os.execvp(sys.argv[3], sys.argv[3:])\n"
    "except OSError as e:\n"
    "    sys.exit(f'cannot run {sys.argv[3]}: {e}')\n"
)

# SIGKILL follows SIGXCPU this many CPU seconds later (if the process catches SIGXCPU)
_HARD_MARGIN = 5


@dataclass(frozen=True)
class LimitedRun:
    """How a run of :func:`run_limited` ended.

    Attributes
    ----------
    returncode : int
        The exit status (negative: the number of the signal that ended it).
    cpu_seconds : float
        User and system CPU seconds of the process and of the children it waited for.
    wall_seconds : float
        Wall-clock seconds from the start to the end of the run.
    stopped : str or None
        ``"cpu"``: the CPU limit ended the run; ``"wall"``: the wall limit did;
        None: it ended by itself.
    cpu_limit : int or None
        The CPU limit in force, whole seconds (``RLIMIT_CPU``'s unit).
    wall_limit : float or None
        The wall limit in force, seconds.
    """

    returncode: int
    cpu_seconds: float
    wall_seconds: float
    stopped: str | None = None
    cpu_limit: int | None = None
    wall_limit: float | None = None

    def limit_text(self) -> str:
        """What stopped the run, for a report: ``"no verdict in N CPU-s"`` or ``"no verdict
        in the wall backstop (N s)"``; empty if it ended by itself."""
        if self.stopped == "cpu":
            return f"no verdict in {self.cpu_limit} CPU-s"
        if self.stopped == "wall":
            return f"no verdict in the wall backstop ({self.wall_limit:.0f} s)"
        return ""


class RunLimitExceeded(subprocess.TimeoutExpired):
    """A run stopped by its CPU or wall limit (a :class:`subprocess.TimeoutExpired`).

    Attributes
    ----------
    run : LimitedRun
        How it ended (``run.stopped``: ``"cpu"`` or ``"wall"``).
    """

    def __init__(self, cmd, run: LimitedRun):
        limit = run.cpu_limit if run.stopped == "cpu" else run.wall_limit
        super().__init__(cmd, limit)
        self.run = run

    def __str__(self) -> str:
        return f"{self.run.limit_text()}: {self.cmd!r}"

    def __reduce__(self):  # to cross from a worker process
        return type(self), (self.cmd, self.run)


def run_limited(cmd, *, cpu_limit: float | None = None, wall_limit: float | None = None,
                cwd=None, env: dict | None = None, stdout=None, stderr=None,
                poll: float = 0.2) -> LimitedRun:  # fmt: skip
    """Run ``cmd`` (a list of arguments) to its end or to a limit.

    Parameters
    ----------
    cmd : list
        The command; its items are converted with ``str``.
    cpu_limit : float, optional
        CPU seconds (rounded up to whole seconds) for the process, and for each
        process it starts (``RLIMIT_CPU`` is inherited and counted per process): the
        kernel stops a process that spends them (``SIGXCPU``, then ``SIGKILL``). None:
        no CPU limit.
    wall_limit : float, optional
        Wall-clock seconds, after which the command's processes are killed. None:
        :data:`WALL_BACKSTOP_FACTOR` times ``cpu_limit`` if there is one, else no limit.
    cwd, env, stdout, stderr
        As for :class:`subprocess.Popen` (no pipes: a file, ``DEVNULL`` or None).
    poll : float
        The longest wait, seconds, between two looks at the process.

    Returns
    -------
    LimitedRun
        The exit status, the CPU and wall seconds, and which limit ended the run if
        one did. The command runs in a session of its own; whatever of it is still
        running when the process ends (or is stopped) is killed.

    Raises
    ------
    ValueError
        If a limit is not positive, or ``stdout``/``stderr`` is a pipe.
    """
    for name, value in (("cpu_limit", cpu_limit), ("wall_limit", wall_limit)):
        if value is not None and not value > 0:
            raise ValueError(f"{name} must be positive, not {value!r}")
    if subprocess.PIPE in (stdout, stderr):
        raise ValueError("run_limited does not read pipes: give a file for stdout and stderr")
    soft = None if cpu_limit is None else max(1, math.ceil(cpu_limit))
    if wall_limit is None and soft is not None:
        wall_limit = WALL_BACKSTOP_FACTOR * soft
    argv = [str(c) for c in cmd]
    if soft is not None:
        # the limits are set by a small launcher that then execs the command (same pid):
        # set from here after the start, a process the command starts at once could
        # escape them, and a preexec_fn is unsafe in a process with threads. No core
        # file from SIGXCPU.
        argv = [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(soft),
                str(soft + _HARD_MARGIN), *argv]  # fmt: skip
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=stdout, stderr=stderr,
                            start_new_session=True)  # fmt: skip
    stopped = None
    reaped = None
    try:
        wait = 0.01
        while True:
            if hasattr(os, "waitid"):  # look, leaving the process a zombie (pid taken)
                if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):
                    break
            else:  # no waitid (macOS): reap it at once
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid:
                    reaped = status, usage
                    break
            if wall_limit is not None and time.monotonic() - started >= wall_limit:
                stopped = "wall"
                break
            time.sleep(min(wait, poll))
            wait *= 1.5
    finally:
        # the process is ended (a zombie, its pid still taken) or about to be killed:
        # end what it started too, then reap it
        if reaped is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            reaped = os.wait4(proc.pid, 0)[1:]
        status, usage = reaped
        proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    cpu = usage.ru_utime + usage.ru_stime
    # ended by the CPU limit: by its SIGXCPU (or the SIGKILL after it), or a failure
    # after spending it (a wrapper whose child the limit stopped); the kernel's
    # accounting may read a little under the limit
    if stopped is None and soft is not None and proc.returncode != 0:
        if proc.returncode == -signal.SIGXCPU or cpu >= soft - 0.1:
            stopped = "cpu"
    return LimitedRun(proc.returncode, cpu, wall, stopped, soft, wall_limit)
