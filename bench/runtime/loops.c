/*
 * Benchmark of libmemtrace-rt.so: loops whose every access carries the probe of docs/compiled-in.md
 * (written by hand with the tests' mt_probe.h), or none when built with -DNATIVE.
 *
 *     loops KERNEL PASSES      KERNEL: sum (one load per iteration), copy (a load and a store),
 *                              random (loads at pseudo-random indexes: the irregular case)
 *
 * Prints "accesses N seconds S" for the kernel alone (start-up and the final flush excluded).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "mt_probe.h"
#ifdef NATIVE
#undef MT_LOAD8
#undef MT_STORE8
#define MT_LOAD8(dst, ptr) __asm__ volatile("movq (%[p]), %[v]" : [v] "=r"(dst) : [p] "r"(ptr) : "memory")
#define MT_STORE8(ptr, value) __asm__ volatile("movq %[v], (%[p])" : : [p] "r"(ptr), [v] "r"((long)(value)) : "memory")
#endif

#define N (1L << 16)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    long passes = atol(argv[2]), accesses = 0, sum = 0;
    long *a = calloc(N, sizeof *a), *b = calloc(N, sizeof *b);
    double t0 = now();
    if (!strcmp(argv[1], "sum")) {
        for (long p = 0; p < passes; p++)
            for (long i = 0; i < N; i++) { long v; MT_LOAD8(v, &a[i]); sum += v; }
        accesses = passes * N;
    } else if (!strcmp(argv[1], "copy")) {
        for (long p = 0; p < passes; p++)
            for (long i = 0; i < N; i++) { long v; MT_LOAD8(v, &a[i]); MT_STORE8(&b[i], v + p); }
        accesses = 2 * passes * N;
    } else {
        unsigned long x = 12345;
        for (long p = 0; p < passes; p++)
            for (long i = 0; i < N; i++) {
                x = x * 6364136223846793005UL + 1442695040888963407UL;
                long v;
                MT_LOAD8(v, &a[(x >> 33) & (N - 1)]);
                sum += v;
            }
        accesses = passes * N;
    }
    double t1 = now();
    printf("accesses %ld seconds %.6f sum %ld\n", accesses, t1 - t0, sum);
    return 0;
}
