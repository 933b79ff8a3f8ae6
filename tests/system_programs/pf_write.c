/* A pfstate write (csrw) followed at once by a PCI or a PI: the next instruction sees the
 * written state (the write is serializing; tests/test_system_dispatch.py). */
#include "hwprof.h"

int main(void) {
    uint32_t x = 1;
    hwprof_set_pfstate(1); /* flag 0 on */
    hwprof_resetpf(0);
    hwprof_puthex(hwprof_pfstate());
    hwprof_putc('\n');
    hwprof_set_pfstate(0);
    hwprof_pi_addi(0, x, 5); /* dropped */
    hwprof_puthex(x);
    hwprof_putc('\n');
    hwprof_set_pfstate(1);
    hwprof_pi_addi(0, x, 5); /* executed */
    hwprof_puthex(x);
    hwprof_putc('\n');
    hwprof_set_pfstate(1 | 1 << 2 | 1 << 6); /* one stack entry holding 1 */
    hwprof_poppf(1);
    hwprof_puthex(hwprof_pfstate());
    hwprof_putc('\n');
    return 0;
}
