"""The word the system's core decodes for a fetched PI (hwprof.system.dispatch.base_word):
the RV32I base instruction with the PI's operands, its encoding written here from the
RISC-V base ISA (R/I/S/B/U formats) and the PI fields of docs/isa.md (golden decoder)."""

from __future__ import annotations

import random

from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hwprof.golden.isa_profile import CUSTOM2, NOP, decode, encode_pflen
from hwprof.system.dispatch import base_word

_OPC = {"add": 0x33, "addi": 0x13, "lw": 0x03, "sw": 0x23, "jalr": 0x67, "beq": 0x63,
        "bne": 0x63, "lui": 0x37}  # fmt: skip


def _rv32(word: int) -> int:
    """The RV32I word a PI executes as (other words: unchanged, pflen: nop)."""
    if word & 0x000FFFFF == encode_pflen(0):
        return NOP
    i = decode(word)
    if i.kind != "pi":
        return word
    opc, imm = _OPC[i.op], i.imm & 0xFFF
    if i.op == "add":
        return opc | i.rd << 7 | i.rs1 << 15 | i.rs2 << 20
    if i.op in ("addi", "jalr"):
        return opc | i.rd << 7 | i.rs1 << 15 | imm << 20
    if i.op == "lw":
        return opc | i.rd << 7 | 2 << 12 | i.rs1 << 15 | imm << 20
    if i.op == "sw":
        return opc | (imm & 31) << 7 | 2 << 12 | i.rs1 << 15 | i.rs2 << 20 | (imm >> 5) << 25
    if i.op in ("beq", "bne"):
        b = i.imm & 0x1FFF
        return (opc | (b >> 11 & 1) << 7 | (b >> 1 & 15) << 8 | (i.op == "bne") << 12
                | i.rs1 << 15 | i.rs2 << 20 | (b >> 5 & 63) << 25 | (b >> 12) << 31)
    return opc | i.rd << 7 | (i.imm & 0xFFFFF) << 12  # lui: rd <- sext(imm14) << 12


def _mismatches(words, translate=base_word):
    m = Module()
    word = Signal(32)
    out = translate(m, word)
    bad = []

    async def bench(ctx):
        for w in words:
            ctx.set(word, w)
            got, want = ctx.get(out), _rv32(w)
            if got != want:
                bad.append((hex(w), hex(got), hex(want)))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    return bad


def _words(seed, n=1500):
    rng = random.Random(seed)
    words = [rng.getrandbits(25) << 7 | CUSTOM2 for _ in range(n)]  # every PI field
    words += [rng.getrandbits(32) for _ in range(n // 5)]  # mostly other words
    words += [encode_pflen(rng.randrange(4096)), encode_pflen(0), 0x0000202B, 0x00000013]
    return words


def test_pi_words_become_their_base_instruction(seed):
    assert _mismatches(_words(seed)) == [], f"seed {seed}"


def test_check_fails_when_beq_b_executes_as_bne(seed):
    """A translation that gives beq/b the funct3 of bne: the check must fail."""

    def wrong(m, word):
        out = base_word(m, word)
        is_beq_b = (word[0:7] == CUSTOM2) & (word[12:15] == 5)
        return out ^ (is_beq_b << 12)

    bad = _mismatches(_words(seed, 300), wrong)
    assert bad and all(int(got, 16) ^ int(want, 16) == 1 << 12 for _, got, want in bad)
