/* hwprof system runtime: the flag-stack exception handler of selective dispatch.
 *
 * The core keeps the top HWPROF_PF_DEPTH entries of the profile-flag stack; a
 * pushpf on a full stack (mcause 24) or a poppf on an empty one (25) jumps to
 * hwprof_pf_trap_entry (mtvec, set by start.S) without changing anything. The
 * handler keeps the rest of the stack in memory, as docs/isa.md says (golden
 * model hwprof.golden.dispatch.FlagStackSpill), with chunk = half the hardware
 * stack (at least 1):
 *   overflow:  the bottom chunk entries go to the spill area (bottom first), the
 *              rest shift down, flag k is pushed on top;
 *   underflow: the top min(chunk, spilled) spilled entries come back to the
 *              bottom of the hardware stack and the top is popped into flag k;
 *              with nothing spilled, flag k is reset.
 * It writes pfstate, sets mepc to the next instruction and returns with mret.
 * Every register the C code may change is saved on the interrupted stack. */
#include "hwprof.h"

#define PF_MASK(bits) ((bits) >= 32 ? 0xffffffffu : (1u << (bits)) - 1)
#define PF_CHUNK (HWPROF_PF_DEPTH / 2 ? HWPROF_PF_DEPTH / 2 : 1)
#define PF_SPILL_MAX 4096

volatile uint32_t hwprof_pf_exceptions;
volatile uint32_t hwprof_pf_spilled;
static uint8_t pf_spill[PF_SPILL_MAX];

void hwprof_pf_spill(void) {
    uint32_t state = hwprof_csr_read(HWPROF_CSR_PFSTATE);
    uint32_t cause = hwprof_csr_read(HWPROF_CSR_MCAUSE);
    uint32_t k = hwprof_csr_read(HWPROF_CSR_MTVAL) >> 15 & 7;
    uint32_t flags = state & PF_MASK(HWPROF_PF_FLAGS);
    uint32_t stack = state >> HWPROF_PF_FLAGS & PF_MASK(HWPROF_PF_DEPTH);
    uint32_t sp = state >> (HWPROF_PF_FLAGS + HWPROF_PF_DEPTH);
    uint32_t n = hwprof_pf_spilled;
    hwprof_pf_exceptions++;
    if (cause == HWPROF_PF_OVERFLOW) {
        if (n + PF_CHUNK > PF_SPILL_MAX) {
            hwprof_puts("hwprof: profile-flag stack spill area full\n");
            hwprof_exit(125);
        }
        for (uint32_t j = 0; j < PF_CHUNK; j++) pf_spill[n++] = stack >> j & 1;
        stack >>= PF_CHUNK;
        sp -= PF_CHUNK;
        stack |= (flags >> k & 1) << sp;
        sp++;
    } else {
        uint32_t m = n < PF_CHUNK ? n : PF_CHUNK, bit = 0;
        stack = 0;
        for (uint32_t j = 0; j < m; j++) stack |= (uint32_t)pf_spill[n - m + j] << j;
        n -= m;
        sp = m;
        if (sp) {
            sp--;
            bit = stack >> sp & 1;
            stack &= ~(1u << sp);
        }
        flags = (flags & ~(1u << k)) | bit << k;
    }
    hwprof_pf_spilled = n;
    hwprof_csr_write(HWPROF_CSR_PFSTATE,
                     flags | stack << HWPROF_PF_FLAGS | sp << (HWPROF_PF_FLAGS + HWPROF_PF_DEPTH));
    hwprof_csr_write(HWPROF_CSR_MEPC, hwprof_csr_read(HWPROF_CSR_MEPC) + 4);
}

/* Saves the caller-saved registers (the C code keeps the others), calls the
 * handler, restores them and returns to mepc. */
__asm__(
    "    .section .text.hwprof_pf_trap_entry, \"ax\"\n"
    "    .global hwprof_pf_trap_entry\n"
    "    .balign 4\n"
    "hwprof_pf_trap_entry:\n"
    "    addi sp, sp, -64\n"
    "    sw ra, 0(sp)\n    sw t0, 4(sp)\n    sw t1, 8(sp)\n    sw t2, 12(sp)\n"
    "    sw a0, 16(sp)\n    sw a1, 20(sp)\n    sw a2, 24(sp)\n    sw a3, 28(sp)\n"
    "    sw a4, 32(sp)\n    sw a5, 36(sp)\n    sw a6, 40(sp)\n    sw a7, 44(sp)\n"
    "    sw t3, 48(sp)\n    sw t4, 52(sp)\n    sw t5, 56(sp)\n    sw t6, 60(sp)\n"
    "    call hwprof_pf_spill\n"
    "    lw ra, 0(sp)\n    lw t0, 4(sp)\n    lw t1, 8(sp)\n    lw t2, 12(sp)\n"
    "    lw a0, 16(sp)\n    lw a1, 20(sp)\n    lw a2, 24(sp)\n    lw a3, 28(sp)\n"
    "    lw a4, 32(sp)\n    lw a5, 36(sp)\n    lw a6, 40(sp)\n    lw a7, 44(sp)\n"
    "    lw t3, 48(sp)\n    lw t4, 52(sp)\n    lw t5, 56(sp)\n    lw t6, 60(sp)\n"
    "    addi sp, sp, 64\n"
    "    mret\n");
