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
from hwprof.synth import to_verilog
from hwprof.synth.area import run_yosys
from hwprof.verify.mutate import (
    CTRL,
    Mutant,
    build_mutant_design,
    cheap_equivalence,
    check_equivalent,
    flop_renames,
    list_mutants,
    mutate_top,
    write_single_mutant,
)


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


def test_list_is_yosys_own_list(tmp_path):
    """The list is exactly ``prep; flatten; mutate -list`` on the Verilog: the mutant
    numbers in docs/verification.md and every ``--only`` replay rely on it. (A
    ``write_json`` before ``mutate -list`` sorts the design and renumbers the list: a
    pass such as that must come after it.)"""
    verilog = to_verilog(get_top("sampler_random").construct({}), "sampler_random")
    ours, plain = tmp_path / "ours", tmp_path / "plain"
    ours.mkdir()
    plain.mkdir()
    mutants = list_mutants(verilog, "sampler_random", 100, 1, ours)
    (plain / "orig.v").write_text(verilog)
    run_yosys("read_verilog -sv orig.v\nprep -top sampler_random\nflatten\n"
              "mutate -list 100 -seed 1 -o muts.ys\n", plain, log_name="run.log")  # fmt: skip
    lines = [line.strip() for line in (plain / "muts.ys").read_text().splitlines()
             if line.startswith("mutate ")]  # fmt: skip
    assert [m.command for m in mutants] == lines
    # mutant 34: the zero detector's input bit 15 inverted (verification.md's
    # sampler_random 34)
    assert "reduce_or" in mutants[33].command and "-portbit 15" in mutants[33].command


def test_flops_keep_their_register_names(tmp_path):
    """A mutation of a flop's output reroutes its wire; the flop is then written under
    its register's name plus ``$dff`` (not an anonymous ``_NNN_``), so a test can write
    the register through VPI in every mutant build (the samplers' one-hot LFSR states)."""
    verilog = to_verilog(get_top("sampler_random").construct({}), "sampler_random")
    (tmp_path / "orig.v").write_text(verilog)
    renames = flop_renames("sampler_random", tmp_path)
    assert renames[0] == "cd sampler_random" and renames[-1] == "cd .."
    # the LFSR's flop: its register (the wire with the init value), not the alias `state`
    named = {line.split()[2]: line.split()[1] for line in renames[1:-1]}
    assert sorted(named) == ["lfsr.register$dff", "messages__payload$dff", "messages__valid$dff"]
    on_q = Mutant(1, f"mutate -mode inv -module sampler_random -cell {named['lfsr.register$dff']} "
                     "-port Q -portbit 3 -wire lfsr.register -wirebit 3", "?")  # fmt: skip
    text = build_mutant_design(verilog, "sampler_random", [on_q], tmp_path)
    assert re.search(r"^\s*reg \[31:0\] \\lfsr\.register\$dff ", text, re.M), "flop not named"
    assert not re.search(r"^\s*reg \[31:0\] _\d+_ ", text, re.M)


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
    """The netlist of one mutant, as ``mutate_top`` checks a survivor: a mutation that
    changes an output is reported different by :func:`check_equivalent`, and the same
    yosys rewrite without a mutation is reported equivalent. (The two netlists' texts
    always differ from Amaranth's Verilog, so only the check can tell whether the
    mutation was applied.)"""
    mutants = list_mutants(periodic, "sampler_periodic", 3, 1, tmp_path)
    # mutant 3 sets the reset multiplexer's output, the next value of messages__valid
    # (`$7`), to 1: out of reset the block offers a message before any tuple came in
    live = mutants[2]
    assert "-mode const1" in live.command and r"-wire \$7 -wirebit 0" in live.command
    single = write_single_mutant(periodic, "sampler_periodic", live, tmp_path / "m")
    assert "module sampler_periodic(" in single
    same, what = check_equivalent(periodic, single, "sampler_periodic", tmp_path / "m",
                                  maxsteps=3)  # fmt: skip
    assert not same and what.startswith("differs from the original at cycle"), what
    # no mutation: yosys' rewrite of the original, equivalent to it
    plain = write_single_mutant(periodic, "sampler_periodic", Mutant(0, "", "-"),
                                tmp_path / "p")  # fmt: skip
    assert plain != periodic
    same, what = check_equivalent(periodic, plain, "sampler_periodic", tmp_path / "p",
                                  maxsteps=3)  # fmt: skip
    assert same, what


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


DEAD_TREE = """
module tree(input clk, input [3:0] a, input [3:0] b, input [1:0] s, output reg [1:0] y,
            output reg [2:0] r);
  wire [3:0] t = a & b;
  wire [3:0] u = t | {t[0], t[3:1]};
  always @(posedge clk) y <= {u[2], u[0]};
  always @(posedge clk)
    case (s)
      2'd0: r <= 3'd5;
      2'd1: r <= 3'd2;
      2'd2: r <= 3'd7;
      2'd3: r <= 3'd1;
    endcase
endmodule
"""
UNREAD = "equivalent (the mutated bit feeds nothing: splitcells; opt_clean)"


