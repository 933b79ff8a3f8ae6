/* A fixed-trip-count kernel: the paper's jython pattern, a loop body that calls two
 * leaf functions. Each row of a matrix is scaled element by element: load() reads
 * an element, store() writes its scaled value; the inner loop runs COLS times.
 * argv[1]: rows; argv[2]: passes over the matrix. Prints a checksum. */
#include <stdio.h>
#include <stdlib.h>

#define COLS 64

static __attribute__((noinline)) double load(const double *row, int j)
{
    return row[j];
}

static __attribute__((noinline)) void store(double *row, int j, double v)
{
    row[j] = v;
}

int main(int argc, char **argv)
{
    long rows = argc > 1 ? atol(argv[1]) : 1000;
    long passes = argc > 2 ? atol(argv[2]) : 1;
    double *m = malloc(sizeof(double) * COLS * rows);
    if (!m)
        return 1;
    for (long k = 0; k < COLS * rows; k++)
        m[k] = (double)(k % 97);
    for (long p = 0; p < passes; p++)
        for (long r = 0; r < rows; r++) {
            double *row = m + r * COLS;
            for (int j = 0; j < COLS; j++)
                store(row, j, 0.5 * load(row, j) + 1.0);
        }
    double sum = 0;
    for (long k = 0; k < COLS * rows; k++)
        sum += m[k];
    printf("%.3f\n", sum);
    free(m);
    return 0;
}
