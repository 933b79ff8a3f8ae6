"""The core: PicoRV32 from the ``pythondata-cpu-picorv32`` package, patched at build time.

The repository holds no copy of ``picorv32.v``. :func:`core_verilog` reads the
package's file and applies :data:`EDITS`, a list of (anchor, replacement) pairs,
each of which must match exactly once (else the package changed and the patch is
refused with a clear error). The patched module is renamed ``hwprof_picorv32`` so
that it never clashes with an unpatched ``picorv32`` in a user's design; the
package's bus wrappers (``picorv32_axi``, ``picorv32_wb``), which instantiate the
unpatched name, are left out.

What the patch adds (docs/system.md, "The core"):

* ``instr_brr``: a word is a brr exactly when ``word & MATCH_MASK == MATCH_VALUE``
  (:mod:`hwprof.golden.brr_isa`); a brr is no longer an illegal instruction.
* A brr executes as a branch whose condition is the brr unit's ``taken``; its
  target is the B-type immediate (the core's own branch-target adder).
* Ports ``hwprof_brr_valid`` (one cycle per retired brr, in the cycle the core
  leaves the execute state: the LFSR steps at that clock edge, after ``taken``
  was used), ``hwprof_brr_freq`` and ``hwprof_brr_taken`` (input).
* ``hwprof_taken_valid`` (one cycle per conditional branch or brr that retires
  taken, in the cycle the core leaves the execute state) and ``hwprof_taken_target``
  (its target): the edges of the multi-hash profiler's edge profiling.
* Observation ports for the simulation: ``hwprof_pc`` and ``hwprof_insn`` (the
  address and word of the instruction being executed, PicoRV32's own debug
  registers) and ``hwprof_instret`` (its retired-instruction counter).
* Selective dispatch (:mod:`hwprof.system.dispatch`): ``hwprof_raw_rdata`` (the
  fetched word before the system translates a PI into its base operation on
  ``mem_rdata``) is kept as ``hwprof_word`` in the first decode stage;
  ``hwprof_launch`` / ``hwprof_launch_pc`` show each launching instruction to the
  dispatch filter; ``hwprof_pf_nop`` makes it retire without effect,
  ``hwprof_pf_trap`` jumps to ``hwprof_pf_vector`` (``mtvec``: a flag-stack
  exception), and ``mret`` jumps to ``hwprof_pf_mepc`` (``mepc``). None of them
  writes a register.
* CSRs: ``csrrw``, ``csrrs``, ``csrrc`` and their immediate forms on the numbers of
  :data:`hwprof.system.dispatch.CSRS` (``pfstate``, ``mtvec``, ``mepc``,
  ``mcause``, ``mtval``) are decoded; any other CSR number stays illegal. The
  system holds the CSRs (:class:`hwprof.system.dispatch.TrapCsrs`): in the cycle
  the core leaves its ``ld_rs1`` state, ``hwprof_csr_valid`` shows the number
  (``hwprof_csr_addr``), ``funct3[1:0]`` (``hwprof_csr_op``), the source
  (``hwprof_csr_src``: ``rs1``'s value or the 5-bit immediate) and whether it
  writes (``hwprof_csr_write``); ``rd`` gets ``hwprof_csr_rdata``, the old value.
  PicoRV32's own counters (``rdcycle``, ``rdinstret`` and their high halves) are
  unchanged.

The interrupt extension (``ENABLE_IRQ``) also decodes custom-0 (``retirq`` is
``0x0400000b``, which is also a brr): the system builds the core without it, and
:func:`core_verilog` refuses ``ENABLE_IRQ=1``.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata
from pathlib import Path

from ..golden.brr_isa import MATCH_MASK, MATCH_VALUE
from .dispatch import CSRS

__all__ = ["CORE_PACKAGE", "CORE_VERSION", "CORE_MODULE", "CORE_PARAMETERS", "PatchError",
           "core_source", "core_verilog"]  # fmt: skip

CORE_PACKAGE = "pythondata-cpu-picorv32"
#: The package version the patch is written against (pinned in pyproject.toml).
CORE_VERSION = "1.0.post218"
#: Name of the patched module.
CORE_MODULE = "hwprof_picorv32"
#: PicoRV32 parameters of the system's core (RV32IM, no compressed, no interrupts).
CORE_PARAMETERS = {
    "ENABLE_COUNTERS": 1,
    "ENABLE_COUNTERS64": 1,
    "ENABLE_REGS_16_31": 1,
    "ENABLE_REGS_DUALPORT": 1,
    "BARREL_SHIFTER": 1,
    "COMPRESSED_ISA": 0,
    "CATCH_MISALIGN": 1,
    "CATCH_ILLINSN": 1,
    "ENABLE_PCPI": 0,
    "ENABLE_MUL": 0,
    "ENABLE_FAST_MUL": 1,
    "ENABLE_DIV": 1,
    "ENABLE_IRQ": 0,
    "ENABLE_TRACE": 0,
    "REGS_INIT_ZERO": 1,
    "PROGADDR_RESET": 0,
}


class PatchError(RuntimeError):
    """The installed core package does not match the patch."""


_BRANCH_OLD = """\
				if (is_beq_bne_blt_bge_bltu_bgeu) begin
					latched_rd <= 0;
					latched_store <= TWO_CYCLE_COMPARE ? alu_out_0_q : alu_out_0;
					latched_branch <= TWO_CYCLE_COMPARE ? alu_out_0_q : alu_out_0;
					if (mem_done)
						cpu_state <= cpu_state_fetch;
					if (TWO_CYCLE_COMPARE ? alu_out_0_q : alu_out_0) begin
