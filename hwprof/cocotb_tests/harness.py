"""Helpers shared by the cocotb test modules (no RTL imports: golden models only).

The pytest side (``hwprof.sim.runner.run_cocotb``) passes parameters as
``HWPROF_<NAME>`` environment variables holding JSON, and the seed as
``HWPROF_SEED``. Every random choice in a test comes from :func:`rng`, so a
failure is reproduced by rerunning with the seed printed in its message.
"""

from __future__ import annotations

import json
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge

CLOCK_PERIOD_NS = 10


def param(name: str, default=None):
    """The JSON value of ``HWPROF_<NAME>``, or ``default``."""
    raw = os.environ.get(f"HWPROF_{name.upper()}")
    return default if raw is None else json.loads(raw)


def golden_params() -> dict:
    """The top's parameters (``HWPROF_PARAMS``) as golden-model keyword arguments.

    JSON has no tuples; list values (tap or position lists) become tuples again.
    """
    return {k: tuple(v) if isinstance(v, list) else v for k, v in param("params", {}).items()}


def seed() -> int:
    return int(os.environ["HWPROF_SEED"])


def rng() -> random.Random:
    return random.Random(seed())


def start_clock(dut) -> None:
    cocotb.start_soon(Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns").start())


async def start_in_reset(dut, inputs: dict) -> None:
    """Start the clock, hold ``rst`` for two cycles with ``inputs`` driven, release it.

    Returns just after a falling edge, so the caller drives the first cycle.
    """
    start_clock(dut)
    dut.rst.value = 1
    for name, value in inputs.items():
        getattr(dut, name).value = value
    await FallingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0


class Mismatch(AssertionError):
    """RTL and golden model disagree; the message names cycle, signal and seed."""


def check_equal(cycle: int, name: str, got: int, expected: int, context: str = "") -> None:
    if got != expected:
        raise Mismatch(
            f"cycle {cycle}: {name} = {got:#x}, golden model says {expected:#x}"
            f"{' (' + context + ')' if context else ''}; reproduce with seed {seed()}"
        )
