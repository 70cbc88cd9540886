/* CWE-122: fread() of 40 records of 1 byte into a 24-byte heap block. */
#include <stdio.h>
#include <stdlib.h>
#include "rc.h"
static void run(size_t size)
{
    char text[64];
    for (int i = 0; i < 64; i++) text[i] = (char)('a' + i % 26);
    FILE *f = fmemopen(text, sizeof text, "r");
    char *buf = malloc(rc_n(size));
    size_t got = fread(buf, 1, 40, f); /* BAD when size is 24 */
    rc_int((long)got);
    rc_sum(buf, 24);
    fclose(f);
    free(buf);
}
static void bad(void) { run(24); }
static void good(void) { run(40); }
RC_MAIN
