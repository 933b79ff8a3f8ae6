"""The FPGA flow (yosys synth_ecp5 + nextpnr-ecp5): the registered wrapper, one real
run on the smallest block (brr, about 10 s once yowasp has compiled its WebAssembly;
the first run on a machine compiles it, one to two minutes), the report's parsing,
and the CLI's bad input. Fmax is measured in docs/fpga.md, never asserted here.
"""

import dataclasses
import json

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

import hwprof.synth.fpga as fpga
from hwprof.catalog import TOPS
from hwprof.cli import main
from hwprof.fpga_report import FPGA_KEYS, fpga_columns, fpga_record, load_fpga_records
from hwprof.synth import synthesize, to_verilog
from hwprof.synth.fpga import FpgaError, RegisteredWrapper, _timing, wrapper_flops

from .test_cli import run_cli
from .unelaborated import unelaborated


class Adder(wiring.Component):
    """Combinational: ``total = a + b`` (8 bits), and a nested output pair."""

    def __init__(self):
        super().__init__({
            "a": In(8), "b": In(8), "total": Out(8),
            "pair": Out(wiring.Signature({"lo": Out(4), "hi": Out(4)})),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.total.eq(self.a + self.b)
        m.d.comb += [self.pair.lo.eq(self.a), self.pair.hi.eq(self.b)]
        return m


def run_wrapper(a_b_pairs, block):
    dut = RegisteredWrapper(block)
    seen = []

    async def bench(ctx):
        for a, b in a_b_pairs:
            ctx.set(dut.a, a)
            ctx.set(dut.b, b)
            await ctx.tick()
            seen.append((ctx.get(dut.total), ctx.get(dut.pair.lo), ctx.get(dut.pair.hi)))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return seen


def test_wrapper_registers_every_input_and_output():
    """An input reaches the wrapper's output two edges later (one flop in, one out)."""
    pairs = [(1, 2), (10, 20), (200, 100), (7, 9), (0, 0), (0, 0)]
    block = Adder()
    seen = run_wrapper(pairs, block)
    # after the edge of cycle i, the output flops hold the block's output for the
    # inputs registered at edge i-1, i.e. pairs[i-1]
    for i in range(1, len(pairs)):
        a, b = pairs[i - 1]
        assert seen[i] == ((a + b) % 256, a % 16, b % 16), (i, seen)
    # a wrapper with no input flop would show pairs[i] here: the check can fail
    assert any(seen[i][0] != sum(pairs[i]) % 256 for i in range(1, len(pairs)))
    assert wrapper_flops(block) == 8 + 8 + 8 + 4 + 4


def test_timing_reads_the_reg_to_reg_path_not_the_async_reset():
    step = {"from": {"cell": "a", "port": "Q"}, "to": {"cell": "b", "port": "D"}, "delay": 2.0}
    reset = {"from": {"cell": "rst", "port": "O"}, "to": {"cell": "c", "port": "LSR"}, "delay": 9.0}
    report = {
        "fmax": {"clk": {"achieved": 123.456, "constraint": 100}},
        "critical_paths": [
            {"from": "<async>", "to": "posedge clk", "path": [reset]},
            {"from": "posedge clk", "to": "posedge clk", "path": [step, {**step, "delay": 3.0}]},
        ],
    }
    timing = _timing(report)
    assert timing["fmax_mhz"] == 123.46
    assert timing["critical_path"] == {"from": "a.Q", "to": "b.D", "delay_ns": 5.0}


def test_brr_places_and_routes_on_ecp5(tmp_path):
    """One real run: the record's fields and their sanity (no speed asserted)."""
    top = TOPS["brr"]
    params = top.resolve({})
    block_flops = synthesize(to_verilog(top.construct({}), "brr"), "brr")["flops"]
    component = top.construct({})
    record = fpga_record(top, params, component, keep_dir=tmp_path)
    assert set(FPGA_KEYS) <= set(record)
    assert record["device"] == "ecp5-85k" and record["params"] == params
    # brr's ports: freq (16) + valid + state in/out and taken/redirect; the wrapper
    # registers each bit, the block keeps its 20-bit LFSR
    assert record["wrapper_flops"] == wrapper_flops(component) > 20
    assert record["ffs"] >= block_flops + record["wrapper_flops"]
    assert 0 < record["luts"] < 1000
    assert record["bram"] == 0 and record["dist_ram"] == 0  # brr has no memory
    assert record["fmax_mhz"] > 0
    path = record["critical_path"]
    assert path["from"] and path["to"] and path["delay_ns"] > 0
    assert record["fmax_mhz"] == pytest.approx(1000 / path["delay_ns"], rel=0.05)
    assert (tmp_path / "report.json").exists() and (tmp_path / "nextpnr.log").exists()


def test_tool_failure_is_one_line(monkeypatch, capsys):
    broken = dataclasses.replace(fpga.DEVICES["ecp5-85k"], options=("--no-such-option",))
    monkeypatch.setitem(fpga.DEVICES, "ecp5-85k", broken)
    with pytest.raises(FpgaError, match=r"^nextpnr \(ecp5-85k\) failed: .*no-such-option"):
        fpga.place_and_route(TOPS["lfsr"].construct({}), "lfsr")
    assert main(["fpga", "lfsr"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hwprof: nextpnr (ecp5-85k) failed: "), err


def test_timeout_is_one_line():
    with pytest.raises(FpgaError, match=r"did not finish in 0.001 s"):
        fpga.place_and_route(TOPS["lfsr"].construct({}), "lfsr", timeout=0.001)


@pytest.mark.parametrize(
    "args, message",
    [
        (["fpga", "nosuch"], "unknown top 'nosuch' (known: "),
        (["fpga", "brr", "--device", "xc7a35t"], "unknown device 'xc7a35t' (known: ecp5-85k"),
        (["fpga", "brr", "-p", "width=40"], "brr: width must be between 16 and 32, not 40"),
        (["fpga", "brr", "lfsr", "-p", "width=16"], "-p applies to exactly one top"),
        (["report", "--fpga", "--device", "ice40-hx8k"], "unknown device 'ice40-hx8k'"),
    ],
)
def test_fpga_bad_input_one_line_exit_2(tmp_path, args, message):
    code, stdout, stderr = run_cli(*args, cwd=tmp_path)
    assert code == 2
    assert stderr.count("\n") == 1 and stderr.startswith("hwprof: error: "), stderr
    assert message in stderr and "Traceback" not in stderr
    assert list(tmp_path.iterdir()) == []  # nothing written (report's build/ included)


def test_area_table_reads_fpga_columns(tmp_path):
    params = TOPS["brr"].resolve({})
    record = {"block": "brr", "params": params, "luts": 55, "ffs": 68, "bram": 0,
              "fmax_mhz": 207.6}  # fmt: skip
    (tmp_path / "fpga.json").write_text(json.dumps([record]))
    fpga_records = load_fpga_records(tmp_path / "fpga.json")
    assert fpga_columns(fpga_records, {"block": "brr", "params": params}) == " 55 | 68 | 0 | 208 "
    other = {"block": "brr", "params": {**params, "width": 16}}
    assert fpga_columns(fpga_records, other) == " | | | "
    (tmp_path / "bad.json").write_text("[{")
    assert load_fpga_records(tmp_path / "bad.json") == {}
    assert load_fpga_records(tmp_path / "absent.json") == {}


def test_report_fpga_replaces_only_the_named_tops(tmp_path, monkeypatch, capsys):
    """`report --fpga --top T` measures T again and keeps the other rows (fake tools)."""
    import hwprof.fpga_report as report

    runs = []

    def fake(component, name, device, keep_dir=None, timeout=None):
        runs.append(name)  # the fake never elaborates the component: main runs unelaborated()
        if name == "lfsr" and len(runs) > 2:
            raise FpgaError("nextpnr (ecp5-85k) did not finish in 900 s")
        return {"luts": len(runs), "ffs": 1, "bram": 0, "dist_ram": 0, "fmax_mhz": 100.0,
                "critical_path": None, "device": device, "cells": {}, "wrapper_flops": 1}

    monkeypatch.setattr(report, "place_and_route", fake)
    monkeypatch.setattr(report, "TOPS", {n: TOPS[n] for n in ("multihash", "brr", "lfsr")})
    with unelaborated():
        assert main(["report", "--fpga", "--jobs", "1", "-o", str(tmp_path)]) == 0
        assert runs == ["brr", "lfsr", "multihash"]  # multihash last
        assert main(["report", "--fpga", "--jobs", "1", "--top", "lfsr", "-o", str(tmp_path)]) == 0
    records = json.loads((tmp_path / "fpga.json").read_text())
    assert [r["block"] for r in records] == ["brr", "lfsr", "multihash"]
    assert records[0]["luts"] == 1 and records[2]["luts"] == 3  # kept
    assert records[1]["error"] == "nextpnr (ecp5-85k) did not finish in 900 s"
    table = (tmp_path / "fpga.md").read_text()
    assert "| lfsr | defaults | nextpnr (ecp5-85k) did not finish in 900 s |" in table
    capsys.readouterr()
    assert main(["report", "--top", "lfsr", "-o", str(tmp_path)]) == 2
    assert "--top applies to report --fpga or --asic only" in capsys.readouterr().err
