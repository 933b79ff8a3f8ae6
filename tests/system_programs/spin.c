/* Never exits. */
#include "hwprof.h"

int main(void) {
    hwprof_puts("spinning\n");
    for (;;) __asm__ volatile("");
}
