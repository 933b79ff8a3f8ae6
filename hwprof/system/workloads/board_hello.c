/* The default program of `hwprof system bitstream`: a line on the board's UART with
 * the brr unit's outcome counts, then exit code 0 (LED 0). */
#include "hwprof.h"

int main(void) {
    unsigned taken = 0;
    for (int i = 0; i < 4096; i++) taken += hwprof_brr(3);
    hwprof_puts("hwprof system: brr(3) taken 0x");
    hwprof_puthex(taken);
    hwprof_puts(" of 0x00001000 (expect about 1/16)\r\n");
    return 0;
}
