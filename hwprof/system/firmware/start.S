/* hwprof system start file: stack, .bss cleared, main(), its return value to the
 * console's exit register (the simulation stops). */
#include "hwprof.h"

    .section .text.start, "ax"
    .global _start
_start:
    la sp, __stack_top
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:  la t0, hwprof_pf_trap_entry    /* the flag-stack exception handler (pfspill.c) */
    csrw mtvec, t0
    call main
    li t0, HWPROF_CONSOLE_EXIT
    sw a0, 0(t0)
3:  j 3b