def _inv(cell, wire, bit):
    return f"mutate -mode inv -module tree -cell {cell} -port Y -portbit {bit} -wire {wire} " \
        f"-wirebit {bit}"


@pytest.mark.parametrize("bit", range(4))
def test_cheap_equivalence_every_bit_of_t_is_read(tmp_path, bit):
    """Every bit of ``t`` reaches ``y`` (u[0] reads t[0] and t[1]; u[2] reads t[2] and t[3])."""
    assert cheap_equivalence(DEAD_TREE, "tree", [_inv("$and$orig.v:4$1", "t", bit)],
                             tmp_path) == [None]  # fmt: skip


@pytest.mark.parametrize(("bit", "dead"), [(0, False), (1, True), (2, False)])
def test_cheap_equivalence_finds_unread_bits(tmp_path, bit, dead):
    """``u[1]`` is read by nothing: its mutant is equivalent; ``u[0]`` and ``u[2]`` reach the
    register: a mutation there is not proved (the check can fail). (``u[3]``, the cell's
    top bit, is already cut off by ``prep``'s ``wreduce``.)"""
    verdict = cheap_equivalence(DEAD_TREE, "tree", [_inv("$or$orig.v:5$2", "u", bit)], tmp_path)
    assert verdict == [UNREAD if dead else None]


def test_cheap_equivalence_two_levels_down(tmp_path):
    """A bit of ``t`` read only by unread bits of ``u``: with ``u = t | (t rotated by 2)``,
    t[3] feeds only u[1] and u[3] (dead: two levels of slices removed), t[2] feeds u[0]
    and u[2] (read); in one run, each mutation applied alone."""
    shifted = DEAD_TREE.replace("{t[0], t[3:1]}", "{t[1:0], t[3:2]}")
    dead, live = _inv("$and$orig.v:4$1", "t", 3), _inv("$and$orig.v:4$1", "t", 2)
    assert cheap_equivalence(shifted, "tree", [dead, live, dead], tmp_path) == [
        UNREAD, None, UNREAD]


@pytest.mark.parametrize(("mode", "bit", "dead"), [("const0", 1, True), ("const1", 1, True),
                                                    ("const0", 0, False), ("const1", 2, False)])
def test_cheap_equivalence_of_a_rewired_input_bit(tmp_path, mode, bit, dead):
    """A constant forced on an input bit of ``u``'s OR rewires that bit (no cell added):
    on ``u[1]``, which nothing reads, equivalent; on ``u[0]`` or ``u[2]``, read, a real
    change (the dead check runs on the mutation behind a select, whose mux is a cell)."""
    mutation = f"mutate -mode {mode} -module tree -cell $or$orig.v:5$2 -port A -portbit {bit}"
    verdict = cheap_equivalence(DEAD_TREE, "tree", [mutation], tmp_path)
    assert verdict == [UNREAD if dead else None]


def test_cheap_equivalence_of_constant_data(tmp_path):
    """The case's constants (a ``$pmux``: default A is x, B the four cases): a bit forced to
    the value it has changes nothing, forced to the other value is a real change, an x
    bit of the default forced is a don't care; a refused mutation proves nothing."""
    cell = "$procmux$5"  # the $pmux (yosys names it so in prep)
    # B (MSB first) = {s == 0, s == 1, s == 2, s == 3} = {101, 010, 111, 001}: bit 0 is 1,
    # bit 1 is 0
    const = f"mutate -module tree -cell {cell} -port B -portbit"
    verdicts = cheap_equivalence(DEAD_TREE, "tree", [
        f"mutate -mode const1 {const[7:]} 0", f"mutate -mode const0 {const[7:]} 1",
        f"mutate -mode const0 {const[7:]} 0",
        f"mutate -mode const1 -module tree -cell {cell} -port A -portbit 1",
        "mutate -mode inv -module tree -cell $or$orig.v:5$2 -port Y -portbit 3 -wire u "
        "-wirebit 3"], tmp_path)  # fmt: skip
    assert verdicts == [
        "equivalent (the mutation changes nothing: the bit already has that value)",
        "equivalent (the mutation changes nothing: the bit already has that value)",
        None,
        "equivalent (the mutation only sets x (don't care) bits)",
        None]  # u[3] is cut off by wreduce: yosys refuses the mutation


