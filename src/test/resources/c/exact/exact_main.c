/* Unit C: main and a checksum over every unit's globals. */
#include <stdio.h>
#include "exact.h"

static long history[128];
/* Taking the address of another unit's function: a GOT load in the object that the linker relaxes into a lea. */
static void (*volatile hook)(int);
static int rounds = 3;

long checksum(void) {
    long s = total;
    for (int i = 0; i < 64; i++) s += counts[i] * (i + 1) + history[i * 2] + names[i & 15][0];
    return s + history[127];
}

int main(void) {
    double d = 0;
    hook = tally;
    hook(0);
    for (int r = 0; r < rounds; r++) {
        tally(1000 + r);
        d += blend(700 + r);
        history[r] = checksum();
    }
    printf("%ld %.1f\n", history[rounds - 1], d);
    return 0;
}
