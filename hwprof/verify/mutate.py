"""``hwprof mutate``: mutation coverage of a block's cocotb regression (yosys ``mutate``).

The method of "Mutation Cover with Yosys" (MCY), with the block's own cocotb
regression as the test bench:

1. ``read_verilog``; ``prep -top TOP``; ``flatten``; ``mutate -list N -seed S
   -ctrl mutsel 16 1``: N netlist mutations, evenly sampled, each tagged with
   its source location.
2. All N are applied to one netlist, mutation ``i`` active when the added input
   ``mutsel`` equals ``i`` (0: the original design); ``opt_clean;
   write_verilog -noattr``. A wrapper with the block's own ports sets
   ``mutsel`` from the plusarg ``+mutsel=i``. One Verilator build serves every
   mutant (a build takes tens of seconds; a regression run a few).
3. The regression runs once per mutant (``+mutsel=i``, a fixed seed); a run with
   a failing test, or one that exceeds the time limit, kills the mutant. The
   original (``mutsel=0``) must pass first; the limit is in CPU seconds of the
   simulator's process (5 x the original's + 30), so that a run slowed by other
   jobs on the machine is not stopped, with a wall backstop (20 x that) only
   against a process that sleeps.
   With ``bench="native"`` (``hwprof mutate TOP --bench native``) the
   mutants run first on the native bench (:mod:`hwprof.verify.mutate_native`: the same
   one Verilog compiled once with the C++ stream harness, a real trace per
   mutant against the golden model); only its survivors run the cocotb
   regression (its build is made only if there are any). Both stages run their
   mutants as units of :mod:`hwprof.run` (one per mutant, each journaled).
4. A surviving mutant is written alone (its one ``mutate`` line on the original
   netlist, ``opt_clean; write_verilog -noattr``) and checked against the
   original: *equivalent* if :func:`cheap_equivalence` proves it (the mutation
   changes nothing, only sets x bits, or changes a bit that feeds nothing; with
   the native bench this check comes right after it, before the cocotb stage),
   or if a yosys miter (``miter -equiv -flatten``; ``sat -tempinduct`` from the reset values)
   or ``equiv_induct`` closes; else a *survivor* (a test gap), reported with its
   source location.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..catalog import Top
from ..sim.limits import WALL_BACKSTOP_FACTOR, run_limited
from ..sim.runner import (
    DEFAULT_BUILD_ROOT,
    WAIVER_ARGS,
    build_dir_for,
    build_model,
    simulator_command,
)
from ..synth import to_verilog
from ..synth.area import run_yosys

__all__ = ["Mutant", "MutationReport", "list_mutants", "mutate_top", "verilog_sha256"]

CTRL = "mutsel"
# A mutation may close a combinational loop that is live only when its mutant is
# selected (UNOPTFLAT); warnings never fail a mutant build (the netlists are yosys',
# not ours), the original design's own build keeps its named waivers only.
_BUILD_ARGS = [*WAIVER_ARGS, "-Wno-UNOPTFLAT", "-Wno-fatal"]
CTRL_WIDTH = 16
#: The flattened design as yosys JSON (for :func:`flop_renames`), in the work directory.
FLAT_JSON = "flat.json"


class MutateError(RuntimeError):
    """yosys or the original design's regression failed."""


@dataclass
class Mutant:
    index: int
    command: str  # the `mutate` line (without -ctrl)
    src: str
    status: str = "pending"  # killed / equivalent / survived / error (the unit failed)
    detail: str = ""


@dataclass
class MutationReport:
    top: str
    params: dict
    seed: int
    mutants: list = field(default_factory=list)
    seconds: float = 0.0
    #: sha256 of the Verilog the mutants were made from (hex): :func:`verilog_sha256`
    verilog_sha256: str = ""

    def count(self, status: str) -> int:
        return sum(m.status == status for m in self.mutants)

    def summary(self) -> str:
        run = [m for m in self.mutants if m.status != "not run"]
        listed = f" ({len(run)} of {len(self.mutants)} run)" if len(run) < len(self.mutants) else ""
        errors = f", {self.count('error')} failed to run" if self.count("error") else ""
        return (f"{self.top}: {len(self.mutants)} mutants{listed}, {self.count('killed')} killed, "
                f"{self.count('equivalent')} equivalent, {self.count('survived')} survived"
                f"{errors} ({self.seconds:.0f} s)")  # fmt: skip

    def record(self) -> dict:
        """The run as JSON: top, parameters, seed, the Verilog's sha256 and every mutant's
        verdict (no times)."""
        mutants = [{"index": m.index, "command": m.command, "src": m.src, "status": m.status,
                    "detail": m.detail} for m in self.mutants]  # fmt: skip
        return {"top": self.top, "params": self.params, "seed": self.seed,
                "verilog_sha256": self.verilog_sha256, "mutants": mutants}  # fmt: skip


