"""Unit functions for tests/test_run.py, importable by Dask workers (``tests.run_units``)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def square(x: int, offset: int = 0) -> dict:
    """A small JSON result: floats must come back bit for bit from any worker."""
    return {"x": x, "y": x * x + offset, "third": x / 3, "pair": (x, -x)}


def fail_on(x: int, bad: int, marks: str, offset: int = 0) -> dict:
    """Raise for ``x == bad`` (its own failure); every call leaves a line in ``marks``."""
    with open(marks, "a") as f:
        f.write(f"{x}\n")
    if x == bad:
        raise ValueError(f"unit {x} is bad\nsecond line")
    return {"x": x}


def counted(x: int, marks: str, delay: float = 0.0) -> dict:
    """``square`` that leaves a line ``x`` in the file ``marks`` for each call."""
    time.sleep(delay)
    with open(marks, "a") as f:
        f.write(f"{x}\n")
    return square(x)


def interrupt_at(x: int, stop: int, marks: str) -> dict:
    """Ctrl-C (KeyboardInterrupt) in the driver at unit ``stop``."""
    if x == stop:
        raise KeyboardInterrupt
    return counted(x, marks)


def kill_worker_once(x: int, victim: int, marks: str) -> dict:
    """Unit ``victim`` kills the process it runs in (SIGKILL), the first time only."""
    flag = Path(marks + f".killed{x}")
    if x == victim and not flag.exists():
        flag.write_text(str(os.getpid()))
        time.sleep(0.2)
        os.kill(os.getpid(), signal.SIGKILL)
    return counted(x, marks)


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on (just now)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
