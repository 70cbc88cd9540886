/* Global overflow: sprintf of a formatted date into a static 12-byte array. */
#include <stdio.h>
#include "rc.h"
static char stamp[12];
static char other[12];
static void run(int year)
{
    sprintf(stamp, "%04d-%02d-%02dT", year, 12, 6); /* BAD when the year has 5 digits */
    rc_sum(stamp, sizeof stamp);
    rc_sum(other, sizeof other);
}
static void bad(void) { run((int)rc_n(20260)); }
static void good(void) { run((int)rc_n(2026)); }
RC_MAIN
