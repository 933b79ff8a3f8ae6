"""Selective dispatch in the system's core (hwprof/system/dispatch.py, docs/system.md).

Programs with profile control instructions and profile instructions run on the
system (the session's one Verilator model, ``system_exe`` of tests/test_system.py):
a PI with its flag off changes no register and no memory, with its flag on it
executes as its base operation (RISC-V semantics, written here by hand); pushes far
beyond the hardware flag stack trap and the firmware's handler keeps the unbounded
stack (against the golden filter with the golden handler, and against the paper's
unbounded stack); the basic-block counts of an instrumented workload equal those of
the paper's semantics; the CSR instructions on ``pfstate``, ``mtvec``, ``mepc``,
``mcause`` and ``mtval`` behave as the RISC-V privileged specification and docs/isa.md
say, other CSR numbers are illegal. A system whose filter dispatches every PI and
swaps overflow and underflow fails the checks.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hwprof.experiments import system_dispatch
from hwprof.golden.dispatch import DispatchFilter, FlagStackSpill, Lane
from hwprof.golden.isa_profile import Insn, encode
from hwprof.system import dispatch, sim
from hwprof.system.dispatch import OVERFLOW, UNDERFLOW

from .selective_dispatch_mutants import ExceptionsSwapped
from .test_system import system_exe  # noqa: F401 (the session's system build)

PROGRAMS = Path(__file__).resolve().parent / "system_programs"
pytestmark = pytest.mark.cocotb  # Verilator tier

N_FLAGS, DEPTH = 2, 4  # the system's filter (docs/system.md)


def test_system_filter_parameters():
    assert (dispatch.CONFIG.n_flags, dispatch.CONFIG.stack_depth) == (N_FLAGS, DEPTH)


# --- a PI with its flag off changes nothing; on, it executes as its base operation ----

_INIT = [0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87, 0x98, None, 0xA9, 0xBA]
_BUF = [0x1111, 0x2222, 0x3333, 0x4444]


def _expected_pf_regs(on: bool, label: int):
    """What pf_block leaves (t0..t5, a2..a7, the buffer, PIs executed, PIs dropped)."""
    t0, t1, t2, t3, t4, t5, a2, a3, a4, a5, a6, a7 = _INIT[:9] + [label] + _INIT[10:]
    buf = list(_BUF)
    if on:
        t0 = t1 + t2  # add/b t0, t1, t2
        t1 = t1 + 77  # addi/b t1, t1, 77
        t2 = buf[1]  # lw/b t2, 4(a1)
        buf[2] = t3  # sw/b t3, 8(a1)
        t4 = 0x123 << 12  # lui/b t4, 0x123
        # beq/b t5, t5 and bne/b t5, a3 are taken: the addi after each is skipped;
        a4 = label - 4  # jalr/b a4, 0(a5) jumps over the addi of a6: a4 = its address
    else:
        a2, a3, a6 = a2 + 1, a3 + 1, a6 + 1  # the ordinary addi after each control PI
    return [t0, t1, t2, t3, t4, t5, a2, a3, a4, a5, a6, a7], buf, (8, 0) if on else (0, 8)


def _check_pf_regs(run):
    lines = run.output.splitlines()
    assert run.status == "exit" and run.exit_code == 0, run.summary()
    assert len(lines) == 8, run.output
    for line, on in zip(lines[1::2], (False, False, True, False), strict=True):
        # hwprof.h's macros: x += y; y += -3; z = mem[0]; mem[1] = y; w = -2 << 12
        want = [12, 4, 0x55, 0xFFFFE000, 4] if on else [5, 7, 0, 0, 0]
        assert [int(w, 16) for w in line.split()] == want, f"macros, flag on {on}: {line}"
    for line, on in zip(lines[0::2], (False, False, True, False), strict=True):
        words = [int(w, 16) for w in line.split()]
        regs, buf, counts = words[:12], words[12:16], tuple(words[16:])
        want_regs, want_buf, want_counts = _expected_pf_regs(on, regs[9])
        assert regs == want_regs, f"flag {'on' if on else 'off'}: {line}"
        assert buf == want_buf, f"flag {'on' if on else 'off'}: {line}"
        assert counts == want_counts, f"flag {'on' if on else 'off'}: {line}"


def test_pi_flag_off_changes_nothing_flag_on_executes(system_exe, tmp_path):  # noqa: F811
    run = sim.run_program([PROGRAMS / "pf_regs.c"], exe=system_exe, work=tmp_path,
                          cycles=1_000_000, events=False)  # fmt: skip
    _check_pf_regs(run)


def test_pfstate_write_is_seen_by_the_next_instruction(system_exe, tmp_path):  # noqa: F811
    run = sim.run_program([PROGRAMS / "pf_write.c"], exe=system_exe, work=tmp_path,
                          cycles=1_000_000, events=False)  # fmt: skip
    assert run.status == "exit" and run.exit_code == 0, run.summary()
    # resetpf 0 after writing flag 0 on; a dropped addi/b; an executed one; poppf 1 of
    # the written one-entry stack: flags 0b11, the popped entry left in place, sp 0
    assert run.output.splitlines() == ["00000000", "00000001", "00000006", "00000007"]


# --- the flag stack beyond the hardware depth ------------------------------------------


def _golden_stack(pushes: int, pattern: int):
    """pf_stack.c's lines from the golden filter and the golden spill handler."""
    model = DispatchFilter(lanes=1, n_flags=N_FLAGS, stack_depth=DEPTH)
    spill = FlagStackSpill(model.config)
    lines = []

    def pci(op, k):
        out = model.step([Lane(valid=1, insn=encode(Insn("pci", op, k=k)))])
        if out.overflow or out.underflow:
            cause = "overflow" if out.overflow else "underflow"
            model.step(squash=1, restore=spill.handle(model.pack(), cause, k))
        lines.append(f"{model.pack():08x}")

    pci("setpf", 1)
    for j in range(pushes):
        pci("setpf" if pattern >> j & 1 else "resetpf", 0)
        pci("pushpf", 0)
    for _ in range(pushes + 2):
        pci("poppf", 0)
    lines.append(f"{spill.exceptions:08x}")
    return lines