def verilog_sha256(verilog: str) -> str:
    """sha256 (hex) of a top's generated Verilog: the text ``hwprof mutate`` mutates and
    ``hwprof generate`` writes."""
    return hashlib.sha256(verilog.encode()).hexdigest()


def _yosys(script: str, workdir: Path, check: bool = True,
           timeout: float | None = None) -> tuple[int, str]:  # fmt: skip
    status, log, stderr = run_yosys(script, workdir, log_name="run.log", timeout=timeout)
    if check and status != 0:
        tail = "\n".join((log + stderr).splitlines()[-15:])
        raise MutateError(f"yosys failed:\n{tail}")
    return status, log


def _prep(top: str) -> str:
    return f"read_verilog -sv orig.v\nprep -top {top}\nflatten\n"


def list_mutants(verilog: str, top: str, n: int, seed: int, workdir: Path) -> list[Mutant]:
    """``mutate -list n`` on the flattened design: the mutation lines."""
    (workdir / "orig.v").write_text(verilog)
    # the JSON after the list: write_json sorts the design, and mutate -list samples in
    # the design's order (before it, every list would be renumbered)
    _yosys(_prep(top) + f"mutate -list {n} -seed {seed} -o muts.ys\nwrite_json {FLAT_JSON}\n",
           workdir)  # fmt: skip
    mutants = []
    for line in (workdir / "muts.ys").read_text().splitlines():
        if not line.startswith("mutate "):
            continue
        src = re.search(r"-src (\S+)", line)
        mutants.append(Mutant(len(mutants) + 1, line.strip(), src.group(1) if src else "?"))
    return mutants


def _ports(verilog: str, top: str) -> list[tuple[str, str, str]]:
    """``(direction, range, name)`` of the top module's ports in Amaranth's Verilog."""
    start = re.search(rf"^module {re.escape(top)}\(", verilog, re.M)
    end = verilog.index("\nendmodule", start.end())
    body = verilog[start.end() : end]
    return re.findall(r"^\s*(input|output)\s+(\[[^\]]+\]\s+)?(\S+)\s*;", body, re.M)


def _wrapper(verilog: str, top: str) -> str:
    ports = _ports(verilog, top)
    names = ", ".join(name for _, _, name in ports)
    decls = "\n".join(f"  {d} {(r or '').strip()} {name};" for d, r, name in ports)
    conns = ", ".join(f".{name}({name})" for _, _, name in ports)
    return (
        f"module {top}({names});\n{decls}\n"
        f"  reg [{CTRL_WIDTH - 1}:0] {CTRL} = 0;\n"
        f'  initial if (!$value$plusargs("{CTRL}=%d", {CTRL})) {CTRL} = 0;\n'
        f"  {top}__mutants dut({conns}, .{CTRL}({CTRL}));\n"
        "endmodule\n"
    )


def flop_renames(top: str, workdir: Path) -> list[str]:
    """``rename`` lines that name each flop after the register it holds.

    In the flattened design (``FLAT_JSON`` in ``workdir``, written by
    :func:`list_mutants`, else made here from ``orig.v``) a flop whose output is exactly one
    named wire, ``lfsr.register`` say, is renamed ``lfsr.register$dff``. A
    mutation of that output reroutes the wire, and ``write_verilog`` then
    declares the flop under the cell's name: with this, a public
    ``lfsr.register$dff`` instead of an anonymous ``_500_``, so that a test that
    writes a register through VPI (the samplers' one-hot LFSR states) finds it
    in every mutant build. Flops whose output is not mutated keep the wire's
    name, as before; the mutations themselves are unchanged.
    """
    path = workdir / FLAT_JSON
    if not path.exists() or path.stat().st_mtime < (workdir / "orig.v").stat().st_mtime:
        _yosys(_prep(top) + f"write_json {FLAT_JSON}\n", workdir)
    module = json.loads(path.read_text())["modules"][top]
    names: dict[tuple, list[str]] = {}
    for name, net in module["netnames"].items():
        if not net.get("hide_name"):
            names.setdefault(tuple(net["bits"]), []).append(name)

    def preference(name):  # the register's own declaration (its init value), deepest, first
        net = module["netnames"][name]
        return ("init" not in net.get("attributes", {}), -name.count("."), name)

    lines = []
    for name, cell in module["cells"].items():
        wires = names.get(tuple(cell["connections"].get("Q", ())))
        if "dff" in cell["type"] and cell.get("hide_name") and wires:
            lines.append(f"rename {name} {min(wires, key=preference)}$dff")
    return [f"cd {top}", *lines, "cd .."] if lines else []


