"""The brr instruction encoding in the RISC-V custom-0 opcode space (docs/isa.md).

Lee & Zilles (CGO 2008, sec. 3.2, Figure 5): a brr looks like any conditional
branch, except that instead of a condition it carries a 4-bit frequency field
``freq``; it is taken with probability ``(1/2)^(freq+1)``. hwprof encodes it as a
32-bit RISC-V instruction in the *custom-0* major opcode (``0b0001011``) with the
B-type immediate in exactly the bits where ``beq``/``bne`` keep it, so a core's
existing decode-stage branch-target adder (paper, sec. 3.3 summary, item 2)
computes ``pc + offset`` for a brr unchanged::

    31      25 24 23  20 19  15 14  12 11      7 6       0
    +---------+--+------+------+------+---------+---------+
    |imm[12|  |0 | freq |00000 | 000  |imm[4:1| | 0001011 |
    |  10:5]  |  |      |      |      |   11]   | custom-0|
    +---------+--+------+------+------+---------+---------+

``offset`` is a signed, even byte offset in ``-4096..4094`` (13-bit B-type
immediate, bit 0 implied zero). Bit 24 and the rs1 field (19:15) are reserved
and must be zero, funct3 ``000`` selects brr inside custom-0 (the other funct3
values are left to further custom instructions); a word with any of those bits
set is not a brr. Assembler syntax: ``brr freq, offset``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CUSTOM0",
    "BRR_FUNCT3",
    "OFFSET_MIN",
    "OFFSET_MAX",
    "BrrInstruction",
    "encode_brr",
    "decode_brr",
    "is_brr",
    "b_immediate",
    "assemble",
    "disassemble",
]

CUSTOM0 = 0b0001011
BRR_FUNCT3 = 0b000
OFFSET_MIN = -4096
OFFSET_MAX = 4094

#: Bits that must match for a brr: opcode, funct3, rs1 field and bit 24.
MATCH_MASK = 0x7F | (0x7 << 12) | (0x1F << 15) | (1 << 24)
MATCH_VALUE = CUSTOM0 | (BRR_FUNCT3 << 12)


@dataclass(frozen=True)
class BrrInstruction:
    """A decoded brr: its frequency field and its signed byte offset."""

    freq: int
    offset: int


def _check(freq, offset) -> None:
    for name, value in (("freq", freq), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an integer, not {value!r}")
    if not 0 <= freq <= 15:
        raise ValueError(f"freq must be between 0 and 15, not {freq!r}")
    if not OFFSET_MIN <= offset <= OFFSET_MAX or offset % 2:
        raise ValueError(
            f"offset must be an even number between {OFFSET_MIN} and {OFFSET_MAX}, "
            f"not {offset!r}"
        )


def encode_brr(freq: int, offset: int) -> int:
    """The 32-bit instruction word of ``brr freq, offset``."""
    _check(freq, offset)
    imm = offset & 0x1FFF  # 13-bit two's complement
    word = CUSTOM0 | (BRR_FUNCT3 << 12) | (freq << 20)
    word |= ((imm >> 11) & 1) << 7  # imm[11]
    word |= ((imm >> 1) & 0xF) << 8  # imm[4:1]
    word |= ((imm >> 5) & 0x3F) << 25  # imm[10:5]
    word |= ((imm >> 12) & 1) << 31  # imm[12]
    return word


def b_immediate(word: int) -> int:
    """The signed B-type immediate of ``word`` (the same bits as beq/bne)."""
    imm = (
        (((word >> 31) & 1) << 12)
        | (((word >> 7) & 1) << 11)
        | (((word >> 25) & 0x3F) << 5)
        | (((word >> 8) & 0xF) << 1)
    )
    return imm - (1 << 13) if imm >> 12 else imm


def is_brr(word: int) -> bool:
    """Whether the 32-bit ``word`` is a brr (opcode, funct3 and reserved bits)."""
    return (word & MATCH_MASK) == MATCH_VALUE


def decode_brr(word: int) -> BrrInstruction | None:
    """The brr fields of ``word``, or None if ``word`` is not a brr."""
    if isinstance(word, bool) or not isinstance(word, int):
        raise TypeError(f"word must be an integer, not {word!r}")
    if not 0 <= word < 1 << 32:
        raise ValueError(f"word must be a 32-bit unsigned value, not {word!r}")
    if not is_brr(word):
        return None
    return BrrInstruction(freq=(word >> 20) & 0xF, offset=b_immediate(word))


_SYNTAX = re.compile(r"^\s*brr\s+([^,\s]+)\s*,\s*([^,\s]+)\s*$")


def assemble(text: str) -> int:
    """Assemble ``"brr freq, offset"`` (decimal or 0x/0b numbers, offset may be negative)."""
    match = _SYNTAX.match(text)
    if not match:
        raise ValueError(f"expected 'brr freq, offset', not {text!r}")
    try:
        freq, offset = (int(part, 0) for part in match.groups())
    except ValueError:
        raise ValueError(f"freq and offset must be integers in {text!r}") from None
    return encode_brr(freq, offset)


def disassemble(word: int) -> str | None:
    """``"brr freq, offset"`` for a brr word, None for any other instruction."""
    inst = decode_brr(word)
    return None if inst is None else f"brr {inst.freq}, {inst.offset}"
