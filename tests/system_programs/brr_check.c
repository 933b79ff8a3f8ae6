/* brr outcomes, state save/restore and the counters, printed for a golden comparison
 * (tests/test_system.py). Line 1: N outcomes at freq (i * 7 + 3) % 16 ... (FREQ below);
 * then the saved state; 64 outcomes; the same 64 after restoring the state; 64 after
 * loading LOAD; the final state, brr retired, brr taken. */
#include "hwprof.h"

#ifndef N
#define N 600
#endif
#ifndef LOAD
#define LOAD 0x12345
#endif
#define FREQ(i) (((i) * 7 + 3) % 16)

static int brr_any(int f) {
    switch (f) {
    case 0: return hwprof_brr(0);
    case 1: return hwprof_brr(1);
    case 2: return hwprof_brr(2);
    case 3: return hwprof_brr(3);
    case 4: return hwprof_brr(4);
    case 5: return hwprof_brr(5);
    case 6: return hwprof_brr(6);
    case 7: return hwprof_brr(7);
    case 8: return hwprof_brr(8);
    case 9: return hwprof_brr(9);
    case 10: return hwprof_brr(10);
    case 11: return hwprof_brr(11);
    case 12: return hwprof_brr(12);
    case 13: return hwprof_brr(13);
    case 14: return hwprof_brr(14);
    default: return hwprof_brr(15);
    }
}

static void line(int count, int modulo) {
    for (int i = 0; i < count; i++) hwprof_putc('0' + brr_any(modulo ? i % modulo : FREQ(i)));
    hwprof_putc('\n');
}

int main(void) {
    line(N, 0);
    uint32_t saved = hwprof_brr_state();
    hwprof_puthex(saved);
    hwprof_putc('\n');
    line(64, 4);
    hwprof_brr_set_state(saved);
    line(64, 4);
    hwprof_brr_set_state(LOAD);
    line(64, 4);
    hwprof_puthex(hwprof_brr_state());
    hwprof_putc(' ');
    hwprof_puthex(hwprof_brr_retired());
    hwprof_putc(' ');
    hwprof_puthex(hwprof_brr_taken());
    hwprof_putc('\n');
    return 0;
}
