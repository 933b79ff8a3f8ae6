/* The core's CSR instructions (tests/test_system_dispatch.py): read-modify-write of
 * mtval with every Zicsr form, pfstate, mtvec and mepc written and read back, the
 * flag-stack exceptions as a handler of this program sees them, rdinstret. Values:
 * -D V1, V2, V3 (32-bit) and I1, I2, I3 (0..31). One result per line. */
#include "hwprof.h"

#define STR2(x) #x
#define STR(x) STR2(x)

volatile uint32_t pf_seen[4]; /* mcause, mepc, mtval, pfstate in the handler */
extern char pf_at_push[], pf_at_pop[], pf_record[], hwprof_pf_trap_entry[];
void pf_push0(void);
void pf_pop1(void);

/* pushpf 0 and poppf 1 at known addresses; a handler that records the exception's
 * CSRs and returns to the next instruction without doing anything else. */
__asm__(
    "    .section .text.pf_traps, \"ax\"\n"
    "    .global pf_push0, pf_at_push, pf_pop1, pf_at_pop, pf_record\n"
    "pf_push0:\n"
    "pf_at_push: .insn i 0x2b, 2, x0, x0, 0\n"
    "    ret\n"
    "pf_pop1:\n"
    "pf_at_pop: .insn i 0x2b, 3, x0, x1, 0\n"
    "    ret\n"
    "    .balign 4\n"
    "pf_record:\n"
    "    addi sp, sp, -8\n    sw t0, 0(sp)\n    sw t1, 4(sp)\n"
    "    la t1, pf_seen\n"
    "    csrr t0, mcause\n    sw t0, 0(t1)\n"
    "    csrr t0, mepc\n    sw t0, 4(t1)\n"
    "    csrr t0, mtval\n    sw t0, 8(t1)\n"
    "    csrr t0, 0x8c0\n    sw t0, 12(t1)\n"
    "    csrr t0, mepc\n    addi t0, t0, 4\n    csrw mepc, t0\n"
    "    lw t0, 0(sp)\n    lw t1, 4(sp)\n    addi sp, sp, 8\n"
    "    mret\n");

static void put(uint32_t v) {
    hwprof_puthex(v);
    hwprof_putc('\n');
}

#define OP(insn, src)                                                       \
    do {                                                                    \
        uint32_t old_;                                                      \
        __asm__ volatile(insn " %0, mtval, %1" : "=r"(old_) : "r"(src));    \
        put(old_);                                                          \
    } while (0)
#define OPI(insn, imm)                                                      \
    do {                                                                    \
        uint32_t old_;                                                      \
        __asm__ volatile(insn " %0, mtval, " STR(imm) : "=r"(old_));        \
        put(old_);                                                          \
    } while (0)

static void show_trap(void) {
    for (int i = 0; i < 4; i++) put(pf_seen[i]);
    put(hwprof_pfstate());
}

int main(void) {
    /* mtval: every form; each line is the old value the instruction read */
    OP("csrrw", V1);
    OP("csrrs", V2);
    OP("csrrc", V3);
    OPI("csrrwi", I1);
    OPI("csrrsi", I2);
    OPI("csrrci", I3);
    {   /* csrrs with a register (not x0) holding 0: writes the same value */
        uint32_t old;
        __asm__ volatile("li t0, 0\n\tcsrrs %0, mtval, t0" : "=r"(old) : : "t0");
        put(old);
    }
    put(hwprof_csr_read(HWPROF_CSR_MTVAL));
    /* pfstate after reset, then written and read back */
    put(hwprof_pfstate());
    hwprof_set_pfstate(V1);
    put(hwprof_pfstate());
    /* mtvec: start.S set it to the runtime's handler */
    put(hwprof_csr_read(HWPROF_CSR_MTVEC) == (uint32_t)hwprof_pf_trap_entry);
    hwprof_csr_write(HWPROF_CSR_MTVEC, V2);
    put(hwprof_csr_read(HWPROF_CSR_MTVEC));
    hwprof_csr_write(HWPROF_CSR_MEPC, V3);
    put(hwprof_csr_read(HWPROF_CSR_MEPC));
    hwprof_csr_write(HWPROF_CSR_MCAUSE, V1);
    put(hwprof_csr_read(HWPROF_CSR_MCAUSE));
    /* overflow: flag 1 set, pushed 4 times (full), then pushpf 0 */
    hwprof_csr_write(HWPROF_CSR_MTVEC, pf_record);
    hwprof_set_pfstate(0);
    hwprof_setpf(1);
    for (int i = 0; i < HWPROF_PF_DEPTH; i++) hwprof_pushpf(1);
    put(hwprof_pfstate());
    put((uint32_t)pf_at_push);
    pf_push0();
    show_trap();
    /* underflow: both flags set, the stack empty, then poppf 1 */
    hwprof_set_pfstate(3);
    put((uint32_t)pf_at_pop);
    pf_pop1();
    show_trap();
    hwprof_csr_write(HWPROF_CSR_MTVEC, hwprof_pf_trap_entry);
    /* rdinstret counts the 10 nops and itself */
    uint32_t a, b;
    __asm__ volatile("rdinstret %0\n" ".rept 10\nnop\n.endr\n" "rdinstret %1" : "=r"(a), "=r"(b));
    put(b - a);
    return 0;
}