def test_push_beyond_depth_traps_and_handler_keeps_unbounded_stack(system_exe, tmp_path,  # noqa: F811
                                                                   seed):  # fmt: skip
    rng = random.Random(seed)
    for pushes in (3 * DEPTH + 1, DEPTH):
        pattern = rng.getrandbits(pushes)
        run = sim.run_program([PROGRAMS / "pf_stack.c"], exe=system_exe,
                              work=tmp_path / str(pushes), cycles=2_000_000, events=False,
                              defines={"PUSHES": pushes, "PATTERN": hex(pattern)})  # fmt: skip
        assert run.status == "exit" and run.exit_code == 0, run.summary()
        lines = run.output.splitlines()
        assert lines == _golden_stack(pushes, pattern), f"seed {seed}, pushes {pushes}"
        # the paper's unbounded stack: the pops give the pushed flags back in reverse
        # order, then (more pops than pushes) flag 0 reset; flag 1 is never touched
        popped = [int(line, 16) for line in lines[1 + 2 * pushes:-1]]
        assert [s & 1 for s in popped] == [pattern >> j & 1
                                           for j in reversed(range(pushes))] + [0, 0]
        assert all(s >> 1 & 1 for s in popped)
        # pushes within the depth trap only on the two pops of an empty stack
        exceptions = int(lines[-1], 16)
        assert exceptions == 2 if pushes <= DEPTH else exceptions > 2, f"seed {seed}"


# --- the CSR instructions and the flag-stack exceptions ---------------------------------

