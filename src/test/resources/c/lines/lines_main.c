/*
 * Main file of the source-line fixtures (compiled with lines_other.c and the header util.h): loops, a
 * switch, calls across files and into libc, so that the line table has several sequences, file switches,
 * discriminators and non-statement rows. The tests compare every address of these functions with
 * addr2line; the program's output (a checksum) is never looked at.
 */
#include <stdio.h>
#include <stdlib.h>
#include "util.h"

int table[16];
int other(int n);

int sum(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += square_plus(table[i & 15]);
    return s;
}

static __attribute__((noinline)) int classify(int v)
{
    switch (v & 3) {
    case 0:
        return CLAMP(v, 2, 9);
    case 1:
        return v * 3;
    case 2:
        return -v;
    default:
        return v ^ 5;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 12;
    int total = sum(n) + other(n);
    for (int i = 0; i < n; i++)
        total += classify(i);
    printf("%d\n", total);
    return 0;
}
