"""``hwprof mutate``: yosys mutants of a block against its cocotb regression.

Fast tier: the mutant list, the one-netlist build and the equivalence check
(yosys only). cocotb tier: a few mutants of the periodic sampler through its own
regression (one Verilator build). The full runs (N = 100 per block) are
``make mutate``; docs/verification.md holds their table.
"""

from __future__ import annotations

import re

import pytest

from hwprof.catalog import get_top
from hwprof.cli import main
from hwprof.mutate import (
    CTRL,
    Mutant,
    build_mutant_design,
    check_equivalent,
    list_mutants,
    mutate_top,
    write_single_mutant,
)
from hwprof.synth import to_verilog


@pytest.fixture(scope="module")
def periodic():
    return to_verilog(get_top("sampler_periodic").construct({}), "sampler_periodic")


def test_list_and_build(periodic, tmp_path):
    mutants = list_mutants(periodic, "sampler_periodic", 6, 3, tmp_path)
    assert len(mutants) == 6 and all(m.command.startswith("mutate -mode ") for m in mutants)
    text = build_mutant_design(periodic, "sampler_periodic", mutants, tmp_path)
    # the wrapper keeps the block's ports and adds the plusarg-driven selector
    assert re.search(r"^module sampler_periodic\(", text, re.M)
    assert "sampler_periodic__mutants dut(" in text and f'"{CTRL}=%d"' in text
    assert text.count(f".{CTRL}(") == 1


def test_equivalence_check(periodic, tmp_path):
    """The original against itself is equivalent; ``ready`` with a dropped inversion differs
    in the first cycle."""
    same, what = check_equivalent(periodic, periodic, "sampler_periodic", tmp_path / "a",
                                  maxsteps=3)
    assert same, what
    broken = periodic.replace("= ~ messages__valid;", "= messages__valid;")
    assert broken != periodic
    same, what = check_equivalent(periodic, broken, "sampler_periodic", tmp_path / "b",
                                  maxsteps=3)
    assert not same and "differs" in what
    # out of time: no verdict, not equivalent (the original against itself)
    same, what = check_equivalent(periodic, periodic, "sampler_periodic", tmp_path / "c",
                                  maxsteps=3, timeout=0.01)  # fmt: skip
    assert not same and "no verdict in 0 s" in what


def test_single_mutant_differs(periodic, tmp_path):
    mutants = list_mutants(periodic, "sampler_periodic", 3, 1, tmp_path)
    single = write_single_mutant(periodic, "sampler_periodic", mutants[0], tmp_path / "m")
    assert single != periodic and "module sampler_periodic(" in single


def test_cli_mutate_bad_input(capsys):
    assert main(["mutate", "nope"]) == 2
    assert main(["mutate", "sampler_periodic", "-n", "0"]) == 2
    assert main(["mutate", "sampler_periodic", "-p", "rate=1"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "rate" in err
    assert main(["mutate", "sampler_periodic", "-n", "4", "--only", "2,x"]) == 2
    assert main(["mutate", "sampler_periodic", "-n", "4", "--only", "5"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("--only") == 2
    assert main(["mutate", "sampler_periodic", "--equiv-timeout", "0"]) == 2
    assert "--equiv-timeout" in capsys.readouterr().err


@pytest.mark.cocotb
def test_mutate_periodic_sampler(tmp_path):
    lines = []
    # the default build root: Verilator's runtime library is cached there, and a
    # rerun finds this mutant build up to date
    report = mutate_top(get_top("sampler_periodic"), 4, seed=5, workdir=tmp_path,
                        out=lines.append)  # fmt: skip
    assert len(report.mutants) == 4
    assert all(m.status in ("killed", "equivalent", "survived") for m in report.mutants)
    assert report.count("killed") >= 1  # the regression rejects some mutant
    assert any("original passes" in line for line in lines)
    assert isinstance(report.mutants[0], Mutant)
    # --only: the same list and build, one mutant replayed, the same verdict
    killed = next(m for m in report.mutants if m.status == "killed")
    again = mutate_top(get_top("sampler_periodic"), 4, seed=5, workdir=tmp_path / "only",
                       out=lines.append, only={killed.index})  # fmt: skip
    assert [m.status for m in again.mutants] == [
        "killed" if m.index == killed.index else "not run" for m in again.mutants]
    assert "(1 of 4 run)" in again.summary()
