"""Selective dispatch in the system's core (Vaswani, Srikant & Thazhuthaveetil; docs/isa.md).

The patched PicoRV32 (:mod:`hwprof.system.core`) runs one instruction at a time.
When it launches an instruction (the cycle its retired-instruction counter
counts it), it shows the word the instruction was fetched as to the catalog's
``dispatch_filter`` top (one lane, :data:`FILTER_PARAMS`), which decides:

* a PCI (``setpf``, ``resetpf``, ``pushpf``, ``poppf``) acts on the filter's flags
  and stack and retires without effect in the core (no register, no memory);
* a PI whose flag is off is dropped: it retires without effect;
* a PI whose flag is on executes as its base operation: the core decodes the
  standard RV32I word :func:`base_word` gives (``add``, ``addi``, ``lw``, ``sw``,
  ``jalr``, ``beq``, ``bne``, ``lui`` with the PI's operands);
* a ``pushpf`` on a full hardware stack or a ``poppf`` on an empty one is a precise
  exception: the instruction changes nothing, ``mcause`` gets 24 (overflow) or 25
  (underflow), ``mepc`` its address, ``mtval`` its word, and the core jumps to
  ``mtvec``. The firmware runtime's handler (``firmware/pfspill.c``) spills or
  fills through ``pfstate``, adds 4 to ``mepc`` and returns with ``mret``.

``pflen`` (a hint) executes as ``addi x0, x0, 0``. The CSRs of docs/isa.md
(:data:`CSRS`: ``pfstate`` and the machine-mode ``mtvec``, ``mepc``, ``mcause``,
``mtval``) are :class:`TrapCsrs`; the patched core decodes the Zicsr instructions on
exactly these numbers and gives them to it (:mod:`hwprof.system.core`). The PI counts
are registers of the CSR window (block ``dispatch``, :data:`REGISTERS`).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.dispatch import DispatchConfig
from ..golden.isa_profile import NOP, PFLEN_MASK, PFLEN_MATCH, PI_OPS
from ..rtl.dispatch_filter import decode_fields

__all__ = ["FILTER_PARAMS", "CONFIG", "BLOCK_OFFSET", "REGISTERS", "OVERFLOW", "UNDERFLOW",
           "CSRS", "TrapCsrs", "base_word", "build_filter", "attach", "csr_defines",
           "header_section"]  # fmt: skip

#: Parameters of the catalog top ``dispatch_filter`` in the system: one decode lane
#: (PicoRV32 launches one instruction at a time), two profile flags, a 4-entry
#: hardware flag stack; the filter decodes the word itself.
FILTER_PARAMS = {"lanes": 1, "n_flags": 2, "stack_depth": 4, "addr_width": 32,
                 "predecoded": False}  # fmt: skip
CONFIG = DispatchConfig(**{k: v for k, v in FILTER_PARAMS.items() if k != "predecoded"})
#: ``mcause`` of a flag-stack overflow / underflow (docs/isa.md).
OVERFLOW, UNDERFLOW = 24, 25
#: Offset of the block in the CSR window.
BLOCK_OFFSET = 0x300
#: The CSRs the core implements (numbers: docs/isa.md for ``pfstate``, the RISC-V
#: privileged specification for the others); any other CSR number is illegal.
CSRS = {"pfstate": 0x8C0, "mtvec": 0x305, "mepc": 0x341, "mcause": 0x342, "mtval": 0x343}
#: The block's registers in the CSR window: (name, offset, access, bits, reset, meaning).
REGISTERS = (
    ("DISPATCHED", 0x00, "rw", 32, "0", "PIs executed (flag on); write: set the count"),
    ("DROPPED", 0x04, "rw", 32, "0", "PIs dropped (flag off); write: set the count"),
)  # fmt: skip

_OPCODES = {"add": 0b0110011, "addi": 0b0010011, "lw": 0b0000011, "sw": 0b0100011,
            "jalr": 0b1100111, "beq": 0b1100011, "bne": 0b1100011, "lui": 0b0110111}
_FUNCT3 = {"add": 0, "addi": 0, "lw": 2, "sw": 2, "jalr": 0, "beq": 0, "bne": 1}


def base_word(m: Module, word, name: str = "xlate"):
    """The word the core decodes for the fetched ``word``: a PI's base operation.

    A PI (docs/isa.md) becomes the RV32I instruction with its operands and its
    immediate sign-extended (``beq/b``/``bne/b``: the byte offset ``2 * imm9``;
    ``lui/b``: ``sext(imm14)``); ``pflen`` becomes ``addi x0, x0, 0``; any other word
    is unchanged. Combinational.
    """
    out = Signal(32, name=f"{name}_base")
    _is_pci, _op, is_pi, _cti, _k = decode_fields(m, word, name)
    w = word
    rd, rs1, rs2, f3 = w[7:12], w[15:20], w[20:25], w[12:15]
    sign = w[28]
    i12 = Cat(w[20:29], sign.replicate(3))
    s12 = Cat(w[7:12], w[25:29], sign.replicate(3))
    b13 = Cat(Const(0, 1), w[7:12], w[25:29], sign.replicate(3))
    u20 = Cat(w[15:29], sign.replicate(6))
    words = {}
    for op in PI_OPS:
        opc = Const(_OPCODES[op], 7)
        if op == "add":
            words[op] = Cat(opc, rd, Const(0, 3), rs1, rs2, Const(0, 7))
        elif op in ("addi", "lw", "jalr"):
            words[op] = Cat(opc, rd, Const(_FUNCT3[op], 3), rs1, i12)
        elif op == "sw":
            words[op] = Cat(opc, s12[0:5], Const(2, 3), rs1, rs2, s12[5:12])
        elif op in ("beq", "bne"):
            words[op] = Cat(opc, b13[11], b13[1:5], Const(_FUNCT3[op], 3), rs1, rs2, b13[5:11],
                            b13[12])  # fmt: skip
        else:  # lui
            words[op] = Cat(opc, rd, u20)
    with m.If(is_pi):
        with m.Switch(f3):
            for i, op in enumerate(PI_OPS):
                with m.Case(i):
                    m.d.comb += out.eq(words[op])
    with m.Elif((w & PFLEN_MASK) == PFLEN_MATCH):
        m.d.comb += out.eq(NOP)
    with m.Else():
        m.d.comb += out.eq(w)
    return out


def build_filter():
    """The catalog's ``dispatch_filter`` with :data:`FILTER_PARAMS`."""
    from ..catalog import get_top

    return get_top("dispatch_filter").construct(dict(FILTER_PARAMS))


