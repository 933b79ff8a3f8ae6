"""The brr encoding (docs/isa.md): layout, round trips, assembler syntax."""

import random

import pytest

from hwprof.golden.brr_isa import (
    CUSTOM0,
    MATCH_MASK,
    OFFSET_MAX,
    OFFSET_MIN,
    BrrInstruction,
    assemble,
    b_immediate,
    decode_brr,
    disassemble,
    encode_brr,
)

ALL_OFFSETS = range(OFFSET_MIN, OFFSET_MAX + 1, 2)


def test_custom0_opcode_and_b_type_immediate_bits():
    """Known RISC-V words: ``beq x0, x0, -4`` is 0xfe000ee3, ``beq x0, x0, 8`` 0x00000463.

    A brr keeps its immediate in the same bits (31:25, 11:7), opcode custom-0.
    """
    assert CUSTOM0 == 0b0001011
    imm_bits = 0xFE000F80
    assert encode_brr(0, -4) == (0xFE000EE3 & imm_bits) | CUSTOM0
    assert encode_brr(0, 8) == (0x00000463 & imm_bits) | CUSTOM0
    assert b_immediate(0xFE000EE3) == -4 and b_immediate(0x00000463) == 8
    assert encode_brr(15, 0) == (15 << 20) | CUSTOM0
    assert encode_brr(0, OFFSET_MIN) == 0x80000000 | CUSTOM0  # only imm[12] set


def test_round_trip_every_freq_and_offset():
    for freq in range(16):
        for offset in ALL_OFFSETS:
            word = encode_brr(freq, offset)
            assert decode_brr(word) == BrrInstruction(freq, offset)
            assert word & MATCH_MASK == CUSTOM0  # funct3, rs1, bit 24 all zero


def test_decode_then_encode_round_trip_on_random_words(seed):
    rng = random.Random(seed)
    brr_words = 0
    for _ in range(200_000):
        word = rng.getrandbits(32)
        if rng.random() < 0.5:  # force the match bits to a brr half of the time
            word = (word & ~MATCH_MASK) | CUSTOM0
        inst = decode_brr(word)
        if inst is None:
            assert word & MATCH_MASK != CUSTOM0, f"{word:#010x}, seed {seed}"
            continue
        brr_words += 1
        assert encode_brr(inst.freq, inst.offset) == word, f"{word:#010x}, seed {seed}"
    assert brr_words > 90_000


def test_every_match_bit_is_checked():
    word = encode_brr(5, -100)
    for bit in range(32):
        if MATCH_MASK >> bit & 1:
            assert decode_brr(word ^ (1 << bit)) is None, bit


def test_assembler_syntax_round_trip(seed):
    rng = random.Random(seed)
    assert assemble("brr 3, -8") == encode_brr(3, -8)
    assert assemble("  brr 0x2 ,0x10 ") == encode_brr(2, 16)
    for _ in range(2000):
        freq, offset = rng.randrange(16), rng.choice(ALL_OFFSETS)
        text = disassemble(encode_brr(freq, offset))
        assert text == f"brr {freq}, {offset}"
        assert assemble(text) == encode_brr(freq, offset)
    assert disassemble(0x00000013) is None  # addi x0, x0, 0 (nop)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: encode_brr(16, 0), ValueError, "freq must be between 0 and 15, not 16"),
        (lambda: encode_brr(0, 3), ValueError,
         "offset must be an even number between -4096 and 4094, not 3"),
        (lambda: encode_brr(0, 4096), ValueError,
         "offset must be an even number between -4096 and 4094, not 4096"),
        (lambda: encode_brr(True, 0), TypeError, "freq must be an integer, not True"),
        (lambda: decode_brr(1 << 32), ValueError,
         "word must be a 32-bit unsigned value, not 4294967296"),
        (lambda: assemble("brr 3"), ValueError, "expected 'brr freq, offset', not 'brr 3'"),
        (lambda: assemble("brr a, 4"), ValueError, "freq and offset must be integers"),
    ],
)  # fmt: skip
def test_errors(call, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()
