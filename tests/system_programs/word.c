/* Executes the instruction word WORD (a -D define), then prints "after" and exits 0.
 * A brr-shaped WORD whose offset is OFFSET lands, when taken, on the same path:
 * WORD is followed by a jump over SKIP words of nops (SKIP = OFFSET / 4 - 2). */
#include "hwprof.h"

#ifndef SKIP
#define SKIP 0
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

int main(void) {
    __asm__ volatile(".word " STR(WORD) "\n\tj 1f\n\t.fill " STR(SKIP) ", 4, 0x00000013\n1:\n");
    hwprof_puts("after\n");
    return 0;
}