class TrapCsrs(wiring.Component):
    """The core's CSRs (:data:`CSRS`): ``pfstate`` and the flag-stack exceptions' CSRs.

    A CSR instruction (``csrrw``, ``csrrs``, ``csrrc`` and their immediate forms)
    reads the CSR's old value (``csr_rdata``, which the core writes to ``rd``) and,
    when ``csr_write``, writes ``csr_src`` (``csrrw``), ``old | csr_src`` (``csrrs``)
    or ``old & ~csr_src`` (``csrrc``), as the RISC-V privileged specification says.

    * ``pfstate`` reads the filter's state (``state``, its ``ckpt`` layout); a write
      loads it through the filter's ``restore`` (``restore_valid`` for one cycle).
    * ``mtvec``: the handler's address; direct mode only, bits 1:0 read 0.
    * ``mepc``: bits 1:0 read 0 (32-bit instructions only); ``mret`` returns to it.
    * ``mcause``, ``mtval``: 32 bits.
    * A flag-stack exception (``trap``) writes ``mcause`` (:data:`causes`: 24 when
      ``overflow``, else 25), ``mepc`` (``trap_pc``) and ``mtval`` (``trap_word``).

    Parameters
    ----------
    state_width : int
        Bits of ``pfstate`` (the filter's ``ckpt_width``).

    Attributes
    ----------
    csr_valid : In(1)
        The core executes a CSR instruction on ``csr_addr`` (its write takes effect at
        this clock edge).
    csr_addr : In(12)
        The CSR number (one of :data:`CSRS`: the core decodes no other).
    csr_op : In(2)
        ``funct3[1:0]``: 1 ``csrrw``, 2 ``csrrs``, 3 ``csrrc``.
    csr_src : In(32)
        ``rs1``'s value, or the zero-extended 5-bit immediate.
    csr_write : In(1)
        The instruction writes (``csrrw``; ``csrrs``/``csrrc`` with a source field
        other than 0).
    csr_rdata : Out(32)
        The value of CSR ``csr_addr`` (combinational).
    state : In(state_width)
        The filter's flag state.
    restore_valid : Out(1), restore : Out(state_width)
        Load the filter's state (a write of ``pfstate``).
    trap, overflow : In(1)
        A flag-stack exception this cycle; it is an overflow (else an underflow).
    trap_pc, trap_word : In(32)
        The faulting instruction's address and word.
    mtvec, mepc : Out(32)
        Where the core jumps on an exception, and on ``mret``.

    Latency: reads are combinational; writes and exceptions take effect at the clock
    edge.
    """

    #: ``mcause`` of a flag-stack overflow and underflow.
    causes = (OVERFLOW, UNDERFLOW)

    def __init__(self, state_width: int = CONFIG.ckpt_width):
        self.state_width = state_width
        super().__init__({
            "csr_valid": In(1), "csr_addr": In(12), "csr_op": In(2), "csr_src": In(32),
            "csr_write": In(1), "csr_rdata": Out(32),
            "state": In(state_width), "restore_valid": Out(1), "restore": Out(state_width),
            "trap": In(1), "overflow": In(1), "trap_pc": In(32), "trap_word": In(32),
            "mtvec": Out(32), "mepc": Out(32),
        })  # fmt: skip

    def elaborate(self, platform):
        m = Module()
        mcause, mtval = Signal(32), Signal(32)
        mtvec, mepc = Signal(30), Signal(30)  # bits 31:2
        values = {"pfstate": self.state, "mtvec": Cat(Const(0, 2), mtvec),
                  "mepc": Cat(Const(0, 2), mepc), "mcause": mcause, "mtval": mtval}
        m.d.comb += [self.mtvec.eq(values["mtvec"]), self.mepc.eq(values["mepc"])]
        with m.Switch(self.csr_addr):
            for name, number in CSRS.items():
                with m.Case(number):
                    m.d.comb += self.csr_rdata.eq(values[name])
        old, src, new = self.csr_rdata, self.csr_src, Signal(32)
        with m.Switch(self.csr_op):
            with m.Case(1):
                m.d.comb += new.eq(src)
            with m.Case(2):
                m.d.comb += new.eq(old | src)
            with m.Case(3):
                m.d.comb += new.eq(old & ~src)
        write = {name: Signal(name=f"write_{name}") for name in CSRS}
        for name, number in CSRS.items():
            m.d.comb += write[name].eq(self.csr_valid & self.csr_write
                                       & (self.csr_addr == number))  # fmt: skip
        m.d.comb += [self.restore_valid.eq(write["pfstate"]),
                     self.restore.eq(new[:self.state_width])]  # fmt: skip
        with m.If(write["mtvec"]):
            m.d.sync += mtvec.eq(new[2:])
        with m.If(self.trap):
            m.d.sync += [mcause.eq(Mux(self.overflow, *self.causes)),
                         mepc.eq(self.trap_pc[2:]), mtval.eq(self.trap_word)]  # fmt: skip
        with m.Else():
            for name, reg, bits in (("mepc", mepc, new[2:]), ("mcause", mcause, new),
                                    ("mtval", mtval, new)):  # fmt: skip
                with m.If(write[name]):
                    m.d.sync += reg.eq(bits)
        return m