"""
_BRANCH_NEW = """\
				if (is_beq_bne_blt_bge_bltu_bgeu || instr_brr) begin
					latched_rd <= 0;
					latched_store <= hwprof_branch_cond;
					latched_branch <= hwprof_branch_cond;
					if (mem_done)
						cpu_state <= cpu_state_fetch;
					if (hwprof_branch_cond) begin
"""

#: The CSR numbers the core decodes (any other CSR instruction stays illegal).
_CSR_MATCH = " ||\n\t\t\t\t\t".join(f"mem_rdata_q[31:20] == 12'h{n:03x}" for n in CSRS.values())

#: (anchor, replacement): each anchor occurs exactly once in the package's picorv32.v
#: (an edit may anchor on what an earlier one wrote).
EDITS: tuple[tuple[str, str], ...] = (
    ("module picorv32 #(", f"module {CORE_MODULE} #("),
    (
        "\toutput reg        trace_valid,\n\toutput reg [35:0] trace_data\n);\n"
        "\tlocalparam integer irq_timer = 0;",
        "\toutput reg        trace_valid,\n\toutput reg [35:0] trace_data,\n\n"
        "\t// hwprof: brr unit and observation ports\n"
        "\toutput            hwprof_brr_valid,\n"
        "\toutput     [ 3:0] hwprof_brr_freq,\n"
        "\tinput             hwprof_brr_taken,\n"
        "\toutput     [31:0] hwprof_pc,\n"
        "\toutput     [31:0] hwprof_insn,\n"
        "\toutput     [63:0] hwprof_instret\n"
        ");\n\tlocalparam integer irq_timer = 0;",
    ),
    (
        "\treg instr_getq, instr_setq, instr_retirq, instr_maskirq, instr_waitirq, instr_timer;\n",
        "\treg instr_getq, instr_setq, instr_retirq, instr_maskirq, instr_waitirq, instr_timer;\n"
        "\treg instr_brr;  // hwprof: branch-on-random (docs/isa.md)\n",
    ),
    (
        "\t\t\tinstr_getq, instr_setq, instr_retirq, instr_maskirq, instr_waitirq, instr_timer};",
        "\t\t\tinstr_getq, instr_setq, instr_retirq, instr_maskirq, instr_waitirq, instr_timer,"
        " instr_brr};",
    ),
    (
        "\t\t\tis_beq_bne_blt_bge_bltu_bgeu <= mem_rdata_latched[6:0] == 7'b1100011;\n",
        "\t\t\tis_beq_bne_blt_bge_bltu_bgeu <= mem_rdata_latched[6:0] == 7'b1100011;\n"
        f"\t\t\tinstr_brr <= (mem_rdata_latched & 32'h{MATCH_MASK:08x}) == "
        f"32'h{MATCH_VALUE:08x};\n",
    ),
    (
        "\t\t\t\tis_beq_bne_blt_bge_bltu_bgeu:\n\t\t\t\t\tdecoded_imm <= $signed({mem_rdata_q[31]",
        "\t\t\t\tis_beq_bne_blt_bge_bltu_bgeu || instr_brr:\n"
        "\t\t\t\t\tdecoded_imm <= $signed({mem_rdata_q[31]",
    ),
    (
        "\t\tif (!resetn) begin\n\t\t\tis_beq_bne_blt_bge_bltu_bgeu <= 0;\n",
        "\t\tif (!resetn) begin\n\t\t\tis_beq_bne_blt_bge_bltu_bgeu <= 0;\n\t\t\tinstr_brr <= 0;\n",
    ),
    (
        "\tassign launch_next_insn = ",
        "\t// hwprof: a brr is a branch on the brr unit's outcome; it retires (and the\n"
        "\t// LFSR steps) in the cycle the core leaves the execute state.\n"
        "\twire hwprof_branch_cond = instr_brr ? hwprof_brr_taken :\n"
        "\t\t\t(TWO_CYCLE_COMPARE ? alu_out_0_q : alu_out_0);\n"
        "\tassign hwprof_brr_valid = resetn && cpu_state == cpu_state_exec && instr_brr &&\n"
        "\t\t\t!((TWO_CYCLE_ALU || TWO_CYCLE_COMPARE) && (alu_wait || alu_wait_2)) && mem_done;\n"
        "\tassign hwprof_brr_freq = decoded_rs2[3:0];\n"
        "\tassign hwprof_pc = dbg_insn_addr;\n"
        "\tassign hwprof_insn = dbg_insn_opcode;\n"
        "\tassign hwprof_instret = count_instr;\n\n"
        "\tassign launch_next_insn = ",
    ),
    (_BRANCH_OLD, _BRANCH_NEW),
    # taken branches for edge profiling (hwprof.system.profiler): a conditional branch
    # (or a brr) that retires taken, and its target (the core's own branch adder)
    (
        "\t// hwprof: brr unit and observation ports\n",
        "\t// hwprof: taken branches (edge profiling)\n"
        "\toutput            hwprof_taken_valid,\n"
        "\toutput     [31:0] hwprof_taken_target,\n\n"
        "\t// hwprof: brr unit and observation ports\n",
    ),
    (
        "\tassign launch_next_insn = ",
        "\t// hwprof: a conditional branch or brr retires taken in the cycle it leaves the\n"
        "\t// execute state with its condition true; the target is pc + B-type immediate\n"
        "\tassign hwprof_taken_valid = resetn && cpu_state == cpu_state_exec &&\n"
        "\t\t\t(is_beq_bne_blt_bge_bltu_bgeu || instr_brr) && hwprof_branch_cond &&\n"
        "\t\t\t!((TWO_CYCLE_ALU || TWO_CYCLE_COMPARE) && (alu_wait || alu_wait_2)) && mem_done;\n"
        "\tassign hwprof_taken_target = reg_pc + decoded_imm;\n\n"
        "\tassign launch_next_insn = ",
    ),
    # selective dispatch (hwprof.system.dispatch): the word each instruction was
    # fetched as, the launch of each instruction to the dispatch filter, and what the
    # filter decides (no effect, or a flag-stack exception), and mret
    (
        "\toutput     [63:0] hwprof_instret\n);",
        "\toutput     [63:0] hwprof_instret,\n\n"
        "\t// hwprof: selective dispatch\n"
        "\tinput      [31:0] hwprof_raw_rdata,\n"
        "\toutput            hwprof_launch,\n"
        "\toutput reg [31:0] hwprof_word,\n"
        "\toutput     [31:0] hwprof_launch_pc,\n"
        "\tinput             hwprof_pf_nop,\n"
        "\tinput             hwprof_pf_trap,\n"
        "\tinput      [31:0] hwprof_pf_vector,\n"
        "\tinput      [31:0] hwprof_pf_mepc\n"
        ");",
    ),
    (
        "\treg [31:0] mem_rdata_q;\n",
        "\treg [31:0] mem_rdata_q;\n"
        "\treg [31:0] hwprof_raw_q;  // hwprof: the fetched word before translation\n",
    ),
    (
        "\t\t\tnext_insn_opcode <= COMPRESSED_ISA ? mem_rdata_latched : mem_rdata;\n",
        "\t\t\tnext_insn_opcode <= COMPRESSED_ISA ? mem_rdata_latched : mem_rdata;\n"
        "\t\t\thwprof_raw_q <= hwprof_raw_rdata;\n",
    ),
    (
        "\t\tif (mem_do_rinst && mem_done) begin\n"
        "\t\t\tinstr_lui     <= mem_rdata_latched[6:0] == 7'b0110111;\n",
        "\t\tif (mem_do_rinst && mem_done) begin\n"
        "\t\t\thwprof_word <= (mem_xfer || LATCHED_MEM_RDATA) ? hwprof_raw_rdata : hwprof_raw_q;\n"
        "\t\t\tinstr_lui     <= mem_rdata_latched[6:0] == 7'b0110111;\n",
    ),
    (
        "\tassign hwprof_instret = count_instr;\n",
        "\tassign hwprof_instret = count_instr;\n"
        "\t// hwprof: an instruction launches (one cycle each, as count_instr counts) at\n"
        "\t// the address the fetch state computes for it\n"
        "\tassign hwprof_launch = launch_next_insn;\n"
        "\tassign hwprof_launch_pc = latched_branch && latched_store ?\n"
        "\t\t\t(latched_stalu ? alu_out_q : reg_out) & ~32'd1 : reg_next_pc;\n"
        "\twire hwprof_mret = hwprof_word == 32'h30200073;\n",
    ),
    (
        "\t\t\t\t\t\tmem_do_prefetch <= !instr_jalr && !instr_retirq;\n"
        "\t\t\t\t\t\tcpu_state <= cpu_state_ld_rs1;\n\t\t\t\t\tend\n",
        "\t\t\t\t\t\tmem_do_prefetch <= !instr_jalr && !instr_retirq;\n"
        "\t\t\t\t\t\tcpu_state <= cpu_state_ld_rs1;\n\t\t\t\t\tend\n"
        "\t\t\t\t\t// hwprof: a PCI or a dropped PI retires without effect; a flag-stack\n"
        "\t\t\t\t\t// exception jumps to the handler, mret to the saved address (no\n"
        "\t\t\t\t\t// register is written: rd 0)\n"
        "\t\t\t\t\tif (hwprof_pf_nop || hwprof_pf_trap || hwprof_mret) begin\n"
        "\t\t\t\t\t\tmem_do_rinst <= 1;\n"
        "\t\t\t\t\t\tmem_do_prefetch <= 0;\n"
        "\t\t\t\t\t\tcpu_state <= cpu_state_fetch;\n"
        "\t\t\t\t\t\tlatched_rd <= 0;\n"
        "\t\t\t\t\t\tif (hwprof_pf_trap || hwprof_mret) begin\n"
        "\t\t\t\t\t\t\treg_next_pc <= hwprof_pf_trap ? hwprof_pf_vector : hwprof_pf_mepc;\n"
        "\t\t\t\t\t\t\tlatched_branch <= 1;\n"
        "\t\t\t\t\t\tend\n"
        "\t\t\t\t\tend\n",
    ),
    # CSRs (Zicsr) of hwprof.system.dispatch.CSRS: decoded here, held by the system's
    # TrapCsrs; rd gets the old value, the write takes effect as the core leaves ld_rs1
    (
        "\t// hwprof: selective dispatch\n",
        "\t// hwprof: csrrw/csrrs/csrrc(i) of the CSRs the system implements\n"
        "\toutput            hwprof_csr_valid,\n"
        "\toutput     [11:0] hwprof_csr_addr,\n"
        "\toutput     [ 1:0] hwprof_csr_op,\n"
        "\toutput     [31:0] hwprof_csr_src,\n"
        "\toutput            hwprof_csr_write,\n"
        "\tinput      [31:0] hwprof_csr_rdata,\n\n"
        "\t// hwprof: selective dispatch\n",
    ),
    (
        "\treg instr_brr;  // hwprof: branch-on-random (docs/isa.md)\n",
        "\treg instr_brr;  // hwprof: branch-on-random (docs/isa.md)\n"
        "\treg instr_hwprof_csr;  // hwprof: a CSR instruction on a CSR of the system\n"
        "\treg [11:0] hwprof_csr_num;\n"
        "\treg [2:0] hwprof_csr_f3;\n",
    ),
    (" instr_brr};", " instr_brr, instr_hwprof_csr};"),
    (
        "\t\t\tinstr_fence <= (mem_rdata_q[6:0] == 7'b0001111 && !mem_rdata_q[14:12]);\n",
        "\t\t\tinstr_fence <= (mem_rdata_q[6:0] == 7'b0001111 && !mem_rdata_q[14:12]);\n"
        "\t\t\tinstr_hwprof_csr <= mem_rdata_q[6:0] == 7'b1110011 && mem_rdata_q[13:12] != 0 && (\n"
        "\t\t\t\t\t" + _CSR_MATCH + ");\n"
        "\t\t\thwprof_csr_num <= mem_rdata_q[31:20];\n"
        "\t\t\thwprof_csr_f3 <= mem_rdata_q[14:12];\n",
    ),
    ("\t\t\tinstr_fence <= 0;\n", "\t\t\tinstr_fence <= 0;\n\t\t\tinstr_hwprof_csr <= 0;\n"),
    (
        "\t\t\t\t\tis_lui_auipc_jal: begin\n",
        "\t\t\t\t\tinstr_hwprof_csr: begin  // hwprof: rd gets the CSR's old value\n"
        "\t\t\t\t\t\treg_out <= hwprof_csr_rdata;\n"
        "\t\t\t\t\t\tlatched_store <= 1;\n"
        "\t\t\t\t\t\tcpu_state <= cpu_state_fetch;\n"
        "\t\t\t\t\tend\n"
        "\t\t\t\t\tis_lui_auipc_jal: begin\n",
    ),
    (
        "\twire hwprof_mret = hwprof_word == 32'h30200073;\n",
        "\twire hwprof_mret = hwprof_word == 32'h30200073;\n"
        "\t// hwprof: a CSR instruction writes its CSR as the core leaves ld_rs1; the\n"
        "\t// immediate forms (funct3[2]) take the rs1 field as the value, csrrs/csrrc with\n"
        "\t// the field 0 do not write\n"
        "\tassign hwprof_csr_valid = resetn && cpu_state == cpu_state_ld_rs1 && instr_hwprof_csr;\n"
        "\tassign hwprof_csr_addr = hwprof_csr_num;\n"
        "\tassign hwprof_csr_op = hwprof_csr_f3[1:0];\n"
        "\tassign hwprof_csr_src = hwprof_csr_f3[2] ? decoded_rs1 : cpuregs_rs1;\n"
        "\tassign hwprof_csr_write = hwprof_csr_f3[1:0] == 2'b01 || decoded_rs1 != 0;\n",
    ),
)

#: Where the package's Wishbone/AXI wrappers start (they instantiate ``picorv32``).
_CUT = "module picorv32_axi #("


def core_source() -> Path:
    """``picorv32.v`` of the installed package; :class:`PatchError` if missing or other."""
    try:
        version = metadata.version(CORE_PACKAGE)
    except metadata.PackageNotFoundError:
        raise PatchError(f"the package {CORE_PACKAGE} is not installed "
                         f"(pip install {CORE_PACKAGE}=={CORE_VERSION})") from None  # fmt: skip
    if version != CORE_VERSION:
        raise PatchError(f"{CORE_PACKAGE} {version} is installed; the core patch is written "
                         f"for {CORE_VERSION}")  # fmt: skip
    import pythondata_cpu_picorv32

    return Path(pythondata_cpu_picorv32.data_location) / "picorv32.v"


@cache
def core_verilog() -> str:
    """The patched core's Verilog (module :data:`CORE_MODULE` and its PCPI units)."""
    if CORE_PARAMETERS["ENABLE_IRQ"]:
        raise PatchError("the interrupt extension decodes custom-0 like brr; build without it")
    text = core_source().read_text()
    text = text[: text.index(_CUT)]
    text = text[: text.rindex("/****")]  # the wrapper's banner comment
    for anchor, replacement in EDITS:
        count = text.count(anchor)
        if count != 1:
            raise PatchError(f"core patch: anchor found {count} times, expected once: "
                             f"{anchor.splitlines()[0].strip()!r}")  # fmt: skip
        text = text.replace(anchor, replacement)
    header = (f"// PicoRV32 from the PyPI package {CORE_PACKAGE} {CORE_VERSION} (ISC licence,\n"
              "// see the package's COPYING), patched by hwprof.system.core: brr decode and\n"
              "// observation ports. Generated; do not edit.\n")  # fmt: skip
    return header + text
