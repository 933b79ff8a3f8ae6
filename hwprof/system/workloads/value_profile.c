/* Value profiling in the running system: the multi-hash profiler (docs/system-profiler.md)
 * is fed by this program's own retired loads and read back by it over the CSR map.
 *
 * The workload is a small stack-machine interpreter running a bytecode loop: the load
 * of each opcode (one load instruction, a handful of opcode values) and of the
 * operands gives hot <pc, value> pairs; the interpreter's other loads are spread
 * over many values. After each run of the bytecode the program polls the profiler
 * and, when an interval has ended, copies its candidates into memory and releases
 * it. Once VP_INTERVALS intervals are copied it stops the profiler and prints
 *   I <candidates>                 one line per interval, then
 *   C <pc> <value> <count>         one line per candidate (hex), in the profiler's order
 * then "O <offered>", "D <dropped>", "N <intervals ended>", "S <status>",
 * "R <interpreter result>" (hwprof_mh_print; read by
 * hwprof.system.profiler.parse_profile_output). Every retired load from RAM between hwprof_mh_config and
 * hwprof_mh_stop is profiled, the polling code's included: `hwprof system run
 * --profiler --log-loads FILE` records exactly that stream.
 *
 * -DVP_INTERVAL, -DVP_THRESHOLD  interval length in tuples and candidate threshold
 * -DVP_INTERVALS                 intervals read back (at most 8)
 * -DVP_SOURCE=1                  profile the program's taken branches <pc, target>
 *                                (edge profiling) instead of its loads */
#include "hwprof.h"
#include "hwprof_mh.h"

#ifndef VP_INTERVAL
#define VP_INTERVAL 1000
#endif
#ifndef VP_THRESHOLD
#define VP_THRESHOLD 25
#endif
#ifndef VP_INTERVALS
#define VP_INTERVALS 3
#endif
#ifndef VP_SOURCE
#define VP_SOURCE 0
#endif
#define VP_MAX_CANDIDATES 128

enum { PUSH, LOAD, STORE, ADD, MUL, DEC, JNZ, MOD, HALT };

/* sum = 0; i = 6; do { sum = (sum + i * x[i % 8]) % 10007; i--; } while (i); */
static const uint8_t code[] = {
    PUSH, 0, STORE, 0,  /* sum = 0 */
    PUSH, 6, STORE, 1,  /* i = 6 */
    LOAD, 0, LOAD, 1, LOAD, 1, PUSH, 8, MOD, PUSH, 2, ADD, LOAD, 255, MUL, ADD,
    PUSH, 100, PUSH, 100, MUL, PUSH, 7, ADD, MOD, STORE, 0, /* sum = ... % 10007 */
    LOAD, 1, DEC, STORE, 1, LOAD, 1, JNZ, 8,                 /* i--; loop */
    LOAD, 0, HALT,
};

/* variables: sum, i, then x[0..7] at 2..9 */
static int32_t vars[10] = {0, 0, 3, 1, 4, 1, 5, 9, 2, 6};

static int32_t interpret(void) {
    int32_t stack[16];
    int sp = 0;
    unsigned pc = 0;
    for (;;) {
        uint8_t op = code[pc++];
        switch (op) {
        case PUSH: stack[sp++] = code[pc++]; break;
        case LOAD: {
            uint8_t a = code[pc++];
            /* LOAD 255: the variable whose index is on the stack */
            if (a == 255) stack[sp - 1] = vars[stack[sp - 1]];
            else stack[sp++] = vars[a];
            break;
        }
        case STORE: vars[code[pc++]] = stack[--sp]; break;
        case ADD: sp--; stack[sp - 1] += stack[sp]; break;
        case MUL: sp--; stack[sp - 1] *= stack[sp]; break;
        case MOD: sp--; stack[sp - 1] %= stack[sp]; break;
        case DEC: stack[sp - 1]--; break;
        case JNZ: {
            uint8_t to = code[pc++];
            if (stack[--sp]) pc = to;
            break;
        }
        default: return stack[sp - 1];
        }
    }
}

static uint32_t counts[VP_INTERVALS];
static uint32_t cand[VP_INTERVALS][VP_MAX_CANDIDATES][3];

int main(void) {
    int32_t result = 0;
    int got = 0;
    hwprof_mh_source(VP_SOURCE);
    hwprof_mh_config(VP_INTERVAL, VP_THRESHOLD);
    while (got < VP_INTERVALS) {
        result += interpret();
        /* intervals have ended: copy each and release it (ACK), without waiting */
        while (got < VP_INTERVALS && HWPROF_REG(HWPROF_MULTIHASH_STATUS) & HWPROF_MH_DONE) {
            uint32_t n = HWPROF_REG(HWPROF_MULTIHASH_CANDIDATES);
            counts[got] = n;
            for (uint32_t i = 0; i < n && i < VP_MAX_CANDIDATES; i++)
                hwprof_mh_read((int)i, &cand[got][i][0], &cand[got][i][1], &cand[got][i][2]);
            HWPROF_REG(HWPROF_MULTIHASH_ACK) = 1;
            got++;
        }
    }
    hwprof_mh_stop();
    for (int k = 0; k < VP_INTERVALS; k++) {
        hwprof_mh_print('I', &counts[k], 1);
        for (uint32_t i = 0; i < counts[k] && i < VP_MAX_CANDIDATES; i++)
            hwprof_mh_print('C', cand[k][i], 3);
    }
    uint32_t tail[5] = {hwprof_mh_offered(), hwprof_mh_dropped(),
                        HWPROF_REG(HWPROF_MULTIHASH_INTERVALS),
                        HWPROF_REG(HWPROF_MULTIHASH_STATUS), (uint32_t)result};
    hwprof_mh_print('O', &tail[0], 1);
    hwprof_mh_print('D', &tail[1], 1);
    hwprof_mh_print('N', &tail[2], 1);
    hwprof_mh_print('S', &tail[3], 1);
    hwprof_mh_print('R', &tail[4], 1);
    return 0;
}
