/*
 * Second file of the source-line fixtures: fills the table lines_main.c sums, through the header's inline
 * function, so that util.h's lines appear in two compilation units.
 */
#include "util.h"

extern int table[16];

int other(int n)
{
    int r = 0;
    for (int i = 0; i < n; i++) {
        table[i & 15] = square_plus(i);
        r += table[i & 15];
    }
    return r;
}
