"""``hwprof.sim.limits``: a run under a CPU limit with a wall backstop.

The commands are small Python processes: one that spins (stopped by the CPU limit,
in a few CPU seconds), one that sleeps or is stopped by a signal (wall time far over
its CPU time: a run slowed by other jobs, which the CPU limit must not stop and a
wall limit of the same number of seconds does).
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from hwprof.sim.limits import RunLimitExceeded, run_limited
from hwprof.sim.native import run_harness

SPIN = [sys.executable, "-c", "while True: pass"]


def _sleeper(seconds: float) -> list:
    return [sys.executable, "-c", f"import time; time.sleep({seconds}); print('done')"]


#: the wall backstop of the tests whose command spins: far above the CPU limit, so that a
#: loaded machine (a spinning process given a few per cent of a core) cannot end the run
#: by wall time before the CPU limit does
LOADED_WALL = 900


def test_a_spinning_command_is_stopped_by_the_cpu_limit():
    run = run_limited(SPIN, cpu_limit=1, wall_limit=LOADED_WALL)
    assert run.stopped == "cpu" and run.returncode == -signal.SIGXCPU, run
    assert 0.9 <= run.cpu_seconds < 3, run
    assert run.limit_text() == "no verdict in 1 CPU-s"


def test_the_cpu_limit_reaches_the_child_of_a_wrapper():
    """A shell that runs the spinning process: the child is stopped, its CPU counted
    (the shell waited for it), and the shell's failure is put down to the limit."""
    run = run_limited(["sh", "-c", f"{sys.executable} -c 'while True: pass'; exit 3"],
                      cpu_limit=1, wall_limit=LOADED_WALL)  # fmt: skip
    assert run.returncode == 3 and run.stopped == "cpu" and run.cpu_seconds >= 0.9, run


def test_a_sleeping_run_is_not_stopped_by_the_cpu_limit(tmp_path):
    """Two wall seconds at almost no CPU under a one-second CPU limit: it ends by itself;
    the old limit (the same seconds of wall time) would have stopped it."""
    with open(tmp_path / "out", "w") as out:
        run = run_limited(_sleeper(2), cpu_limit=1, stdout=out)
    assert run.stopped is None and run.returncode == 0 and run.wall_seconds >= 2, run
    assert run.cpu_seconds < 1 and (tmp_path / "out").read_text() == "done\n"
    assert run.limit_text() == ""
    old = run_limited(_sleeper(2), wall_limit=1)
    assert old.stopped == "wall" and old.returncode == -signal.SIGKILL, old
    with pytest.raises(subprocess.TimeoutExpired):  # what the mutate benches used to do
        subprocess.run(_sleeper(2), timeout=1, stdout=subprocess.DEVNULL)


def test_a_run_stopped_for_a_while_is_not_stopped_by_the_cpu_limit(tmp_path):
    """A process that spends a fraction of a CPU second, stopped (SIGSTOP) for three
    seconds in the middle, as a process waiting for a core on a loaded machine."""
    pid_file = tmp_path / "pid"
    script = ("import os, sys, time\n"
              f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
              "time.sleep(0.5)\n"
              "t = time.process_time()\n"
              "while time.process_time() - t < 0.3: pass\n"
              "print('done')\n")  # fmt: skip

    def pause():
        while not pid_file.exists() or not pid_file.read_text():
            time.sleep(0.01)
        pid = int(pid_file.read_text())
        os.kill(pid, signal.SIGSTOP)
        time.sleep(3)
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:  # the wall limit killed it
            pass

    for limit, stopped in (({"cpu_limit": 2}, None), ({"wall_limit": 2}, "wall")):
        pid_file.unlink(missing_ok=True)
        thread = threading.Thread(target=pause)
        thread.start()
        with open(tmp_path / "out", "w") as out:
            run = run_limited([sys.executable, "-c", script], stdout=out, **limit)
        thread.join()
        assert run.stopped == stopped, (limit, run)
        if stopped is None:
            assert run.returncode == 0 and run.wall_seconds >= 3 and run.cpu_seconds < 2
            assert (tmp_path / "out").read_text() == "done\n"


def test_the_wall_backstop_stops_a_process_that_sleeps():
    started = time.monotonic()
    run = run_limited(_sleeper(600), cpu_limit=1, wall_limit=1)
    assert run.stopped == "wall" and run.returncode == -signal.SIGKILL, run
    assert run.limit_text() == "no verdict in the wall backstop (1 s)"
    assert time.monotonic() - started < 30
    # without a wall limit, the backstop is twenty times the CPU limit
    assert run_limited(["true"], cpu_limit=2).wall_limit == 40


def test_what_the_command_left_running_is_killed(tmp_path):
    pid_file = tmp_path / "pid"
    run = run_limited(["sh", "-c", f"sleep 600 & echo $! > {pid_file}; exit 0"], cpu_limit=5)
    assert run.returncode == 0 and run.stopped is None
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # gone, or a zombie waiting for init to reap it
        stat = Path(f"/proc/{pid}/stat")
        if not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the background sleep {pid} is still running")


def test_bad_arguments():
    with pytest.raises(ValueError, match="cpu_limit must be positive, not 0"):
        run_limited(["true"], cpu_limit=0)
    with pytest.raises(ValueError, match="wall_limit must be positive, not -1"):
        run_limited(["true"], wall_limit=-1)
    with pytest.raises(ValueError, match="does not read pipes"):
        run_limited(["true"], stdout=subprocess.PIPE)


def test_run_harness_limits_cpu_and_reports_its_cpu(tmp_path):
    """A harness stand-in (its report, the last line of its stdout): a slow one within
    the CPU limit passes, with the CPU seconds of its process; a spinning one is stopped
    (a subprocess.TimeoutExpired saying which limit); a failing one raises its stderr."""
    report = ("import json, time\n"
              "t = time.process_time()\n"
              "while time.process_time() - t < 0.2: pass\n"
              "time.sleep(1.5)\n"
              "print(json.dumps({'cycles': 7}))\n")  # fmt: skip
    got = run_harness([sys.executable, "-c", report], cpu_limit=1, timeout=LOADED_WALL)
    assert got["cycles"] == 7 and 0.2 <= got["process_cpu_seconds"] < 1, got
    with pytest.raises(subprocess.TimeoutExpired):  # the same run under a 1 s wall limit
        run_harness([sys.executable, "-c", report], timeout=1)
    with pytest.raises(RunLimitExceeded) as caught:
        run_harness(SPIN, cpu_limit=1, timeout=LOADED_WALL)
    assert isinstance(caught.value, subprocess.TimeoutExpired)
    assert caught.value.run.stopped == "cpu" and "no verdict in 1 CPU-s" in str(caught.value)
    again = pickle.loads(pickle.dumps(caught.value))  # as from a worker of a run
    assert again.run == caught.value.run and str(again) == str(caught.value)
    fail = [sys.executable, "-c", "import sys; sys.exit('no such trace')"]
    with pytest.raises(RuntimeError, match=r"failed \(1\): no such trace"):
        run_harness(fail, cpu_limit=1)