def build_mutant_design(verilog: str, top: str, mutants: list[Mutant], workdir: Path) -> str:
    """One Verilog holding every mutant behind ``mutsel``, with the block's ports."""
    orig = workdir / "orig.v"
    if not orig.exists() or orig.read_text() != verilog:
        orig.write_text(verilog)
    lines = [f"{m.command} -ctrl {CTRL} {CTRL_WIDTH} {m.index}" for m in mutants]
    lines += flop_renames(top, workdir)
    script = (_prep(top) + "\n".join(lines) + f"\nopt_clean\nrename {top} {top}__mutants\n"
              "write_verilog -noattr mutants.v\n")  # fmt: skip
    _yosys(script, workdir)
    return (workdir / "mutants.v").read_text() + "\n" + _wrapper(verilog, top)


def write_single_mutant(verilog: str, top: str, mutant: Mutant, workdir: Path) -> str:
    """The original netlist with one mutation (``opt_clean; write_verilog -noattr``)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "orig.v").write_text(verilog)
    _yosys(_prep(top) + f"{mutant.command}\nopt_clean\nwrite_verilog -noattr m.v\n", workdir)
    return (workdir / "m.v").read_text()


def _masked(verilog: str, top: str, core: str, name: str) -> str:
    """A module ``name`` around ``core`` whose stream payloads read 0 while not valid."""
    ports = _ports(verilog, top)
    names = {n for _, _, n in ports}
    decls, conns, assigns = [], [], []
    for d, r, n in ports:
        r = (r or "").strip()
        decls.append(f"  {d} {r} {n};")
        if d == "output" and n.endswith("__payload") and n[:-9] + "__valid" in names:
            decls.append(f"  wire {r} {n}__raw;")
            conns.append(f".{n}({n}__raw)")
            assigns.append(f"  assign {n} = {n[:-9]}__valid ? {n}__raw : 0;")
        else:
            conns.append(f".{n}({n})")
    return (
        f"module {name}({', '.join(n for _, _, n in ports)});\n"
        + "\n".join(decls)
        + f"\n  {core} u({', '.join(conns)});\n"
        + "\n".join(assigns)
        + "\nendmodule\n"
    )


def _equiv_matched(verilog: str, top: str, command: str | None, mutant_v: str,
                   workdir: Path, timeout: float | None = None) -> bool:  # fmt: skip
    """yosys equiv_make/equiv_induct: the mutant's registers matched to the original's.

    The mutant is ``command`` applied to the original netlist (names match), else
    the Verilog ``mutant_v``.
    """
    (workdir / "orig.v").write_text(verilog)
    if command is not None:
        gate = f"design -load base\n{command}\nopt_clean\n"
    else:
        (workdir / "gate_in.v").write_text(mutant_v)
        gate = f"design -reset\nread_verilog -sv gate_in.v\nprep -top {top}\nflatten\nopt_clean\n"
    script = (
        _prep(top) + "opt_clean\ndesign -save base\n"
        f"rename {top} gold\ndesign -stash gold\n{gate}"
        f"rename {top} gate\ndesign -stash gate\n"
        "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n"
        "memory_map\nequiv_make gold gate equiv\nhierarchy -top equiv\n"
        "equiv_simple -seq 4\nequiv_induct -seq 4\nequiv_status -assert\n"
    )  # fmt: skip
    try:
        rc, _ = _yosys(script, workdir, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return False
    return rc == 0


#: Rounds of ``splitcells; opt_clean -purge`` in :func:`cheap_equivalence`: each removes
#: one level of bit slices whose outputs nothing reads (a compare or carry tree of a
#: 64-bit word is 6 levels deep).
DEAD_ROUNDS = 10
#: the least time a mutant gets in the cheap equivalence check whatever ``--equiv-timeout``
#: says (ten dead rounds over the largest default netlist take 30-60 s a mutant on a loaded
#: machine: at 10 s the check of 13 survivors was stopped before its first verdict)
CHEAP_MIN_SECONDS = 120


def _const_bits(text: str) -> str | None:
    """The bits (MSB first) of an RTLIL constant ``W'bits`` (``W'x``: all x), else None."""
    found = re.fullmatch(r"(\d+)'([01xz]+)", text.strip())
    if not found:
        return None
    width, bits = int(found.group(1)), found.group(2)
    return bits * width if len(bits) == 1 and width > 1 else bits


def _only_x_set(before: str, after: str) -> bool:
    """Whether the cell dump ``after`` differs from ``before`` only in constant port bits
    that were x (don't care) before."""
    old, new = before.splitlines(), after.splitlines()
    if len(old) != len(new) or old == new:
        return False
    for line_old, line_new in zip(old, new, strict=True):
        if line_old == line_new:
            continue
        head_old, _, value_old = line_old.strip().partition(" ")
        head_new, _, value_new = line_new.strip().partition(" ")
        port_old, _, const_old = value_old.partition(" ")
        port_new, _, const_new = value_new.partition(" ")
        bits_old, bits_new = _const_bits(const_old), _const_bits(const_new)
        if (
            head_old != "connect"
            or head_new != "connect"
            or port_old != port_new
            or bits_old is None
            or bits_new is None
            or len(bits_old) != len(bits_new)
        ):
            return False
        if any(o != n and o != "x" for o, n in zip(bits_old, bits_new, strict=True)):
            return False
    return True


def cheap_equivalence(verilog: str, top: str, commands: list[str], workdir: Path,
                      timeout: float | None = None) -> list[str | None]:  # fmt: skip
    """For each mutation of ``commands``: why it is equivalent to the original, or None.

    Each mutation is applied alone to the original netlist (one yosys run: the
    netlist is read once, ``design -save``/``-load``), its cell dumped before and
    after. Three proofs, each sound by construction:

    * the mutation adds no cell and its cell is the same after: it **changes
      nothing** (a bit forced to the constant it already is, e.g. a ROM's data);
    * it adds no cell and changes only constant bits that were **x** (don't care:
      the default input of a full ``case``): any behaviour of the mutant is one
      the original allows;
    * it **feeds nothing**: the mutation applied behind a select (``-ctrl``, as in
      the mutants' build: a mux between the original bit and the mutated one, an
      added cell also where the plain mutation only rewires a bit), then after
      ``splitcells`` (every word-wide ``$and``, ``$or``, ``$mux``... cut into the
      slices its readers use) and ``opt_clean -purge`` (cells whose outputs
      nothing reads removed), :data:`DEAD_ROUNDS` times, no cell the mutation
      added is left, so what it changes reaches no output and no register's input
      (e.g. word-wide compare and ``+ 1`` trees of which only some bit positions
      are read).

    None proves nothing: a real change that is read, or a run out of time
    (``timeout`` seconds per mutation).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "orig.v").write_text(verilog)
    rounds = "splitcells\nopt_clean -purge\n" * DEAD_ROUNDS
    script = _prep(top) + "design -save unread_orig\n"
    for i, command in enumerate(commands):
        cell = re.search(r"-cell (\S+)", command)
        dump = f"dump {top}/{cell.group(1)}" if cell else "dump -n"
        script += (f"design -load unread_orig\ntee -q -o before{i}.txt {dump}\n{command}\n"
                   f"tee -q -o after{i}.txt {dump}\n"
                   f"tee -q -o added{i}.txt select -count c:*mutate*\n"
                   # the dead check on the mutation behind a select (its mux always an
                   # added cell, also where the plain mutation only rewires a bit)
                   f"design -load unread_orig\n{command} -ctrl {CTRL} {CTRL_WIDTH} 1\n"
                   f"tee -q -o muxed{i}.txt select -count c:*mutate*\n{rounds}"
                   f"tee -q -o left{i}.txt select -count c:*mutate*\n")  # fmt: skip
    try:
        _yosys(
            script,
            workdir,
            check=False,
            timeout=None if timeout is None else timeout * (1 + len(commands)),
        )
    except subprocess.TimeoutExpired:
        pass

    def text(name):
        path = workdir / name
        return path.read_text() if path.exists() else None

    def count(name):
        found = re.match(r"\s*(\d+) objects", text(name) or "")
        return int(found.group(1)) if found else None

    verdicts = []
    for i in range(len(commands)):
        added, muxed, left = (count(f"{name}{i}.txt") for name in ("added", "muxed", "left"))
        before, after = text(f"before{i}.txt"), text(f"after{i}.txt")
        verdict = None
        if added == 0 and before and after is not None and before == after:
            verdict = "equivalent (the mutation changes nothing: the bit already has that value)"
        elif added == 0 and before and after and _only_x_set(before, after):
            verdict = "equivalent (the mutation only sets x (don't care) bits)"
        elif muxed and left == 0:
            verdict = "equivalent (the mutated bit feeds nothing: splitcells; opt_clean)"
        verdicts.append(verdict)
    return verdicts


def cheap_unreached(workdir: Path, count: int) -> list[int]:
    """The positions, among the ``count`` mutations of a :func:`cheap_equivalence` run in
    ``workdir``, that its yosys run did not reach (stopped by its time limit or an
    error): their last output file is missing."""
    return [i for i in range(count) if not (workdir / f"left{i}.txt").exists()]


def check_equivalent(verilog: str, mutant_v: str, top: str, workdir: Path,
                     maxsteps: int = 12, mutant_command: str | None = None,
                     timeout: float | None = None) -> tuple[bool, str]:  # fmt: skip
    """Sequential equivalence from the reset values: (proved, what yosys said).

    First a miter of the outputs with ``sat -tempinduct`` (every output compared,
    except that a stream payload, ``X__payload`` beside ``X__valid``, is compared
    only while its ``valid`` is set: the stream protocol gives it no meaning
    otherwise); then yosys' ``equiv_make; equiv_simple; equiv_induct`` with every
    register matched by name to the original's (``mutant_command`` applied to the
    original netlist, else ``mutant_v``): it closes where the miter's induction
    would need invariants on unreachable states. ``timeout``: seconds for each of
    the two yosys runs (None: no limit); a run out of time proves nothing.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "gold.v").write_text(
        verilog.replace(f"module {top}(", f"module {top}__gold(")
        + _masked(verilog, top, f"{top}__gold", "gold")
    )
    (workdir / "gate.v").write_text(
        mutant_v.replace(f"module {top}(", f"module {top}__gate(")
        + _masked(verilog, top, f"{top}__gate", "gate")
    )
    script = (
        "read_verilog -sv gold.v\nprep -top gold\nflatten\ndesign -stash gold\n"
        "read_verilog -sv gate.v\nprep -top gate\nflatten\ndesign -stash gate\n"
        "design -copy-from gold -as gold gold\ndesign -copy-from gate -as gate gate\n"
        "memory_map\nmiter -equiv -flatten -make_assert gold gate miter\nhierarchy -top miter\n"
        f"sat -tempinduct -prove-asserts -verify -maxsteps {maxsteps}\n"
    )  # fmt: skip
    try:
        rc, log = _yosys(script, workdir, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        rc, log = None, (workdir / "run.log").read_text() if (workdir / "run.log").exists() else ""
    if rc == 0 and "Induction step proven: SUCCESS" in log:
        return True, "equivalent (k-induction on the outputs)"
    if _equiv_matched(verilog, top, mutant_command, mutant_v, workdir, timeout):
        return True, "equivalent (equiv_induct, state matched by name)"
    if "model found for base case" in log:
        steps = re.findall(r"\[base case (\d+)\]", log)
        return False, f"differs from the original at cycle {steps[-1] if steps else '?'}"
    if "Reached maximum number of time steps" in log:
        return False, f"no difference in {maxsteps} cycles from reset, not proved equivalent"
    if rc is None:
        steps = re.findall(r"\[base case (\d+)\]", log)
        return False, (
            f"no verdict in {timeout:.0f} s (no difference in "
            f"{max(0, int(steps[-1]) - 1) if steps else 0} cycles from reset)"
        )
    return False, "equivalence check failed: " + " ".join(log.splitlines()[-3:])


# --- running the regression against the mutant build ---------------------------------------


def _build(top: str, text: str, build_root: Path) -> Path:
    """Build the mutants' Verilog (one model, the mutant chosen by a plusarg); its directory."""
    build_dir = build_dir_for(f"{top}-mutants", {"verilog": text}, build_root).resolve()
    build_model(text, top, build_dir, build_root=build_root, build_args=_BUILD_ARGS)
    return build_dir


def capture_test_command(top: Top, build_dir: Path, env: dict, seed: int) -> dict:
    """The simulator command line and environment of the regression (not run).

    Replaying it with another ``+mutsel`` plusarg and results file runs the
    regression on another mutant without cocotb's runner.
    """
    extra = {"HWPROF_SEED": str(seed)}
    extra.update({f"HWPROF_{k.upper()}": json.dumps(v) for k, v in env.items()})
    try:
        return simulator_command(top.cocotb_module, top.name, build_dir, extra_env=extra,
                                 seed=seed, plusargs=[f"+{CTRL}=0"])  # fmt: skip
    except RuntimeError as error:
        raise MutateError(f"could not capture the cocotb simulator command: {error}") from None


def run_regression(command: dict, build_dir: Path, index: int,
                   cpu_limit: float) -> tuple[str, str, float]:  # fmt: skip
    """Run the captured regression on mutant ``index``: ("pass" | "fail" | "timeout",
    detail, CPU seconds).

    ``cpu_limit``: CPU seconds of the simulator process (cocotb's Verilator binary, the
    command's own process: :func:`hwprof.sim.limits.run_limited`), with a wall backstop
    of :data:`hwprof.sim.limits.WALL_BACKSTOP_FACTOR` times it against a process that
    sleeps; a run stopped by either is "timeout", its detail saying which.
    """
    from cocotb_tools.runner import get_results

    # a file of this attempt's own: an earlier attempt's simulator (its worker killed) may
    # still be writing another
    results = build_dir / f"results-{index}-{uuid.uuid4().hex[:8]}.xml"
    env = {**command["env"], "COCOTB_RESULTS_FILE": str(results)}
    cmds = [[f"+{CTRL}={index}" if arg == f"+{CTRL}=0" else arg for arg in c]
            for c in command["cmds"]]  # fmt: skip
    used = 0.0
    with open(build_dir / f"run-{index}.log", "w") as log:
        for cmd in cmds:
            run = run_limited(cmd, cpu_limit=max(1.0, cpu_limit - used), cwd=command["cwd"],
                              env=env, stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
            used += run.cpu_seconds
            if run.stopped == "cpu":
                return "timeout", f"no verdict in {math.ceil(cpu_limit)} CPU-s", used
            if run.stopped is not None:
                return "timeout", run.limit_text(), used
    if not results.exists():
        return "fail", "the simulation ended without results (crash)", used
    tests, failed = get_results(results)
    results.unlink()
    if tests == 0:
        return "fail", "no test ran", used
    return ("fail" if failed else "pass"), f"{failed}/{tests} tests failed", used


def _run_mutant_units(report: MutationReport, pending: list[Mutant], design: str, out,
                      run_options, journal: Path | None, bench: str, cycles,
                      shared: dict) -> None:  # fmt: skip
    """Run ``pending``'s mutants as units (:func:`mutant_unit`); their verdicts into the
    mutants. A unit that fails (raises) is the mutant's result: status ``error``."""
    from ..run import Journal, RunOptions, Unit, run_units

    by_index = {m.index: m for m in pending}

    def done(outcome):
        m = by_index[int(outcome.key)]
        if outcome.ok:
            m.status, m.detail = outcome.value["status"], outcome.value["detail"]
        else:
            m.status, m.detail = "error", f"{outcome.error_type}: {outcome.error}"
        out(f"  {m.index:3d} {m.status:10s} {m.src} {m.detail}")

    identity = {"top": report.top, "params": report.params, "seed": report.seed,
                "n": len(report.mutants), "bench": bench, "cycles": cycles,
                "design": hashlib.sha256(design.encode()).hexdigest()[:16]}  # fmt: skip
    run_units([Unit(str(m.index), mutant_unit, {"index": m.index, "mutation": m.command})
               for m in pending], run_options or RunOptions(jobs=1), shared=shared,
              journal=None if journal is None else Journal(journal, identity),
              on_done=done, name=f"mutate {report.top}")  # fmt: skip


#: the benches of ``mutate_top``
BENCHES = ("cocotb", "native")


#: the CPU seconds of the original design's run (it must end within them)
ORIGINAL_CPU_LIMIT = 3600.0


def _original_passes(name: str, run, count: int, out, min_limit: float, where: str) -> float:
    """Run the original design (``mutsel=0``) on a bench; it must pass. The CPU limit of
    each mutant's run (CPU seconds of the simulation's process, measured the same way as
    the original's): 5 x the original's + 30 s, at least ``min_limit``."""
    t0 = time.monotonic()
    verdict, detail, cpu = run(0, ORIGINAL_CPU_LIMIT)
    wall = time.monotonic() - t0
    if verdict != "pass":
        raise MutateError(f"the original design fails the {name} bench ({detail}); see {where}")
    limit = max(min_limit, 5 * cpu + 30)
    out(f"original passes the {name} bench ({cpu:.0f} CPU-s, {wall:.0f} s wall); running "
        f"{count} mutants ({math.ceil(limit)} CPU-s each at most, wall backstop "
        f"{WALL_BACKSTOP_FACTOR * math.ceil(limit):.0f} s)")  # fmt: skip
    return limit


def _run_native_units(report: MutationReport, runner, pending: list[Mutant], out,
                      run_options, journal: Path | None, design: str) -> list[Mutant]:  # fmt: skip
    """The native stage: the original in this process (it must pass; it sets the time
    limit), then ``pending``'s mutants as units (:func:`hwprof.verify.mutate_native.native_unit`,
    one per mutant index) on ``run_options``' executor, recorded in ``journal`` (for
    ``--resume``). A failing or timed-out mutant is killed, one whose unit fails
    (raises) has status ``error``; the survivors, in index order."""
    from ..run import Journal, RunOptions, Unit, run_units
    from .mutate_native import native_unit

    where = str(runner.harness.exe.parent)
    cpu_limit = _original_passes("native", runner.run, len(pending), out, 30.0, where)
    by_index = {m.index: m for m in pending}
    survivors = set()

    def done(outcome):
        m = by_index[int(outcome.key)]
        if not outcome.ok:
            m.status, m.detail = "error", f"{outcome.error_type}: {outcome.error}"
        elif outcome.value["verdict"] in ("fail", "timeout"):
            m.status, m.detail = "killed", outcome.value["detail"]
        else:
            m.detail = outcome.value["detail"]
            survivors.add(m.index)
            out(f"  {m.index:3d} {'survives':10s} {m.src} (native bench)")
            return
        out(f"  {m.index:3d} {m.status:10s} {m.src} {m.detail}")

    identity = {"top": report.top, "params": report.params, "seed": report.seed,
                "n": len(report.mutants), "bench": "native", "stage": "native",
                "stimulus": runner.digest[:16],
                "design": hashlib.sha256(design.encode()).hexdigest()[:16]}  # fmt: skip
    native_journal = None if journal is None else Path(journal).with_name(
        f"{Path(journal).stem}-native{Path(journal).suffix}")  # fmt: skip
    run_units([Unit(str(m.index), native_unit, {"index": m.index}) for m in pending],
              run_options or RunOptions(jobs=1),
              shared={**runner.shared(), "cpu_limit": cpu_limit},
              journal=None if native_journal is None else Journal(native_journal, identity),
              on_done=done, name=f"mutate {report.top} (native)")  # fmt: skip
    return [m for m in pending if m.index in survivors]


def _drop_cheaply_equivalent(verilog: str, top: str, pending: list, work: Path,
                 timeout: float | None, out) -> list:  # fmt: skip
    """The mutants of ``pending`` that :func:`cheap_equivalence` does not prove (the others
    are marked equivalent)."""
    if not pending:
        return pending
    if timeout is not None:
        timeout = max(timeout, CHEAP_MIN_SECONDS)
    verdicts = cheap_equivalence(verilog, top, [m.command for m in pending], work / "unread",
                                 timeout)  # fmt: skip
    for m, verdict in zip(pending, verdicts, strict=True):
        if verdict:
            m.status, m.detail = "equivalent", verdict
            out(f"  {m.index:3d} {m.status:10s} {m.src} {m.detail}")
    unchecked = [pending[i].index for i in cheap_unreached(work / "unread", len(pending))]
    if unchecked:
        limit = "no limit" if timeout is None else f"{timeout:.0f} s a mutant"
        out(f"{top}: the cheap equivalence check stopped (out of time: {limit}; or a yosys "
            f"error) before mutants {', '.join(map(str, unchecked))}")  # fmt: skip
    return [m for m, verdict in zip(pending, verdicts, strict=True) if not verdict]


def mutant_unit(index: int, mutation: str, *, top: str, verilog: str, command: dict,
                build_dir: str, cpu_limit: float, equiv_timeout: float | None,
                workdir: str | None, cheap: bool) -> dict:  # fmt: skip
    """One mutant, the unit of a run (:mod:`hwprof.run`): its cocotb regression on the
    shared build (``build_dir``, on a file system the workers share), then, if it
    survives, the equivalence checks (:func:`cheap_equivalence` if ``cheap``, then
    :func:`check_equivalent`) in ``workdir``/m<index> (a temporary directory if None).

    Returns ``{"status": killed | equivalent | survived, "detail": ...}``.
    """
    verdict, detail, _ = run_regression(command, Path(build_dir), index, cpu_limit)
    if verdict in ("fail", "timeout"):
        return {"status": "killed", "detail": detail}
    with tempfile.TemporaryDirectory(prefix="hwprof-mutant-") as tmp:
        work = Path(workdir) / f"m{index}" if workdir is not None else Path(tmp)
        if cheap:
            limit = None if equiv_timeout is None else max(equiv_timeout, CHEAP_MIN_SECONDS)
            why = cheap_equivalence(verilog, top, [mutation], work / "unread", limit)[0]
            if why:
                return {"status": "equivalent", "detail": why}
        single = write_single_mutant(verilog, top, Mutant(index, mutation, ""), work)
        same, what = check_equivalent(verilog, single, top, work, mutant_command=mutation,
                                      timeout=equiv_timeout)  # fmt: skip
    return {"status": "equivalent" if same else "survived", "detail": what}


def mutate_top(top: Top, n: int, seed: int = 1, *, overrides: dict | None = None,
               cycles: int | None = None, workdir: Path | None = None,
               build_root: Path = DEFAULT_BUILD_ROOT, out=print,
               only: set[int] | None = None,
               equiv_timeout: float | None = None, bench: str = "cocotb",
               native_options: dict | None = None, run_options=None,
               journal: Path | None = None) -> MutationReport:  # fmt: skip
    """Mutation coverage of ``top``'s cocotb regression with ``n`` mutants.

    ``only``: run just these mutant indices of the same list and build (to replay
    survivors after a test change); the others are reported as "not run".
    ``equiv_timeout``: seconds for each yosys run of a survivor's equivalence check
    (None: no limit; the wide blocks' 12-cycle miters take many minutes).
    ``bench``: "cocotb" (the block's regression) or "native" (the native stream
    bench of :mod:`hwprof.verify.mutate_native` first, the cocotb regression on its
    survivors; tops whose catalog entry has a ``native_bench`` only);
    ``native_options``: fields of that bench (tuples, writes, ...).
    ``run_options`` (:class:`hwprof.run.RunOptions`, default in-process): where the
    mutants run, one unit each: of the native stage
    (:func:`hwprof.verify.mutate_native.native_unit`), then of the cocotb stage
    (:func:`mutant_unit`); ``journal``: the file recording the cocotb stage's units (for
    ``--resume``), the native stage's beside it (``NAME-native.jsonl``).
    """
    if bench not in BENCHES:
        raise ValueError(f"bench must be one of {', '.join(BENCHES)}, not {bench!r}")
    if top.cocotb_module is None:
        raise ValueError(f"top {top.name!r} has no cocotb regression")
    if only is not None and not all(1 <= i <= n for i in only):
        raise ValueError(f"mutant indices must be between 1 and n = {n}, not {sorted(only)}")
    start = time.monotonic()
    params = top.resolve(overrides or {})
    native = None
    if bench == "native":
        from .mutate_native import native_bench

        native = native_bench(top, params, **(native_options or {}))
    component = top.construct(overrides or {})
    verilog = to_verilog(component, top.name)
    env = {"params": params}
    if cycles is not None:
        env["cycles"] = cycles
    report = MutationReport(top.name, params, seed, verilog_sha256=verilog_sha256(verilog))
    with tempfile.TemporaryDirectory(prefix="hwprof-mutate-") as tmp:
        work = Path(workdir) if workdir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        report.mutants = list_mutants(verilog, top.name, n, seed, work)
        text = build_mutant_design(verilog, top.name, report.mutants, work)
        pending = []
        for m in report.mutants:
            if only is not None and m.index not in only:
                m.status = "not run"
            else:
                pending.append(m)
        if native is not None:
            from .mutate_native import NativeRunner

            out(f"{top.name}: {len(report.mutants)} mutants; building them into one native "
                "Verilator model (stream harness)")  # fmt: skip
            runner = NativeRunner(native, component, text, work, Path(build_root),
                                  tuple(_BUILD_ARGS))  # fmt: skip
            out(f"{top.name}: native bench: {native.tuples:,} tuples of {native.trace.name}, "
                f"{len(runner.want):,} records and markers expected (golden model "
                f"{runner.golden_seconds:.0f} s)")  # fmt: skip
            pending = _run_native_units(report, runner, pending, out, run_options, journal,
                                        text)  # fmt: skip
            # before the slow cocotb stage: the survivors whose mutated bit feeds nothing
            pending = _drop_cheaply_equivalent(verilog, top.name, pending, work, equiv_timeout, out)
        if pending:
            out(f"{top.name}: building the mutants into one Verilator model (cocotb)")
            build_dir = _build(top.name, text, Path(build_root))
            command = capture_test_command(top, build_dir, env, seed)
            cpu_limit = _original_passes(
                "cocotb",
                lambda i, limit: run_regression(command, build_dir, i, limit),
                len(pending),
                out,
                60.0,
                f"{build_dir}/run-0.log",
            )
            _run_mutant_units(
                report,
                pending,
                text,
                out,
                run_options,
                journal,
                bench,
                cycles,
                {
                    "top": top.name,
                    "verilog": verilog,
                    "command": command,
                    "build_dir": str(build_dir),
                    "cpu_limit": cpu_limit,
                    "equiv_timeout": equiv_timeout,
                    "cheap": native is None,
                    "workdir": None if workdir is None else str(work.absolute()),
                },
            )
    report.seconds = time.monotonic() - start
    out(report.summary())
    for m in report.mutants:
        if m.status == "survived":
            out(f"  survivor {m.index}: {m.src}: {m.command}")
    return report
