/* The basic-block counter of Vaswani et al., Fig. 3, around a small recursive
 * workload: work() keeps the caller's flag with pushpf/poppf (its recursion goes
 * deeper than the hardware flag stack); main turns profiling on for 2 of every 8
 * calls. Prints the 4 block counts, the result and the PIs executed and dropped,
 * then the flag-stack exceptions taken (tests/test_system_dispatch.py). N: -D. */
#include "hwprof.h"

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
        else if (i % 8 == 2)
            hwprof_resetpf(0);
        acc += work((uint32_t)i * 7 + 3, i % 7);
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
