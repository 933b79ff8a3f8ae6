/* The basic-block counter of Vaswani et al., Fig. 3, around a small recursive
 * workload (hwprof experiment system-dispatch): work() keeps its caller's flag
 * with pushpf/poppf (the recursion goes deeper than the hardware flag stack) and
 * counts its 4 blocks with PIs of type 0; main turns profiling on for ON of every
 * 8 calls (setpf at call 0, resetpf at call ON). Prints the block counts, the
 * result, the PIs executed and dropped, the flag-stack exceptions and the cycles
 * of the loop. -D N (calls), ON (0..8), DEPTHS (call i recurses to depth
 * i % DEPTHS), NO_PROFILE (no instrumentation at all). */
#include "hwprof.h"

#ifndef ON
#define ON 2
#endif
#ifndef DEPTHS
#define DEPTHS 7 /* call i recurses to depth i % DEPTHS */
#endif

#ifdef NO_PROFILE
#undef hwprof_pushpf
#undef hwprof_poppf
#undef hwprof_setpf
#undef hwprof_resetpf
#undef hwprof_pi_count
#define hwprof_pushpf(k)
#define hwprof_poppf(k)
#define hwprof_setpf(k)
#define hwprof_resetpf(k)
#define hwprof_pi_count(k, p, i)
#endif

uint32_t counts[4];

__attribute__((noinline)) static uint32_t work(uint32_t x, int depth) {
    uint32_t *c = counts;
    uint32_t r;
    hwprof_pushpf(0);
    hwprof_pi_count(0, c, 0);
    if (x & 1) {
        hwprof_pi_count(0, c, 1);
        r = 3 * x + 1;
    } else {
        hwprof_pi_count(0, c, 2);
        r = x >> 1;
    }
    if (depth > 0) {
        hwprof_pi_count(0, c, 3);
        r += work(r, depth - 1);
    }
    hwprof_poppf(0);
    return r;
}

int main(void) {
    uint32_t acc = 0, d0 = hwprof_pi_dispatched(), r0 = hwprof_pi_dropped();
    uint32_t t0 = hwprof_cycles();
    for (int i = 0; i < N; i++) {
        if (i % 8 == 0)
            hwprof_setpf(0);
        if (i % 8 == ON)
            hwprof_resetpf(0);
        acc += work((uint32_t)i * 7 + 3, i % DEPTHS);
    }
    uint32_t t1 = hwprof_cycles();
    for (int b = 0; b < 4; b++) {
        hwprof_puthex(counts[b]);
        hwprof_putc(b < 3 ? ' ' : '\n');
    }
    hwprof_puthex(acc);
    hwprof_putc(' ');
    hwprof_puthex(hwprof_pi_dispatched() - d0);
    hwprof_putc(' ');
    hwprof_puthex(hwprof_pi_dropped() - r0);
    hwprof_putc('\n');
    hwprof_puthex(hwprof_pf_exceptions);
    hwprof_putc('\n');
    hwprof_puthex(t1 - t0);
    hwprof_putc('\n');
    return 0;
}