#: Bits of pfstate and the position of sp in it (docs/isa.md: flags | stack | sp).
_STATE_BITS, _SP_AT = N_FLAGS + DEPTH + (DEPTH).bit_length(), N_FLAGS + DEPTH


def _pfstate(flags: int, stack: int, sp: int) -> int:
    return flags | stack << N_FLAGS | sp << _SP_AT


def _expected_csr_lines(v1, v2, v3, i1, i2, i3, at_push, at_pop):
    """What pf_csr.c prints, from the Zicsr semantics (RISC-V privileged spec) and
    docs/isa.md: each CSR instruction reads the old value; csrrw writes the source,
    csrrs sets its bits, csrrc clears them; mtvec (direct mode) and mepc (32-bit
    instructions) read bits 1:0 as 0; a write of pfstate loads the filter's state
    (an sp beyond the depth is the depth); an exception writes mcause, mepc, mtval."""
    lines, mtval = [], 0  # mtval after reset: no exception yet
    for op, src in (("w", v1), ("s", v2), ("c", v3), ("w", i1), ("s", i2), ("c", i3),
                    ("s", 0)):  # fmt: skip
        lines.append(mtval)
        mtval = {"w": src, "s": mtval | src, "c": mtval & ~src}[op]
    lines.append(mtval)
    state = v1 & ((1 << _STATE_BITS) - 1)
    lines += [0, state & ((1 << _SP_AT) - 1) | min(state >> _SP_AT, DEPTH) << _SP_AT]
    lines += [1, v2 & ~3, v3 & ~3, v1]
    full = _pfstate(0b10, (1 << DEPTH) - 1, DEPTH)  # flag 1 set and pushed DEPTH times
    lines += [full, at_push, OVERFLOW, at_push, encode(Insn("pci", "pushpf", k=0)), full, full]
    lines += [at_pop, UNDERFLOW, at_pop, encode(Insn("pci", "poppf", k=1)), 0b11, 0b11]
    return [f"{x & 0xFFFFFFFF:08x}" for x in lines] + [f"{10 + 1:08x}"]  # rdinstret


def _run_csr_program(exe, work, seed):
    rng = random.Random(seed)
    values = [rng.getrandbits(32) for _ in range(3)] + [rng.randrange(32) for _ in range(3)]
    defines = dict(zip(("V1", "V2", "V3", "I1", "I2", "I3"), map(hex, values), strict=True))
    run = sim.run_program([PROGRAMS / "pf_csr.c"], exe=exe, work=work, cycles=1_000_000,
                          events=False, defines=defines)  # fmt: skip
    assert run.status == "exit" and run.exit_code == 0, run.summary()
    return run, values


def _check_csr_lines(run, values, image):
    lines = run.output.splitlines()
    at_push, at_pop = int(lines[15], 16), int(lines[21], 16)
    # the faulting instructions are where the program says, and are pushpf 0 / poppf 1
    assert image[at_push:at_push + 4] == encode(Insn("pci", "pushpf", k=0)).to_bytes(4, "little")
    assert image[at_pop:at_pop + 4] == encode(Insn("pci", "poppf", k=1)).to_bytes(4, "little")
    assert lines == _expected_csr_lines(*values, at_push, at_pop), f"values {values}"


def test_csr_instructions_and_flag_stack_exceptions(system_exe, tmp_path, seed):  # noqa: F811
    """Every Zicsr form on mtval, pfstate/mtvec/mepc/mcause written and read back, and
    a pushpf on the full stack / poppf on the empty one: mcause 24 / 25, mepc the
    instruction, mtval its word, pfstate unchanged (precise), the handler's mret
    returns to mepc + 4; rdinstret still counts."""
    run, values = _run_csr_program(system_exe, tmp_path, seed)
    _check_csr_lines(run, values, (tmp_path / "fw" / "program.bin").read_bytes())


