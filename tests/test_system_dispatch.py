"""Selective dispatch in the system's core (hwprof/system/dispatch.py, docs/system.md).

Programs with profile control instructions and profile instructions run on the
system (the session's one Verilator model, ``system_exe`` of tests/test_system.py):
a PI with its flag off changes no register and no memory, with its flag on it
executes as its base operation (RISC-V semantics, written here by hand); pushes far
beyond the hardware flag stack trap and the firmware's handler keeps the unbounded
stack (against the golden filter with the golden handler, and against the paper's
unbounded stack); the basic-block counts of an instrumented workload equal those of
the paper's semantics. A system whose filter dispatches every PI fails the checks.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hwprof.experiments import system_dispatch
from hwprof.golden.dispatch import DispatchFilter, FlagStackSpill, Lane
from hwprof.golden.isa_profile import Insn, encode
from hwprof.system import dispatch, sim

from .selective_dispatch_mutants import PiAlwaysDispatched
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
    return PiAlwaysDispatched(**dispatch.FILTER_PARAMS)


def test_checks_fail_on_a_filter_that_dispatches_every_pi(tmp_path):
    """A system whose filter ignores the flags of PIs (dispatches them all): the
    flag-off run changes registers and memory, and the block counts are wrong."""
    exe = sim.build_system(dispatch_filter=_faulty_filter)
    run = sim.run_program([PROGRAMS / "pf_regs.c"], exe=exe, work=tmp_path / "regs",
                          cycles=1_000_000, events=False)  # fmt: skip
    with pytest.raises(AssertionError):
        _check_pf_regs(run)
    first = [int(w, 16) for w in run.output.splitlines()[0].split()]
    assert first[:12] != _expected_pf_regs(False, first[9])[0]
    row = system_dispatch.run_one(exe, 40, tmp_path / "count", on=2)
    assert row["counts"] != system_dispatch.golden_counts(40, 2)["counts"]
