/* CWE-121: fgets with sizeof of the wrong buffer: 64 bytes into a 16-byte stack array. */
#include <stdio.h>
#include "rc.h"
static void run(int bad)
{
    char text[] = "a line of text longer than sixteen bytes\n";
    FILE *f = fmemopen(text, sizeof text - 1, "r");
    char big[64], small[16];
    char *dst = bad ? small : big;
    if (fgets(dst, (int)rc_n(64), f)) rc_sum(dst, 16); /* BAD into small */
    fclose(f);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