@pytest.mark.parametrize("word", [
    0x300022F3,  # csrrs t0, mstatus, x0: a standard CSR the core does not implement
    0x34029073,  # csrrw x0, mscratch, t0
    0x8C1022F3,  # csrrs t0, 0x8c1, x0: next to pfstate
    0x8C0042F3,  # funct3 4 (reserved) on pfstate's number
])  # fmt: skip
def test_other_csrs_are_illegal(system_exe, tmp_path, word):  # noqa: F811
    run = sim.run_program([PROGRAMS / "word.c"], exe=system_exe, work=tmp_path,
                          defines={"WORD": hex(word)}, cycles=100_000)  # fmt: skip
    assert run.status == "trap" and run.insn == word and run.cause == 2, run.summary()
    assert "after" not in run.output


# --- the Fig. 3 basic-block counter around a workload ----------------------------------


def test_golden_counts_by_hand():
    """The golden model on 3 calls (profiling on for call 0 only), counted by hand:
    call 0: work(3, 0) runs blocks 0, 1 (3 is odd); calls 1, 2 are not profiled."""
    g = system_dispatch.golden_counts(3, 1)
    assert g["counts"] == [1, 1, 0, 0]
    # calls 1 and 2 (depths 1, 2) run 5 and 8 blocks, 3 PIs each, all dropped
    assert (g["dispatched"], g["dropped"]) == (6, 3 * (5 + 8))
    # work(3, 0) = 10; work(10, 1) = 5 + work(5, 0) = 5 + 16;
    # work(17, 2) = 52 + work(52, 1) = 52 + 26 + work(26, 0) = 52 + 26 + 13
    assert g["result"] == 10 + (5 + 16) + (52 + 26 + 13)


def test_basic_block_counts_equal_golden(system_exe, tmp_path):  # noqa: F811
    n, on = system_dispatch.QUICK_CALLS, 2
    row = system_dispatch.run_one(system_exe, n, tmp_path, on=on)
    golden = system_dispatch.golden_counts(n, on)
    for key in ("counts", "result", "dispatched", "dropped"):
        assert row[key] == golden[key], key
    assert row["exceptions"] > 0  # the recursion went beyond the hardware stack
    assert 0 < row["dispatched"] < row["dropped"]


# --- the checks can fail -----------------------------------------------------------------


def _faulty_filter():
    return ExceptionsSwapped(**dispatch.FILTER_PARAMS)


def test_checks_fail_on_a_faulty_filter(tmp_path, seed):
    """One faulty build with two faults whose effects the programs keep apart: the
    filter ignores the flags of PIs (dispatches them all) and swaps overflow and
    underflow (a wrong mcause). pf_regs.c (PIs, no flag-stack exception): the flag-off
    run changes registers and memory; pf_csr.c (exceptions, no PI): mcause is wrong;
    the block counts are wrong."""
    exe = sim.build_system(dispatch_filter=_faulty_filter)
    run, values = _run_csr_program(exe, tmp_path / "csr", seed)
    with pytest.raises(AssertionError):
        _check_csr_lines(run, values, (tmp_path / "csr" / "fw" / "program.bin").read_bytes())
    lines = run.output.splitlines()
    want = _expected_csr_lines(*values, int(lines[15], 16), int(lines[21], 16))
    assert [i for i, (a, b) in enumerate(zip(lines, want, strict=True)) if a != b] == [16, 22]
    assert [int(lines[i], 16) for i in (16, 22)] == [UNDERFLOW, OVERFLOW]
    run = sim.run_program([PROGRAMS / "pf_regs.c"], exe=exe, work=tmp_path / "regs",
                          cycles=1_000_000, events=False)  # fmt: skip
    with pytest.raises(AssertionError):
        _check_pf_regs(run)
    first = [int(w, 16) for w in run.output.splitlines()[0].split()]
    assert first[:12] != _expected_pf_regs(False, first[9])[0]
    row = system_dispatch.run_one(exe, 40, tmp_path / "count", on=2)
    assert row["counts"] != system_dispatch.golden_counts(40, 2)["counts"]
