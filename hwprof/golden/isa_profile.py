"""Profile control instructions (PCI) and profile instructions (PI), docs/isa.md.

Vaswani, Srikant & Thazhuthaveetil, sec. III-A and V: *profile instructions* are
variants of the ordinary instructions used by instrumentation (the paper annotates
``lui``, ``lw``, ``sw``, ``add``, ``jal`` and ``mov``), distinguishable by decode "by
a single bit, an annotation or a prefix" or a new set of opcodes; a PI of profile
type ``k`` is dispatched only when profile flag ``k`` is set. The *profile control
instructions* ``setpf``/``resetpf``/``pushpf``/``poppf`` take an operand naming the
flag they act on (sec. V, ``n`` simultaneous profiles).

hwprof uses two RISC-V custom major opcodes (custom-0 holds brr, docs/isa.md):

PCI, custom-1 (``0b0101011``), I-type shape, flag ``k`` in the rs1 field::

    31          20 19 18 17  15 14  12 11   7 6       0
    +-------------+-----+------+------+------+---------+
    |  000000000000 | 00 |  k   |0 op  |00000 | 0101011 |
    +-------------+-----+------+------+------+---------+
    op (funct3): 000 setpf, 001 resetpf, 010 pushpf, 011 poppf

PI, custom-2 (``0b1011011``): bits 31:29 hold the profile type ``k``, funct3 the
base operation, the remaining fields are the base instruction's with a 9-bit
immediate (14 bits for ``lui/b``)::

    31 29 28   25 24  20 19  15 14  12 11    7 6       0
    +----+-------+------+------+------+-------+---------+
    | k  | imm/0 | rs2/ | rs1  | base | rd /  | 1011011 |
    |    |       | imm  |      |      | imm   |         |
    +----+-------+------+------+------+-------+---------+
    base: 000 add/b   rd, rs1, rs2          (bits 28:25 zero)
          001 addi/b  rd, rs1, imm9         (imm9 = bits 28:20; mov/b is addi/b rd, rs, 0)
          010 lw/b    rd, imm9(rs1)
          011 sw/b    rs2, imm9(rs1)        (imm9 = bits 28:25 ++ 11:7)
          100 jalr/b  rd, imm9(rs1)         control transfer
          101 beq/b   rs1, rs2, off         control transfer, off = 2 * (28:25 ++ 11:7)
          110 bne/b   rs1, rs2, off         control transfer
          111 lui/b   rd, imm14             (imm14 = bits 28:15, rd <- sext(imm14) << 12)

Reserved bits (PCI bits 31:18 and 11:7, funct3 bit 2) must be zero; a custom-1
word with any of them set is not a PCI. Immediates are two's complement.
A flag operand ``k >= n_flags`` (the core's number of flags) names a flag that
does not exist: it reads as 0 (the PI is never dispatched) and PCIs on it change
nothing (decode bandwidth only).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

__all__ = [
    "CUSTOM1",
    "CUSTOM2",
    "PCI_OPS",
    "PI_OPS",
    "CTI_OPS",
    "MAX_FLAGS",
    "Insn",
    "encode",
    "decode",
    "predecode",
    "ordinary",
    "NOP",
    "PFLEN_MASK",
    "PFLEN_MATCH",
    "encode_pflen",
    "decode_pflen",
]

CUSTOM1 = 0b0101011
CUSTOM2 = 0b1011011
MAX_FLAGS = 8
PCI_OPS = ("setpf", "resetpf", "pushpf", "poppf")
PI_OPS = ("add", "addi", "lw", "sw", "jalr", "beq", "bne", "lui")
CTI_OPS = ("jalr", "beq", "bne")
NOP = 0x00000013  # addi x0, x0, 0
#: A PCI: these bits must equal ``CUSTOM1 | op << 12`` with op < 4.
PCI_MASK = 0xFFFC0000 | (0x1F << 7) | (1 << 14) | 0x7F
#: ``pflen n`` (sec. IV-A.2 block-length hint): custom-1, funct3 100, rd = rs1 = 0,
#: the length ``n`` (instructions, 0..4095) in bits 31:20.
PFLEN_MASK = 0x000FFFFF
PFLEN_MATCH = CUSTOM1 | 0b100 << 12


@dataclass(frozen=True)
class Insn:
    """A decoded instruction.

    ``kind`` is ``"pci"``, ``"pi"`` or ``"other"``; ``op`` is a name from
    :data:`PCI_OPS` / :data:`PI_OPS` (``None`` for other); ``k`` the flag operand;
    ``rd``, ``rs1``, ``rs2``, ``imm`` the base fields (``imm`` is the byte offset
    for ``beq/b``/``bne/b``). ``word`` is set for ``"other"`` only.
    """

    kind: str
    op: str | None = None
    k: int = 0
    rd: int = 0
    rs1: int = 0
    rs2: int = 0
    imm: int = 0
    word: int = 0

    @property
    def is_pi(self) -> bool:
        return self.kind == "pi"

    @property
    def is_cti(self) -> bool:
        """A PI that transfers control (the condition 1 of a profile mis-fetch)."""
        return self.kind == "pi" and self.op in CTI_OPS


def ordinary(word: int = NOP) -> Insn:
    return Insn("other", word=word)


def _check(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} must be between {lo} and {hi}, not {value!r}")


def _sext(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def encode(insn: Insn) -> int:
    """The 32-bit word of ``insn`` (inverse of :func:`decode`)."""
    if insn.kind == "other":
        if decode(insn.word).kind != "other":
            raise ValueError(f"word {insn.word:#010x} is a PCI or PI, not an ordinary instruction")
        return insn.word
    _check("k", insn.k, 0, MAX_FLAGS - 1)
    if insn.kind == "pci":
        if insn.op not in PCI_OPS:
            raise ValueError(f"op must be one of {PCI_OPS}, not {insn.op!r}")
        return CUSTOM1 | PCI_OPS.index(insn.op) << 12 | insn.k << 15
    if insn.kind != "pi" or insn.op not in PI_OPS:
        raise ValueError(f"op must be one of {PI_OPS}, not {insn.op!r}")
    for reg in ("rd", "rs1", "rs2"):
        _check(reg, getattr(insn, reg), 0, 31)
    op = insn.op
    word = CUSTOM2 | PI_OPS.index(op) << 12 | insn.k << 29
    if op == "lui":
        _check("imm", insn.imm, -(1 << 13), (1 << 13) - 1)
        return word | insn.rd << 7 | (insn.imm & 0x3FFF) << 15
    word |= insn.rs1 << 15
    if op == "add":
        return word | insn.rd << 7 | insn.rs2 << 20
    if op in ("addi", "lw", "jalr"):
        _check("imm", insn.imm, -256, 255)
        return word | insn.rd << 7 | (insn.imm & 0x1FF) << 20
    if op == "sw":
        _check("imm", insn.imm, -256, 255)
        imm = insn.imm & 0x1FF
    else:  # beq, bne: even byte offset
        if insn.imm % 2:
            raise ValueError(f"imm must be an even byte offset, not {insn.imm!r}")
        _check("imm", insn.imm, -512, 510)
        imm = (insn.imm >> 1) & 0x1FF
    return word | insn.rs2 << 20 | (imm & 0x1F) << 7 | (imm >> 5) << 25


def encode_pflen(length: int) -> int:
    """``pflen length``: the profile block that follows has ``length`` instructions."""
    _check("length", length, 0, 4095)
    return PFLEN_MATCH | length << 20


def decode_pflen(word: int) -> int | None:
    """The length of a ``pflen`` word, or None.

    ``pflen`` is a hint: decode and selective dispatch treat it as an ordinary
    instruction (:func:`decode` says ``"other"``); only a profile-flag predictor
    with the sec. IV-A.2 block-length check reads it.
    """
    return word >> 20 if word & PFLEN_MASK == PFLEN_MATCH else None


@lru_cache(maxsize=1 << 16)
def decode(word: int) -> Insn:
    """Decode a 32-bit word; anything that is not a PCI or PI is ``kind="other"``.

    Cached: a pure function of the word, returning a frozen :class:`Insn`.
    """
    opcode = word & 0x7F
    funct3 = word >> 12 & 7
    if opcode == CUSTOM1 and word & PCI_MASK == CUSTOM1:
        return Insn("pci", PCI_OPS[funct3], k=word >> 15 & 7)
    if opcode != CUSTOM2:
        return ordinary(word)
    op = PI_OPS[funct3]
    k = word >> 29 & 7
    rd, rs1, rs2 = word >> 7 & 31, word >> 15 & 31, word >> 20 & 31
    if op == "lui":
        return Insn("pi", op, k, rd=rd, imm=_sext(word >> 15 & 0x3FFF, 14))
    if op == "add":
        if word >> 25 & 0xF:
            return ordinary(word)
        return Insn("pi", op, k, rd=rd, rs1=rs1, rs2=rs2)
    if op in ("addi", "lw", "jalr"):
        return Insn("pi", op, k, rd=rd, rs1=rs1, imm=_sext(word >> 20 & 0x1FF, 9))
    imm = _sext((word >> 7 & 0x1F) | (word >> 25 & 0xF) << 5, 9)
    if op == "sw":
        return Insn("pi", op, k, rs1=rs1, rs2=rs2, imm=imm)
    return Insn("pi", op, k, rs1=rs1, rs2=rs2, imm=2 * imm)


def predecode(word: int) -> tuple[int, int, int]:
    """``(is_pci, is_pi, is_cti)`` of a 32-bit word, from :func:`decode`: the bits a
    fetch queue stores beside each word for the dispatch filter's ``predecoded`` form."""
    insn = decode(word)
    return int(insn.kind == "pci"), int(insn.is_pi), int(insn.is_cti)
