"""The hwprof command line: every subcommand, and bad input -> one line, exit 2."""

import json
import os
import stat
import subprocess
import sys

import pytest

from hwprof.catalog import TOPS
from hwprof.cli import main


def run_cli(*args, cwd=None):
    proc = subprocess.run([sys.executable, "-m", "hwprof.cli", *args], cwd=cwd,
                          capture_output=True, text=True)  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


def test_list_names_every_top(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in TOPS:
        assert f"{name}:" in out


def test_list_json_says_what_the_table_says(capsys):
    assert main(["list"]) == 0
    table = capsys.readouterr().out
    assert main(["list", "--json"]) == 0
    tops = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in tops] == list(TOPS)
    lines = []
    for t in tops:
        lines.append(f"{t['name']}: {t['description']}")
        for p in t["params"]:
            default = "derived" if p["default"] is None else json.dumps(p["default"])
            lines.append(f"    {p['name']}={default}  ({p['kind']}) {p['help']}")
    assert table.splitlines() == lines
    brr = next(t for t in tops if t["name"] == "brr")
    assert {"name": "width", "default": 20, "kind": "int", "help": "LFSR width, 16..32"} \
        in brr["params"]  # fmt: skip


def test_generate_writes_one_file_per_top(tmp_path, capsys):
    assert main(["generate", "brr", "-o", str(tmp_path)]) == 0
    text = (tmp_path / "brr.v").read_text()
    assert "module brr(" in text
    assert main(["generate", "brr", "-p", "width=32", "-o", str(tmp_path / "w32")]) == 0
    assert "output [31:0] state;" in (tmp_path / "w32" / "brr.v").read_text()


def test_generated_files_get_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        assert main(["generate", "brr", "-o", str(tmp_path)]) == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "brr.v").stat().st_mode) == 0o644  # not mkstemp's 0600


@pytest.mark.parametrize(
    "args, message",
    [
        (["generate", "nosuch"], "unknown top 'nosuch' (known: "),
        (["generate", "brr", "-p", "width=40"], "brr: width must be between 16 and 32, not 40"),
        (["generate", "brr", "-p", "colour=3"], "unknown parameter 'colour' for top 'brr'"),
        (["generate", "brr", "-p", "width"], "parameter must be written name=value"),
        (["generate", "brr", "-p", "width=wide"], "parameter width: invalid literal"),
        (["generate", "brr", "-p", "pipelined=maybe"], "parameter pipelined: expected 0/1"),
        (["generate", "brr", "-p", "seed=0"], "seed must be non-zero"),
        (["generate", "brr", "-p", "taps=20,4"], "do not give a primitive polynomial"),
        (["generate", "brr", "-p", "lfsr_steps=3"], "lfsr_steps must be coprime with 2^20 - 1"),
        (["synth", "nosuch", "--json"], "unknown top 'nosuch'"),
    ],
)
def test_bad_input_one_line_exit_2_nothing_written(tmp_path, args, message):
    out_dir = tmp_path / "out"
    extra = ["-o", str(out_dir)] if args[0] == "generate" else []
    code, stdout, stderr = run_cli(*args, *extra)
    assert code == 2
    assert stderr.count("\n") == 1 and stderr.startswith("hwprof: error: "), stderr
    assert message in stderr
    assert "Traceback" not in stderr
    assert not out_dir.exists()


def test_generate_all_or_nothing(tmp_path):
    """Several tops with -p: refused before anything is written."""
    code, _, stderr = run_cli("generate", "brr", "brr", "-p", "width=16", "-o", str(tmp_path / "o"))
    assert code == 2 and "exactly one top" in stderr
    assert not (tmp_path / "o").exists()


def test_synth_json_record(capsys):
    assert main(["synth", "brr", "--json", "-p", "lockup_escape=0"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["block"] == "brr"
    assert record["params"]["lockup_escape"] is False
    for key in ("flops", "gates", "transistors", "depth", "memory_bits"):
        assert isinstance(record[key], int)
    assert record["flops"] == 20  # the 20-bit LFSR is the only state
    assert record["budget"]["source"].startswith("Lee & Zilles 2008")
    assert record["within_budget"] is True


def test_unknown_experiment(capsys):
    assert main(["experiment", "nosuch"]) == 2
    assert "unknown experiment 'nosuch'" in capsys.readouterr().err


def test_report_writes_json_list_and_table(tmp_path, monkeypatch, capsys):
    import hwprof.report as report

    monkeypatch.setattr(report, "TOPS", {"brr": TOPS["brr"]})
    assert main(["report", "-o", str(tmp_path)]) == 0
    records = json.loads((tmp_path / "area.json").read_text())
    assert isinstance(records, list) and len(records) == len(TOPS["brr"].variants)
    assert [r["params"] for r in records] == [TOPS["brr"].resolve(v) for v in TOPS["brr"].variants]
    table = (tmp_path / "area.md").read_text()
    assert table.count("| brr |") == len(records)
    assert "| brr |" in capsys.readouterr().out
    assert sorted(p.name for p in (tmp_path / "verilog").iterdir()) == [
        "brr-lockup_escape_False.v", "brr-pipelined_True.v", "brr.v",
    ]  # fmt: skip


def test_report_lists_slow_variants_and_synthesizes_them_with_all(tmp_path, monkeypatch, capsys):
    import dataclasses

    import hwprof.report as report

    lfsr = dataclasses.replace(TOPS["lfsr"], variants=({},), slow_variants=({"width": 8},))
    monkeypatch.setattr(report, "TOPS", {"lfsr": lfsr})
    assert main(["report", "-o", str(tmp_path / "quick")]) == 0
    records = json.loads((tmp_path / "quick" / "area.json").read_text())
    assert [r["params"]["width"] for r in records] == [20]
    row = next(line for line in capsys.readouterr().out.splitlines() if "width=8" in line)
    assert "not synthesized (slow): `hwprof report --all` or `hwprof synth lfsr -p width=8`" in row
    assert sorted(p.name for p in (tmp_path / "quick" / "verilog").iterdir()) == ["lfsr.v"]

    assert main(["report", "--all", "-o", str(tmp_path / "all")]) == 0
    records = json.loads((tmp_path / "all" / "area.json").read_text())
    assert [r["params"]["width"] for r in records] == [20, 8]
    assert "not synthesized" not in (tmp_path / "all" / "area.md").read_text()
