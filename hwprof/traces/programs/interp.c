/* A bytecode interpreter whose dispatch loop calls one handler per instruction
 * (through a table of function pointers), running a sum-of-squares loop:
 *     loop: push i; push i; mul; add_acc; inc i; jlt i n loop
 * argv[1]: the trip count of the interpreted loop; argv[2]: how often to rerun it.
 * Prints the sum, so that the work is not optimised away. */
#include <stdio.h>
#include <stdlib.h>

enum { PUSH_I, MUL, ADD_ACC, INC_I, JLT, HALT };

struct vm {
    long stack[16];
    int sp, pc;
    long i, n, acc;
};

typedef void (*handler)(struct vm *, const int *);

static __attribute__((noinline)) void op_push_i(struct vm *m, const int *code)
{
    m->stack[m->sp++] = m->i;
    m->pc += 1;
}

static __attribute__((noinline)) void op_mul(struct vm *m, const int *code)
{
    m->sp -= 1;
    m->stack[m->sp - 1] *= m->stack[m->sp];
    m->pc += 1;
}

static __attribute__((noinline)) void op_add_acc(struct vm *m, const int *code)
{
    m->acc += m->stack[--m->sp];
    m->pc += 1;
}

static __attribute__((noinline)) void op_inc_i(struct vm *m, const int *code)
{
    m->i += 1;
    m->pc += 1;
}

static __attribute__((noinline)) void op_jlt(struct vm *m, const int *code)
{
    m->pc = m->i < m->n ? code[m->pc + 1] : m->pc + 2;
}

static const handler table[] = {op_push_i, op_mul, op_add_acc, op_inc_i, op_jlt};

static long run(const int *code, long n)
{
    struct vm m = {.sp = 0, .pc = 0, .i = 0, .n = n, .acc = 0};
    while (code[m.pc] != HALT)
        table[code[m.pc]](&m, code);
    return m.acc;
}

int main(int argc, char **argv)
{
    static const int code[] = {PUSH_I, PUSH_I, MUL, ADD_ACC, INC_I, JLT, 0, HALT};
    long n = argc > 1 ? atol(argv[1]) : 100000;
    long reps = argc > 2 ? atol(argv[2]) : 1;
    long total = 0;
    for (long r = 0; r < reps; r++)
        total += run(code, n + r);
    printf("%ld\n", total);
    return 0;
}
