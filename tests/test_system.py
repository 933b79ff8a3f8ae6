"""The RISC-V system (hwprof/system/): firmware runs brr on PicoRV32 through hwprof's
brr unit; outcomes, counts and LFSR state against the golden model; traps; the CLI.

One Verilator model of the system is built per session (cached by the hash of its
inputs under build/system/); each test runs small programs on it.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from hwprof.golden.brr import LAYOUTS, Brr, BrrConfig
from hwprof.golden.brr_isa import encode_brr
from hwprof.system import commands, sim
from hwprof.system.regmap import address

PROGRAMS = Path(__file__).resolve().parent / "system_programs"
pytestmark = pytest.mark.cocotb  # Verilator tier


@pytest.fixture(scope="session")
def system_exe():
    return sim.build_system()


def _golden_lines(seed: int, n: int, load: int):
    """What brr_check.c must print, from the golden model alone."""
    golden = Brr(BrrConfig(seed=seed))
    mask = (1 << golden.config.width) - 1

    def outcomes(freqs):
        return "".join(str(golden.step(decode_valid=1, freq=f).taken) for f in freqs)

    lines = [outcomes([(i * 7 + 3) % 16 for i in range(n)])]
    saved = golden.state
    lines.append(f"{saved:08x}")
    lines.append(outcomes([i % 4 for i in range(64)]))
    golden.step(load_valid=1, load_data=saved)
    lines.append(outcomes([i % 4 for i in range(64)]))
    golden.step(load_valid=1, load_data=load)
    lines.append(outcomes([i % 4 for i in range(64)]))
    retired = n + 3 * 64
    return lines, golden, mask, retired


def _check_program_output(run, seed, n, load):
    lines, golden, mask, retired = _golden_lines(seed, n, load)
    printed = run.output.splitlines()
    assert printed[:5] == lines, f"seed {seed}"
    taken = sum(line.count("1") for i, line in enumerate(lines) if i != 1)
    assert printed[5] == f"{golden.state:08x} {retired:08x} {taken:08x}", f"seed {seed}"
    assert printed[2] == printed[3]  # state restored: the same outcomes again
    assert (run.brr_retired, run.brr_taken, run.lfsr_state) == (retired, taken, golden.state)
    return golden


def test_brr_outcomes_counts_and_state_equal_golden(system_exe, tmp_path, seed):
    rng = random.Random(seed)
    mask = (1 << 20) - 1
    for s in (1, 0xFFFFF, rng.randrange(1, mask + 1)):
        load = rng.randrange(1, mask + 1)
        run = sim.run_program([PROGRAMS / "brr_check.c"], exe=system_exe, seed=s,
                              work=tmp_path / f"s{s}", defines={"LOAD": hex(load)})  # fmt: skip
        assert run.status == "exit" and run.exit_code == 0, run.summary()
        _check_program_output(run, s, 600, load)
        check = sim.check_brr(run)
        assert check["brr"] == 600 + 3 * 64
        assert check["state_mismatches"] == check["taken_mismatches"] == 0, check
        assert check["final_state"] == check["golden_final_state"]


def test_checker_fails_on_an_lfsr_stepping_twice_per_brr(tmp_path):
    """The same program on a system whose brr unit steps its LFSR 16 times per brr
    (twice the default layout's 8): the golden comparison must fail."""
    steps, positions = LAYOUTS[20]
    exe = sim.build_system(brr_params={"lfsr_steps": 2 * steps, "positions": positions})
    run = sim.run_program([PROGRAMS / "brr_check.c"], exe=exe, seed=1, work=tmp_path)
    assert run.status == "exit"
    check = sim.check_brr(run)  # against the default (single-step) golden model
    assert check["state_mismatches"] > 0 and check["taken_mismatches"] > 0
    assert check["first_mismatch"]["brr"] == 1  # the first brr reads the seed; the second not
    with pytest.raises(AssertionError):
        _check_program_output(run, 1, 600, 0x12345)


@pytest.mark.parametrize("word", [
    encode_brr(3, 8) | 1 << 15,  # rs1 field (reserved) set
    encode_brr(3, 8) | 1 << 24,  # bit 24 (reserved) set
    encode_brr(3, 8) | 1 << 12,  # funct3 = 1: not a brr, and nothing else of custom-0
    0x0600800B,  # PicoRV32's maskirq x0, x1 (interrupt extension: not built)
])  # fmt: skip
def test_illegal_encodings_trap(system_exe, tmp_path, word):
    run = sim.run_program([PROGRAMS / "word.c"], exe=system_exe, work=tmp_path,
                          defines={"WORD": hex(word)}, cycles=100_000)  # fmt: skip
    assert run.status == "trap", run.summary()
    assert run.insn == word and run.cause == 2
    image = (tmp_path / "fw" / "program.bin").read_bytes()
    assert run.pc == image.index(word.to_bytes(4, "little"))  # RAM at address 0
    assert run.brr_retired == 0 and "after" not in run.output


def test_retirq_word_is_a_brr_without_the_interrupt_extension(system_exe, tmp_path):
    """0x0400000b is PicoRV32's retirq and also `brr 0, 64`: the core is built without
    the interrupt extension, so it retires as a brr (taken or not, same path)."""
    word = 0x0400000B
    assert word == encode_brr(0, 64)
    for s in (1, 2, 3, 4):  # seeds 1..4: both outcomes occur at freq 0
        run = sim.run_program([PROGRAMS / "word.c"], exe=system_exe, seed=s, work=tmp_path / str(s),
                              defines={"WORD": hex(word), "SKIP": 14}, cycles=100_000)  # fmt: skip
        assert run.status == "exit" and run.output == "after\n", run.summary()
        assert run.brr_retired == 1 and run.events["freq"][-1] == 0
        assert run.brr_taken == Brr(BrrConfig(seed=s)).outcome(s, 0)
        assert sim.check_brr(run)["taken_mismatches"] == 0


def test_plain_brr_word_retires(system_exe, tmp_path):
    run = sim.run_program([PROGRAMS / "word.c"], exe=system_exe, work=tmp_path, seed=3,
                          defines={"WORD": hex(encode_brr(0, 16)), "SKIP": 2})  # fmt: skip
    assert run.status == "exit" and run.output == "after\n"
    assert (run.brr_retired, run.brr_taken) == (1, Brr(BrrConfig(seed=3)).outcome(3, 0))


# --- the command line --------------------------------------------------------------------


def _cli(args, capsys):
    from hwprof.cli import main

    status = main(args)
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_run_summary_and_json(system_exe, capsys):
    status, out, err = _cli(["system", "run", str(PROGRAMS / "brr_check.c")], capsys)
    assert status == 0, err
    lines = out.splitlines()
    assert lines[:5] == _golden_lines(1, 600, 0x12345)[0]
    assert re.fullmatch(r"hwprof: exit: cycles \d+, instructions \d+, brr retired 792, "
                        r"taken \d+", lines[-1])  # fmt: skip
    status, out, err = _cli(["system", "run", "--json", "--seed", "5",
                             str(PROGRAMS / "brr_check.c")], capsys)  # fmt: skip
    record = json.loads(out)
    assert status == 0 and record["exit_code"] == 0 and record["brr_retired"] == 792
    assert record["output"].splitlines()[:5] == _golden_lines(5, 600, 0x12345)[0]
    assert record["cycles"] > record["instret"] > record["brr_retired"]


def test_cli_exit_code_is_the_programs(system_exe, tmp_path, capsys):
    src = tmp_path / "seven.c"
    src.write_text('#include "hwprof.h"\nint main(void) { hwprof_puts("x"); return 7; }\n')
    status, out, err = _cli(["system", "run", str(src)], capsys)
    assert status == 7 and out.startswith("x\nhwprof: exit:")


def test_cli_compile_error(tmp_path, capsys, monkeypatch):
    """The compiler's message, exit 2; no model is built and no file is left behind."""
    import tempfile

    def no_build(*args, **kwargs):
        raise AssertionError("a program that does not compile must not build the system")

    monkeypatch.setattr(sim, "build_system", no_build)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    src = tmp_path / "bad.c"
    src.write_text("int main(void) { return undefined_name; }\n")
    status, out, err = _cli(["system", "run", str(src)], capsys)
    assert status == 2
    assert "undefined_name" in err and "error" in err
    assert err.splitlines()[-1] == f"hwprof: error: {src} did not compile"
    assert list(scratch.iterdir()) == []  # the work directory is gone


def test_cli_trap(system_exe, tmp_path, capsys):
    src = tmp_path / "trap.c"
    word = encode_brr(2, 8) | 1 << 19
    src.write_text(f'int main(void) {{ __asm__ volatile(".word {word:#x}"); return 0; }}\n')
    status, out, err = _cli(["system", "run", str(src)], capsys)
    assert status == commands.EXIT_TRAP
    line = err.strip().splitlines()[-1]
    assert line.startswith("hwprof: error: trap at pc 0x")
    assert f"illegal instruction (cause 2), instruction {word:#010x}" in line


def test_cli_past_cycles(system_exe, capsys):
    status, out, err = _cli(["system", "run", "--cycles", "20000", str(PROGRAMS / "spin.c")],
                            capsys)  # fmt: skip
    assert status == commands.EXIT_TIMEOUT
    assert out.startswith("spinning\n")
    assert err.strip() == "hwprof: error: the program ran past --cycles 20000 without exiting"


def test_cli_unmapped_address(system_exe, capsys):
    status, out, err = _cli(["system", "run", str(PROGRAMS / "unmapped.c")], capsys)
    assert status == commands.EXIT_TRAP
    assert "bus error: access to unmapped address 0x40000000" in err


def test_cli_bad_arguments(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        _cli(["system", "run", "--bogus", "x.c"], capsys)
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith("unrecognized arguments: --bogus")
    for args in (["system", "run", str(tmp_path / "no.c")],
                 ["system", "run", "--seed", "0", str(PROGRAMS / "spin.c")],
                 ["system", "run", "--seed", str(1 << 20), str(PROGRAMS / "spin.c")],
                 ["system", "run", "--cycles", "0", str(PROGRAMS / "spin.c")]):  # fmt: skip
        status, out, err = _cli(args, capsys)
        assert status == 2 and err.startswith("hwprof: error:") and len(err.splitlines()) == 1


def test_header_addresses():
    assert address("brr", "STATE") == 0x10000100
    assert address("console", "EXIT") == 0x10000004


# --- checks nobody here wrote: PicoRV32's own instruction tests ------------------------


def test_picorv32_instruction_tests_pass(system_exe):
    from hwprof.system.core_tests import run_core_tests, test_sources

    result = run_core_tests(system_exe)
    names = [s.stem for s in test_sources()]
    assert len(names) >= 40 and "mul" in names and "beq" in names
    assert result["failed"] == [] and result["passed"] == names, result["run"].output
    assert result["run"].status == "exit" and result["run"].exit_code == 0


def test_picorv32_test_chain_can_fail(system_exe, tmp_path):
    """add.S with one wrong expected sum: ERROR, then the ebreak traps."""
    from hwprof.system.core_tests import run_core_tests, test_sources

    add = next(s for s in test_sources() if s.stem == "add")
    text = add.read_text()
    wrong = text.replace("TEST_RR_OP( 3,  add, 0x00000002,", "TEST_RR_OP( 3,  add, 0x00000003,")
    assert wrong != text
    (tmp_path / "add.S").write_text(wrong)
    lui = next(s for s in test_sources() if s.stem == "lui")
    result = run_core_tests(system_exe, [lui, tmp_path / "add.S"])
    assert result["passed"] == ["lui"] and result["failed"] == ["add"]
    assert result["run"].status == "trap" and result["run"].insn == 0x00100073  # ebreak
