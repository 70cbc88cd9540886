/*
 * Shared library of the source-line fixtures: an exported function over a static helper, to check lines of
 * a position-independent library (link-time addresses from 0) against addr2line.
 */
#include "util.h"

static __attribute__((noinline)) int lib_helper(int x)
{
    int r = 0;
    while (x > 0) {
        r += square_plus(x);
        x /= 3;
    }
    return r;
}

int lib_lines(int x)
{
    return lib_helper(x) + CLAMP(x, 0, 100);
}
