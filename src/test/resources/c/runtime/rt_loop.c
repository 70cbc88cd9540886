/* Runtime test: n probed stores then n probed loads over a malloc'd array; exits with status 3. */
#include <stdio.h>
#include <stdlib.h>
#include "mt_probe.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long *a = malloc((size_t)n * sizeof *a);
    printf("ARRAY %lx %ld\n", (unsigned long)a, n);
    mt_print_sites();
    for (long i = 0; i < n; i++) MT_STORE8(&a[i], i);
    long sum = 0;
    for (long i = 0; i < n; i++) {
        long v;
        MT_LOAD8(v, &a[i]);
        sum += v;
    }
    printf("SUM %ld\n", sum);
    fflush(stdout);
    free(a);
    return 3;
}
