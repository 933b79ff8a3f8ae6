"""Profile ISA encoding and the golden dispatch filter, on cases worked out from the paper."""

import random

import pytest

from hwprof.golden.dispatch import DispatchConfig, DispatchFilter, FlagStackSpill, Lane
from hwprof.golden.isa_profile import (
    CTI_OPS,
    CUSTOM1,
    NOP,
    PCI_OPS,
    PI_OPS,
    Insn,
    decode,
    encode,
    ordinary,
)


def pci(op, k=0):
    return encode(Insn("pci", op, k=k))


def pi(op="lw", k=0, **fields):
    return encode(Insn("pi", op, k, **fields))


def lanes(*words, pc=0x100, pred=(), skipped=()):
    return [Lane(1, w, pc + 4 * i, int(i in pred), int(i in skipped)) for i, w in enumerate(words)]


# ----------------------------------------------------------------------------- ISA


@pytest.mark.parametrize("op", PCI_OPS)
@pytest.mark.parametrize("k", range(8))
def test_pci_round_trip(op, k):
    word = pci(op, k)
    assert word & 0x7F == CUSTOM1
    assert decode(word) == Insn("pci", op, k=k)


def test_pi_round_trip_random_fields(seed):
    rng = random.Random(seed)
    for _ in range(2000):
        op, k = rng.choice(PI_OPS), rng.randrange(8)
        fields = {}
        if op == "lui":
            fields = {"rd": rng.randrange(32), "imm": rng.randrange(-(1 << 13), 1 << 13)}
        elif op == "add":
            fields = {f: rng.randrange(32) for f in ("rd", "rs1", "rs2")}
        elif op in ("addi", "lw", "jalr"):
            fields = {"rd": rng.randrange(32), "rs1": rng.randrange(32),
                      "imm": rng.randrange(-256, 256)}  # fmt: skip
        elif op == "sw":
            fields = {"rs1": rng.randrange(32), "rs2": rng.randrange(32),
                      "imm": rng.randrange(-256, 256)}  # fmt: skip
        else:
            fields = {"rs1": rng.randrange(32), "rs2": rng.randrange(32),
                      "imm": 2 * rng.randrange(-256, 256)}  # fmt: skip
        insn = Insn("pi", op, k, **fields)
        assert decode(encode(insn)) == insn, f"seed {seed}: {insn}"
        assert insn.is_cti == (op in CTI_OPS)


def test_ordinary_words_are_not_profile_instructions():
    for word in (NOP, 0x00000063, 0x0000006F, 0x00002003, 0x0000000B):
        assert decode(word) == ordinary(word)
    # reserved bits of a PCI set: not a PCI
    assert decode(pci("setpf") | 1 << 25).kind == "other"
    assert decode(pci("setpf") | 1 << 7).kind == "other"
    assert decode(CUSTOM1 | 0b100 << 12).kind == "other"
    # add/b with reserved bits 28:25 set: not a PI
    assert decode(pi("add") | 1 << 26).kind == "other"


@pytest.mark.parametrize("insn, message", [
    (Insn("pci", "setpf", k=8), "k must be between 0 and 7, not 8"),
    (Insn("pci", "jump"), "op must be one of"),
    (Insn("pi", "lw", imm=256), "imm must be between -256 and 255, not 256"),
    (Insn("pi", "beq", imm=3), "imm must be an even byte offset, not 3"),
    (Insn("pi", "add", rd=32), "rd must be between 0 and 31, not 32"),
    (ordinary(CUSTOM1), "is a PCI or PI, not an ordinary instruction"),
])  # fmt: skip
def test_encode_rejects(insn, message):
    with pytest.raises(ValueError, match=message):
        encode(insn)


# --------------------------------------------------------------------- dispatch


@pytest.mark.parametrize("params, error, message", [
    ({"lanes": 0}, ValueError, "lanes must be between 1 and 4, not 0"),
    ({"lanes": 5}, ValueError, "lanes must be between 1 and 4, not 5"),
    ({"n_flags": 9}, ValueError, "n_flags must be between 1 and 8, not 9"),
    ({"stack_depth": 0}, ValueError, "stack_depth must be between 1 and 64, not 0"),
    ({"addr_width": 4}, ValueError, "addr_width must be between 8 and 64, not 4"),
    ({"lanes": "2"}, TypeError, "lanes must be an integer, not '2'"),
])  # fmt: skip
def test_config_validation(params, error, message):
    with pytest.raises(error, match=message):
        DispatchConfig(**params)


def test_setpf_resetpf_act_at_decode_and_are_not_dispatched():
    f = DispatchFilter(lanes=4)
    out = f.step(lanes(pci("setpf"), pi(), pci("resetpf"), pi()))
    assert (out.take, out.dispatch, out.drop) == (0b1111, 0b0010, 0b1000)
    assert f.flags == 0 and out.flags == 0


def test_ordinary_instructions_always_dispatch():
    out = DispatchFilter(lanes=2).step(lanes(NOP, 0x63))
    assert (out.take, out.dispatch, out.drop) == (0b11, 0b11, 0)


def test_poppf_raw_hazard_stalls_the_reader_one_cycle():
    f = DispatchFilter(lanes=4)
    f.step(lanes(pci("setpf"), pci("pushpf"), pci("resetpf")))
    out = f.step(lanes(pci("poppf"), NOP, pi(), NOP))
    assert (out.take, out.dispatch, out.stall) == (0b011, 0b010, 1)
    out = f.step(lanes(pi(), NOP, pc=0x108))  # the popped flag (1) is visible now
    assert (out.take, out.dispatch, out.stall) == (0b11, 0b11, 0)