def attach(m: Module, regs: dict, p) -> None:
    """Wire the filter ``p.dispatch_filter`` and the CSRs ``p.trap_csrs`` (a
    :class:`TrapCsrs`) to the core's ports.

    ``p`` has ``pf_launch``, ``pf_word``, ``pf_pc`` and the ``csr_*`` inputs, and
    ``pf_nop``, ``pf_trap``, ``pf_vector``, ``pf_mepc`` and ``csr_rdata`` outputs
    (:class:`hwprof.system.soc.Peripherals`); ``regs`` the CSR window's registers. A
    write of ``pfstate`` loads the filter's state through its ``squash``/``restore``
    port; the cycle after an exception squashes with the unchanged state (ends the
    filter's ``halted``: PicoRV32 takes the trap at once, there is nothing to drain).
    """
    f = p.dispatch_filter
    m.submodules.dispatch_filter = f
    m.submodules.trap_csrs = csrs = p.trap_csrs
    r = {name: regs["dispatch", name].f for name, *_ in REGISTERS}
    state = Signal(CONFIG.ckpt_width)  # the filter's state (its flag, stack and sp registers)
    exc_q = Signal()
    trap = Signal()
    _is_pci, _op, is_pi, _cti, _k = decode_fields(m, p.pf_word, "pf_count")
    m.d.comb += [
        f.valid.eq(p.pf_launch), f.insn[0].eq(p.pf_word), f.pc[0].eq(p.pf_pc),
        f.pred_taken.eq(0), f.skipped.eq(0),
        f.squash.eq(csrs.restore_valid | exc_q),
        f.restore.eq(Mux(csrs.restore_valid, csrs.restore, state)),
        trap.eq(f.overflow[0] | f.underflow[0]),
        p.pf_nop.eq(f.take[0] & ~f.dispatch[0]),
        p.pf_trap.eq(trap),
        csrs.csr_valid.eq(p.csr_valid), csrs.csr_addr.eq(p.csr_addr),
        csrs.csr_op.eq(p.csr_op), csrs.csr_src.eq(p.csr_src), csrs.csr_write.eq(p.csr_write),
        p.csr_rdata.eq(csrs.csr_rdata),
        csrs.state.eq(state), csrs.trap.eq(trap), csrs.overflow.eq(f.overflow[0]),
        csrs.trap_pc.eq(p.pf_pc), csrs.trap_word.eq(p.pf_word),
        p.pf_vector.eq(csrs.mtvec), p.pf_mepc.eq(csrs.mepc),
    ]  # fmt: skip
    m.d.sync += [state.eq(f.ckpt[0]), exc_q.eq(trap)]
    for name, event in (("DISPATCHED", f.take[0] & f.dispatch[0] & is_pi),
                        ("DROPPED", f.drop[0])):  # fmt: skip
        count = Signal(32, name=f"pf_{name.lower()}")
        m.d.comb += r[name].r_data.eq(count)
        with m.If(r[name].w_stb):
            m.d.sync += count.eq(r[name].w_data)
        with m.Elif(event):
            m.d.sync += count.eq(count + 1)


