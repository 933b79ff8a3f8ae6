/* Profile instructions (type 0) of every base operation, with flag 0 as main sets
 * it: each run prints the 12 registers the PIs may change, the 4 memory words sw/b
 * may write, and the PI counts. With the flag off nothing but the ordinary
 * instructions after the control-transfer PIs may change (tests/test_system_dispatch.py). */
#include "hwprof.h"

void pf_block(uint32_t *out, uint32_t *buf);
__asm__(
    "    .section .text.pf_block, \"ax\"\n"
    "    .global pf_block\n"
    "pf_block:\n"
    "    li t0, 0x10\n    li t1, 0x21\n    li t2, 0x32\n    li t3, 0x43\n"
    "    li t4, 0x54\n    li t5, 0x65\n    li a2, 0x76\n    li a3, 0x87\n"
    "    li a4, 0x98\n    la a5, 1f\n    li a6, 0xa9\n    li a7, 0xba\n"
    "    .insn r 0x5b, 0, 0, t0, t1, t2\n"   /* add/b  t0, t1, t2 */
    "    .insn i 0x5b, 1, t1, t1, 77\n"      /* addi/b t1, t1, 77 */
    "    .insn i 0x5b, 2, t2, 4(a1)\n"       /* lw/b   t2, 4(a1) */
    "    .insn s 0x5b, 3, t3, 8(a1)\n"       /* sw/b   t3, 8(a1) */
    "    .insn u 0x5b, t4, 0x91f\n"          /* lui/b  t4, 0x123 */
    "    .insn s 0x5b, 5, t5, 4(t5)\n"       /* beq/b  t5, t5, +8 */
    "    addi a2, a2, 1\n"
    "    .insn s 0x5b, 6, a3, 4(t5)\n"       /* bne/b  t5, a3, +8 */
    "    addi a3, a3, 1\n"
    "    .insn i 0x5b, 4, a4, 0(a5)\n"       /* jalr/b a4, 0(a5) */
    "    addi a6, a6, 1\n"
    "1:  sw t0, 0(a0)\n    sw t1, 4(a0)\n    sw t2, 8(a0)\n    sw t3, 12(a0)\n"
    "    sw t4, 16(a0)\n    sw t5, 20(a0)\n    sw a2, 24(a0)\n    sw a3, 28(a0)\n"
    "    sw a4, 32(a0)\n    sw a5, 36(a0)\n    sw a6, 40(a0)\n    sw a7, 44(a0)\n"
    "    ret\n");

static void run(void) {
    uint32_t out[12], buf[4] = {0x1111, 0x2222, 0x3333, 0x4444};
    uint32_t d0 = hwprof_pi_dispatched(), r0 = hwprof_pi_dropped();
    pf_block(out, buf);
    uint32_t d1 = hwprof_pi_dispatched(), r1 = hwprof_pi_dropped();
    for (int i = 0; i < 12; i++) {
        hwprof_puthex(out[i]);
        hwprof_putc(' ');
    }
    for (int i = 0; i < 4; i++) {
        hwprof_puthex(buf[i]);
        hwprof_putc(' ');
    }
    hwprof_puthex(d1 - d0);
    hwprof_putc(' ');
    hwprof_puthex(r1 - r0);
    hwprof_putc('\n');
}

/* The same through hwprof.h's PI macros on C variables. */
static void macros(void) {
    uint32_t x = 5, y = 7, z = 0, w = 0, mem[2] = {0x55, 0};
    hwprof_pi_add(0, x, y);
    hwprof_pi_addi(0, y, -3);
    hwprof_pi_lw(0, z, mem, 0);
    hwprof_pi_sw(0, y, mem, 4);
    hwprof_pi_lui(0, w, -2);
    uint32_t v[5] = {x, y, z, w, mem[1]};
    for (int i = 0; i < 5; i++) {
        hwprof_puthex(v[i]);
        hwprof_putc(i < 4 ? ' ' : '\n');
    }
}

int main(void) {
    run();             /* flags at reset: 0 */
    macros();
    hwprof_setpf(1);   /* another flag on: type-0 PIs stay dropped */
    run();
    macros();
    hwprof_setpf(0);
    run();
    macros();
    hwprof_resetpf(0);
    run();
    macros();
    return 0;
}
