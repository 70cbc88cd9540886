/* CWE-122: fgets told the buffer holds 64 bytes, into a 16-byte heap block (Juliet's fgets sources). */
#include <stdio.h>
#include <stdlib.h>
#include "rc.h"
static void run(size_t size)
{
    char text[] = "a line of text longer than sixteen bytes\n";
    FILE *f = fmemopen(text, sizeof text - 1, "r");
    char *buf = malloc(rc_n(size));
    if (fgets(buf, 64, f)) rc_sum(buf, 16); /* BAD when size is 16 */
    fclose(f);
    free(buf);
}
static void bad(void) { run(16); }
static void good(void) { run(64); }
RC_MAIN
