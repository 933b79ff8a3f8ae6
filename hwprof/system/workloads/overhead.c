/* Instrumentation-overhead microbenchmark (Lee & Zilles, sec. 5.3): checksums and the
 * character distribution of a text in memory. The character loop has one
 * instrumentation site per path (upper-case, lower-case, other), an edge profile.
 *
 * -DFRAMEWORK=0  no site (the baseline)
 *             1  brr at freq FREQ (taken with probability 2^-(FREQ+1)); the sample
 *                code out of line, a jump back after it (paper, Fig. 8)
 *             2  software countdown (Arnold-Ryder global counter, paper Fig. 1): load,
 *                decrement, store, branch at every site; reset to INTERVAL on a sample
 *             3  full instrumentation: the sample code at every site
 * -DINSTRUMENT=0 the sample code is empty (framework only), 1 it counts the edge
 * -DKERNEL=1     instead of the character loop, an empty loop of LENGTH iterations with
 *                one site each
 *
 * Prints "cycles C instret I sites S samples T checksum X" for the kernel alone
 * (rdcycle/rdinstret around it), then the edge counts. */
#include "hwprof.h"

#ifndef FRAMEWORK
#define FRAMEWORK 0
#endif
#ifndef FREQ
#define FREQ 9
#endif
#ifndef INTERVAL
#define INTERVAL 1024
#endif
#ifndef INSTRUMENT
#define INSTRUMENT 1
#endif
#ifndef LENGTH
#define LENGTH 8192
#endif

static char text[LENGTH];
static volatile uint32_t edges[3];
static uint32_t sites, samples;
static volatile int32_t countdown = INTERVAL;

#if INSTRUMENT
#define SAMPLE(e) (edges[e]++)
#else
#define SAMPLE(e) ((void)0)
#endif

#if FRAMEWORK == 0
#define SITE(e) ((void)0)
#elif FRAMEWORK == 1
#define SITE(e)                                                                       \
    do {                                                                              \
        if (__builtin_expect(hwprof_brr(FREQ), 0)) {                                  \
            SAMPLE(e);                                                                \
            __asm__ volatile("");                                                     \
        }                                                                             \
    } while (0)
#elif FRAMEWORK == 2
#define SITE(e)                                                                       \
    do {                                                                              \
        if (__builtin_expect(--countdown == 0, 0)) {                                  \
            countdown = INTERVAL;                                                     \
            SAMPLE(e);                                                                \
        }                                                                             \
    } while (0)
#else
#define SITE(e) SAMPLE(e)
#endif

static void fill(void) {
    uint32_t x = 12345;
    for (int i = 0; i < LENGTH; i++) {
        x = x * 1103515245u + 12345u;
        text[i] = (char)(' ' + (x >> 16) % 95);
    }
}

#ifndef KERNEL
#define KERNEL 0
#endif

#if KERNEL == 1
__attribute__((noinline)) static uint32_t kernel(void) {
    for (int i = 0; i < LENGTH; i++) {
        SITE(0);
        __asm__ volatile("");
    }
    return 0;
}
#else
__attribute__((noinline)) static uint32_t kernel(void) {
    uint32_t upper = 0, lower = 0, other = 0;
    for (int i = 0; i < LENGTH; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c >= 'A' && c <= 'Z') {
            SITE(0);
            upper += c;
        } else if (c >= 'a' && c <= 'z') {
            SITE(1);
            lower = (lower << 1 | lower >> 31) ^ c;
        } else {
            SITE(2);
            other += c * 3;
        }
    }
    return upper ^ lower ^ other;
}
#endif

int main(void) {
    fill();
    uint32_t r0 = hwprof_brr_retired(), t0 = hwprof_brr_taken();
    uint32_t c0 = hwprof_cycles(), i0 = hwprof_instret();
    uint32_t sum = kernel();
    uint32_t c1 = hwprof_cycles(), i1 = hwprof_instret();
    sites = hwprof_brr_retired() - r0;
    samples = hwprof_brr_taken() - t0;
    hwprof_puts("cycles ");
    hwprof_puthex(c1 - c0);
    hwprof_puts(" instret ");
    hwprof_puthex(i1 - i0);
    hwprof_puts(" brr ");
    hwprof_puthex(sites);
    hwprof_puts(" taken ");
    hwprof_puthex(samples);
    hwprof_puts(" checksum ");
    hwprof_puthex(sum);
    hwprof_puts(" edges");
    for (int e = 0; e < 3; e++) {
        hwprof_putc(' ');
        hwprof_puthex(edges[e]);
    }
    hwprof_putc('\n');
    return 0;
}