def csr_defines() -> str:
    """``#define HWPROF_CSR_<NAME> <number>`` for every CSR of :data:`CSRS`."""
    lines = ["/* CSRs (csrr/csrw): the flag state and the flag-stack exceptions */"]
    lines += [f"#define HWPROF_CSR_{name.upper()} 0x{number:03x}" for name, number in CSRS.items()]
    return "\n".join(lines) + "\n"


def header_section() -> str:
    """The selective-dispatch part of ``hwprof.h`` (inside ``#ifndef __ASSEMBLER__``)."""
    n, depth = CONFIG.n_flags, CONFIG.stack_depth
    return f"""
/* Selective dispatch (docs/isa.md, docs/system.md): {n} profile flags, a {depth}-entry
 * hardware flag stack; the runtime's handler keeps the rest in memory. */
#define HWPROF_PF_FLAGS {n}
#define HWPROF_PF_DEPTH {depth}
#define HWPROF_PF_OVERFLOW {OVERFLOW}
#define HWPROF_PF_UNDERFLOW {UNDERFLOW}
/* Read / write CSR csr (a constant, HWPROF_CSR_*): csrr / csrw. */
#define hwprof_csr_read(csr) __extension__({{                                      \\
        uint32_t hwprof_v_;                                                      \\
        __asm__ volatile("csrr %0, %1" : "=r"(hwprof_v_) : "i"(csr));            \\
        hwprof_v_;                                                               \\
    }})
#define hwprof_csr_write(csr, v) \\
    __asm__ volatile("csrw %0, %1" : : "i"(csr), "r"((uint32_t)(v)))
/* Profile control instructions on flag k (a constant 0..7). */
#define hwprof_setpf(k) __asm__ volatile(".insn i 0x2b, 0, x0, x%0, 0" : : "i"(k))
#define hwprof_resetpf(k) __asm__ volatile(".insn i 0x2b, 1, x0, x%0, 0" : : "i"(k))
#define hwprof_pushpf(k) __asm__ volatile(".insn i 0x2b, 2, x0, x%0, 0" : : "i"(k))
#define hwprof_poppf(k) __asm__ volatile(".insn i 0x2b, 3, x0, x%0, 0" : : "i"(k))
/* pflen n: a hint, executes as a nop. */
#define hwprof_pflen(n) __asm__ volatile(".insn i 0x2b, 4, x0, x0, %0" : : "i"(n))
/* Profile instructions of type k (a constant 0..7): executed as the base operation
 * when flag k is set, otherwise retired without effect. Immediates: imm9 -256..255. */
#define HWPROF_PI_IMM(k, imm) (((((k) << 9) | ((imm) & 0x1ff)) ^ 0x800) - 0x800)
/* x += y (add/b) */
#define hwprof_pi_add(k, x, y) \\
    __asm__ volatile(".insn r 0x5b, 0, %2, %0, %0, %1" : "+r"(x) : "r"(y), "i"((k) << 4))
/* x += imm (addi/b) */
#define hwprof_pi_addi(k, x, imm) \\
    __asm__ volatile(".insn i 0x5b, 1, %0, %0, %1" : "+r"(x) : "i"(HWPROF_PI_IMM(k, imm)))
/* x = *(uint32_t *)((char *)p + off) (lw/b) */
#define hwprof_pi_lw(k, x, p, off) \\
    __asm__ volatile(".insn i 0x5b, 2, %0, %2(%1)" : "+r"(x) : "r"(p), \\
                     "i"(HWPROF_PI_IMM(k, off)) : "memory")
/* *(uint32_t *)((char *)p + off) = x (sw/b) */
#define hwprof_pi_sw(k, x, p, off) \\
    __asm__ volatile(".insn s 0x5b, 3, %0, %2(%1)" : : "r"(x), "r"(p), \\
                     "i"(HWPROF_PI_IMM(k, off)) : "memory")
/* x = imm14 << 12 (lui/b, imm14 -8192..8191) */
#define hwprof_pi_lui(k, x, imm14) \\
    __asm__ volatile(".insn u 0x5b, %0, %1" : "+r"(x) : \\
                     "i"(((k) << 17) | (((imm14) & 0x3fff) << 3) | 7))
/* The basic-block counter of Vaswani et al., Fig. 3 (lw/b, addi/b, sw/b): counter
 * word `index` (0..63) of the array at p is incremented when flag k is set. */
#define hwprof_pi_count(k, p, index) __extension__({{                              \\
        uint32_t hwprof_c_;                                                      \\
        __asm__ volatile(".insn i 0x5b, 2, %0, %2(%1)\\n"                          \\
                         ".insn i 0x5b, 1, %0, %0, %3\\n"                          \\
                         ".insn s 0x5b, 3, %0, %2(%1)"                           \\
                         : "=&r"(hwprof_c_) : "r"(p), "i"(HWPROF_PI_IMM(k, 4 * (index))), \\
                           "i"(HWPROF_PI_IMM(k, 1)) : "memory");                \\
    }})
/* The flag state (pfstate: flags | stack << HWPROF_PF_FLAGS | sp << (flags + depth)). */
static inline uint32_t hwprof_pfstate(void) {{ return hwprof_csr_read(HWPROF_CSR_PFSTATE); }}
static inline void hwprof_set_pfstate(uint32_t s) {{ hwprof_csr_write(HWPROF_CSR_PFSTATE, s); }}
/* PIs executed and dropped since reset (or the last write of the count). */
static inline uint32_t hwprof_pi_dispatched(void) {{
    return HWPROF_REG(HWPROF_DISPATCH_DISPATCHED);
}}
static inline uint32_t hwprof_pi_dropped(void) {{ return HWPROF_REG(HWPROF_DISPATCH_DROPPED); }}
/* Flag-stack exceptions taken by the runtime's handler, and entries spilled now. */
extern volatile uint32_t hwprof_pf_exceptions;
extern volatile uint32_t hwprof_pf_spilled;
"""
