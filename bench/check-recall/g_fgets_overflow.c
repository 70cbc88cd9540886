/* Global overflow: fgets with a size of 64 into a static 16-byte array. */
#include <stdio.h>
#include "rc.h"
static char line[16];
static void run(size_t n)
{
    char text[] = "a line of text longer than sixteen bytes\n";
    FILE *f = fmemopen(text, sizeof text - 1, "r");
    if (fgets(line, (int)rc_n(n), f)) rc_sum(line, sizeof line); /* BAD when n is 64 */
    fclose(f);
}
static void bad(void) { run(64); }
static void good(void) { run(16); }
RC_MAIN