def test_poppf_hazard_covers_pushpf_but_not_other_flags():
    f = DispatchFilter(lanes=3, n_flags=2)
    f.step(lanes(pci("pushpf", 0), pci("pushpf", 1)))
    assert f.step(lanes(pci("poppf", 1), pci("pushpf", 1))).take == 0b01
    f = DispatchFilter(lanes=3, n_flags=2)
    f.step(lanes(pci("pushpf", 0), pci("pushpf", 1)))
    out = f.step(lanes(pci("poppf", 1), pi(k=0), pci("pushpf", 0)))
    assert (out.take, out.stall) == (0b111, 0)


def test_profile_misfetch_redirects_to_fall_through():
    f = DispatchFilter(lanes=3)
    out = f.step(lanes(pi("beq", imm=8), NOP, NOP, pc=0x200, pred={0}))
    assert (out.take, out.drop, out.redirect, out.misfetch, out.redirect_pc) == \
        (0b001, 0b001, 1, 1, 0x204)
    # predicted not taken: no mis-fetch; flag on: dispatched, no mis-fetch
    assert DispatchFilter(lanes=3).step(lanes(pi("beq", imm=8), NOP)).redirect == 0
    out = DispatchFilter(lanes=3).step(lanes(pci("setpf"), pi("jalr"), NOP, pred={1}))
    assert (out.take, out.dispatch, out.redirect) == (0b111, 0b110, 0)
    # an ordinary PI (not a transfer) predicted taken cannot mis-fetch
    assert DispatchFilter().step(lanes(pi("lw"), pred={0})).redirect == 0


def test_flag_misprediction_refetches_the_block():
    out = DispatchFilter(lanes=3).step(lanes(pci("setpf"), pi(), NOP, pc=0x40, skipped={1}))
    assert (out.take, out.dispatch, out.redirect, out.flag_mispredict, out.redirect_pc) == \
        (0b011, 0b010, 1, 1, 0x48)
    # predicted ignored and the flag is off: correct, nothing happens
    out = DispatchFilter(lanes=2).step(lanes(pi(), NOP, skipped={0}))
    assert (out.take, out.drop, out.redirect) == (0b11, 0b01, 0)


def test_stack_overflow_is_a_precise_exception_of_its_lane():
    f = DispatchFilter(lanes=4, stack_depth=2)
    out = f.step(lanes(pci("setpf"), pci("pushpf"), pci("pushpf"), pci("pushpf")))
    # lane 3 faults: taken and dispatched (to carry the exception), nothing changed
    assert (out.overflow, out.underflow, out.take, out.dispatch) == (0b1000, 0, 0b1111, 0b1000)
    assert (f.sp, f.stack, f.flags, out.ckpt[3]) == (2, 0b11, 1, out.ckpt[2])
    # decode halts behind it until the core's squash (the trap returning)
    out = f.step(lanes(pi(), NOP, pc=0x110))
    assert (out.halted, out.take, out.dispatch) == (1, 0, 0)
    f.step(squash=1, restore=out.ckpt[0])
    assert f.step(lanes(pi(), NOP, pc=0x110)).take == 0b11


def test_stack_underflow_stops_decode_after_the_faulting_poppf():
    f = DispatchFilter(lanes=4)
    out = f.step(lanes(pci("setpf"), pci("poppf"), pi(), NOP))
    assert (out.underflow, out.take, out.dispatch, f.flags, f.halted) == (0b10, 0b11, 0b10, 1, 1)


def test_handler_spills_and_fills_like_an_unbounded_stack(seed):
    """FlagStackSpill + the hardware stack = the runtime stack of the paper."""
    rng = random.Random(seed)
    for depth in (1, 2, 3, 8):
        f = DispatchFilter(lanes=1, n_flags=2, stack_depth=depth)
        handler = FlagStackSpill(f.config)
        model: list[int] = []
        for _ in range(400):
            k = rng.randrange(2)
            op = rng.choice(("setpf", "resetpf", "pushpf", "poppf", "pushpf"))
            out = f.step(lanes(pci(op, k)))
            if out.overflow or out.underflow:
                cause = "overflow" if out.overflow else "underflow"
                f.step(squash=1, restore=handler.handle(out.ckpt[0], cause, k))
            if op == "pushpf":
                model.append(f.flag(k))  # the flag did not change: pushed value
            elif op == "poppf":
                expected = model.pop() if model else 0
                assert f.flag(k) == expected, f"seed {seed}, depth {depth}"
            assert f.sp + len(handler.memory) == len(model), f"seed {seed}, depth {depth}"
        assert handler.exceptions > 0


def test_checkpoint_and_restore():
    f = DispatchFilter(lanes=3, stack_depth=4)
    out = f.step(lanes(pci("setpf"), pci("pushpf"), pci("resetpf")))
    # flags | stack << 1 | sp << 5
    assert out.ckpt == [0b1, 0b1 | 0b10 | 1 << 5, 0b0 | 0b10 | 1 << 5]
    out = f.step(lanes(pi(), pi()), squash=1, restore=out.ckpt[0])
    assert (out.take, f.flags, f.sp) == (0, 1, 0)
    assert f.step(lanes(pi())).dispatch == 1


def test_flags_beyond_n_flags_read_as_zero():
    f = DispatchFilter(lanes=4, n_flags=2)
    out = f.step(lanes(pci("setpf", 5), pi(k=5), pci("setpf", 1), pi(k=1)))
    assert (out.dispatch, out.drop, f.flags) == (0b1000, 0b0010, 0b10)