def test_drop_cheaply_equivalent_says_when_it_stopped(tmp_path, monkeypatch):
    """Out of time, the mutants the check did not reach stay pending and are named."""
    import hwprof.verify.mutate as mutate

    dead = _inv("$or$orig.v:5$2", "u", 1)
    pending = [mutate.Mutant(1, dead, "src"), mutate.Mutant(2, dead, "src")]
    lines = []
    kept = mutate._drop_cheaply_equivalent(DEAD_TREE, "tree", list(pending), tmp_path / "a",
                                           None, lines.append)  # fmt: skip
    assert kept == [] and [m.status for m in pending] == ["equivalent"] * 2 and len(lines) == 2
    monkeypatch.setattr(mutate, "CHEAP_MIN_SECONDS", 0)
    pending = [mutate.Mutant(1, dead, "src"), mutate.Mutant(2, dead, "src")]
    lines = []
    kept = mutate._drop_cheaply_equivalent(DEAD_TREE, "tree", list(pending), tmp_path / "b",
                                           0.001, lines.append)  # fmt: skip
    assert kept == pending and lines == [
        "tree: the cheap equivalence check stopped (out of time: 0 s a mutant; or a yosys "
        "error) before mutants 1, 2"]


def test_cheap_equivalence_out_of_time(tmp_path):
    dead = _inv("$or$orig.v:5$2", "u", 1)
    assert cheap_equivalence(DEAD_TREE, "tree", [dead], tmp_path / "a") == [UNREAD]
    assert cheap_equivalence(DEAD_TREE, "tree", [dead], tmp_path / "b", timeout=0.001) == [None]


# --- the mutant's time limit: CPU seconds of the simulator, not wall time ------------------

#: a stand-in for cocotb's simulator command: by ``+mutsel=i``, 1 hangs (spins), 2 is
#: slow in wall time only (sleeps, as a run waiting for a core), 3 fails, others pass;
#: it writes a JUnit results file as cocotb does
_FAKE_SIM = """
import os, sys, time
index = int(next(a for a in sys.argv if a.startswith("+mutsel=")).split("=")[1])
if index == 1:
    while True:
        pass
if index == 2:
    time.sleep(2.5)
failures = 1 if index == 3 else 0
with open(os.environ["COCOTB_RESULTS_FILE"], "w") as f:
    f.write(f'<testsuites><testsuite name="t" tests="2" failures="{failures}"/></testsuites>')
"""


def _fake_command(tmp_path):
    import os
    import sys

    return {"cmds": [[sys.executable, "-c", _FAKE_SIM, f"+{CTRL}=0"]], "cwd": str(tmp_path),
            "env": dict(os.environ)}  # fmt: skip


def test_a_hanging_mutant_is_killed_by_the_cpu_limit(tmp_path):
    import time

    from hwprof.verify.mutate import mutant_unit, run_regression

    command = _fake_command(tmp_path)
    verdict, detail, cpu = run_regression(command, tmp_path, 0, 1)
    assert (verdict, detail) == ("pass", "0/2 tests failed") and cpu < 1
    assert run_regression(command, tmp_path, 3, 1)[:2] == ("fail", "1/2 tests failed")
    started = time.monotonic()
    got = mutant_unit(1, "mutate ...", top="t", verilog="", command=command,
                      build_dir=str(tmp_path), cpu_limit=1, equiv_timeout=None, workdir=None,
                      cheap=True)  # fmt: skip
    assert got == {"status": "killed", "detail": "no verdict in 1 CPU-s"}
    assert time.monotonic() - started < 60


def test_a_mutant_slowed_in_wall_time_is_not_killed(tmp_path):
    """Mutant 2 sleeps 2.5 s at almost no CPU: it passes under a 1 CPU-second limit,
    where the old limit (1 s of wall time) would have killed it."""
    import subprocess

    from hwprof.verify.mutate import run_regression

    command = _fake_command(tmp_path)
    verdict, detail, cpu = run_regression(command, tmp_path, 2, 1)
    assert (verdict, detail) == ("pass", "0/2 tests failed") and cpu < 1
    old = [f"+{CTRL}=2" if a == f"+{CTRL}=0" else a for a in command["cmds"][0]]
    env = {**command["env"], "COCOTB_RESULTS_FILE": str(tmp_path / "old.xml")}
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run(old, env=env, timeout=1)


def test_the_limit_is_five_times_the_originals_cpu_plus_30(capsys):
    from hwprof.verify.mutate import MutateError, _original_passes

    lines = []
    assert _original_passes("x", lambda i, limit: ("pass", "", 10.0), 4, lines.append, 60.0,
                            "here") == 80  # fmt: skip
    assert lines[0].startswith("original passes the x bench (10 CPU-s, ")
    assert lines[0].endswith("running 4 mutants (80 CPU-s each at most, wall backstop 1600 s)")
    assert _original_passes("x", lambda i, limit: ("pass", "", 2.0), 4, lines.append, 60.0,
                            "here") == 60  # fmt: skip
    with pytest.raises(MutateError, match="the original design fails the x bench"):
        _original_passes("x", lambda i, limit: ("timeout", "no verdict", 3600.0), 4,
                         lines.append, 60.0, "here")  # fmt: skip
