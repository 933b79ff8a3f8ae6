"""``hwprof regress``: each top's cocotb regression on Verilator."""

from __future__ import annotations

import sys

from ..catalog import Top
from ..sim.runner import CocotbResult, run_cocotb
from ..synth import to_verilog

__all__ = ["run_top_regression", "regress"]


def run_top_regression(
    top: Top,
    overrides: dict | None = None,
    *,
    seed: int | None = None,
    cycles: int | None = None,
    verilog: str | None = None,
    golden_params: dict | None = None,
    build_root=None,
) -> CocotbResult:
    """Run ``top``'s cocotb module against its Verilog.

    ``verilog`` replaces the generated Verilog (mutant tests); ``golden_params``
    replaces the parameters given to the golden model (default: the RTL's).
    """
    if top.cocotb_module is None:
        raise ValueError(f"top {top.name!r} has no cocotb regression")
    params = top.resolve(overrides or {})
    if verilog is None:
        verilog = to_verilog(top.construct(overrides or {}), top.name)
    env = {"params": params if golden_params is None else golden_params}
    if cycles is not None:
        env["cycles"] = cycles
    kwargs = {} if build_root is None else {"build_root": build_root}
    return run_cocotb(verilog=verilog, toplevel=top.name, test_module=top.cocotb_module,
                      env=env, seed=seed, **kwargs)  # fmt: skip


def regress(tops: list[Top], *, seed: int | None = None, cycles: int | None = None) -> bool:
    ok = True
    for top in tops:
        if top.cocotb_module is None:
            print(f"{top.name}: no cocotb regression", file=sys.stderr)
            continue
        result = run_top_regression(top, seed=seed, cycles=cycles)
        status = "PASS" if result.passed else "FAIL"
        print(f"{top.name}: {status} ({result.tests} tests, {result.failed} failed, "
              f"seed {result.seed}; log {result.log})")  # fmt: skip
        ok &= result.passed
    return ok
