/* pushpf far beyond the hardware stack's depth, then more poppf than pushpf: the
 * runtime's handler keeps the unbounded stack. Prints pfstate after each PCI and
 * flag 0 after each pop (tests/test_system_dispatch.py). PUSHES and PATTERN: -D. */
#include "hwprof.h"

static void show(void) {
    hwprof_puthex(hwprof_pfstate());
    hwprof_putc('\n');
}

int main(void) {
    hwprof_setpf(1);
    show();
    for (int j = 0; j < PUSHES; j++) {
        if ((PATTERN >> j) & 1)
            hwprof_setpf(0);
        else
            hwprof_resetpf(0);
        show();
        hwprof_pushpf(0);
        show();
    }
    for (int j = 0; j < PUSHES + 2; j++) {
        hwprof_poppf(0);
        show();
    }
    hwprof_puthex(hwprof_pf_exceptions);
    hwprof_putc('\n');
    return 0;
}
