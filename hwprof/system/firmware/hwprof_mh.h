/* The multi-hash profiler peripheral (Narayanasamy et al.): configure, wait for an
 * interval end, read its candidates, count the tuples the FIFO dropped.
 * Registers: block "multihash" of the CSR map (docs/system-profiler.md); the
 * addresses below are those of hwprof.system.profiler.REGISTERS at BLOCK_OFFSET
 * 0x200 of the CSR window at 0x10000000, used unless the system's generated
 * hwprof.h defines them. */
#ifndef HWPROF_MH_H
#define HWPROF_MH_H

#include <stdint.h>

#include "hwprof.h"

#ifndef HWPROF_MULTIHASH_INTERVAL
#define HWPROF_MULTIHASH_INTERVAL 0x10000200   /* rw: interval length in tuples */
#define HWPROF_MULTIHASH_THRESHOLD 0x10000204  /* rw: candidate threshold as a count */
#define HWPROF_MULTIHASH_SOURCE 0x10000208     /* rw: 0 loads, 1 taken branches */
#define HWPROF_MULTIHASH_START 0x1000020c      /* w: start profiling */
#define HWPROF_MULTIHASH_STOP 0x10000210       /* w: offer no more tuples */
#define HWPROF_MULTIHASH_STATUS 0x10000214     /* r: done, running, starting, overrun */
#define HWPROF_MULTIHASH_ACK 0x10000218        /* w: the interval shown is read */
#define HWPROF_MULTIHASH_CANDIDATES 0x1000021c /* r: candidates of the interval shown */
#define HWPROF_MULTIHASH_INDEX 0x10000220      /* rw: candidate read through CAND_* */
#define HWPROF_MULTIHASH_CAND_PC 0x10000224    /* r: its pc */
#define HWPROF_MULTIHASH_CAND_VALUE 0x10000228 /* r: its value (branch target) */
#define HWPROF_MULTIHASH_CAND_COUNT 0x1000022c /* r: its count */
#define HWPROF_MULTIHASH_OFFERED 0x10000230    /* r: tuples offered since start */
#define HWPROF_MULTIHASH_DROPPED 0x10000234    /* r: of them dropped (FIFO full) */
#define HWPROF_MULTIHASH_INTERVALS 0x10000238  /* r: intervals ended since start */
#endif

/* STATUS bits */
#define HWPROF_MH_DONE 0x1u     /* an ended interval is shown (the interrupt line) */
#define HWPROF_MH_RUNNING 0x2u  /* tuples are offered to the profiler */
#define HWPROF_MH_STARTING 0x4u /* a start is being carried out */
#define HWPROF_MH_OVERRUN 0x8u  /* an interval ended with two waiting: data may be torn */

#ifndef HWPROF_REG
#define HWPROF_REG(addr) (*(volatile uint32_t *)(addr))
#endif

/* 1 while an interval is shown to this program and not yet acknowledged. */
static int hwprof_mh_shown_ __attribute__((unused));

/* Profile branches (edge profiling, <pc, target>) instead of loads from the next
 * hwprof_mh_config on; reads back 0 when the system was built without it. */
static inline void hwprof_mh_source(int branches) {
    HWPROF_REG(HWPROF_MULTIHASH_SOURCE) = branches ? 1u : 0u;
}

/* Start profiling: intervals of `interval` tuples, candidates the tuples counted at
 * least `threshold` times (1 <= threshold <= interval < 2^24). Clears the counts;
 * returns when the profiler takes tuples. */
static inline void hwprof_mh_config(uint32_t interval, uint32_t threshold) {
    HWPROF_REG(HWPROF_MULTIHASH_INTERVAL) = interval;
    HWPROF_REG(HWPROF_MULTIHASH_THRESHOLD) = threshold;
    HWPROF_REG(HWPROF_MULTIHASH_START) = 1;
    hwprof_mh_shown_ = 0;
    while (!(HWPROF_REG(HWPROF_MULTIHASH_STATUS) & HWPROF_MH_RUNNING)) {
    }
}

/* Stop offering tuples (those already queued are still profiled). */
static inline void hwprof_mh_stop(void) { HWPROF_REG(HWPROF_MULTIHASH_STOP) = 1; }

/* Wait for the end of the next interval not yet returned and return how many
 * candidates it left (the interval the previous call returned is released). Each
 * interval must be released before two more end (else STATUS shows overrun). */
static inline int hwprof_mh_wait(void) {
    if (hwprof_mh_shown_) {
        HWPROF_REG(HWPROF_MULTIHASH_ACK) = 1;
    }
    while (!(HWPROF_REG(HWPROF_MULTIHASH_STATUS) & HWPROF_MH_DONE)) {
    }
    hwprof_mh_shown_ = 1;
    return (int)HWPROF_REG(HWPROF_MULTIHASH_CANDIDATES);
}

/* Candidate i (0 <= i < hwprof_mh_wait()) of the interval that just ended, in the
 * profiler's entry order: its tuple <pc, value> and its count. */
static inline void hwprof_mh_read(int i, uint32_t *pc, uint32_t *value, uint32_t *count) {
    HWPROF_REG(HWPROF_MULTIHASH_INDEX) = (uint32_t)i;
    *pc = HWPROF_REG(HWPROF_MULTIHASH_CAND_PC);
    *value = HWPROF_REG(HWPROF_MULTIHASH_CAND_VALUE);
    *count = HWPROF_REG(HWPROF_MULTIHASH_CAND_COUNT);
}

/* Tuples dropped because the FIFO into the profiler's clock domain was full, since
 * the last hwprof_mh_config. */
static inline uint32_t hwprof_mh_dropped(void) { return HWPROF_REG(HWPROF_MULTIHASH_DROPPED); }

/* Tuples offered to the profiler since the last hwprof_mh_config (dropped included). */
static inline uint32_t hwprof_mh_offered(void) { return HWPROF_REG(HWPROF_MULTIHASH_OFFERED); }

/* 1 if an interval ended while two were waiting to be read (sticky until config). */
static inline int hwprof_mh_overrun(void) {
    return (HWPROF_REG(HWPROF_MULTIHASH_STATUS) & HWPROF_MH_OVERRUN) != 0;
}

/* Print one line "TAG v[0] ... v[n-1]" (8 hex digits each): the format
 * hwprof.system.profiler.parse_profile_output reads. "I n" starts an interval of n
 * candidates, each a line "C pc value count"; other tags are fields. */
static inline void hwprof_mh_print(char tag, const uint32_t *v, int n) {
    hwprof_putc(tag);
    for (int i = 0; i < n; i++) {
        hwprof_putc(' ');
        hwprof_puthex(v[i]);
    }
    hwprof_putc('\n');
}

#endif /* HWPROF_MH_H */
