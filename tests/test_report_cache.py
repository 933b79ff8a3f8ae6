"""``hwprof report``: results cached by the Verilog's hash, the defaults' table first."""

import json

import hwprof.synth.area as area
from hwprof.catalog import TOPS
from hwprof.cli import main

FAKE = {"flops": 1, "gates": 2, "transistors": 3, "depth": 4, "memory_bits": 0, "cells": {}}


def test_cache_is_keyed_by_the_verilog_and_the_top(tmp_path, monkeypatch):
    calls = []

    def fake(verilog, top, keep_dir=None):
        calls.append((verilog, top))
        return {**FAKE, "gates": len(calls)}

    monkeypatch.setattr(area, "synthesize", fake)
    first, cached = area.cached_synthesize("module a; endmodule", "a", tmp_path)
    assert not cached and first["gates"] == 1
    again, cached = area.cached_synthesize("module a; endmodule", "a", tmp_path)
    assert cached and again == first and len(calls) == 1
    other, cached = area.cached_synthesize("module a; wire w; endmodule", "a", tmp_path)
    assert not cached and other["gates"] == 2  # another Verilog: synthesized again
    _, cached = area.cached_synthesize("module a; endmodule", "b", tmp_path)
    assert not cached and len(calls) == 3


def test_defaults_table_comes_first_and_records_keep_catalog_order(tmp_path, monkeypatch,
                                                                   capsys):  # fmt: skip
    import hwprof.report as report

    def fake(verilog, top, cache_dir):
        return {**FAKE, "gates": len(verilog)}, False

    monkeypatch.setattr(report, "cached_synthesize", fake)
    tops = {name: TOPS[name] for name in ("brr", "lfsr")}
    monkeypatch.setattr(report, "TOPS", tops)
    assert main(["report", "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.index("## Default parameters") < out.index("## Variants")
    defaults = out[:out.index("## Variants")]
    assert "| brr | defaults |" in defaults and "| lfsr | defaults |" in defaults
    assert "lockup_escape" not in defaults
    records = json.loads((tmp_path / "area.json").read_text())
    expected = [(t.name, t.resolve(v)) for t in tops.values() for v in t.variants]
    assert [(r["block"], r["params"]) for r in records] == expected
    verilog = {p.name: len(p.read_text()) for p in (tmp_path / "verilog").iterdir()}
    assert records[0]["gates"] == verilog["brr.v"]  # each record is its own Verilog's


def test_a_failed_synthesis_is_one_line_and_its_row(tmp_path, monkeypatch, capsys):
    import hwprof.report as report
    from hwprof.synth import SynthError

    def fake(verilog, top, cache_dir):  # every lfsr run fails, as a killed yosys would
        if top == "lfsr":
            raise SynthError("yosys failed (killed by signal 9):\nlog tail")
        return dict(FAKE), False

    monkeypatch.setattr(report, "cached_synthesize", fake)
    monkeypatch.setattr(report, "TOPS", {"lfsr": TOPS["lfsr"], "brr": TOPS["brr"]})
    assert main(["report", "-o", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    failed_rows = [line for line in captured.out.splitlines() if "synthesis failed" in line]
    assert len(failed_rows) == len(TOPS["lfsr"].variants)
    assert all(row.startswith("| lfsr |") and "killed by signal 9" in row for row in failed_rows)
    errors = captured.err.splitlines()
    assert sum(line.startswith("hwprof: lfsr") for line in errors) == len(failed_rows)
    assert errors[-1].startswith("hwprof: synthesis failed for lfsr, lfsr-")
    records = json.loads((tmp_path / "area.json").read_text())
    assert [r["block"] for r in records] == ["brr"] * len(TOPS["brr"].variants)
    assert "Traceback" not in captured.err
