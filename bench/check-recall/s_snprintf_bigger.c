/* CWE-121 / CWE-806: snprintf told 100 bytes for a 10-byte stack array. */
#include <stdio.h>
#include "rc.h"
static void run(int bad)
{
    char big[100], small[10];
    char *dst = bad ? small : big;
    snprintf(dst, rc_n(100), "%s:%d", "hostname.example", (int)rc_n(8080)); /* BAD into small */
    rc_sum(dst, 10);
}
static void bad(void) { run(1); }
static void good(void) { run(0); }
RC_MAIN
